/* test-submission.c - unit tests for src/submission.h: reading back a directory
 * of bundles as untrusted input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "evidence/submission.h"
#include "testutil.h"

#define BUNDLE_OK "{\"schema\": \"apiparity.bundle/1\", \"target\": \"torch.add\"}\n"

struct fixture {
	char top[4096];
	struct ap_submission s;
	struct ap_buf err;
};

static int make_tempdir(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (t_tempdir(f->top, sizeof(f->top), "test-submission")) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int remove_tempdir(void **state)
{
	struct fixture *f = *state;
	int r = t_rmtree(f->top);
	ap_submission_free(&f->s);
	ap_buf_free(&f->err);
	free(f);
	return r;
}

static void assert_empty(const struct ap_submission *s)
{
	assert_null(s->v);
	assert_null(s->dir);
	assert_int_equal(s->n, 0);
}

static void two_bundles_are_loaded_sorted_by_name(void **state)
{
	struct fixture *f = *state;
	char want[8192];
	t_put(f->top, "a3/bundle.json", BUNDLE_OK);
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), 0);
	assert_string_equal(ap_buf_str(&f->err), "");
	assert_int_equal(f->s.n, 2);
	assert_string_equal(f->s.dir, f->top);
	assert_string_equal(f->s.v[0].name, "a2");
	assert_string_equal(f->s.v[1].name, "a3");
	snprintf(want, sizeof(want), "%s/a3", f->top);
	assert_string_equal(f->s.v[1].dir, want);
	assert_string_equal(json_string_value(json_object_get(f->s.v[0].bundle, "target")),
			    "torch.add");
}

static void bundles_keep_the_order_check_was_given(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "bookworm/bundle.json",
	      "{\"schema\": \"apiparity.bundle/1\", \"env\": {\"order\": 0}}");
	t_put(f->top, "trixie/bundle.json",
	      "{\"schema\": \"apiparity.bundle/1\", \"env\": {\"order\": 1}}");
	t_put(f->top, "sid/bundle.json",
	      "{\"schema\": \"apiparity.bundle/1\", \"env\": {\"order\": 2}}");
	t_put(f->top, "a1/bundle.json", BUNDLE_OK); /* no order: after, by name */
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), 0);
	assert_int_equal(f->s.n, 4);
	assert_string_equal(f->s.v[0].name, "bookworm");
	assert_string_equal(f->s.v[1].name, "trixie");
	assert_string_equal(f->s.v[2].name, "sid");
	assert_string_equal(f->s.v[3].name, "a1");
}

static void load_all_lists_an_unreadable_bundle_and_keeps_the_rest(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	t_put(f->top, "a3/bundle.json", "{\"schema\": ");
	assert_int_equal(ap_submission_load_all(&f->s, f->top, &f->err), 0);
	assert_int_equal(f->s.n, 1);
	assert_string_equal(f->s.v[0].name, "a2");
	const char *why = json_string_value(json_object_get(f->s.broken, "a3"));
	assert_non_null(why);
	assert_non_null(strstr(why, "a3/bundle.json: "));
}

static void load_all_of_only_broken_bundles_is_still_a_submission(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a3/bundle.json", "{\"schema\": \"other\"}");
	assert_int_equal(ap_submission_load_all(&f->s, f->top, &f->err), 0);
	assert_int_equal(f->s.n, 0);
	assert_int_equal(json_object_size(f->s.broken), 1);
}

static void find_returns_the_named_environment_or_null(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a3/bundle.json", BUNDLE_OK);
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), 0);
	const struct ap_sub_env *e = ap_submission_find(&f->s, "a3");
	assert_non_null(e);
	assert_ptr_equal(e, &f->s.v[1]);
	assert_string_equal(ap_submission_find(&f->s, "a2")->name, "a2");
	assert_null(ap_submission_find(&f->s, "a5"));
	assert_null(ap_submission_find(&f->s, "a"));
}

static void directories_that_are_not_environment_names_are_ignored(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	t_put(f->top, "bad name/bundle.json", "{not json");
	t_put(f->top, ".hidden/bundle.json", "{\"schema\": \"other\"}");
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), 0);
	assert_int_equal(f->s.n, 1);
	assert_string_equal(f->s.v[0].name, "a2");
	assert_null(ap_submission_find(&f->s, "bad name"));
	assert_null(ap_submission_find(&f->s, ".hidden"));
}

static void wrong_schema_is_a_protocol_error_naming_the_file(void **state)
{
	struct fixture *f = *state;
	char want[8192];
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	t_put(f->top, "a3/bundle.json", "{\"schema\": \"apiparity.bundle/2\"}\n");
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), -AP_EPROTO);
	snprintf(want, sizeof(want), "%s/a3/bundle.json", f->top);
	assert_non_null(strstr(ap_buf_str(&f->err), want));
	assert_non_null(strstr(ap_buf_str(&f->err), "apiparity.bundle/1"));
	assert_empty(&f->s);
}

static void bundle_without_schema_is_a_protocol_error(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a2/bundle.json", "[1, 2]\n");
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), -AP_EPROTO);
	assert_non_null(strstr(ap_buf_str(&f->err), "a2/bundle.json"));
	assert_empty(&f->s);
}

static void invalid_json_is_a_protocol_error_naming_the_file(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	t_put(f->top, "a3/bundle.json", "{\"schema\": \"apiparity.bundle/1\",");
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), -AP_EPROTO);
	assert_non_null(strstr(ap_buf_str(&f->err), "a3/bundle.json: "));
	assert_empty(&f->s);
}

static void duplicate_keys_are_a_protocol_error(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a2/bundle.json",
	    "{\"schema\": \"apiparity.bundle/1\", \"schema\": \"apiparity.bundle/1\"}");
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), -AP_EPROTO);
	assert_empty(&f->s);
}

static void symlinked_bundle_json_is_not_followed(void **state)
{
	struct fixture *f = *state;
	char target[8192], link[8192];
	t_put(f->top, "elsewhere.json", BUNDLE_OK);
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	assert_int_equal(mkdir(strcat(strcpy(link, f->top), "/a3"), 0755), 0);
	snprintf(target, sizeof(target), "%s/elsewhere.json", f->top);
	snprintf(link, sizeof(link), "%s/a3/bundle.json", f->top);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), 0);
	assert_int_equal(f->s.n, 1);
	assert_string_equal(f->s.v[0].name, "a2");
	assert_null(ap_submission_find(&f->s, "a3"));
}

static void only_symlinked_bundles_is_no_bundle(void **state)
{
	struct fixture *f = *state;
	char target[8192], link[8192];
	t_put(f->top, "elsewhere.json", BUNDLE_OK);
	t_put(f->top, "a2/other", "");
	snprintf(target, sizeof(target), "%s/elsewhere.json", f->top);
	snprintf(link, sizeof(link), "%s/a2/bundle.json", f->top);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), -ENOENT);
	assert_empty(&f->s);
}

static void empty_directory_is_enoent(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), -ENOENT);
	assert_non_null(strstr(ap_buf_str(&f->err), f->top));
	assert_non_null(strstr(ap_buf_str(&f->err), "no bundles"));
	assert_empty(&f->s);
}

static void env_directory_without_bundle_is_skipped(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	t_put(f->top, "a3/run.log", "");
	t_put(f->top, "report.md", "# old\n");
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), 0);
	assert_int_equal(f->s.n, 1);
	assert_string_equal(f->s.v[0].name, "a2");
}

static void missing_directory_is_an_error_naming_it(void **state)
{
	struct fixture *f = *state;
	char dir[8192];
	snprintf(dir, sizeof(dir), "%s/nonexistent", f->top);
	assert_int_equal(ap_submission_load(&f->s, dir, &f->err), -ENOENT);
	assert_non_null(strstr(ap_buf_str(&f->err), dir));
	assert_empty(&f->s);
}

static void free_leaves_an_empty_struct_that_can_be_freed_again(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "a2/bundle.json", BUNDLE_OK);
	assert_int_equal(ap_submission_load(&f->s, f->top, &f->err), 0);
	assert_int_equal(f->s.n, 1);
	ap_submission_free(&f->s);
	assert_empty(&f->s);
	ap_submission_free(&f->s);
	assert_empty(&f->s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_tempdir, remove_tempdir)
		T(two_bundles_are_loaded_sorted_by_name),
		T(bundles_keep_the_order_check_was_given),
		T(load_all_lists_an_unreadable_bundle_and_keeps_the_rest),
		T(load_all_of_only_broken_bundles_is_still_a_submission),
		T(find_returns_the_named_environment_or_null),
		T(directories_that_are_not_environment_names_are_ignored),
		T(wrong_schema_is_a_protocol_error_naming_the_file),
		T(bundle_without_schema_is_a_protocol_error),
		T(invalid_json_is_a_protocol_error_naming_the_file),
		T(duplicate_keys_are_a_protocol_error),
		T(symlinked_bundle_json_is_not_followed),
		T(only_symlinked_bundles_is_no_bundle),
		T(empty_directory_is_enoent),
		T(env_directory_without_bundle_is_skipped),
		T(missing_directory_is_an_error_naming_it),
		T(free_leaves_an_empty_struct_that_can_be_freed_again),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
