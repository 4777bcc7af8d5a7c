/* review.h - what a maintainer checks in a submission, decided by a policy.
 *
 * A review reads a submission (see submission.h) and lists every reason to
 * ask for changes: evidence that does not match its manifest, files nobody
 * listed, paths that leave a bundle, environments the policy requires and
 * that are missing, fingerprints that disagree with what was journaled as
 * measured or with the environment's label and claimed device, checks
 * missing or in statuses the policy does not allow, claimed node ids that do
 * not exist, official runs missing without a reason, traces that disagree.
 * No reason: ACCEPT.
 */
#ifndef AP_REVIEW_H
#define AP_REVIEW_H

#include <jansson.h>

#include "base/buf.h"
#include "evidence/submission.h"

/* Loads a policy (YAML; NULL: the built-in policies/default.yaml). A new
 * object, or NULL with "file:line: why" in err. */
json_t *ap_policy_load(const char *path, struct ap_buf *err);

/* Reviews the submission at dir. Returns a new array of reason strings (empty:
 * accept); a bundle.json that cannot be read or parsed is one of them. NULL
 * with err set only when dir is not a submission at all (missing, or without
 * any DIR/<env>/bundle.json). */
json_t *ap_review(const char *dir, const json_t *policy, struct ap_buf *err);

/* The review as Markdown, ready to post as a comment. */
void ap_review_markdown(const char *dir, const json_t *reasons, const json_t *policy,
			struct ap_buf *out);

extern const char ap_default_policy[];
extern const unsigned long ap_default_policy_len;

#endif
