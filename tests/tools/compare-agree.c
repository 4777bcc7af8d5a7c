/* compare-agree - checks the comparator against torch's own verdicts.
 *
 *   compare-agree < BLOB
 *
 * BLOB holds sections, each "DTYPE N\n", then N actual elements, N expected
 * elements (raw little-endian), then N verdict bytes from torch.isclose with
 * assert_close's default tolerances and equal_nan: '1' a mismatch, '0' a
 * match, '.' too near the bound for torch's rounding in the dtype to be
 * compared with apiparity's double. Each element is compared on its own with
 * ap_compare and the dtype's default tolerance; then the whole section at
 * once, whose mismatch count must lie between the counts of '1' and of
 * '1' plus '.'. Prints "DTYPE: N pairs, M mismatches, K near the bound,
 * D disagreements" per section; exit 1 on any disagreement or a malformed
 * blob.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/compare.h"

static unsigned char *slurp(size_t *len)
{
	size_t cap = 1 << 20, n = 0, got;
	unsigned char *b = malloc(cap);
	while (b && (got = fread(b + n, 1, cap - n, stdin)) > 0) {
		n += got;
		if (n == cap) {
			unsigned char *nb = realloc(b, cap *= 2);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	*len = n;
	return b;
}

static struct ap_tensor one(enum ap_dtype dt, const unsigned char *p, int64_t n)
{
	struct ap_tensor t = { .dtype = dt, .ndim = 1, .shape = { n }, .strides = { 1 },
			       .data = p, .nbytes = (size_t)n * ap_dtype_size(dt) };
	return t;
}

int main(void)
{
	size_t len, pos = 0;
	unsigned char *b = slurp(&len);
	int bad = 0, sections = 0;
	if (!b)
		return fprintf(stderr, "compare-agree: out of memory\n"), 1;
	while (pos < len) {
		char name[32];
		long n;
		const char *nl = memchr(b + pos, '\n', len - pos);
		enum ap_dtype dt;
		if (!nl || sscanf((const char *)b + pos, "%31s %ld", name, &n) != 2 || n <= 0 ||
		    ap_dtype_parse(name, &dt))
			return fprintf(stderr, "compare-agree: bad section header\n"), 1;
		pos = (size_t)(nl - (const char *)b) + 1;
		size_t z = ap_dtype_size(dt), need = (size_t)n * (2 * z + 1);
		if (len - pos < need)
			return fprintf(stderr, "compare-agree: %s: short section\n", name), 1;
		const unsigned char *a = b + pos, *e = a + n * z, *v = e + n * z;
		struct ap_tolerance tol = ap_tolerance_default(dt);
		long mism = 0, near = 0, disagree = 0;
		for (long i = 0; i < n; i++) {
			struct ap_tensor ta = one(dt, a + i * z, 1), te = one(dt, e + i * z, 1);
			struct ap_compare_result r;
			if (ap_compare(&ta, &te, &tol, &r))
				return fprintf(stderr, "compare-agree: ap_compare failed\n"), 1;
			int ours = r.mismatches != 0;
			mism += ours;
			if (v[i] == '.') {
				near++;
				continue;
			}
			if (ours != (v[i] == '1')) {
				if (disagree++ < 5)
					printf("%s element %ld: torch says %s, apiparity %s\n", name, i,
					       v[i] == '1' ? "mismatch" : "match",
					       ours ? "mismatch" : "match");
			}
		}
		long torch_mism = 0;
		for (long i = 0; i < n; i++)
			torch_mism += v[i] == '1';
		struct ap_tensor ta = one(dt, a, n), te = one(dt, e, n);
		struct ap_compare_result r;
		if (ap_compare(&ta, &te, &tol, &r) || (long)r.mismatches != mism)
			disagree++, printf("%s: the whole tensor counts %llu mismatches, "
					   "its elements %ld\n", name,
					   (unsigned long long)r.mismatches, mism);
		printf("%s: %ld pairs, %ld mismatches (torch: %ld), %ld near the bound, "
		       "%ld disagreements\n", name, n, mism, torch_mism, near, disagree);
		bad |= disagree != 0;
		sections++;
		pos += need;
	}
	free(b);
	return bad || !sections;
}
