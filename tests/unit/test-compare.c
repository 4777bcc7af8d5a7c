/* test-compare.c - unit tests for src/check/compare.h: every dtype decoded,
 * assert_close's rule at its boundary, the NaN/Inf/-0 rules, strided and
 * broadcast views, and malformed views refused without a read outside data. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/compare.h"
#include "base/sha256.h"

/* A 1-D contiguous view of n elements of data. */
static struct ap_tensor vec(enum ap_dtype dt, const void *data, int64_t n)
{
	struct ap_tensor t = { .dtype = dt, .ndim = 1, .shape = { n }, .strides = { 1 },
			       .data = data, .nbytes = (size_t)n * ap_dtype_size(dt) };
	return t;
}

static struct ap_tolerance tol_of(double rtol, double atol, int equal_nan)
{
	struct ap_tolerance t = { .rtol = rtol, .atol = atol, .equal_nan = equal_nan };
	return t;
}

static struct ap_compare_result cmp(const struct ap_tensor *a, const struct ap_tensor *e,
				    struct ap_tolerance tol)
{
	struct ap_compare_result r;
	assert_int_equal(ap_compare(a, e, &tol, &r), 0);
	return r;
}

/* Mismatches between one-element tensors a and e of dtype dt. */
static uint64_t mism1(enum ap_dtype dt, const void *a, const void *e, struct ap_tolerance tol)
{
	struct ap_tensor ta = vec(dt, a, 1), te = vec(dt, e, 1);
	return cmp(&ta, &te, tol).mismatches;
}

static void dtype_names_parse_and_sizes_are_torch_s(void **state)
{
	(void)state;
	static const size_t sizes[AP_DT_COUNT] = { 1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16 };
	enum ap_dtype dt;
	for (int i = 0; i < AP_DT_COUNT; i++) {
		assert_int_equal(ap_dtype_parse(ap_dtype_name((enum ap_dtype)i), &dt), 0);
		assert_int_equal(dt, i);
		assert_int_equal(ap_dtype_size((enum ap_dtype)i), sizes[i]);
	}
	assert_int_equal(ap_dtype_parse("torch.bfloat16", &dt), 0);
	assert_int_equal(dt, AP_DT_BFLOAT16);
	assert_int_equal(ap_dtype_parse("torch.half", &dt), 0);
	assert_int_equal(dt, AP_DT_FLOAT16);
	assert_int_equal(ap_dtype_parse("long", &dt), 0);
	assert_int_equal(dt, AP_DT_INT64);
	assert_int_equal(ap_dtype_parse("float8_e4m3fn", &dt), -EINVAL);
	assert_int_equal(ap_dtype_parse("torch.", &dt), -EINVAL);
	assert_int_equal(ap_dtype_parse(NULL, &dt), -EINVAL);
	assert_string_equal(ap_dtype_name(AP_DT_COUNT), "unknown");
	assert_int_equal(ap_dtype_size(AP_DT_COUNT), 0);
}

/* torch/testing/_comparison.py's _DTYPE_PRECISIONS (torch 2.6). */
static void default_tolerances_are_assert_close_s(void **state)
{
	(void)state;
	static const struct {
		enum ap_dtype dt;
		double rtol, atol;
	} want[] = {
		{ AP_DT_FLOAT16, 1e-3, 1e-5 },     { AP_DT_BFLOAT16, 1.6e-2, 1e-5 },
		{ AP_DT_FLOAT32, 1.3e-6, 1e-5 },   { AP_DT_FLOAT64, 1e-7, 1e-7 },
		{ AP_DT_COMPLEX64, 1.3e-6, 1e-5 }, { AP_DT_COMPLEX128, 1e-7, 1e-7 },
		{ AP_DT_BOOL, 0, 0 },  { AP_DT_UINT8, 0, 0 }, { AP_DT_INT8, 0, 0 },
		{ AP_DT_INT16, 0, 0 }, { AP_DT_INT32, 0, 0 }, { AP_DT_INT64, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct ap_tolerance t = ap_tolerance_default(want[i].dt);
		assert_true(t.rtol == want[i].rtol);
		assert_true(t.atol == want[i].atol);
		assert_int_equal(t.equal_nan, 1);
	}
}

/* |a - e| <= atol + rtol * |e|, with tolerances exact in binary: exactly at
 * the bound passes, one ulp beyond fails, on both sides of e. */
static void exactly_at_the_bound_passes_one_ulp_beyond_fails(void **state)
{
	(void)state;
	struct ap_tolerance tol = tol_of(0.25, 0.5, 1); /* bound at e = 4: 1.5 */
	double e = 4, hi = 5.5, lo = 2.5;
	double hi1 = nextafter(hi, INFINITY), lo1 = nextafter(lo, -INFINITY);
	assert_int_equal(mism1(AP_DT_FLOAT64, &hi, &e, tol), 0);
	assert_int_equal(mism1(AP_DT_FLOAT64, &lo, &e, tol), 0);
	assert_int_equal(mism1(AP_DT_FLOAT64, &hi1, &e, tol), 1);
	assert_int_equal(mism1(AP_DT_FLOAT64, &lo1, &e, tol), 1);

	float fe = 4, fhi = 5.5f, fhi1 = nextafterf(5.5f, INFINITY);
	assert_int_equal(mism1(AP_DT_FLOAT32, &fhi, &fe, tol), 0);
	assert_int_equal(mism1(AP_DT_FLOAT32, &fhi1, &fe, tol), 1);

	/* The same through the float32 fast path: a whole block of such pairs. */
	float *a = malloc(4096 * sizeof(float)), *x = malloc(4096 * sizeof(float));
	assert_non_null(a);
	assert_non_null(x);
	for (int i = 0; i < 4096; i++)
		a[i] = fhi, x[i] = fe;
	struct ap_tensor ta = vec(AP_DT_FLOAT32, a, 4096), tx = vec(AP_DT_FLOAT32, x, 4096);
	struct ap_compare_result r = cmp(&ta, &tx, tol);
	assert_int_equal(r.mismatches, 0);
	assert_true(r.worst_ratio == 1);
	a[3000] = fhi1;
	r = cmp(&ta, &tx, tol);
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 3000);
	free(a);
	free(x);
}

static void default_float32_tolerance_accepts_rounding_not_more(void **state)
{
	(void)state;
	struct ap_tolerance tol = ap_tolerance_default(AP_DT_FLOAT32);
	float e = 1000, near = nextafterf(1000, 2000), far = 1000.01f;
	assert_int_equal(mism1(AP_DT_FLOAT32, &near, &e, tol), 0);
	assert_int_equal(mism1(AP_DT_FLOAT32, &far, &e, tol), 1); /* 1e-2 > 1.31e-3 */
}

static void one_element_in_a_million_is_a_mismatch(void **state)
{
	(void)state;
	int64_t n = 1000000;
	float *a = calloc((size_t)n, sizeof(float)), *e = calloc((size_t)n, sizeof(float));
	assert_non_null(a);
	assert_non_null(e);
	for (int64_t i = 0; i < n; i++)
		a[i] = e[i] = (float)(i % 977) / 7;
	a[765432] += 1;
	struct ap_tensor ta = vec(AP_DT_FLOAT32, a, n), te = vec(AP_DT_FLOAT32, e, n);
	struct ap_compare_result r = cmp(&ta, &te, ap_tolerance_default(AP_DT_FLOAT32));
	assert_int_equal(r.numel, n);
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 765432);
	assert_false(ap_compare_consistent(&r));
	assert_true(r.max_abs > 0.99 && r.max_abs < 1.01);
	a[765432] = e[765432];
	r = cmp(&ta, &te, ap_tolerance_default(AP_DT_FLOAT32));
	assert_int_equal(r.mismatches, 0);
	assert_int_equal(r.first_mismatch, -1);
	assert_true(r.max_abs == 0 && r.worst_ratio == 0);
	assert_true(ap_compare_consistent(&r));
	free(a);
	free(e);
}

/* The fast path (contiguous float32) and the element path (the same values
 * read through a stride of 2) give the same result to the bit. */
static void fast_path_and_strided_path_agree(void **state)
{
	(void)state;
	int64_t n = 50000;
	float *a = malloc((size_t)n * sizeof(float)), *e = malloc((size_t)n * sizeof(float));
	float *a2 = calloc((size_t)n * 2, sizeof(float));
	assert_true(a && e && a2);
	uint32_t s = 12345;
	for (int64_t i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		e[i] = (float)((int32_t)s) / 1e9f;
		a[i] = e[i] * (1 + (float)(s >> 20) * 1e-9f);
		if (i % 9973 == 5)
			a[i] = NAN;
		if (i % 7919 == 3)
			e[i] = 0, a[i] = 1e-6f;
		if (i == 40000)
			a[i] += 1;
		a2[2 * i] = a[i];
	}
	e[20000] = NAN;
	a2[2 * 20000] = a[20000] = NAN;
	struct ap_tensor ta = vec(AP_DT_FLOAT32, a, n), te = vec(AP_DT_FLOAT32, e, n);
	struct ap_tensor ts = ta;
	ts.data = a2;
	ts.strides[0] = 2;
	ts.nbytes = (size_t)n * 2 * sizeof(float);
	struct ap_tolerance tol = ap_tolerance_default(AP_DT_FLOAT32);
	struct ap_compare_result f = cmp(&ta, &te, tol), g = cmp(&ts, &te, tol);
	assert_int_equal(f.mismatches, g.mismatches);
	assert_true(f.mismatches > 5);
	assert_int_equal(f.first_mismatch, g.first_mismatch);
	assert_true(f.max_abs == g.max_abs);
	assert_true(f.max_rel == g.max_rel);
	assert_true(f.worst_ratio == g.worst_ratio);
	assert_string_equal(f.digest_actual, g.digest_actual);
	free(a);
	free(e);
	free(a2);
}

/* NaN matches NaN only with equal_nan; a NaN against a number never. */
static void nan_rules(void **state)
{
	(void)state;
	struct ap_tolerance on = tol_of(1, 1, 1), off = tol_of(1, 1, 0);
	double dn = NAN, d1 = 1;
	float fn = NAN, f1 = 1;
	uint16_t hn = 0x7E00, h1 = 0x3C00, bn = 0x7FC0, b1 = 0x3F80;
	double cn[2] = { 1, NAN }, c1[2] = { 1, 0 }, cn2[2] = { NAN, 0 };
	struct {
		enum ap_dtype dt;
		const void *nan, *one;
	} v[] = {
		{ AP_DT_FLOAT64, &dn, &d1 }, { AP_DT_FLOAT32, &fn, &f1 },
		{ AP_DT_FLOAT16, &hn, &h1 }, { AP_DT_BFLOAT16, &bn, &b1 },
		{ AP_DT_COMPLEX128, cn, c1 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(mism1(v[i].dt, v[i].nan, v[i].nan, on), 0);
		assert_int_equal(mism1(v[i].dt, v[i].nan, v[i].nan, off), 1);
		assert_int_equal(mism1(v[i].dt, v[i].nan, v[i].one, on), 1);
		assert_int_equal(mism1(v[i].dt, v[i].one, v[i].nan, on), 1);
	}
	/* complex: NaN in either part is NaN */
	assert_int_equal(mism1(AP_DT_COMPLEX128, cn, cn2, on), 0);
	assert_int_equal(mism1(AP_DT_COMPLEX128, cn, cn2, off), 1);
	/* a NaN pair measures nothing */
	struct ap_tensor a = vec(AP_DT_FLOAT64, &dn, 1), e = vec(AP_DT_FLOAT64, &d1, 1);
	struct ap_compare_result r = cmp(&a, &e, on);
	assert_true(r.max_abs == 0 && r.max_rel == 0 && r.worst_ratio == 0);
	assert_int_equal(r.first_mismatch, 0);
}

/* +Inf matches only +Inf, -Inf only -Inf, whatever the tolerance. */
static void inf_rules(void **state)
{
	(void)state;
	struct ap_tolerance huge = tol_of(1, DBL_MAX, 1);
	double pi = INFINITY, ni = -INFINITY, big = DBL_MAX;
	float fpi = INFINITY, fni = -INFINITY;
	uint16_t hpi = 0x7C00, hni = 0xFC00, hmax = 0x7BFF, bpi = 0x7F80, bni = 0xFF80;
	assert_int_equal(mism1(AP_DT_FLOAT64, &pi, &pi, huge), 0);
	assert_int_equal(mism1(AP_DT_FLOAT64, &ni, &ni, huge), 0);
	assert_int_equal(mism1(AP_DT_FLOAT64, &pi, &ni, huge), 1);
	assert_int_equal(mism1(AP_DT_FLOAT64, &ni, &pi, huge), 1);
	assert_int_equal(mism1(AP_DT_FLOAT64, &pi, &big, huge), 1);
	assert_int_equal(mism1(AP_DT_FLOAT64, &big, &pi, huge), 1);
	assert_int_equal(mism1(AP_DT_FLOAT32, &fpi, &fpi, huge), 0);
	assert_int_equal(mism1(AP_DT_FLOAT32, &fpi, &fni, huge), 1);
	assert_int_equal(mism1(AP_DT_FLOAT16, &hpi, &hpi, huge), 0);
	assert_int_equal(mism1(AP_DT_FLOAT16, &hpi, &hni, huge), 1);
	assert_int_equal(mism1(AP_DT_FLOAT16, &hmax, &hpi, huge), 1);
	assert_int_equal(mism1(AP_DT_BFLOAT16, &bni, &bni, huge), 0);
	assert_int_equal(mism1(AP_DT_BFLOAT16, &bpi, &bni, huge), 1);
	double cpi[2] = { INFINITY, 1 }, cpi2[2] = { INFINITY, 2 }, cni[2] = { -INFINITY, 1 };
	assert_int_equal(mism1(AP_DT_COMPLEX128, cpi, cpi, huge), 0);
	assert_int_equal(mism1(AP_DT_COMPLEX128, cpi, cni, huge), 1);
	assert_int_equal(mism1(AP_DT_COMPLEX128, cpi, cpi2, huge), 1);
	/* through the fast path too */
	float *a = calloc(2048, sizeof(float)), *e = calloc(2048, sizeof(float));
	assert_true(a && e);
	a[1500] = INFINITY;
	e[1500] = -INFINITY;
	struct ap_tensor ta = vec(AP_DT_FLOAT32, a, 2048), te = vec(AP_DT_FLOAT32, e, 2048);
	struct ap_compare_result r = cmp(&ta, &te, huge);
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 1500);
	e[1500] = INFINITY;
	assert_int_equal(cmp(&ta, &te, huge).mismatches, 0);
	free(a);
	free(e);
}

/* -0.0 equals +0.0, even with no tolerance at all. */
static void negative_zero_equals_zero(void **state)
{
	(void)state;
	struct ap_tolerance exact = tol_of(0, 0, 0);
	double dz = 0, dnz = -0.0;
	float fz = 0, fnz = -0.0f;
	uint16_t hz = 0, hnz = 0x8000;
	float cz[2] = { 0, -0.0f }, cnz[2] = { -0.0f, 0 };
	assert_int_equal(mism1(AP_DT_FLOAT64, &dnz, &dz, exact), 0);
	assert_int_equal(mism1(AP_DT_FLOAT32, &fz, &fnz, exact), 0);
	assert_int_equal(mism1(AP_DT_FLOAT16, &hnz, &hz, exact), 0);
	assert_int_equal(mism1(AP_DT_BFLOAT16, &hnz, &hz, exact), 0);
	assert_int_equal(mism1(AP_DT_COMPLEX64, cz, cnz, exact), 0);
	/* but the digests, being of the bytes, differ */
	struct ap_tensor a = vec(AP_DT_FLOAT64, &dnz, 1), e = vec(AP_DT_FLOAT64, &dz, 1);
	struct ap_compare_result r = cmp(&a, &e, exact);
	assert_string_not_equal(r.digest_actual, r.digest_expected);
}

/* Each value, stored as dtype dt in bits, decodes to want: compared against a
 * float64 tensor with no tolerance (a dtype mismatch, values still measured). */
static void decodes_as(enum ap_dtype dt, const void *bits, size_t n, const double *want)
{
	struct ap_tensor a = vec(dt, bits, (int64_t)n), e = vec(AP_DT_FLOAT64, want, (int64_t)n);
	struct ap_compare_result r = cmp(&a, &e, tol_of(0, 0, 1));
	assert_int_equal(r.dtype_match, dt == AP_DT_FLOAT64);
	assert_int_equal(r.shape_match, 1);
	if (r.mismatches)
		fail_msg("%s element %lld decodes wrong", ap_dtype_name(dt),
			 (long long)r.first_mismatch);
	assert_int_equal(ap_compare_consistent(&r), dt == AP_DT_FLOAT64);
}

static void float16_decoded_by_hand(void **state)
{
	(void)state;
	static const uint16_t h[] = { 0x3C00, 0xC000, 0x0001, 0x03FF, 0x0400, 0x7BFF,
				      0x3555, 0x7C00, 0xFC00, 0x7E00, 0x8000 };
	const double want[] = { 1, -2, ldexp(1, -24), ldexp(1023, -24), ldexp(1, -14), 65504,
				0.333251953125, INFINITY, -INFINITY, NAN, 0 };
	decodes_as(AP_DT_FLOAT16, h, sizeof(h) / sizeof(h[0]), want);
}

static void bfloat16_decoded_by_hand(void **state)
{
	(void)state;
	static const uint16_t b[] = { 0x3F80, 0xC040, 0x4049, 0x0001, 0x7F7F, 0x7F80,
				      0xFF80, 0x7FC0, 0x8000, 0x3E20 };
	const double want[] = { 1, -3, 3.140625, ldexp(1, -133), 3.3895313892515355e38,
				INFINITY, -INFINITY, NAN, 0, 0.15625 };
	decodes_as(AP_DT_BFLOAT16, b, sizeof(b) / sizeof(b[0]), want);
	/* the value is the high half of a float32, stored little-endian */
	static const unsigned char le[] = { 0x80, 0x3F, 0x40, 0xC0 };
	const double w2[] = { 1, -3 };
	decodes_as(AP_DT_BFLOAT16, le, 2, w2);
}

static void float32_float64_complex_decoded(void **state)
{
	(void)state;
	static const unsigned char f32[] = { 0x00, 0x00, 0xC0, 0x3F, 0x01, 0x00, 0x00, 0x00 };
	const double w32[] = { 1.5, ldexp(1, -149) };
	decodes_as(AP_DT_FLOAT32, f32, 2, w32);
	static const unsigned char f64[] = { 0, 0, 0, 0, 0, 0, 0xF0, 0xBF };
	const double w64[] = { -1 };
	decodes_as(AP_DT_FLOAT64, f64, 1, w64);

	/* complex64: real part first; |a - e| is the modulus of the difference */
	float e[2] = { 3, 4 }, a[2] = { 3.3f, 4.4f };
	struct ap_tensor ta = vec(AP_DT_COMPLEX64, a, 1), te = vec(AP_DT_COMPLEX64, e, 1);
	struct ap_compare_result r = cmp(&ta, &te, tol_of(0.11, 0, 1));
	double d = hypot((double)3.3f - 3, (double)4.4f - 4);
	assert_true(fabs(r.max_abs - d) < 1e-15);
	assert_true(fabs(r.max_rel - d / 5) < 1e-15);
	assert_int_equal(r.mismatches, 0); /* 0.5 <= 0.11 * 5 */
	assert_int_equal(cmp(&ta, &te, tol_of(0.09, 0, 1)).mismatches, 1);
	float a2[2] = { 3, 4.4f }; /* the imaginary part alone differs */
	ta.data = a2;
	assert_int_equal(cmp(&ta, &te, tol_of(0, 0.3, 1)).mismatches, 1);
	double c[4] = { 1, -2, 1, -2 }, c2[4] = { 1, -2, 1, 2 };
	struct ap_tensor tc = vec(AP_DT_COMPLEX128, c, 2), tc2 = vec(AP_DT_COMPLEX128, c2, 2);
	r = cmp(&tc, &tc2, tol_of(0, 1, 1));
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 1);
	assert_true(r.max_abs == 4);
}

/* Integers and bool compare exactly, even where double would round, and
 * whatever the tolerance. */
static void integers_and_bool_are_exact(void **state)
{
	(void)state;
	struct ap_tolerance loose = tol_of(1, 1000, 1);
	int64_t big = 9007199254740993LL, big1 = 9007199254740992LL, lo = INT64_MIN,
		hi = INT64_MAX;
	assert_int_equal(mism1(AP_DT_INT64, &big, &big1, loose), 1);
	assert_int_equal(mism1(AP_DT_INT64, &big, &big, loose), 0);
	struct ap_tensor a = vec(AP_DT_INT64, &lo, 1), e = vec(AP_DT_INT64, &hi, 1);
	struct ap_compare_result r = cmp(&a, &e, loose);
	assert_int_equal(r.mismatches, 1);
	assert_true(r.max_abs == ldexp(1, 64)); /* 2^64 - 1, no overflow */
	assert_true(isinf(r.worst_ratio));

	uint8_t u255 = 255, u0 = 0;
	a = vec(AP_DT_UINT8, &u255, 1), e = vec(AP_DT_UINT8, &u0, 1);
	assert_true(cmp(&a, &e, loose).max_abs == 255); /* unsigned, not -1 */
	int8_t i8[2] = { -128, 5 }, j8[2] = { 127, 5 };
	a = vec(AP_DT_INT8, i8, 2), e = vec(AP_DT_INT8, j8, 2);
	r = cmp(&a, &e, loose);
	assert_true(r.max_abs == 255);
	assert_int_equal(r.first_mismatch, 0);
	int16_t i16[2] = { -300, 7 }, j16[2] = { -300, 8 };
	a = vec(AP_DT_INT16, i16, 2), e = vec(AP_DT_INT16, j16, 2);
	r = cmp(&a, &e, loose);
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 1);
	int32_t i32[1] = { -70000 }, j32[1] = { -70001 };
	a = vec(AP_DT_INT32, i32, 1), e = vec(AP_DT_INT32, j32, 1);
	r = cmp(&a, &e, loose);
	assert_true(r.max_abs == 1 && r.max_rel == 1.0 / 70001);
	int32_t k32 = -70000;
	e.data = &k32;
	assert_int_equal(cmp(&a, &e, loose).mismatches, 0);

	uint8_t t = 1, f = 0;
	assert_int_equal(mism1(AP_DT_BOOL, &t, &f, loose), 1);
	assert_int_equal(mism1(AP_DT_BOOL, &t, &t, loose), 0);
	/* int8 against int16 is a dtype mismatch, values still compared */
	int16_t m16[2] = { -128, 5 };
	a = vec(AP_DT_INT8, i8, 2), e = vec(AP_DT_INT16, m16, 2);
	r = cmp(&a, &e, tol_of(0, 0, 1));
	assert_int_equal(r.dtype_match, 0);
	assert_int_equal(r.mismatches, 0);
}

static void measurements_are_kept(void **state)
{
	(void)state;
	double e[3] = { 1, 2, 0 }, a[3] = { 1.5, 2, 0.25 };
	struct ap_tensor ta = vec(AP_DT_FLOAT64, a, 3), te = vec(AP_DT_FLOAT64, e, 3);
	struct ap_compare_result r = cmp(&ta, &te, tol_of(0, 1, 1));
	assert_true(r.max_abs == 0.5);
	assert_true(r.max_rel == 0.5); /* e = 0 has no relative error */
	assert_true(r.worst_ratio == 0.5);
	assert_int_equal(r.mismatches, 0);
	assert_int_equal(r.numel, 3);
	char hex[65];
	ap_sha256_mem(a, sizeof(a), hex);
	assert_string_equal(r.digest_actual, hex);
	ap_sha256_mem(e, sizeof(e), hex);
	assert_string_equal(r.digest_expected, hex);
	r = cmp(&ta, &te, tol_of(0, 0.125, 1));
	assert_int_equal(r.mismatches, 2);
	assert_int_equal(r.first_mismatch, 0);
	assert_true(r.worst_ratio == 4);
	struct ap_compare_result n;
	struct ap_tolerance tol = tol_of(0, 1, 1);
	assert_int_equal(ap_compare_flags(&ta, &te, &tol, AP_COMPARE_NO_DIGEST, &n), 0);
	assert_string_equal(n.digest_actual, "");
	assert_true(n.max_abs == 0.5);
}

static void dtype_mismatch_is_inconsistent(void **state)
{
	(void)state;
	float f[2] = { 1, 2 };
	double d[2] = { 1, 2.5 };
	struct ap_tensor a = vec(AP_DT_FLOAT32, f, 2), e = vec(AP_DT_FLOAT64, d, 2);
	struct ap_compare_result r = cmp(&a, &e, tol_of(0, 1, 1));
	assert_int_equal(r.dtype_match, 0);
	assert_int_equal(r.shape_match, 1);
	assert_int_equal(r.mismatches, 0);
	assert_true(r.max_abs == 0.5);
	assert_false(ap_compare_consistent(&r));
}

static void shape_mismatch_is_inconsistent(void **state)
{
	(void)state;
	float f[6] = { 0 };
	struct ap_tensor a = { .dtype = AP_DT_FLOAT32, .ndim = 2, .shape = { 2, 3 },
			       .strides = { 3, 1 }, .data = f, .nbytes = sizeof(f) };
	struct ap_tensor e = a;
	e.shape[0] = 3, e.shape[1] = 2, e.strides[0] = 2;
	struct ap_compare_result r = cmp(&a, &e, tol_of(0, 0, 1));
	assert_int_equal(r.dtype_match, 1);
	assert_int_equal(r.shape_match, 0);
	assert_int_equal(r.numel, 0);
	assert_int_equal(r.first_mismatch, -1);
	assert_false(ap_compare_consistent(&r));
	struct ap_tensor flat = vec(AP_DT_FLOAT32, f, 6);
	r = cmp(&a, &flat, tol_of(0, 0, 1)); /* same numel, other ndim */
	assert_int_equal(r.shape_match, 0);
	assert_false(ap_compare_consistent(&r));
}

/* A transposed view (strides 1, 3) against its contiguous copy; the first
 * mismatch is a logical (row-major) index, the digest that of the logical
 * contents. */
static void non_contiguous_views_compare_in_logical_order(void **state)
{
	(void)state;
	int32_t base[6] = { 0, 1, 2, 3, 4, 5 };	 /* 2x3 */
	int32_t tr[6] = { 0, 3, 1, 4, 2, 5 };	 /* its transpose, 3x2 */
	struct ap_tensor v = { .dtype = AP_DT_INT32, .ndim = 2, .shape = { 3, 2 },
			       .strides = { 1, 3 }, .data = base, .nbytes = sizeof(base) };
	struct ap_tensor c = { .dtype = AP_DT_INT32, .ndim = 2, .shape = { 3, 2 },
			       .strides = { 2, 1 }, .data = tr, .nbytes = sizeof(tr) };
	struct ap_compare_result r = cmp(&v, &c, tol_of(0, 0, 1));
	assert_int_equal(r.mismatches, 0);
	assert_string_equal(r.digest_actual, r.digest_expected);
	tr[3] = 40; /* logical [1][1] */
	r = cmp(&v, &c, tol_of(0, 0, 1));
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 3);
	assert_string_not_equal(r.digest_actual, r.digest_expected);
}

/* Stride 0: one stored value seen as 4x5. */
static void broadcast_views_repeat_one_element(void **state)
{
	(void)state;
	float one = 2.5f, many[20];
	for (int i = 0; i < 20; i++)
		many[i] = 2.5f;
	struct ap_tensor b = { .dtype = AP_DT_FLOAT32, .ndim = 2, .shape = { 4, 5 },
			       .strides = { 0, 0 }, .data = &one, .nbytes = sizeof(one) };
	struct ap_tensor m = { .dtype = AP_DT_FLOAT32, .ndim = 2, .shape = { 4, 5 },
			       .strides = { 5, 1 }, .data = many, .nbytes = sizeof(many) };
	assert_int_equal(ap_tensor_check(&b), 0);
	struct ap_compare_result r = cmp(&m, &b, tol_of(0, 0, 1));
	assert_int_equal(r.numel, 20);
	assert_int_equal(r.mismatches, 0);
	assert_string_equal(r.digest_actual, r.digest_expected);
	many[17] = 3;
	r = cmp(&m, &b, tol_of(0, 0, 1));
	assert_int_equal(r.first_mismatch, 17);
	/* a row broadcast: strides 0, 1 over a storage of 5 */
	b.strides[1] = 1;
	b.data = many;
	b.nbytes = 5 * sizeof(float);
	assert_int_equal(ap_tensor_check(&b), 0);
	b.nbytes--;
	assert_int_equal(ap_tensor_check(&b), -EINVAL);
}

static void scalars_have_no_dimension(void **state)
{
	(void)state;
	double x = 1, y = 1.5;
	struct ap_tensor a = { .dtype = AP_DT_FLOAT64, .ndim = 0, .data = &x, .nbytes = 8 };
	struct ap_tensor e = a;
	e.data = &y;
	struct ap_compare_result r = cmp(&a, &e, tol_of(0, 0.25, 1));
	assert_int_equal(r.numel, 1);
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 0);
	a.nbytes = 7;
	assert_int_equal(ap_tensor_check(&a), -EINVAL);
}

static void malformed_views_are_refused(void **state)
{
	(void)state;
	float f[6] = { 0 };
	const struct ap_tensor good = { .dtype = AP_DT_FLOAT32, .ndim = 2, .shape = { 2, 3 },
					.strides = { 3, 1 }, .data = f, .nbytes = sizeof(f) };
	struct ap_tensor t = good;
	assert_int_equal(ap_tensor_check(&t), 0);
	t.strides[1] = -1;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* negative stride */
	t = good, t.nbytes = sizeof(f) - 1;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* data too short */
	t = good, t.strides[0] = 4;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* reads past the end */
	t = good, t.ndim = AP_TENSOR_MAX_DIM + 1;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* ndim too big */
	t = good, t.ndim = -1;
	assert_int_equal(ap_tensor_check(&t), -EINVAL);
	t = good, t.shape[0] = -2;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* negative size */
	t = good, t.shape[0] = INT64_C(1) << 62, t.shape[1] = 4, t.strides[0] = 0,
	t.strides[1] = 0;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* numel overflows */
	t = good, t.shape[0] = INT64_C(1) << 61, t.shape[1] = 1, t.strides[0] = 0;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* numel * 4 bytes overflows */
	t = good, t.strides[0] = INT64_MAX;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* offset overflows */
	t = good, t.shape[0] = 3, t.strides[0] = INT64_MAX / 2 + 1;
	assert_int_equal(ap_tensor_check(&t), -EINVAL); /* offset sum overflows */
	t = good, t.data = NULL;
	assert_int_equal(ap_tensor_check(&t), -EINVAL);
	t = good, t.dtype = (enum ap_dtype)AP_DT_COUNT;
	assert_int_equal(ap_tensor_check(&t), -EINVAL);
	assert_int_equal(ap_tensor_check(NULL), -EINVAL);
	/* an empty tensor reads nothing: no data needed, any stride */
	t = good, t.shape[0] = 0, t.data = NULL, t.nbytes = 0, t.strides[1] = INT64_MAX;
	assert_int_equal(ap_tensor_check(&t), 0);

	/* ap_compare refuses either side, and a nonsensical tolerance */
	struct ap_tensor bad = good;
	bad.nbytes = 4;
	struct ap_tolerance tol = tol_of(0, 0, 1);
	struct ap_compare_result r;
	assert_int_equal(ap_compare(&good, &bad, &tol, &r), -EINVAL);
	assert_int_equal(ap_compare(&bad, &good, &tol, &r), -EINVAL);
	tol.rtol = -1;
	assert_int_equal(ap_compare(&good, &good, &tol, &r), -EINVAL);
	tol.rtol = NAN;
	assert_int_equal(ap_compare(&good, &good, &tol, &r), -EINVAL);
	assert_int_equal(ap_compare(&good, &good, NULL, &r), -EINVAL);
}

static void empty_tensors_are_consistent(void **state)
{
	(void)state;
	struct ap_tensor a = { .dtype = AP_DT_FLOAT32, .ndim = 1, .shape = { 0 },
			       .strides = { 1 } };
	struct ap_compare_result r = cmp(&a, &a, tol_of(0, 0, 1));
	assert_int_equal(r.numel, 0);
	assert_true(ap_compare_consistent(&r));
	char hex[65];
	ap_sha256_mem("", 0, hex);
	assert_string_equal(r.digest_actual, hex);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dtype_names_parse_and_sizes_are_torch_s),
		cmocka_unit_test(default_tolerances_are_assert_close_s),
		cmocka_unit_test(exactly_at_the_bound_passes_one_ulp_beyond_fails),
		cmocka_unit_test(default_float32_tolerance_accepts_rounding_not_more),
		cmocka_unit_test(one_element_in_a_million_is_a_mismatch),
		cmocka_unit_test(fast_path_and_strided_path_agree),
		cmocka_unit_test(nan_rules),
		cmocka_unit_test(inf_rules),
		cmocka_unit_test(negative_zero_equals_zero),
		cmocka_unit_test(float16_decoded_by_hand),
		cmocka_unit_test(bfloat16_decoded_by_hand),
		cmocka_unit_test(float32_float64_complex_decoded),
		cmocka_unit_test(integers_and_bool_are_exact),
		cmocka_unit_test(measurements_are_kept),
		cmocka_unit_test(dtype_mismatch_is_inconsistent),
		cmocka_unit_test(shape_mismatch_is_inconsistent),
		cmocka_unit_test(non_contiguous_views_compare_in_logical_order),
		cmocka_unit_test(broadcast_views_repeat_one_element),
		cmocka_unit_test(scalars_have_no_dimension),
		cmocka_unit_test(malformed_views_are_refused),
		cmocka_unit_test(empty_tensors_are_consistent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
