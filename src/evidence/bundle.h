/* bundle.h - the evidence of one target in one environment, on disk.
 *
 *   DIR/bundle.json      every measurement and decision (schema below)
 *   DIR/run.log          the same as a readable transcript
 *   DIR/journal.jsonl    results as they arrived (see journal.h)
 *   DIR/MANIFEST.sha256  the sha256 of every other file
 *
 * bundle.json is an object with "schema": AP_BUNDLE_SCHEMA, tool {name,
 * version, commit}, target, env {name, label, device, where}, started_utc,
 * finished_utc, fingerprint, resolution, family, operators {reference, seed,
 * max_samples, count, skipped, opinfo}, checks [{name, kind, status,
 * reason, says {en, zh}, trace [{step, value}], duration_ms, output,
 * device_trace, signature}], device_trace, comparison {reference, differences}, verdict,
 * verdict_reasons, adaptation, error.
 *
 * A numeric check (kind "numeric", src/check/numeric.h) adds to a check:
 * op, variant, dtype (null for an error input), sample_kind ("sample",
 * "reference" or "error"), sample_index, seed, input_digest (sha256 of the
 * sample as sent), device (where it ran: "cpu", "openreg", ...), against
 * ("cpu": the same environment's CPU; null: nothing, the sample only ran),
 * across (the environment whose CPU it was compared with, else null) and
 * same_torch (whether that environment has this torch version), outputs
 * [{output, dtype, shape, digest}] (what ran here), measurements [{output
 * ("out[0]", "grad[1]"), dtype, dtype_expected, dtype_match, shape_match,
 * numel, mismatches, first_mismatch, max_abs, max_rel, worst_ratio, rtol,
 * atol, tol_source, digest, digest_expected}] and exception {seen,
 * expected} (the exception type each side raised, null for none); one that
 * a known limit of the backend excused (NOTRUN, check/limits.h) adds limit
 * {name, backend, what, reason, where, seen}. A number
 * JSON cannot hold is {"$float": "inf"} (or "nan").
 *
 * This module owns that shape: other modules build a bundle and ask questions
 * of it (did the target resolve, how many probes passed, which environment is
 * the reference) through the functions below, never by spelling its keys.
 */
#ifndef AP_BUNDLE_H
#define AP_BUNDLE_H

#include <jansson.h>

#include "base/buf.h"
#include "base/outcome.h"
#include "env/envs.h"


#define AP_BUNDLE_SCHEMA "apiparity.bundle/1"

/* A count by name: an operator or a device of a device trace. */
struct ap_count_view {
	const char *name;
	long long n;
};

/* The operators a check dispatched and the devices of its tensors (a
 * check's or a bundle's device_trace; view.h reads them). */
struct ap_device_trace_view {
	int present;           /* the check has a device trace at all */
	int available;         /* tracing worked there */
	const char *why;       /* why not, when not */
	size_t nops, ndevices;
	struct ap_count_view *ops, *devices;
};

/* --- building ------------------------------------------------------------ */

/* A new bundle for target in env, started now: tool, target, env and
 * started_utc filled, fingerprint, resolution, family and error null, checks
 * empty; env.order is order, the position in --env (the report keeps it).
 * NULL when out of memory. */
json_t *ap_bundle_new(const struct ap_env *env, const char *target, size_t order);

/* A new check object: {name, kind, status, reason (null when NULL),
 * trace: [], duration_ms: 0}. */
json_t *ap_check_new(const char *name, const char *kind, enum ap_status status,
		     const char *reason);

/* What a numeric check is about: one OpInfo sample. */
struct ap_numeric_meta {
	const char *op, *variant, *dtype, *kind; /* dtype NULL: an error input */
	const char *form; /* NULL: the call the target names (protocol.h's forms) */
	long long index, seed;
	const char *input_digest;
};

/* A new numeric check (see above): ap_check_new's fields, the sample's,
 * device, against and across (NULL: null), same_torch, and outputs,
 * measurements empty, exception null. NULL when out of memory. */
json_t *ap_numeric_check_new(const char *name, enum ap_status status, const char *reason,
			     const struct ap_numeric_meta *m, const char *device,
			     const char *against, const char *across, int same_torch);

/* One comparison of two tensors (or values), as a numeric check keeps it. */
struct ap_measure {
	const char *output;                 /* "out[0]", "grad[1]" */
	const char *dtype, *dtype_expected; /* NULL: not a tensor */
	int dtype_match, shape_match;
	unsigned long long numel, mismatches;
	long long first_mismatch;           /* -1: none */
	double max_abs, max_rel, worst_ratio, rtol, atol;
	const char *tol_source;             /* "default", or the overrides file's reason */
	const char *digest, *digest_expected;
	/* judged by another tolerance than the dtype's default (an override):
	 * the same comparison under the default, so that a reviewer can judge
	 * it as the built-in tolerances would (bundle.json's "default") */
	int has_default;
	double default_rtol, default_atol, default_worst_ratio;
	unsigned long long default_mismatches;
};

/* Appends m to check c's measurements. */
void ap_numeric_add_measure(json_t *c, const struct ap_measure *m);

/* Appends {output, dtype, shape (stolen), digest} to check c's outputs. */
void ap_numeric_add_output(json_t *c, const char *output, const char *dtype, json_t *shape,
			   const char *digest);

/* Sets check c's exception: the type each side raised (NULL: none). */
void ap_numeric_set_exception(json_t *c, const char *seen, const char *expected);

/* Check c's status; AP_STATUS_UNKNOWN when it has none or another word. */
enum ap_status ap_check_status(const json_t *c);

/* Check c's reason, or NULL; its kind (AP_KIND_UNKNOWN: none or another
 * word). */
const char *ap_check_reason(const json_t *c);
enum ap_check_kind ap_check_kind(const json_t *c);

/* Marks check c excused by a known limit of its backend (check/limits.h):
 * c.limit = {name, backend, what, reason, where, seen: c's reason until now,
 * raised: the exception type the device raised, message: its message (at
 * most 4 KiB of it), so that a reviewer can match the failure against the
 * limits it accepts}, c.status NOTRUN and c.reason the given one. */
void ap_check_excuse(json_t *c, const char *name, const char *backend, const char *what,
		     const char *limit_reason, const char *where, const char *raised,
		     const char *message, const char *reason);

/* b's env record {name, label, device, where, order}, as the journal's
 * start record holds it (b's reference), and b's error message (NULL when
 * it did not fail). */
const json_t *ap_bundle_env(const json_t *b);
const char *ap_bundle_error_message(const json_t *b);

/* Sets check c's status to st. */
void ap_check_set_status(json_t *c, enum ap_status st);

/* Appends check c to b's checks (b takes a new reference; c stays the
 * caller's). */
void ap_bundle_add_check(json_t *b, json_t *c);

/* Records that the environment failed with err (-AP_E* or -errno):
 * b.error = {kind, exit_code, message}. Returns b.error (b's reference). */
const json_t *ap_bundle_set_error(json_t *b, int err, const char *message);

/* b.family: the family and member the target's checks come from. */
void ap_bundle_set_family(json_t *b, const char *name, const char *member,
			  const char *summary_en, const char *summary_zh);

/* b.operators: where the numeric checks' samples come from: the reference
 * that made them, the seed, --samples, how many, the samples it left out
 * (skipped, copied), this environment's OpInfo answer (opinfo, copied;
 * NULL: not asked) and what apiparity adapted in its runner (adapter,
 * taken; NULL: nothing). */
void ap_bundle_set_operators(json_t *b, const char *reference, long long seed, int max_samples,
			     size_t count, const json_t *skipped, const json_t *opinfo,
			     json_t *adapter);

/* Whether a family spec covers the target in b (b.family is set). */
int ap_bundle_family(const json_t *b);

/* b.official: where the upstream tests were found (root, the torch package
 * version or NULL), how they were isolated from each other (isolation, in
 * words), the ranked tests (found, stolen; NULL for none) and the adapter
 * the tests ran through (stolen; NULL for none: official.h). */
void ap_bundle_set_official(json_t *b, const char *root, const char *version,
			    const char *isolation, json_t *found, json_t *adapter);

/* b.comparison: the reference's name and the trace differences from it
 * (stolen), or {} when reference is NULL (nothing to compare with). */
void ap_bundle_set_comparison(json_t *b, const char *reference, json_t *differences);

/* b.verdict and b.verdict_reasons (an array of strings, stolen). */
void ap_bundle_set_verdict(json_t *b, enum ap_verdict v, json_t *reasons);

/* b.device_trace: {available, why (null when available), ops, tensor_devices}
 * from dt (counts in dt's order). */
void ap_bundle_set_device_trace(json_t *b, const struct ap_device_trace_view *dt);

/* b.adaptation: whether the target is device-independent, patched, traced,
 * and the conclusion in English and Chinese. */
void ap_bundle_set_adaptation(json_t *b, int independent, int patched, int traced,
			      const char *conclusion_en, const char *conclusion_zh);

/* Appends a trace difference {check, step, expected, seen} to the array out
 * (a comparison's differences); a NULL value is null, and nothing is added
 * when check or step is NULL. */
void ap_difference_add(json_t *out, const char *check, const char *step,
		       const json_t *expected, const json_t *seen);

/* Sets official check c's reference_status to status (a string or null; NULL
 * sets nothing). */
void ap_check_set_reference_status(json_t *c, const json_t *status);

/* b's checks, an array (b's reference), or NULL. */
json_t *ap_bundle_checks(const json_t *b);

/* b.finished_utc: now. */
void ap_bundle_finish(json_t *b);

/* A new signature check (see check/signature.h): ap_check_new("signature",
 * "signature", status, reason) with signature = detail (stolen). */
json_t *ap_check_signature_new(enum ap_status status, const char *reason, json_t *detail);

/* --- asking ------------------------------------------------------------- */

/* Whether a resolution (the worker's resolve answer) found the target. */
int ap_resolved(const json_t *resolution);

/* Whether the target resolved in bundle b. */
int ap_bundle_resolved(const json_t *b);

/* The target's signature in b as the worker read it (resolution's
 * signature_data), or NULL. */
const json_t *ap_bundle_signature(const json_t *b);

/* b's fingerprint (borrowed), or NULL. */
json_t *ap_bundle_fingerprint(const json_t *b);

/* b's torch version (fingerprint.torch.version), or NULL. */
const char *ap_bundle_torch_version(const json_t *b);

/* b's environment name, "-" when missing. */
const char *ap_bundle_env_name(const json_t *b);

/* b's verdict; AP_VERDICT_UNKNOWN before it is decided. */
enum ap_verdict ap_bundle_verdict(const json_t *b);

/* Whether the environment of b failed (b.error is set). */
int ap_bundle_failed(const json_t *b);

/* The probes, scripts and numeric checks of b that ran (status other than NOTRUN) into
 * *total, and of those the ones that passed into *passed. */
void ap_bundle_probe_counts(const json_t *b, int *passed, int *total);

/* The reference among n bundles: the one of the environment called name
 * when given, else the first where the target resolved; either only when its
 * environment did not fail. Its index, or -1 when there is none. */
int ap_bundle_pick_reference(json_t *const *b, size_t n, const char *name);

/* --- writing ------------------------------------------------------------ */

/* Writes bundle.json and run.log for b into dir, then the manifest over
 * everything in dir. 0 or -errno (-ENOSPC on a full disk) with err saying
 * which file; a file written before the failure stays. */
int ap_bundle_write(const char *dir, const json_t *b, struct ap_buf *err);

/* Renders b as the run.log transcript. */
void ap_runlog_render(const json_t *b, struct ap_buf *out);

#endif
