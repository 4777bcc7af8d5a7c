/* fuzz-compare - two tensor views built from fuzz bytes (dtype, shape,
 * strides, storage of any length and alignment, each in a buffer of exactly
 * that size so ASan sees any read outside it), compared under a tolerance
 * from the bytes. Checked on each: ap_compare refuses exactly the views
 * ap_tensor_check refuses, its counts are coherent, and any valid view
 * compared with itself under equal_nan matches everywhere with equal
 * digests. A broken contract aborts (a finding). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/compare.h"

/* Elements compared, at most: larger (broadcast) views only take time. */
#define MAX_NUMEL (1 << 16)

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t byte(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* A size or stride: mostly small, sometimes negative or huge. */
static int64_t dim_value(struct in *in)
{
	uint8_t b = byte(in);
	switch (b >> 5) {
	case 7:
		return INT64_MAX - (b & 31);
	case 6:
		return (int64_t)1 << (32 + (b & 31) % 31); /* 2^32 .. 2^62 */
	case 5:
		return -(int64_t)(b & 31) - 1;
	case 4: /* up to 1984: rows as long as the fast path's blocks */
		return (int64_t)(b & 31) << 6;
	default:
		return b & 15;
	}
}

static void view(struct in *in, struct ap_tensor *t)
{
	memset(t, 0, sizeof(*t));
	t->dtype = (enum ap_dtype)(byte(in) % (AP_DT_COUNT + 2));
	t->ndim = byte(in) % (AP_TENSOR_MAX_DIM + 3) - 1; /* -1 .. MAX + 1 */
	for (int i = 0; i < t->ndim && i < AP_TENSOR_MAX_DIM; i++) {
		t->shape[i] = dim_value(in);
		t->strides[i] = dim_value(in);
	}
}

/* The storage: len bytes of in, in a buffer of exactly that size, at an odd
 * address when misalign is set. */
static unsigned char *storage(struct in *in, size_t len, int misalign, struct ap_tensor *t)
{
	len = len < in->n ? len : in->n;
	unsigned char *buf = malloc(len + (size_t)misalign + 1);
	if (!buf)
		abort();
	memcpy(buf + misalign, in->p, len);
	in->p += len, in->n -= len;
	t->data = buf + misalign;
	t->nbytes = len;
	return buf;
}

static int64_t numel(const struct ap_tensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++)
		if (!t->shape[i])
			return 0;
	for (int i = 0; i < t->ndim; i++)
		n *= t->shape[i]; /* checked: cannot overflow */
	return n;
}

static const double tols[] = { 0, 1e-7, 1.3e-6, 1e-3, 0.5, 1, 1e300, -1, NAN, INFINITY };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct ap_tensor a, e;
	view(&in, &a);
	uint8_t how = byte(&in);
	if (how & 1) { /* the same shape: the comparison proper is reached */
		e = a;
		e.dtype = (enum ap_dtype)(byte(&in) % (AP_DT_COUNT + 2));
		for (int i = 0; i < e.ndim && i < AP_TENSOR_MAX_DIM; i++)
			e.strides[i] = dim_value(&in);
	} else {
		view(&in, &e);
	}
	struct ap_tolerance tol = { .rtol = tols[byte(&in) % 10], .atol = tols[byte(&in) % 10],
				    .equal_nan = how >> 1 & 1 };
	size_t la = byte(&in) * 64u + (how >> 4 & 3); /* up to 16 KiB: whole fast-path blocks */
	unsigned char *ba = storage(&in, la, how >> 2 & 1, &a);
	unsigned char *be = storage(&in, in.n, how >> 3 & 1, &e);

	int ca = ap_tensor_check(&a), ce = ap_tensor_check(&e);
	if ((ca && ca != -EINVAL) || (ce && ce != -EINVAL))
		abort();
	if (!ca && numel(&a) > MAX_NUMEL)
		ca = 1;
	if (!ce && numel(&e) > MAX_NUMEL)
		ce = 1;
	int tol_ok = tol.rtol >= 0 && tol.atol >= 0 && isfinite(tol.rtol) && isfinite(tol.atol);
	struct ap_compare_result r;
	if (ca == 1 || ce == 1)
		goto out;
	int rc = ap_compare(&a, &e, &tol, &r);
	if ((rc == 0) != (!ca && !ce && tol_ok))
		abort();
	if (rc == 0 && r.shape_match) {
		if (r.numel != (uint64_t)numel(&a) || r.mismatches > r.numel ||
		    (r.mismatches == 0) != (r.first_mismatch == -1) ||
		    r.first_mismatch >= (int64_t)r.numel || !(r.max_abs >= 0) ||
		    !(r.max_rel >= 0) || !(r.worst_ratio >= 0) ||
		    strlen(r.digest_actual) != 64 || strlen(r.digest_expected) != 64)
			abort();
		if (ap_compare_consistent(&r) != (r.dtype_match && !r.mismatches))
			abort();
	}
	if (!ca && tol_ok) { /* a view matches itself */
		tol.equal_nan = 1;
		if (ap_compare(&a, &a, &tol, &r) || !ap_compare_consistent(&r) ||
		    strcmp(r.digest_actual, r.digest_expected))
			abort();
	}
out:
	free(ba);
	free(be);
	return 0;
}
