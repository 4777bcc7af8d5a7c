/* compare.h - numeric comparison of two tensors, decided in C.
 *
 * The worker never judges numbers: it ships each output as dtype, shape,
 * strides (in elements) and the raw little-endian bytes of its storage, moved
 * to CPU. This module decodes them (bool, integers, float16, bfloat16,
 * float32, float64, complex64, complex128) and compares actual against
 * expected element by element with torch.testing.assert_close's rule:
 *
 *   |actual - expected| <= atol + rtol * |expected|
 *
 * with the same per-dtype defaults (ap_tolerance_default). Integers and bool
 * are compared exactly. Rules for special values, stated once here:
 *   - NaN matches NaN only when tol.equal_nan is set (the checks set it:
 *     a device that returns NaN where CPU does is consistent); otherwise a NaN
 *     on either side is a mismatch.
 *   - +Inf matches only +Inf and -Inf only -Inf, whatever the tolerance.
 *   - -0.0 equals +0.0 (as assert_close); the sign of zero is not compared.
 *   - complex values are compared on |a - e| against atol + rtol * |e|.
 * One element out of tolerance is a mismatch: there is no "fraction of bad
 * elements" allowance.
 *
 * The result keeps measurements, not only a verdict, so a tolerance can be
 * changed later without re-running: max absolute and relative error, the
 * worst error over its allowance, the number of mismatches, the first
 * mismatching element (flat index in logical, row-major order) and a SHA-256
 * of each side's logical contents.
 */
#ifndef AP_COMPARE_H
#define AP_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#define AP_TENSOR_MAX_DIM 16

enum ap_dtype {
	AP_DT_BOOL, AP_DT_UINT8, AP_DT_INT8, AP_DT_INT16, AP_DT_INT32, AP_DT_INT64,
	AP_DT_FLOAT16, AP_DT_BFLOAT16, AP_DT_FLOAT32, AP_DT_FLOAT64,
	AP_DT_COMPLEX64, AP_DT_COMPLEX128,
	AP_DT_COUNT
};

/* The dtype named name ("float32" or "torch.float32"); 0, or -EINVAL for a
 * name this module does not decode. */
int ap_dtype_parse(const char *name, enum ap_dtype *out);
const char *ap_dtype_name(enum ap_dtype dt); /* "float32" */
size_t ap_dtype_size(enum ap_dtype dt);      /* bytes per element */

/* A tensor as the worker ships it. data holds nbytes bytes: the storage the
 * strided view reads from (offset already applied). Strides are in elements
 * and may be 0 (broadcast) but not negative. */
struct ap_tensor {
	enum ap_dtype dtype;
	int ndim;
	int64_t shape[AP_TENSOR_MAX_DIM];
	int64_t strides[AP_TENSOR_MAX_DIM];
	const void *data;
	size_t nbytes;
};

/* Checks t against itself: ndim in range, no negative size or stride, no
 * overflow, and every element the view reads lies inside data. 0 or -EINVAL;
 * every function below calls it and never reads outside data. */
int ap_tensor_check(const struct ap_tensor *t);

struct ap_tolerance {
	double rtol, atol;
	int equal_nan;
};

/* assert_close's defaults for dt (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5,
 * float32 1.3e-6/1e-5, float64 1e-7/1e-7, complex as their parts; 0/0 for
 * integers and bool), equal_nan set. */
struct ap_tolerance ap_tolerance_default(enum ap_dtype dt);

struct ap_compare_result {
	int dtype_match;        /* both sides have the same dtype */
	int shape_match;        /* and the same shape; if not, nothing below is set */
	uint64_t numel;
	uint64_t mismatches;
	int64_t first_mismatch; /* flat logical index, -1 when none */
	double max_abs;         /* max |a - e| over finite pairs */
	double max_rel;         /* max |a - e| / |e| over finite pairs, e != 0 */
	double worst_ratio;     /* max |a - e| / (atol + rtol*|e|); 0 if exact */
	char digest_actual[65]; /* sha256 of the logical contents, row-major */
	char digest_expected[65];
};

/* Compares actual against expected under tol (dtypes may differ: then
 * dtype_match is 0, the result is a mismatch and values are still measured
 * after converting both to double/complex double). 0, or -EINVAL when either
 * tensor fails ap_tensor_check. consistent = dtype_match && shape_match &&
 * mismatches == 0. */
int ap_compare(const struct ap_tensor *actual, const struct ap_tensor *expected,
	       const struct ap_tolerance *tol, struct ap_compare_result *res);

int ap_compare_consistent(const struct ap_compare_result *res);

/* Details of the above, stated where the contract left them open:
 *   - the rule is evaluated in double precision (float32 and narrower values
 *     convert exactly; complex distances use hypot);
 *   - integers and bool ignore tol; a differing pair has worst_ratio +Inf,
 *     as has any finite pair whose allowance is 0;
 *   - max_abs, max_rel and worst_ratio cover finite pairs only: a NaN or
 *     infinite pair counts as a mismatch (or not) by the rules above and
 *     leaves them alone; a complex value is NaN if either part is, and with
 *     an infinite part it matches only an identical value;
 *   - tol with a negative, NaN or infinite rtol or atol is -EINVAL, like a
 *     bad view;
 *   - on a shape mismatch first_mismatch is -1, everything else 0 and the
 *     digests are empty;
 *   - a digest is empty (matching no real one) only if memory ran out.
 *
 * ap_compare_flags() is ap_compare() with flags: AP_COMPARE_NO_DIGEST leaves
 * both digests empty, for callers that have them already (and for measuring
 * the comparison alone: SHA-256 is slower than the comparison). */
#define AP_COMPARE_NO_DIGEST 1u

int ap_compare_flags(const struct ap_tensor *actual, const struct ap_tensor *expected,
		     const struct ap_tolerance *tol, unsigned flags,
		     struct ap_compare_result *res);

#endif
