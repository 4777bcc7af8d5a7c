/* policy.h - what a review accepts, as a project says it in a YAML file.
 *
 * A policy (policies/default.yaml is the built-in one) is read once, here,
 * into C fields; the review reads the fields, never the file's keys. The
 * reading is strict, since a policy that fails open accepts what it was
 * written to refuse: a mapping with a mapping 'statuses' is required, and a
 * key it does not know, or a value of another shape or word (a flag that is
 * not "yes", "no", "true" or "false"; a kind of check or a status that is
 * none; a list that is not a list of names) is an error naming the file and
 * the key's line. A key left out reads as empty (no entries, flag off).
 */
#ifndef AP_POLICY_H
#define AP_POLICY_H

#include <stddef.h>

#include "base/buf.h"
#include "check/limits.h"
#include "check/tolerances.h"

/* The statuses a check of one kind may have. */
struct ap_policy_kind {
	const char *kind;
	const char **statuses;
	size_t nstatuses;
};

/* One of 'require_facts': an environment the submission must hold, named
 * by facts of its own evidence (its bundle, its fingerprint), never by the
 * folder it lies in; NULL (0) for a fact it does not name. */
struct ap_policy_fact {
	const char *env;     /* the bundle's environment name, or a word of its label */
	const char *device;  /* a device type its fingerprint shows available */
	long devices;        /* ... at least this many of them (device's, else any) */
	const char *torch;   /* its torch's version starts with this one (2.6) */
	const char *plugin;  /* a plugin its fingerprint says was loaded */
	int line;            /* where the requirement is in the file */
};

struct ap_policy {
	const char *name;            /* 'policy', NULL when not a string */
	struct ap_policy_kind *kinds;  /* 'statuses', in the file's order */
	size_t nkinds;
	/* 'require_kinds': where the target exists, a check of each of these
	 * kinds ("probe|numeric": of either) */
	const char **require_kinds;
	size_t nrequire_kinds;
	/* 'require_envs': environments that must be there, by name or by a word
	 * of their label */
	const char **require_envs;
	size_t nrequire_envs;
	struct ap_policy_fact *require_facts;
	size_t nrequire_facts;
	/* 'accept_tolerances': the tolerance overrides the policy accepts
	 * beyond the built-in ones, each {op, dtype, device, rtol, atol} (op,
	 * dtype and device as specs/tolerances.ini has them, * for any): a
	 * numeric check judged by a looser tolerance than these and the
	 * built-in ones is a reason. 'accept_limits': the backend limits it
	 * accepts beyond the built-in ones, each {backend, op, raises} as
	 * specs/backend-limits.ini has them: a check excused by any other is a
	 * reason. What the submitter chose is not evidence. */
	struct ap_tolerances accept_tolerances;
	struct ap_limits accept_limits;
	int require_official;        /* official tests run, or NOTRUN with a reason */
	int traces_agree;            /* every trace agrees with the reference's */
	int require_signature;       /* every manifest signed by a trusted key */
	void *doc;                   /* the parsed file the strings point into */
};

/* Loads the policy at path (NULL: the built-in policies/default.yaml). A new
 * policy, or NULL with "file:line: why" in err. */
struct ap_policy *ap_policy_load(const char *path, struct ap_buf *err);

/* The same for the YAML text of len bytes; name is used in messages. */
struct ap_policy *ap_policy_parse(const char *text, size_t len, const char *name,
				  struct ap_buf *err);

/* Whether the policy allows a check of kind to have status (the words as the
 * check has them). */
int ap_policy_allows(const struct ap_policy *p, const char *kind, const char *status);

void ap_policy_free(struct ap_policy *p);

extern const char ap_default_policy[];
extern const unsigned long ap_default_policy_len;

#endif
