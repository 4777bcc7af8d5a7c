/* submission.h - a directory of bundles, as `check --out DIR` writes it and as
 * a contributor hands it in: DIR/<env>/bundle.json and the rest of each
 * bundle. Read back as untrusted input: directory names must be environment
 * names, bundle.json must parse and carry the bundle schema.
 */
#ifndef AP_SUBMISSION_H
#define AP_SUBMISSION_H

#include <jansson.h>

#include "base/buf.h"

struct ap_sub_env {
	char *name;       /* the directory name, a valid environment name */
	char *dir;        /* DIR/name */
	json_t *bundle;
};

struct ap_submission {
	char *dir;
	struct ap_sub_env *v;  /* in the order check was given them (env.order), then by name */
	size_t n;
	json_t *broken;        /* ap_submission_load_all: env name -> why its bundle.json
				* could not be read ("sid/bundle.json: ..."); else NULL */
};

/* Loads every DIR/<env>/bundle.json, each read with a size limit and only
 * from a regular file. 0, or -AP_EPROTO / -errno with err saying which file
 * and why; s is then empty. A directory without any bundle is -ENOENT. */
int ap_submission_load(struct ap_submission *s, const char *dir, struct ap_buf *err);

/* As ap_submission_load(), for a review: a bundle.json that cannot be read or
 * is not a bundle does not stop the load but is listed in s->broken and left
 * out of v. -ENOENT only when there is neither a bundle nor a broken one. */
int ap_submission_load_all(struct ap_submission *s, const char *dir, struct ap_buf *err);

/* The bundle of environment name, or NULL. */
const struct ap_sub_env *ap_submission_find(const struct ap_submission *s, const char *name);

void ap_submission_free(struct ap_submission *s);

#endif
