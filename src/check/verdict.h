/* verdict.h - the policy: from measurements to a verdict per environment.
 *
 * Everything here reads the bundle object (bundle.json's shape) and decides;
 * nothing measures. Traces are compared against a reference environment's,
 * step by step: a differing step is an inconsistency even when no assertion
 * was written for it.
 *
 * Verdicts: enum ap_verdict (base/outcome.h).
 *
 * Numeric checks (check/numeric.h) count as probes do: a PASS verifies, and
 * a FAIL, CRASH, TIMEOUT or ERROR is an inconsistency, with the check's
 * reason (operator, sample, dtype and device are in its name; the max
 * errors against the tolerance, or the exception types, in its reason).
 * So a device that differs from its own environment's CPU, or raises
 * another exception type, makes the environment inconsistent. An
 * environment's CPU that differs from the reference's is inconsistent when
 * both run the same torch version (something else, a plugin, changed the
 * numbers) and consistent-with-limits naming the change when the versions
 * differ (the check records same_torch). NOTRUN (OpInfo says the dtype
 * does not run there, or a known limit of the backend excused the device's
 * failure: check/limits.h) neither verifies nor fails, so the verdict
 * stands on the samples compared.
 */
#ifndef AP_VERDICT_H
#define AP_VERDICT_H

#include <jansson.h>

/* The differences of checks against ref_checks (both arrays of check objects
 * with name, kind, status, trace): a new array of {check, step, expected,
 * seen}. Only probes and scripts are compared, and only those the reference
 * also ran: official tests are judged by their own outcome. */
json_t *ap_trace_diff(const json_t *ref_checks, const json_t *checks);

/* Sets "reference_status" on each official check of checks: the status of the
 * same test in the reference (ref_checks), or null when it did not run there. */
void ap_official_compare(const json_t *ref_checks, json_t *checks);

/* Decides the verdict of bundle b (reads error, resolution, checks,
 * comparison.differences, patch) and sets b.verdict and b.verdict_reasons. */
void ap_verdict_decide(json_t *b);

/* Merges the device traces of b's checks into b.device_trace, and derives
 * b.adaptation: whether the target is device-independent (no tensors, no
 * operators, not patched), where it is implemented, and the conclusion in
 * English and Chinese. */
void ap_adaptation_decide(json_t *b);

/* Judges the bundles of one check together: picks the reference (see
 * ap_bundle_pick_reference), compares each bundle where the target resolved
 * against it (traces, official outcomes), then decides each bundle's
 * adaptation and verdict and marks it finished. */
void ap_verdict_judge(json_t *const *b, size_t n, const char *reference);

/* Appends a formatted reason (a string) to the array reasons. */
void ap_reason_add(json_t *reasons, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
