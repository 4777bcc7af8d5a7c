/* review.h - what a maintainer checks in a submission, decided by a policy.
 *
 * A review reads a submission (see submission.h) and lists every reason to
 * ask for changes: evidence that does not match its manifest, files nobody
 * listed, paths that leave a bundle, environments the policy requires and
 * that are missing, fingerprints that disagree with what was journaled as
 * measured or with the environment's label and claimed device, checks
 * missing or in statuses the policy does not allow, claimed node ids that do
 * not exist, official runs missing without a reason, traces that disagree.
 *
 * Nothing in bundle.json is taken on its word: every check must be as
 * journal.jsonl recorded it when measured, every official result must have
 * its record in official.log, and the verdict, the trace comparison and the
 * adaptation are judged again from the measured checks with check's own
 * judge (verdict.h). That catches a bundle edited alone and resealed. A
 * bundle, journal and logs edited together and resealed agree with each
 * other; only a signature by a trusted key (sign.h) catches that.
 * No reason: ACCEPT.
 */
#ifndef AP_REVIEW_H
#define AP_REVIEW_H

#include <jansson.h>

#include "base/buf.h"
#include "evidence/submission.h"
#include "review/policy.h"

struct ap_trust;

struct ap_review_opts {
	const struct ap_policy *policy;  /* from ap_policy_load() */
	const struct ap_trust *trust;  /* trusted keys (sign.h), or NULL: none */
	json_t *met;   /* when not NULL, ap_review() appends a line per requirement of
			* the policy's require_facts that an environment met: which,
			* by which fields of its evidence */
};

/* Reviews the submission at dir. Returns a new array of reason strings (empty:
 * accept); a bundle.json that cannot be read or parsed is one of them. NULL
 * with err set only when dir is not a submission at all (missing, or without
 * any DIR/<env>/bundle.json). With
 * o->trust, every environment needs a valid signature by one of its keys;
 * a policy with require_signature: "yes" needs o->trust. */
json_t *ap_review(const char *dir, const struct ap_review_opts *o, struct ap_buf *err);

/* The review as Markdown, ready to post as a comment; it says what the review
 * proves, signed or not. */
void ap_review_markdown(const char *dir, const json_t *reasons, const struct ap_review_opts *o,
			struct ap_buf *out);

/* The review as JSON, for bots: a new object {schema "apiparity.review/1",
 * submission, policy, decision "ACCEPT" or "CHANGES-NEEDED", signed (whether
 * signatures were checked against a trust list), findings: [{message}], one
 * per reason, in order}. */
json_t *ap_review_json(const char *dir, const json_t *reasons, const struct ap_review_opts *o);

/* The review as JUnit XML, for CI: one testsuite, a failing testcase per
 * finding, and one testcase "decision" that passes on ACCEPT and fails on
 * CHANGES-NEEDED (so an accepted review still shows a test). */
void ap_review_junit(const char *dir, const json_t *reasons, const struct ap_review_opts *o,
		     struct ap_buf *out);

#endif
