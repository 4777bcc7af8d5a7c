#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check/compare.h"
#include "base/sha256.h"

/* The rule is evaluated in double, one operation at a time: no fused
 * multiply-add, so the fast path and the generic path round alike. */
#ifdef __clang__
#pragma clang fp contract(off)
#endif

static const struct {
	const char *name;
	size_t size;
} dtypes[AP_DT_COUNT] = {
	[AP_DT_BOOL] = { "bool", 1 },         [AP_DT_UINT8] = { "uint8", 1 },
	[AP_DT_INT8] = { "int8", 1 },         [AP_DT_INT16] = { "int16", 2 },
	[AP_DT_INT32] = { "int32", 4 },       [AP_DT_INT64] = { "int64", 8 },
	[AP_DT_FLOAT16] = { "float16", 2 },   [AP_DT_BFLOAT16] = { "bfloat16", 2 },
	[AP_DT_FLOAT32] = { "float32", 4 },   [AP_DT_FLOAT64] = { "float64", 8 },
	[AP_DT_COMPLEX64] = { "complex64", 8 }, [AP_DT_COMPLEX128] = { "complex128", 16 },
};

/* torch's other names for the same dtypes (torch.half is torch.float16). */
static const struct {
	const char *alias;
	enum ap_dtype dt;
} aliases[] = {
	{ "half", AP_DT_FLOAT16 }, { "float", AP_DT_FLOAT32 }, { "double", AP_DT_FLOAT64 },
	{ "short", AP_DT_INT16 },  { "int", AP_DT_INT32 },     { "long", AP_DT_INT64 },
	{ "cfloat", AP_DT_COMPLEX64 }, { "cdouble", AP_DT_COMPLEX128 },
};

int ap_dtype_parse(const char *name, enum ap_dtype *out)
{
	if (!name)
		return -EINVAL;
	if (!strncmp(name, "torch.", 6))
		name += 6;
	for (int i = 0; i < AP_DT_COUNT; i++)
		if (!strcmp(name, dtypes[i].name)) {
			*out = (enum ap_dtype)i;
			return 0;
		}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(name, aliases[i].alias)) {
			*out = aliases[i].dt;
			return 0;
		}
	return -EINVAL;
}

static int dtype_ok(enum ap_dtype dt)
{
	return (int)dt >= 0 && dt < AP_DT_COUNT;
}

const char *ap_dtype_name(enum ap_dtype dt)
{
	return dtype_ok(dt) ? dtypes[dt].name : "unknown";
}

size_t ap_dtype_size(enum ap_dtype dt)
{
	return dtype_ok(dt) ? dtypes[dt].size : 0;
}

static int is_complex(enum ap_dtype dt)
{
	return dt == AP_DT_COMPLEX64 || dt == AP_DT_COMPLEX128;
}

static int is_exact(enum ap_dtype dt)
{
	return dt <= AP_DT_INT64;
}

/* Elements the view has; -1 when their number does not fit int64. */
static int64_t view_numel(const struct ap_tensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++)
		if (!t->shape[i])
			return 0;
	for (int i = 0; i < t->ndim; i++)
		if (__builtin_mul_overflow(n, t->shape[i], &n))
			return -1;
	return n;
}

int ap_tensor_check(const struct ap_tensor *t)
{
	if (!t || !dtype_ok(t->dtype) || t->ndim < 0 || t->ndim > AP_TENSOR_MAX_DIM)
		return -EINVAL;
	for (int i = 0; i < t->ndim; i++)
		if (t->shape[i] < 0 || t->strides[i] < 0)
			return -EINVAL;
	int64_t numel = view_numel(t), bytes;
	/* The logical contents are hashed and walked: their size must be
	 * representable even when strides of 0 make the storage small. */
	if (numel < 0 || __builtin_mul_overflow(numel, (int64_t)ap_dtype_size(t->dtype), &bytes))
		return -EINVAL;
	if (!numel)
		return 0;
	/* The last element the view reads is at sum((shape-1) * stride). */
	uint64_t last = 0, term, end;
	for (int i = 0; i < t->ndim; i++)
		if (__builtin_mul_overflow((uint64_t)(t->shape[i] - 1), (uint64_t)t->strides[i],
					   &term) || __builtin_add_overflow(last, term, &last))
			return -EINVAL;
	if (__builtin_add_overflow(last, 1, &end) ||
	    __builtin_mul_overflow(end, (uint64_t)ap_dtype_size(t->dtype), &end))
		return -EINVAL;
	return t->data && end <= t->nbytes ? 0 : -EINVAL;
}

struct ap_tolerance ap_tolerance_default(enum ap_dtype dt)
{
	struct ap_tolerance t = { .rtol = 0, .atol = 0, .equal_nan = 1 };
	switch (dt) {
	case AP_DT_FLOAT16:
		t.rtol = 1e-3, t.atol = 1e-5;
		break;
	case AP_DT_BFLOAT16:
		t.rtol = 1.6e-2, t.atol = 1e-5;
		break;
	case AP_DT_FLOAT32:
	case AP_DT_COMPLEX64:
		t.rtol = 1.3e-6, t.atol = 1e-5;
		break;
	case AP_DT_FLOAT64:
	case AP_DT_COMPLEX128:
		t.rtol = 1e-7, t.atol = 1e-7;
		break;
	default:
		break;
	}
	return t;
}

/* Little-endian loads, whatever the host's order. */
static uint64_t load_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = n; i--;)
		v = v << 8 | p[i];
	return v;
}

/* IEEE half: 1 sign, 5 exponent (bias 15), 10 fraction bits. */
static double half_to_double(uint16_t h)
{
	int ex = (h >> 10) & 31, m = h & 1023;
	double v;
	if (ex == 0)
		v = ldexp(m, -24);
	else if (ex == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m + 1024, ex - 25);
	return h >> 15 ? -v : v;
}

static double bits_to_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static double bits_to_double(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/* One element, decoded: i for the exact dtypes, re (and im) for all. */
struct val {
	int64_t i;
	double re, im;
};

static void load(enum ap_dtype dt, const unsigned char *p, struct val *v)
{
	uint64_t u = load_le(p, dtypes[dt].size);
	v->im = 0;
	switch (dt) {
	case AP_DT_BOOL:
		v->i = u != 0;
		break;
	case AP_DT_UINT8:
		v->i = (int64_t)u;
		break;
	case AP_DT_INT8:
		v->i = (int8_t)u;
		break;
	case AP_DT_INT16:
		v->i = (int16_t)u;
		break;
	case AP_DT_INT32:
		v->i = (int32_t)u;
		break;
	case AP_DT_INT64:
		v->i = (int64_t)u;
		break;
	case AP_DT_FLOAT16:
		v->re = half_to_double((uint16_t)u);
		return;
	case AP_DT_BFLOAT16: /* the high half of a float32 */
		v->re = bits_to_float((uint32_t)u << 16);
		return;
	case AP_DT_FLOAT32:
		v->re = bits_to_float((uint32_t)u);
		return;
	case AP_DT_FLOAT64:
		v->re = bits_to_double(u);
		return;
	case AP_DT_COMPLEX64:
		v->re = bits_to_float((uint32_t)u);
		v->im = bits_to_float((uint32_t)(u >> 32));
		return;
	case AP_DT_COMPLEX128:
		v->re = bits_to_double(u);
		v->im = bits_to_double(load_le(p + 8, 8));
		return;
	default:
		v->re = NAN;
		return;
	}
	v->re = (double)v->i;
}

/* What a comparison accumulates. */
struct acc {
	double rtol, atol;
	int equal_nan;
	uint64_t mismatches;
	int64_t first;
	double max_abs, max_rel, worst;
};

static void mismatch(struct acc *s, int64_t idx)
{
	if (!s->mismatches++)
		s->first = idx;
}

/* A finite pair at distance d, |expected| mag, allowed the most d may be. */
static void measure(struct acc *s, double d, double mag, double allowed, int64_t idx)
{
	if (d > s->max_abs)
		s->max_abs = d;
	if (mag != 0 && d / mag > s->max_rel)
		s->max_rel = d / mag;
	if (d != 0) {
		double ratio = allowed > 0 ? d / allowed : INFINITY;
		if (ratio > s->worst)
			s->worst = ratio;
	}
	if (!(d <= allowed))
		mismatch(s, idx);
}

static void pair_real(struct acc *s, double a, double e, int64_t idx)
{
	if (isnan(a) || isnan(e)) {
		if (!(s->equal_nan && isnan(a) && isnan(e)))
			mismatch(s, idx);
		return;
	}
	if (isinf(a) || isinf(e)) {
		if (a != e)
			mismatch(s, idx);
		return;
	}
	double mag = fabs(e);
	measure(s, fabs(a - e), mag, s->atol + s->rtol * mag, idx);
}

static void pair_complex(struct acc *s, const struct val *a, const struct val *e, int64_t idx)
{
	int an = isnan(a->re) || isnan(a->im), en = isnan(e->re) || isnan(e->im);
	if (an || en) {
		if (!(s->equal_nan && an && en))
			mismatch(s, idx);
		return;
	}
	if (isinf(a->re) || isinf(a->im) || isinf(e->re) || isinf(e->im)) {
		if (a->re != e->re || a->im != e->im)
			mismatch(s, idx);
		return;
	}
	double mag = hypot(e->re, e->im);
	measure(s, hypot(a->re - e->re, a->im - e->im), mag, s->atol + s->rtol * mag, idx);
}

/* Integers and bool: exact, whatever the tolerance; the distance is taken
 * without overflow. */
static void pair_exact(struct acc *s, int64_t a, int64_t e, int64_t idx)
{
	uint64_t du = a >= e ? (uint64_t)a - (uint64_t)e : (uint64_t)e - (uint64_t)a;
	measure(s, (double)du, fabs((double)e), 0, idx);
}

enum mode { MODE_EXACT, MODE_REAL, MODE_COMPLEX };

struct walk {
	const struct ap_tensor *a, *e;
	struct acc *s;
	enum mode mode;
};

/* Compares n elements from pa and pe, steps sa and se bytes apart, the first
 * being logical element idx. Each address is computed from the row's start,
 * never stepped past the last element: a row of one element may have any
 * stride. */
static void compare_row(struct walk *w, const unsigned char *pa, const unsigned char *pe,
			size_t sa, size_t se, int64_t n, int64_t idx)
{
	enum ap_dtype da = w->a->dtype, de = w->e->dtype;
	struct val va, ve;
	for (int64_t k = 0; k < n; k++) {
		load(da, pa + (size_t)k * sa, &va);
		load(de, pe + (size_t)k * se, &ve);
		if (w->mode == MODE_EXACT)
			pair_exact(w->s, va.i, ve.i, idx + k);
		else if (w->mode == MODE_REAL)
			pair_real(w->s, va.re, ve.re, idx + k);
		else
			pair_complex(w->s, &va, &ve, idx + k);
	}
}

/* Visits the rows (the innermost dimension) of the common shape of a and b
 * in logical order; b may be NULL. The views are checked: every offset is
 * inside data and nothing overflows. */
typedef void row_fn(void *ctx, const unsigned char *pa, const unsigned char *pb,
		    int64_t n, int64_t idx);

static void walk_rows(const struct ap_tensor *a, const struct ap_tensor *b, row_fn *fn,
		      void *ctx)
{
	int nd = a->ndim;
	int64_t pos[AP_TENSOR_MAX_DIM] = { 0 }, numel = view_numel(a);
	int64_t row = nd ? a->shape[nd - 1] : 1, idx = 0;
	size_t za = ap_dtype_size(a->dtype), zb = b ? ap_dtype_size(b->dtype) : 0;
	if (!numel)
		return;
	for (;;) {
		uint64_t oa = 0, ob = 0;
		for (int i = 0; i < nd - 1; i++) {
			oa += (uint64_t)pos[i] * (uint64_t)a->strides[i];
			ob += b ? (uint64_t)pos[i] * (uint64_t)b->strides[i] : 0;
		}
		fn(ctx, (const unsigned char *)a->data + oa * za,
		   b ? (const unsigned char *)b->data + ob * zb : NULL, row, idx);
		idx += row;
		int i = nd - 2;
		while (i >= 0 && ++pos[i] == a->shape[i])
			pos[i--] = 0;
		if (i < 0)
			return;
	}
}

static int64_t inner_stride(const struct ap_tensor *t)
{
	return t->ndim ? t->strides[t->ndim - 1] : 0;
}

static void compare_row_fn(void *ctx, const unsigned char *pa, const unsigned char *pe,
			   int64_t n, int64_t idx)
{
	struct walk *w = ctx;
	compare_row(w, pa, pe, (size_t)inner_stride(w->a) * ap_dtype_size(w->a->dtype),
		    (size_t)inner_stride(w->e) * ap_dtype_size(w->e->dtype), n, idx);
}

/* Row-major and dense: the logical contents are the first numel elements.
 * t is checked, so no product below exceeds numel. */
static int contiguous(const struct ap_tensor *t)
{
	int64_t want = 1;
	if (!view_numel(t))
		return 1;
	for (int i = t->ndim - 1; i >= 0; i--) {
		if (t->shape[i] != 1 && t->strides[i] != want)
			return 0;
		want *= t->shape[i];
	}
	return 1;
}

/* The float32 fast path: both sides contiguous float32. A vector pass over a
 * block only asks whether any element there could change the result (a
 * mismatch, a special value, a new maximum); only such blocks are redone
 * element by element with pair_real, so the result is the generic path's
 * to the bit. The screen evaluates the same double expressions as
 * pair_real, and flags an element unless
 *   d <= min(worst, 1) * allowed   (no mismatch, NaN or Inf; no new worst)
 *   d <= max_abs                   (no new max_abs)
 *   d <= max_rel * mag or mag == 0 (no new max_rel)
 * x86-64 has it with SSE2 (always there) or AVX2 (when the CPU has it);
 * elsewhere every block takes the element path. */
#define FAST_BLOCK 1024

/* The ratios are screened by multiplying where pair_real divides; shaving a
 * few ulps off them first makes the screen flag every element whose
 * quotient could round above the current maximum. (The mismatch test stays
 * exact: w * allowed <= allowed for w <= 1.) */
#define SHY (1 - 0x1p-50)

struct screen {
	double atol, rtol, worst1, max_abs, max_rel;
};

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static int block_quiet_sse2(const struct screen *c, const unsigned char *a, const unsigned char *e)
{
	__m128d atol = _mm_set1_pd(c->atol), rtol = _mm_set1_pd(c->rtol),
		w = _mm_set1_pd(c->worst1), mabs = _mm_set1_pd(c->max_abs),
		mrel = _mm_set1_pd(c->max_rel), zero = _mm_setzero_pd(),
		sign = _mm_set1_pd(-0.0), loud = _mm_setzero_pd();
	for (int k = 0; k < FAST_BLOCK; k += 2) {
		__m128d da = _mm_cvtps_pd(_mm_castsi128_ps(
			_mm_loadl_epi64((const __m128i_u *)(a + 4 * k))));
		__m128d de = _mm_cvtps_pd(_mm_castsi128_ps(
			_mm_loadl_epi64((const __m128i_u *)(e + 4 * k))));
		__m128d d = _mm_andnot_pd(sign, _mm_sub_pd(da, de)), mag = _mm_andnot_pd(sign, de);
		__m128d allowed = _mm_add_pd(atol, _mm_mul_pd(rtol, mag));
		/* or-ed as a tree: one step of latency per iteration on loud */
		__m128d m = _mm_or_pd(_mm_cmpnle_pd(d, _mm_mul_pd(w, allowed)),
				      _mm_cmpgt_pd(d, mabs));
		m = _mm_or_pd(m, _mm_and_pd(_mm_cmpgt_pd(d, _mm_mul_pd(mrel, mag)),
					    _mm_cmpneq_pd(mag, zero)));
		loud = _mm_or_pd(loud, m);
	}
	return !_mm_movemask_pd(loud);
}

__attribute__((target("avx2")))
static int block_quiet_avx2(const struct screen *c, const unsigned char *a,
			    const unsigned char *e)
{
	__m256d atol = _mm256_set1_pd(c->atol), rtol = _mm256_set1_pd(c->rtol),
		w = _mm256_set1_pd(c->worst1), mabs = _mm256_set1_pd(c->max_abs),
		mrel = _mm256_set1_pd(c->max_rel), zero = _mm256_setzero_pd(),
		sign = _mm256_set1_pd(-0.0), loud = _mm256_setzero_pd();
	for (int k = 0; k < FAST_BLOCK; k += 4) {
		__m256d da = _mm256_cvtps_pd(_mm_loadu_ps((const float *)(a + 4 * k)));
		__m256d de = _mm256_cvtps_pd(_mm_loadu_ps((const float *)(e + 4 * k)));
		__m256d d = _mm256_andnot_pd(sign, _mm256_sub_pd(da, de));
		__m256d mag = _mm256_andnot_pd(sign, de);
		__m256d allowed = _mm256_add_pd(atol, _mm256_mul_pd(rtol, mag));
		__m256d m = _mm256_or_pd(
			_mm256_cmp_pd(d, _mm256_mul_pd(w, allowed), _CMP_NLE_UQ),
			_mm256_cmp_pd(d, mabs, _CMP_GT_OQ));
		m = _mm256_or_pd(m, _mm256_and_pd(
			_mm256_cmp_pd(d, _mm256_mul_pd(mrel, mag), _CMP_GT_OQ),
			_mm256_cmp_pd(mag, zero, _CMP_NEQ_OQ)));
		loud = _mm256_or_pd(loud, m);
	}
	return !_mm256_movemask_pd(loud);
}

/* The most the screen may use (ap_compare_simd); the CPU may offer less. */
static _Atomic int simd_limit = AP_SIMD_AVX2;

static int block_quiet(const struct screen *c, const unsigned char *a,
		       const unsigned char *e)
{
	static _Atomic int avx2 = -1;
	if (avx2 < 0)
		avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
	if (simd_limit >= AP_SIMD_AVX2 && avx2)
		return block_quiet_avx2(c, a, e);
	return simd_limit >= AP_SIMD_SSE2 ? block_quiet_sse2(c, a, e) : 0;
}
#else
static _Atomic int simd_limit = AP_SIMD_NONE;

static int block_quiet(const struct screen *c, const unsigned char *a,
		       const unsigned char *e)
{
	(void)c, (void)a, (void)e;
	return 0;
}
#endif

int ap_compare_simd(int limit)
{
	int was = simd_limit;
	simd_limit = limit;
	return was;
}

/* A float32 at p, however aligned (a worker's frame need not align it). */
static double f32_at(const unsigned char *p)
{
	float f;
	memcpy(&f, p, sizeof(f));
	return f;
}

static void compare_f32(struct acc *s, const unsigned char *a, const unsigned char *e,
			int64_t n)
{
	for (int64_t b = 0; b < n; b += FAST_BLOCK) {
		int64_t m = n - b < FAST_BLOCK ? n - b : FAST_BLOCK;
		struct screen c = { s->atol, s->rtol, (s->worst < 1 ? s->worst : 1) * SHY,
				    s->max_abs, s->max_rel * SHY };
		if (m == FAST_BLOCK && block_quiet(&c, a + 4 * b, e + 4 * b))
			continue;
		for (int64_t k = b; k < b + m; k++)
			pair_real(s, f32_at(a + 4 * k), f32_at(e + 4 * k), k);
	}
}

static int fast_f32(const struct ap_tensor *a, const struct ap_tensor *e)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return a->dtype == AP_DT_FLOAT32 && e->dtype == AP_DT_FLOAT32 &&
	       contiguous(a) && contiguous(e);
#else
	(void)a, (void)e;
	return 0;
#endif
}

/* The bytes of a strided tensor gathered between two hash updates: few
 * updates, and a struct that still fits a thread's stack. */
#define AP_GATHER_BUF (64u << 10)

/* SHA-256 of t's logical contents: the storage itself when contiguous,
 * else the elements gathered in order through a buffer. */
struct gather {
	struct ap_sha256 *h;
	size_t size, stride, used;
	unsigned char buf[AP_GATHER_BUF];
};

static void gather_row(void *ctx, const unsigned char *p, const unsigned char *unused,
		       int64_t n, int64_t idx)
{
	struct gather *g = ctx;
	(void)unused, (void)idx;
	for (int64_t k = 0; k < n; k++) {
		if (g->used + g->size > sizeof(g->buf)) {
			ap_sha256_update(g->h, g->buf, g->used);
			g->used = 0;
		}
		memcpy(g->buf + g->used, p + (size_t)k * g->stride, g->size);
		g->used += g->size;
	}
}

static void digest(const struct ap_tensor *t, char hex[AP_SHA256_HEX_SIZE])
{
	struct ap_sha256 *h = ap_sha256_begin();
	int64_t numel = view_numel(t);
	if (contiguous(t)) {
		if (numel)
			ap_sha256_update(h, t->data, (size_t)numel * ap_dtype_size(t->dtype));
		ap_sha256_end(h, hex);
		return;
	}
	struct gather *g = malloc(sizeof(*g));
	if (!g) {
		ap_sha256_end(h, hex);
		hex[0] = '\0'; /* matches no real digest */
		return;
	}
	g->h = h;
	g->size = ap_dtype_size(t->dtype);
	g->stride = (size_t)inner_stride(t) * g->size;
	g->used = 0;
	walk_rows(t, NULL, gather_row, g);
	ap_sha256_update(h, g->buf, g->used);
	ap_sha256_end(h, hex);
	free(g);
}

/* Big tensors hash the expected side on a thread of their own while this
 * one compares and hashes the actual side: SHA-256 is slower than the
 * comparison, and the two digests are independent. */
#define DIGEST_THREAD_MIN (4u << 20)

struct digest_job {
	const struct ap_tensor *t;
	char *hex;
};

static void *digest_thread(void *arg)
{
	struct digest_job *j = arg;
	digest(j->t, j->hex);
	return NULL;
}

static int same_shape(const struct ap_tensor *a, const struct ap_tensor *e)
{
	if (a->ndim != e->ndim)
		return 0;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != e->shape[i])
			return 0;
	return 1;
}

static int tol_ok(const struct ap_tolerance *tol)
{
	return tol && tol->rtol >= 0 && tol->atol >= 0 && isfinite(tol->rtol) &&
	       isfinite(tol->atol);
}

int ap_compare_flags(const struct ap_tensor *actual, const struct ap_tensor *expected,
		     const struct ap_tolerance *tol, unsigned flags,
		     struct ap_compare_result *res)
{
	memset(res, 0, sizeof(*res));
	res->first_mismatch = -1;
	if (ap_tensor_check(actual) || ap_tensor_check(expected) || !tol_ok(tol))
		return -EINVAL;
	res->dtype_match = actual->dtype == expected->dtype;
	res->shape_match = same_shape(actual, expected);
	if (!res->shape_match)
		return 0;

	struct acc s = { .rtol = tol->rtol, .atol = tol->atol, .equal_nan = tol->equal_nan,
			 .first = -1 };
	struct walk w = { .a = actual, .e = expected, .s = &s, .mode = MODE_REAL };
	if (is_complex(actual->dtype) || is_complex(expected->dtype))
		w.mode = MODE_COMPLEX;
	else if (res->dtype_match && is_exact(actual->dtype))
		w.mode = MODE_EXACT;
	res->numel = (uint64_t)view_numel(actual);
	int want_digest = !(flags & AP_COMPARE_NO_DIGEST), threaded = 0;
	pthread_t th;
	struct digest_job job = { expected, res->digest_expected };
	if (want_digest && res->numel * ap_dtype_size(expected->dtype) >= DIGEST_THREAD_MIN)
		threaded = !pthread_create(&th, NULL, digest_thread, &job);
	if (fast_f32(actual, expected))
		compare_f32(&s, actual->data, expected->data, (int64_t)res->numel);
	else
		walk_rows(actual, expected, compare_row_fn, &w);
	res->mismatches = s.mismatches;
	res->first_mismatch = s.first;
	res->max_abs = s.max_abs;
	res->max_rel = s.max_rel;
	res->worst_ratio = s.worst;
	if (want_digest)
		digest(actual, res->digest_actual);
	if (threaded)
		pthread_join(th, NULL);
	else if (want_digest)
		digest(expected, res->digest_expected);
	return 0;
}

int ap_compare(const struct ap_tensor *actual, const struct ap_tensor *expected,
	       const struct ap_tolerance *tol, struct ap_compare_result *res)
{
	return ap_compare_flags(actual, expected, tol, 0, res);
}

int ap_compare_consistent(const struct ap_compare_result *res)
{
	return res->dtype_match && res->shape_match && res->mismatches == 0;
}
