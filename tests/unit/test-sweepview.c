/* test-sweepview.c - unit tests for src/review/sweepview.h's diff: the
 * changes of two matrices, by part, and no change (and no crash) when a
 * matrix is empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evidence/matrix.h"
#include "review/sweepview.h"

/* Adds a line of api in env under torch.m. */
static void line(struct ap_matrix *m, const char *env, const char *api,
		 enum ap_line_status status, const char *sig)
{
	struct ap_matrix_line l;
	assert_int_equal(ap_matrix_line_init(&l, env, "torch.m", api, status), 0);
	l.kind = strdup("function");
	l.signature.set = 1;
	l.signature.v = calloc(1, sizeof(char *));
	l.signature.v[l.signature.n++] = strdup(sig);
	assert_int_equal(ap_matrix_add(m, &l), 0);
}

static void empty_matrices_differ_in_nothing(void **state)
{
	(void)state;
	struct ap_matrix a = { 0 }, b = { 0 };
	struct ap_matrix_diff d;
	line(&b, "trixie", "torch.m.f", AP_LSTATUS_PRESENT, "f()");
	assert_int_equal(ap_matrix_diff(&a, "bookworm", &a, "trixie", &d), 0);
	for (int p = 0; p < AP_DIFF_NPARTS; p++)
		assert_int_equal(d.part[p].n, 0);
	ap_matrix_diff_free(&d);
	/* everything b has is added to an empty a */
	assert_int_equal(ap_matrix_diff(&a, "bookworm", &b, "trixie", &d), 0);
	assert_int_equal(d.part[AP_DIFF_ADDED].n, 1);
	assert_int_equal(d.part[AP_DIFF_REMOVED].n, 0);
	ap_matrix_diff_free(&d);
	ap_matrix_free(&b);
}

static void changes_are_sorted_into_their_parts(void **state)
{
	(void)state;
	struct ap_matrix m = { 0 };
	struct ap_matrix_diff d;
	line(&m, "bookworm", "torch.m.gone", AP_LSTATUS_PRESENT, "gone()");
	line(&m, "bookworm", "torch.m.f", AP_LSTATUS_PRESENT, "f(x)");
	line(&m, "trixie", "torch.m.f", AP_LSTATUS_PRESENT, "f(x, y)");
	line(&m, "trixie", "torch.m.new", AP_LSTATUS_PRESENT, "new()");
	assert_int_equal(ap_matrix_diff(&m, "bookworm", &m, "trixie", &d), 0);
	assert_int_equal(d.part[AP_DIFF_ADDED].n, 1);
	assert_string_equal(d.part[AP_DIFF_ADDED].v[0].b->api, "torch.m.new");
	assert_int_equal(d.part[AP_DIFF_REMOVED].n, 1);
	assert_string_equal(d.part[AP_DIFF_REMOVED].v[0].a->api, "torch.m.gone");
	assert_int_equal(d.part[AP_DIFF_SIGNATURE].n, 1);
	assert_string_equal(d.part[AP_DIFF_SIGNATURE].v[0].a->api, "torch.m.f");
	ap_matrix_diff_free(&d);
	ap_matrix_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_matrices_differ_in_nothing),
		cmocka_unit_test(changes_are_sorted_into_their_parts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
