/* view.h - a bundle read as C values: what bundle.json holds (bundle.h),
 * each field once, typed.
 *
 * Code above evidence/ that judges or reviews a bundle reads it through a
 * view instead of spelling bundle.json's keys, so a misspelt field is a
 * compile error, and a status or a kind is an enum. A view borrows from the
 * bundle object it was read from (its strings, trace values and the check
 * objects themselves): it lives no longer than that object, and nothing is
 * written through it. Observed values (a trace step's value, a difference's
 * expected and seen) stay JSON values: they are data of any shape, compared
 * with json_equal, never looked into.
 */
#ifndef AP_VIEW_H
#define AP_VIEW_H

#include <jansson.h>
#include <stddef.h>

#include "base/outcome.h"
#include "evidence/bundle.h"

/* One step of an observation trace. */
struct ap_step_view {
	const char *step;      /* NULL when the record has none */
	const json_t *value;   /* NULL when the record has none */
};

struct ap_check_view {
	const json_t *obj;     /* the check object read */
	const char *name, *reason;
	enum ap_check_kind kind;     /* AP_KIND_UNKNOWN: none or another word */
	enum ap_status status;       /* AP_STATUS_UNKNOWN: none or another word */
	const char *status_word;     /* the word as written (NULL: none) */
	const json_t *status_value;  /* the "status" member as written (NULL: none) */
	/* official tests: the same test's status in the reference */
	int has_reference_status;    /* the key is there (null: not run there) */
	const char *reference_status;
	/* numeric checks: where it ran and what it was compared with */
	const char *against, *across;
	int across_torch_differs;    /* same_torch is false */
	int has_limit;               /* a known limit of the backend excused it */
	size_t nsteps;
	struct ap_step_view *steps;
	struct ap_device_trace_view device_trace;
};

/* One trace difference against the reference (bundle.json's comparison). */
struct ap_difference_view {
	const char *check, *step;
	const json_t *expected, *seen;
};

struct ap_bundle_view {
	const char *target;
	const char *env_name;        /* "-" when missing */
	int failed;                  /* the environment failed (error is set) */
	const char *error_message;
	int resolved;                /* the target resolved */
	int patched;                 /* a plugin changed it after torch imported alone */
	const char *canonical;       /* the resolution's canonical name */
	const char *torch_version;   /* NULL when unknown */
	const char *reference;       /* comparison.reference, NULL for none */
	size_t ndifferences;
	struct ap_difference_view *differences;
	size_t nchecks;
	struct ap_check_view *checks;
};

/* Reads check object c into *v. 0 or -ENOMEM; on failure *v holds nothing
 * to free. */
int ap_check_view_read(const json_t *c, struct ap_check_view *v);

void ap_check_view_free(struct ap_check_view *v);

/* Reads bundle b into *v. 0 or -ENOMEM; on failure *v holds nothing to free. */
int ap_bundle_view_read(const json_t *b, struct ap_bundle_view *v);

void ap_bundle_view_free(struct ap_bundle_view *v);

/* The check of v called name, or NULL. */
const struct ap_check_view *ap_bundle_view_check(const struct ap_bundle_view *v,
						 const char *name);

#endif
