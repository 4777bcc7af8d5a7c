/* compare-bench - the driver of bench/comparator (built by the Makefile as
 * build/bench/compare-bench).
 *
 *   compare-bench [--mib N] [--runs R] [--emit]
 *
 * Makes N MiB (256 by default) of float32 pairs, half actual, half expected,
 * every pair within float32's default tolerance (so every comparison passes
 * and looks at every element), deterministic from a fixed seed. Then times,
 * R times each (median, in ms):
 *   read     a plain read of the same bytes (the sum of their 64-bit words);
 *   compare  ap_compare_flags() without the digests: the comparison proper;
 *   full     ap_compare(): the comparison and the SHA-256 of both sides.
 * and prints "name ms" lines. --emit writes the data instead (expected, then
 * actual, raw little-endian float32) to stdout, for the torch side of the
 * bench to read the very same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check/compare.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(n - 1) / 2];
}

/* xorshift64*: the same data on every run and machine. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static void fill(float *e, float *a, size_t n)
{
	uint64_t s = 88172645463325252ull;
	for (size_t i = 0; i < n; i++) {
		double u = (double)(next(&s) >> 11) / 9007199254740992.0; /* [0, 1) */
		double r = (double)(next(&s) >> 11) / 9007199254740992.0;
		e[i] = (float)(2 * u - 1);
		a[i] = (float)(e[i] * (1 + 4e-7 * (2 * r - 1)));
	}
}

static uint64_t sink;

static void read_all(const void *p, size_t bytes)
{
	const uint64_t *w = p;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	for (size_t i = 0; i + 4 <= bytes / 8; i += 4) {
		s0 += w[i];
		s1 += w[i + 1];
		s2 += w[i + 2];
		s3 += w[i + 3];
	}
	sink += s0 + s1 + s2 + s3;
}

static int write_all(const void *p, size_t len)
{
	return fwrite(p, 1, len, stdout) == len ? 0 : -1;
}

int main(int argc, char **argv)
{
	long mib = 256, runs = 5;
	int emit = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			mib = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--emit"))
			emit = 1;
		else {
			fprintf(stderr, "usage: compare-bench [--mib N] [--runs R] [--emit]\n");
			return 2;
		}
	}
	if (mib < 1 || mib > 4096 || runs < 1 || runs > 100) {
		fprintf(stderr, "compare-bench: --mib 1..4096, --runs 1..100\n");
		return 2;
	}
	size_t bytes = (size_t)mib << 20, n = bytes / 2 / sizeof(float);
	float *buf = malloc(bytes);
	if (!buf) {
		fprintf(stderr, "compare-bench: cannot allocate %ld MiB\n", mib);
		return 1;
	}
	float *e = buf, *a = buf + n;
	fill(e, a, n);
	if (emit) {
		int r = write_all(e, n * sizeof(float)) || write_all(a, n * sizeof(float)) ||
			fflush(stdout);
		free(buf);
		return r ? 1 : 0;
	}

	struct ap_tensor te = { .dtype = AP_DT_FLOAT32, .ndim = 1, .shape = { (int64_t)n },
				.strides = { 1 }, .data = e, .nbytes = n * sizeof(float) };
	struct ap_tensor ta = te;
	ta.data = a;
	struct ap_tolerance tol = ap_tolerance_default(AP_DT_FLOAT32);
	struct ap_compare_result res;
	double t_read[100], t_cmp[100], t_full[100];
	read_all(buf, bytes); /* fault the pages in before anything is timed */
	for (long r = 0; r < runs; r++) {
		double t0 = now_ms();
		read_all(buf, bytes);
		double t1 = now_ms();
		if (ap_compare_flags(&ta, &te, &tol, AP_COMPARE_NO_DIGEST, &res) ||
		    !ap_compare_consistent(&res))
			goto fail;
		double t2 = now_ms();
		if (ap_compare(&ta, &te, &tol, &res) || !ap_compare_consistent(&res))
			goto fail;
		double t3 = now_ms();
		t_read[r] = t1 - t0, t_cmp[r] = t2 - t1, t_full[r] = t3 - t2;
	}
	printf("elements %zu\nbytes %zu\nmax_rel %.3g\nworst_ratio %.3g\n", n, bytes,
	       res.max_rel, res.worst_ratio);
	printf("read %.1f\ncompare %.1f\nfull %.1f\n", median(t_read, (int)runs),
	       median(t_cmp, (int)runs), median(t_full, (int)runs));
	free(buf);
	return sink == 42 ? 3 : 0; /* sink keeps the read from being optimized away */
fail:
	fprintf(stderr, "compare-bench: the comparison failed or found a mismatch "
		"(mismatches %llu, worst ratio %g)\n", (unsigned long long)res.mismatches,
		res.worst_ratio);
	free(buf);
	return 1;
}
