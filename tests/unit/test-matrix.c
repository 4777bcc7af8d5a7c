/* test-matrix.c - unit tests for src/evidence/matrix.h and the sweep's
 * journal writes: lines ordered by api, module and --env position, judged
 * against each API's reference, written in one canonical form and read back
 * strictly; and journal.h's append_all. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "evidence/journal.h"
#include "evidence/matrix.h"

static const char *const envs[] = { "bookworm", "trixie", "sid" };

static json_t *line(const char *env, const char *api, const char *status, const char *kind,
		    const char *sig)
{
	json_t *l = ap_matrix_line(env, "torch.m", api, status);
	if (kind)
		json_object_set_new(l, "kind", json_string(kind));
	if (sig)
		json_object_set_new(l, "signature", json_pack("[s]", sig));
	return l;
}

static const char *verdict(const json_t *lines, size_t i)
{
	return json_string_value(json_object_get(json_array_get(lines, i), "verdict"));
}

static void lines_sort_by_api_module_then_env_order(void **state)
{
	(void)state;
	json_t *l = json_array();
	json_array_append_new(l, line("sid", "torch.m.b", "present", "function", "b()"));
	json_array_append_new(l, line("bookworm", "torch.m.b", "present", "function", "b()"));
	json_array_append_new(l, line("trixie", "torch.m.a", "present", "function", "a()"));
	json_t *other = line("bookworm", "torch.m.a", "present", "module", NULL);
	json_object_set_new(other, "module", json_string("torch"));
	json_array_append_new(l, other);
	ap_matrix_sort(l, envs, 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 0), "module")), "torch");
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 1), "env")), "trixie");
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 2), "env")), "bookworm");
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 3), "env")), "sid");
	json_decref(l);
}

static void verdicts_follow_each_apis_reference(void **state)
{
	(void)state;
	json_t *l = json_array();
	/* clone: absent in bookworm, so trixie is its reference */
	json_array_append_new(l, line("bookworm", "torch.m.clone", "absent", NULL, NULL));
	json_array_append_new(l, line("trixie", "torch.m.clone", "present", "method", "clone(self)"));
	json_array_append_new(l, line("sid", "torch.m.clone", "present", "method", "clone(self)"));
	/* fft: bookworm is the reference, sid's signature differs */
	json_array_append_new(l, line("bookworm", "torch.m.fft", "present", "builtin", "fft(x)"));
	json_array_append_new(l, line("trixie", "torch.m.fft", "present", "builtin", "fft(x)"));
	json_array_append_new(l, line("sid", "torch.m.fft", "present", "builtin", "fft(x, n)"));
	/* kind differs; a failed walk */
	json_array_append_new(l, line("bookworm", "torch.m.k", "present", "function", "k()"));
	json_array_append_new(l, line("trixie", "torch.m.k", "present", "class", "k()"));
	json_t *crash = line("sid", "torch.m.k", "crash", NULL, NULL);
	json_object_set_new(crash, "reason", json_string("worker killed by SIGSEGV"));
	json_array_append_new(l, crash);
	ap_matrix_sort(l, envs, 3);
	ap_matrix_judge(l, NULL);
	assert_string_equal(verdict(l, 0), "absent");
	assert_string_equal(verdict(l, 1), "consistent");
	assert_string_equal(verdict(l, 2), "consistent");
	assert_string_equal(verdict(l, 3), "consistent");
	assert_string_equal(verdict(l, 4), "consistent");
	assert_string_equal(verdict(l, 5), "inconsistent");
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 5), "reason")),
			    "signature differs from bookworm");
	assert_string_equal(verdict(l, 7), "inconsistent");
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 7), "reason")),
			    "kind differs from bookworm");
	assert_string_equal(verdict(l, 8), "not-run");
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 8), "reason")),
			    "worker killed by SIGSEGV");
	/* --reference sid: fft's sid is now right and the others differ */
	ap_matrix_judge(l, "sid");
	assert_string_equal(verdict(l, 3), "inconsistent");
	assert_string_equal(verdict(l, 5), "consistent");
	/* judging again changes nothing */
	json_t *copy = json_deep_copy(l);
	ap_matrix_judge(copy, "sid");
	assert_true(json_equal(copy, l));
	json_decref(copy);
	json_decref(l);
}

/* Depth probe and numeric: a check that failed, crashed or timed out makes
 * its line inconsistent, in the reference too; one that did not run leaves
 * the verdict to resolution and signature. */
static void failed_checks_make_a_line_inconsistent(void **state)
{
	(void)state;
	static const enum ap_line_check st[] = { AP_LCHECK_CONSISTENT, AP_LCHECK_CRASH,
						 AP_LCHECK_NOTRUN, AP_LCHECK_TIMEOUT };
	json_t *l = json_array();
	for (size_t i = 0; i < 3; i++) {
		json_t *x = line(envs[i], "torch.m.relu", "present", "function", "relu(x)");
		size_t n[5] = { 2, 1, i == 1, 0, 2 };
		json_object_set_new(x, "check", ap_matrix_check(st[i], i == 1 ? "s#0: SIGSEGV" : NULL,
								 NULL, json_pack("[s]", "relu"), n, NULL));
		json_array_append_new(l, x);
	}
	json_t *x = line("bookworm", "torch.m.t", "present", "function", "t()");
	size_t n[5] = { 1, 0, 1, 0, 1 };
	json_object_set_new(x, "check", ap_matrix_check(st[3], "s#0: no result", NULL, NULL, n, NULL));
	json_array_append_new(l, x);
	ap_matrix_sort(l, envs, 3);
	ap_matrix_judge(l, NULL);
	assert_string_equal(verdict(l, 0), "consistent");
	assert_string_equal(verdict(l, 1), "inconsistent");
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 1), "reason")),
			    "check crash: s#0: SIGSEGV");
	assert_string_equal(verdict(l, 2), "consistent");
	assert_string_equal(verdict(l, 3), "inconsistent");
	assert_true(ap_matrix_check_is(json_array_get(l, 2), AP_LCHECK_NOTRUN));
	assert_false(ap_matrix_check_is(json_array_get(l, 2), AP_LCHECK_CRASH));
	struct ap_buf out = { 0 };
	assert_int_equal(ap_matrix_render(l, &out), 0);
	assert_non_null(strstr(ap_buf_str(&out), "\"check\":{\"status\":\"crash\",\"reason\":"
			       "\"s#0: SIGSEGV\",\"family\":null,\"operators\":[\"relu\"],\"checks\":2,"
			       "\"passed\":1,\"failed\":1,\"notrun\":0,\"samples\":2,\"digest\":null}"));
	ap_buf_free(&out);
	json_decref(l);
}

static void matrix_renders_canonically_and_reads_back(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-matrix-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/matrix.jsonl", dir);
	json_t *l = json_array();
	json_array_append_new(l, line("trixie", "torch.m.a", "present", "function", "a(x: 'é')"));
	json_object_set_new(json_array_get(l, 0), "extra", json_true()); /* not written */
	ap_matrix_judge(l, NULL);
	struct ap_buf out = { 0 }, err = { 0 };
	assert_int_equal(ap_matrix_render(l, &out), 0);
	assert_string_equal(ap_buf_str(&out),
		"{\"schema\":\"apiparity.matrix/1\",\"env\":\"trixie\",\"module\":\"torch.m\","
		"\"api\":\"torch.m.a\",\"key\":\"torch.m.a\",\"owner\":null,\"status\":\"present\","
		"\"kind\":\"function\",\"file\":null,\"line\":null,\"pure_python\":null,"
		"\"signature\":[\"a(x: 'é')\"],\"patched\":null,\"plugin_added\":false,"
		"\"check\":null,\"verdict\":\"consistent\",\"reason\":null}\n");
	assert_int_equal(ap_write_atomic(path, out.data, out.len), 0);
	json_t *back = NULL;
	assert_int_equal(ap_matrix_read(dir, &back, &err), 0);
	struct ap_buf again = { 0 };
	ap_matrix_render(back, &again);
	assert_string_equal(ap_buf_str(&again), ap_buf_str(&out));
	json_decref(back);
	ap_buf_free(&again);
	ap_buf_free(&out);
	json_decref(l);
	unlink(path);
	rmdir(dir);
}

static void bad_lines_are_refused_with_file_and_line(void **state)
{
	(void)state;
	static const struct { const char *text, *want; } cases[] = {
		{ "{\"schema\":\"x\"}\n", "no \"schema\": \"apiparity.matrix/1\"" },
		{ "[1]\n", "not a JSON object" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"gone\"}\n",
		  "status is not one of" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"signature\":[1]}\n",
		  "signature must be a list of strings or null" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\"}\n",
		  "env, module and api must be strings" },
		{ "not json\n", "matrix.jsonl:1:" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"../../etc\",\"api\":\"a\",\"status\":\"present\"}\n",
		  "env, module and api must be names" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"check\":{\"status\":\"fine\"}}\n",
		  "check must be null or an object whose status is one of" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"check\":{\"status\":\"crash\",\"checks\":-1}}\n",
		  "check's counts must be numbers" },
	};
	char dir[] = "/tmp/test-matrix-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/matrix.jsonl", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ap_buf err = { 0 };
		json_t *l = NULL;
		assert_int_equal(ap_write_atomic(path, cases[i].text, strlen(cases[i].text)), 0);
		assert_int_equal(ap_matrix_read(path, &l, &err), -AP_EPROTO);
		assert_null(l);
		assert_non_null(strstr(ap_buf_str(&err), cases[i].want));
		assert_non_null(strstr(ap_buf_str(&err), ":1: "));
		ap_buf_free(&err);
	}
	unlink(path);
	struct ap_buf err = { 0 };
	json_t *l = NULL;
	assert_int_equal(ap_matrix_read(dir, &l, &err), -ENOENT);
	ap_buf_free(&err);
	rmdir(dir);
}

static void journal_append_all_writes_each_record_as_a_line(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-matrix-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/j.jsonl", dir);
	struct ap_journal *j = ap_journal_open(path);
	json_t *recs = json_pack("[{s:i}, {s:i}, {s:s}]", "a", 1, "b", 2, "c", "x\ny");
	assert_int_equal(ap_journal_append_all(j, recs), 0);
	json_t *none = json_array();
	assert_int_equal(ap_journal_append_all(j, none), 0);
	json_decref(none);
	ap_journal_close(j);
	json_t *back = NULL;
	int torn = 1;
	struct ap_buf err = { 0 };
	assert_int_equal(ap_journal_read(path, &back, &torn, &err), 0);
	assert_int_equal(torn, 0);
	assert_true(json_equal(back, recs));
	json_decref(back);
	json_decref(recs);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_sort_by_api_module_then_env_order),
		cmocka_unit_test(verdicts_follow_each_apis_reference),
		cmocka_unit_test(failed_checks_make_a_line_inconsistent),
		cmocka_unit_test(matrix_renders_canonically_and_reads_back),
		cmocka_unit_test(bad_lines_are_refused_with_file_and_line),
		cmocka_unit_test(journal_append_all_writes_each_record_as_a_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
