/* facts.h - what a bundle says, typed, for those who judge it (check/verdict)
 * and those who show it (the report).
 *
 * A bundle read back is untrusted (bundle.h): any field may be missing or of
 * another type. Here it is read once, by key, into C types: a string that is
 * not there (or not a string) is NULL, a number 0 (or AP_NUM_NONE where
 * "none" is shown), a flag 0. The values that are themselves open-ended JSON
 * (the resolution, the trace values, the devices as the fingerprint has
 * them) are kept as the bundle's own JSON too, for report.json, which copies
 * them verbatim; nothing reads their keys but this module.
 *
 * Every string and JSON value points into the bundle: valid while it is.
 */
#ifndef AP_FACTS_H
#define AP_FACTS_H

#include <jansson.h>
#include <stddef.h>

#include "base/outcome.h"
#include "evidence/bundle.h"

/* A number as JSON held it: an integer, a real, or none (null, missing,
 * another type), so that it is shown and written back as it was. */
struct ap_number {
	enum { AP_NUM_NONE, AP_NUM_INT, AP_NUM_REAL } kind;
	long long i;
	double d;
};

struct ap_fact_plugin {
	const char *name, *version;
};

/* One device type of the fingerprint. */
struct ap_fact_device {
	const char *type;
	long long count;
	const char *first_name; /* its first device's name, NULL when none */
	size_t nnames;          /* the names it lists */
	int available;
	const char *reason;     /* why it is not available */
};

/* One step of a check's trace. */
struct ap_fact_step {
	const char *step;
	const json_t *value; /* any JSON, NULL when the step has none */
};

/* One comparison of a numeric check: its worst errors (inf and nan read as
 * HUGE_VAL) and the tolerances it used. */
struct ap_fact_measure {
	const char *output;
	double max_abs, max_rel, worst_ratio;
	struct ap_number rtol, atol;
	const char *tol_source;
	/* judged by an override: the same comparison under the dtype's default */
	int has_default;
	struct ap_number default_rtol, default_atol, default_mismatches;
	double default_worst_ratio;
};

/* What a signature check found (check/signature.h). */
struct ap_fact_signature {
	const char *source, *reference, *torch;
	int same_torch;                  /* 1, 0, or -1: not said */
	const char **differences;        /* each difference's text */
	size_t ndifferences;
	const json_t *differences_json;  /* as the bundle has them, NULL when none */
};

/* A count by name (a device trace's operators and devices) is
 * struct ap_count_view, and a device trace struct ap_device_trace_view, as
 * bundle.h has them. */

struct ap_fact_check {
	const json_t *json;              /* the check as written */
	const char *name;
	const char *kind_word;           /* as written, NULL when none */
	enum ap_check_kind kind;         /* AP_KIND_UNKNOWN: none or another word */
	const char *status_word;         /* as written, NULL when none */
	const json_t *status_json;       /* the status as written, NULL when none */
	enum ap_status status;
	/* an official test: the same test's status in the reference */
	int has_reference_status;        /* the key is there (null: not run there) */
	const char *reference_status;
	const json_t *reference_status_json; /* as written, NULL when none */
	const char *node;                /* a claim's node id */
	int has_limit;                   /* a known limit of the backend excused it */
	struct ap_fact_limit {           /* which (check/limits.h), when has_limit */
		const char *name, *backend, *what, *reason, *where;
		const char *raised, *message; /* the device's failure it excused */
	} limit;
	/* a numeric check (kind numeric), with an operator or not: */
	const char *across;              /* the environment whose CPU it was compared with */
	int across_torch_differs;        /* ... under another torch version (same_torch false) */
	int device_vs_cpu;               /* a device against its own environment's CPU */
	struct ap_device_trace_view device_trace;
	const char *reason, *says_en, *says_zh;
	struct ap_number duration_ms;
	const json_t *trace_json;        /* the trace as recorded */
	struct ap_fact_step *steps;
	size_t nsteps;
	/* a numeric check with an operator (numeric != 0): */
	int numeric;
	const char *op, *device;
	const char *dtype;               /* NULL: an error input */
	const char *against;             /* across, else against, else NULL: ran only */

	struct ap_fact_measure *measures;
	size_t nmeasures;
	/* a signature check with its detail (signature != 0): */
	int signature;
	struct ap_fact_signature sig;
};

/* A trace difference the judge named: step of check, what the reference
 * saw and what was seen here (any JSON, NULL when missing). */
struct ap_fact_difference {
	const char *check, *step;
	const json_t *expected, *seen;
};

struct ap_bundle_facts {
	const char *target;
	const json_t *tool_json;
	const json_t *env_json;          /* the environment as written (start, in the journal) */
	const char *label, *device;
	const char *signer_key;          /* the key bundle.json names as its signer */
	const char *verdict_word;        /* as written, NULL before it is decided */
	enum ap_verdict verdict;
	const char **verdict_reasons;
	size_t nverdict_reasons;
	const json_t *verdict_reasons_json;
	const json_t *error_json;        /* the error as written, NULL when none */
	const char *error;               /* the failure's message, NULL when it did not fail */
	int failed;
	long long exit_code;             /* the failure's, else 1 when inconsistent, else 0 */
	const json_t *fingerprint_json;  /* as written, NULL when none */
	const char *python, *torch, *os;
	struct ap_fact_plugin *plugins;
	size_t nplugins;
	struct ap_fact_device *devices;
	size_t ndevices;
	const json_t *devices_json;
	const char *env_name;            /* "-" when missing */
	/* the resolution */
	const json_t *resolution_json;
	int found;
	int patched;                     /* a plugin changed it after torch imported alone */
	const char *canonical;
	const char **nearest;
	size_t nnearest;
	const json_t *nearest_json;
	const char *impl_file, *impl_kind, *owner, *signature_text;
	long long impl_line;
	int doc;                         /* a docstring of its own: 1, 0, or -1: not said */
	/* the adaptation */
	const json_t *adaptation_json;
	const char *conclusion_en, *conclusion_zh;
	int device_independent;
	int probes_passed, probes_total; /* ap_bundle_probe_counts() */
	const char *official_version;    /* the torch package the official tests came from */
	const json_t *comparison_json;   /* as written, NULL when none */
	const char *reference;           /* the environment compared with, NULL when none */
	struct ap_fact_difference *differences;
	size_t ndifferences;
	const json_t *differences_json;
	struct ap_fact_check *checks;
	size_t nchecks;
	const json_t *checks_json;       /* for check/limits.h */
	const json_t *device_trace_json; /* the bundle's device trace as written, NULL when none */
};

/* A callable's signature as the worker read it (the resolution's
 * signature_data, check/signature.h). Missing names, kinds and texts read as
 * "-", as a printer shows them. */
struct ap_fact_param {
	const char *name, *kind;
	const json_t *default_value;  /* the default as JSON; NULL: none given as a value */
	int has_default_repr;         /* a default given as its repr only */
	const char *default_repr;
};

struct ap_fact_overload {
	const char *name, *text;
	int has_params;               /* the parameters are known (else only the text) */
	size_t nparams;
	struct ap_fact_param *params;
};

struct ap_fact_sigdata {
	int callable;
	int has_source;               /* the source is a string */
	const char *source;           /* inspect, schema, docstring; "-" when none */
	const json_t *source_json;    /* as written, NULL when none */
	const char *why;              /* why there is none (a string), else NULL */
	size_t noverloads;
	struct ap_fact_overload *overloads;
};

/* Reads signature data sig (NULL: none) into s. 0, or -ENOMEM with s emptied. */
int ap_sigdata_read(const json_t *sig, struct ap_fact_sigdata *s);

void ap_sigdata_free(struct ap_fact_sigdata *s);

/* Reads bundle b (NULL reads as an empty bundle) into f. 0, or -ENOMEM with
 * f emptied. */
int ap_bundle_facts(const json_t *b, struct ap_bundle_facts *f);

void ap_bundle_facts_free(struct ap_bundle_facts *f);

/* The upstream tests ranked for a target (a bundle's official.found, as
 * check/official.h writes it): each node id, its score, and where it uses
 * the target. */
struct ap_fact_use {
	long long line;
	const char *text;
};

struct ap_fact_found {
	long long score;
	const char *node;
	const char *notrun; /* why it cannot run there (NULL: it can) */
	size_t nuses;
	struct ap_fact_use *uses;
};

/* Reads found (an array; NULL: none) into a new array *v of *n. 0, or
 * -ENOMEM with *v NULL. */
int ap_found_facts(const json_t *found, struct ap_fact_found **v, size_t *n);

void ap_found_facts_free(struct ap_fact_found *v, size_t n);

/* Reads the array checks (check objects) into a new array *v of *n. 0, or
 * -ENOMEM with *v NULL. */
int ap_checks_facts(const json_t *checks, struct ap_fact_check **v, size_t *n);

void ap_checks_facts_free(struct ap_fact_check *v, size_t n);

/* The check of v[0..n) called name, or NULL. */
const struct ap_fact_check *ap_facts_find_check(const struct ap_fact_check *v, size_t n,
						const char *name);

#endif
