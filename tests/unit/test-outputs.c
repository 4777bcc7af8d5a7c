/* test-outputs.c - unit tests for src/review/outputs.h: which top-level files
 * are the report's, and the top-level manifest that lists them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/fsutil.h"
#include "review/outputs.h"
#include "testutil.h"

struct fixture {
	char top[4096], env_dir[4200];
	struct ap_submission s;
	struct ap_sub_env env;
	json_t *reasons;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f || t_tempdir(f->top, sizeof(f->top), "test-outputs"))
		return -1;
	f->env.name = "trixie";
	snprintf(f->env_dir, sizeof(f->env_dir), "%s/trixie", f->top);
	f->env.dir = f->env_dir;
	f->s.v = &f->env;
	f->s.n = 1;
	f->s.broken = json_pack("{s:s}", "sid", "sid/bundle.json: not JSON");
	f->reasons = json_array();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = t_rmtree(f->top);
	json_decref(f->s.broken);
	json_decref(f->reasons);
	free(f);
	return r;
}

static void assert_reason(const json_t *reasons, const char *want)
{
	size_t i;
	json_t *r;
	json_array_foreach(reasons, i, r)
		if (!strcmp(json_string_value(r), want))
			return;
	char *all = json_dumps(reasons, 0);
	fail_msg("reason '%s' not in %s", want, all);
}

/* The reasons that are not about rendering again (this fixture's outputs
 * are made up: no bundle gives them). */
static size_t manifest_reasons(const json_t *reasons)
{
	size_t i, n = 0;
	json_t *r;
	json_array_foreach(reasons, i, r)
		n += !strstr(json_string_value(r), ": is not the report its bundles give") &&
		     !strstr(json_string_value(r), ": cannot be rendered again to compare");
	return n;
}

static void report_outputs_and_cards_of_its_environments_are_known(void **state)
{
	struct fixture *f = *state;
	assert_true(ap_output_known("report.html", &f->s));
	assert_true(ap_output_known("matrix.png", &f->s));
	assert_true(ap_output_known("card-trixie.png", &f->s));
	assert_true(ap_output_known("card-sid.png", &f->s)); /* a broken bundle's env */
	assert_false(ap_output_known("card-bookworm.png", &f->s));
	assert_false(ap_output_known("card-trixie.png.bak", &f->s));
	assert_false(ap_output_known("MANIFEST.sha256", &f->s));
	assert_false(ap_output_known("notes.txt", &f->s));
}

static void manifest_lists_the_outputs_there_and_nothing_else(void **state)
{
	struct fixture *f = *state;
	struct ap_buf err = { 0 }, text = { 0 }, path = { 0 };
	t_put(f->top, "report.html", "<html>");
	t_put(f->top, "card-trixie.png", "png");
	t_put(f->top, "notes.txt", "not a report output");
	t_put(f->top, "trixie/bundle.json", "{}");
	assert_int_equal(ap_output_manifest(f->top, &f->s, &err), 0);
	ap_buf_addf(&path, "%s/MANIFEST.sha256", f->top);
	assert_int_equal(ap_read_all(ap_buf_str(&path), &text), 0);
	/* sha256 of "png" and of "<html>", sorted by name, in sha256sum's format */
	assert_string_equal(ap_buf_str(&text),
		"8f8cbb7dcf46e0bc7d53265749a6c17d116093a6ba95e442764060c76fd4a86c  card-trixie.png\n"
		"b7d082ee12e91b756ea22e8513b8594eebcf5d39fab813da3cb55794dc888ad7  report.html\n");
	ap_output_verify(f->top, &f->s, f->reasons);
	assert_int_equal(manifest_reasons(f->reasons), 0);
	/* made up, they are not what the bundles give */
	assert_reason(f->reasons, "report.html: is not the report its bundles give (edited after "
		      "it was written, or written from other evidence): write it again with "
		      "`apiparity report`");
	assert_int_equal(json_array_size(f->reasons), 2);
	ap_buf_free(&err);
	ap_buf_free(&text);
	ap_buf_free(&path);
}

static void changed_unlisted_and_foreign_outputs_are_reasons(void **state)
{
	struct fixture *f = *state;
	struct ap_buf err = { 0 };
	t_put(f->top, "report.html", "<html>");
	t_put(f->top, "report.md", "# x");
	assert_int_equal(ap_output_manifest(f->top, &f->s, &err), 0);
	t_put(f->top, "report.html", "<html> changed");
	t_put(f->top, "matrix.png", "added after");
	ap_output_verify(f->top, &f->s, f->reasons);
	assert_reason(f->reasons, "report.html: sha256 does not match MANIFEST.sha256 (changed after the report)");
	assert_reason(f->reasons, "matrix.png: report output not listed in MANIFEST.sha256");
	assert_int_equal(manifest_reasons(f->reasons), 2);
	json_array_clear(f->reasons);
	t_put(f->top, "MANIFEST.sha256",
	      "0000000000000000000000000000000000000000000000000000000000000000  ../etc/passwd\nshort\n");
	ap_output_verify(f->top, &f->s, f->reasons);
	assert_reason(f->reasons, "MANIFEST.sha256:1: '../etc/passwd' is not a report output");
	assert_reason(f->reasons, "MANIFEST.sha256:2: malformed line");
	ap_buf_free(&err);
}

/* Outputs with no manifest were written after the run or cut short: each
 * is a reason (no outputs, no manifest: none). */
static void an_output_without_a_manifest_is_a_reason(void **state)
{
	struct fixture *f = *state;
	ap_output_verify(f->top, &f->s, f->reasons);
	assert_int_equal(json_array_size(f->reasons), 0);
	t_put(f->top, "report.html", "<html>");
	ap_output_verify(f->top, &f->s, f->reasons);
	assert_reason(f->reasons, "report.html: a report output with no MANIFEST.sha256 at the top "
		      "(written after the run, or cut short)");
	assert_int_equal(manifest_reasons(f->reasons), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(report_outputs_and_cards_of_its_environments_are_known),
		T(manifest_lists_the_outputs_there_and_nothing_else),
		T(changed_unlisted_and_foreign_outputs_are_reasons),
		T(an_output_without_a_manifest_is_a_reason),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
