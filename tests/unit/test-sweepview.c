/* test-sweepview.c - unit tests for src/review/sweepview.h's diff: the
 * changes of two matrices, by part, no change (and no crash) when a matrix
 * is empty, nothing removed that the newer side still reaches, and nothing
 * compared that one side did not measure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evidence/matrix.h"
#include "review/sweepview.h"

/* Adds a line of api in env under torch.m (sig NULL: swept without
 * signatures), and returns it. */
static struct ap_matrix_line *line(struct ap_matrix *m, const char *env, const char *api,
				   enum ap_line_status status, const char *sig)
{
	struct ap_matrix_line l;
	assert_int_equal(ap_matrix_line_init(&l, env, "torch.m", api, status), 0);
	l.kind = strdup(strcmp(api, "torch.m") ? "function" : "module");
	if (sig) {
		l.signature.set = 1;
		l.signature.v = calloc(1, sizeof(char *));
		l.signature.v[l.signature.n++] = strdup(sig);
	}
	assert_int_equal(ap_matrix_add(m, &l), 0);
	return &m->v[m->n - 1];
}

/* Sets l's reaches to the one name given. */
static void reaches(struct ap_matrix_line *l, const char *name)
{
	l->reaches.set = 1;
	l->reaches.v = calloc(1, sizeof(char *));
	l->reaches.v[l->reaches.n++] = strdup(name);
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
	/* what b has, an empty a did not measure: not compared, not added */
	assert_int_equal(ap_matrix_diff(&a, "bookworm", &b, "trixie", &d), 0);
	assert_int_equal(d.part[AP_DIFF_ADDED].n, 0);
	assert_int_equal(d.part[AP_DIFF_REMOVED].n, 0);
	assert_int_equal(d.uncompared, 1);
	ap_matrix_diff_free(&d);
	ap_matrix_free(&b);
}

static void changes_are_sorted_into_their_parts(void **state)
{
	(void)state;
	struct ap_matrix m = { 0 };
	struct ap_matrix_diff d;
	line(&m, "bookworm", "torch.m", AP_LSTATUS_PRESENT, NULL);
	line(&m, "trixie", "torch.m", AP_LSTATUS_PRESENT, NULL);
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
	assert_int_equal(d.uncompared, 0);
	assert_true(d.signatures);
	ap_matrix_diff_free(&d);
	ap_matrix_free(&m);
}

/* A name with no line in the newer side that its module still reaches
 * (inherited, imported) or may serve (a module-level __getattr__) is
 * unlisted, not removed; without signatures on a side none are compared. */
static void what_the_newer_side_reaches_is_not_removed(void **state)
{
	(void)state;
	struct ap_matrix m = { 0 };
	struct ap_matrix_diff d;
	struct ap_buf out = { 0 };
	line(&m, "bookworm", "torch.m", AP_LSTATUS_PRESENT, NULL);
	line(&m, "bookworm", "torch.m.kept", AP_LSTATUS_PRESENT, "kept()");
	line(&m, "bookworm", "torch.m.f", AP_LSTATUS_PRESENT, "f(x)");
	reaches(line(&m, "trixie", "torch.m", AP_LSTATUS_PRESENT, NULL), "kept");
	line(&m, "trixie", "torch.m.f", AP_LSTATUS_PRESENT, NULL);
	assert_int_equal(ap_matrix_diff(&m, "bookworm", &m, "trixie", &d), 0);
	assert_int_equal(d.part[AP_DIFF_REMOVED].n, 0);
	assert_int_equal(d.part[AP_DIFF_UNLISTED].n, 1);
	assert_string_equal(d.part[AP_DIFF_UNLISTED].v[0].a->api, "torch.m.kept");
	assert_false(d.signatures);
	assert_int_equal(d.part[AP_DIFF_SIGNATURE].n, 0);
	ap_matrix_diff_text(&d, &out);
	assert_non_null(strstr(ap_buf_str(&out), "unlisted   torch.m.kept: no line of its own, "
			       "reached through torch.m\n"));
	assert_non_null(strstr(ap_buf_str(&out), "signatures not compared"));
	ap_matrix_diff_free(&d);
	ap_buf_free(&out);
	ap_matrix_free(&m);
	/* a module serving names through __getattr__: possibly there */
	line(&m, "bookworm", "torch.m", AP_LSTATUS_PRESENT, NULL);
	line(&m, "bookworm", "torch.m.lazy", AP_LSTATUS_PRESENT, NULL);
	reaches(line(&m, "trixie", "torch.m", AP_LSTATUS_PRESENT, NULL), "__getattr__");
	assert_int_equal(ap_matrix_diff(&m, "bookworm", &m, "trixie", &d), 0);
	assert_int_equal(d.part[AP_DIFF_UNLISTED].n, 1);
	ap_matrix_diff_text(&d, &out);
	assert_non_null(strstr(ap_buf_str(&out), "possibly served by the __getattr__ of torch.m"));
	ap_matrix_diff_free(&d);
	ap_buf_free(&out);
	ap_matrix_free(&m);
}

/* A class the newer side has at another path (the same definition) is
 * moved, and so is its member there; the new path is not also added. */
static void a_class_at_a_new_path_is_moved_not_removed_and_added(void **state)
{
	(void)state;
	struct ap_matrix m = { 0 };
	struct ap_matrix_diff d;
	struct ap_buf out = { 0 };
	line(&m, "bookworm", "torch.m", AP_LSTATUS_PRESENT, NULL);
	line(&m, "trixie", "torch.m", AP_LSTATUS_PRESENT, NULL);
	line(&m, "bookworm", "torch.m.old", AP_LSTATUS_PRESENT, NULL)->defined = strdup("torch.m._impl.K");
	line(&m, "bookworm", "torch.m.old.go", AP_LSTATUS_PRESENT, NULL)->owner = strdup("torch.m.old");
	line(&m, "trixie", "torch.m.New", AP_LSTATUS_PRESENT, NULL)->defined = strdup("torch.m._impl.K");
	line(&m, "trixie", "torch.m.New.go", AP_LSTATUS_PRESENT, NULL)->owner = strdup("torch.m.New");
	line(&m, "trixie", "torch.m.New.stop", AP_LSTATUS_PRESENT, NULL)->owner = strdup("torch.m.New");
	line(&m, "bookworm", "torch.m.gone", AP_LSTATUS_PRESENT, NULL)->defined = strdup("torch.m._impl.G");
	assert_int_equal(ap_matrix_diff(&m, "bookworm", &m, "trixie", &d), 0);
	assert_int_equal(d.part[AP_DIFF_MOVED].n, 2);
	assert_string_equal(d.part[AP_DIFF_MOVED].v[0].b->api, "torch.m.New");
	assert_string_equal(d.part[AP_DIFF_MOVED].v[1].b->api, "torch.m.New.go");
	assert_int_equal(d.part[AP_DIFF_REMOVED].n, 1);
	assert_string_equal(d.part[AP_DIFF_REMOVED].v[0].a->api, "torch.m.gone");
	/* only what nothing moved to is added */
	assert_int_equal(d.part[AP_DIFF_ADDED].n, 1);
	assert_string_equal(d.part[AP_DIFF_ADDED].v[0].b->api, "torch.m.New.stop");
	ap_matrix_diff_text(&d, &out);
	assert_non_null(strstr(ap_buf_str(&out), "moved      torch.m.old -> torch.m.New\n"));
	assert_non_null(strstr(ap_buf_str(&out), "1 added, 1 removed, 2 moved, 0 unlisted"));
	ap_matrix_diff_free(&d);
	ap_buf_free(&out);
	ap_matrix_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_matrices_differ_in_nothing),
		cmocka_unit_test(changes_are_sorted_into_their_parts),
		cmocka_unit_test(what_the_newer_side_reaches_is_not_removed),
		cmocka_unit_test(a_class_at_a_new_path_is_moved_not_removed_and_added),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
