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

/* Adds a line of api in env under torch.m; its index. */
static size_t line(struct ap_matrix *m, const char *env, const char *api,
		   enum ap_line_status status, const char *kind, const char *sig)
{
	struct ap_matrix_line l;
	assert_int_equal(ap_matrix_line_init(&l, env, "torch.m", api, status), 0);
	l.kind = kind ? strdup(kind) : NULL;
	if (sig) {
		l.signature.set = 1;
		l.signature.v = calloc(1, sizeof(char *));
		l.signature.v[l.signature.n++] = strdup(sig);
	}
	assert_int_equal(ap_matrix_add(m, &l), 0);
	return m->n - 1;
}

static const char *verdict(const struct ap_matrix *m, size_t i)
{
	return ap_line_verdict_name(m->v[i].verdict);
}

static void lines_sort_by_api_module_then_env_order(void **state)
{
	(void)state;
	struct ap_matrix l = { 0 };
	line(&l, "sid", "torch.m.b", AP_LSTATUS_PRESENT, "function", "b()");
	line(&l, "bookworm", "torch.m.b", AP_LSTATUS_PRESENT, "function", "b()");
	line(&l, "trixie", "torch.m.a", AP_LSTATUS_PRESENT, "function", "a()");
	size_t other = line(&l, "bookworm", "torch.m.a", AP_LSTATUS_PRESENT, "module", NULL);
	free(l.v[other].module);
	l.v[other].module = strdup("torch");
	ap_matrix_sort(&l, envs, 3);
	assert_string_equal(l.v[0].module, "torch");
	assert_string_equal(l.v[1].env, "trixie");
	assert_string_equal(l.v[2].env, "bookworm");
	assert_string_equal(l.v[3].env, "sid");
	ap_matrix_free(&l);
}

/* Whether two matrices render the same. */
static int same(const struct ap_matrix *a, const struct ap_matrix *b)
{
	struct ap_buf x = { 0 }, y = { 0 };
	ap_matrix_render(a, &x);
	ap_matrix_render(b, &y);
	int eq = !strcmp(ap_buf_str(&x), ap_buf_str(&y));
	ap_buf_free(&x);
	ap_buf_free(&y);
	return eq;
}

static void verdicts_follow_each_apis_reference(void **state)
{
	(void)state;
	struct ap_matrix l = { 0 };
	/* clone: absent in bookworm, so trixie is its reference */
	line(&l, "bookworm", "torch.m.clone", AP_LSTATUS_ABSENT, NULL, NULL);
	line(&l, "trixie", "torch.m.clone", AP_LSTATUS_PRESENT, "method", "clone(self)");
	line(&l, "sid", "torch.m.clone", AP_LSTATUS_PRESENT, "method", "clone(self)");
	/* fft: bookworm is the reference, sid's signature differs */
	line(&l, "bookworm", "torch.m.fft", AP_LSTATUS_PRESENT, "builtin", "fft(x)");
	line(&l, "trixie", "torch.m.fft", AP_LSTATUS_PRESENT, "builtin", "fft(x)");
	line(&l, "sid", "torch.m.fft", AP_LSTATUS_PRESENT, "builtin", "fft(x, n)");
	/* kind differs; a failed walk */
	line(&l, "bookworm", "torch.m.k", AP_LSTATUS_PRESENT, "function", "k()");
	line(&l, "trixie", "torch.m.k", AP_LSTATUS_PRESENT, "class", "k()");
	size_t crash = line(&l, "sid", "torch.m.k", AP_LSTATUS_CRASH, NULL, NULL);
	l.v[crash].reason = strdup("worker killed by SIGSEGV");
	ap_matrix_sort(&l, envs, 3);
	ap_matrix_judge(&l, NULL);
	assert_string_equal(verdict(&l, 0), "absent");
	assert_string_equal(verdict(&l, 1), "consistent");
	assert_string_equal(verdict(&l, 2), "consistent");
	assert_string_equal(verdict(&l, 3), "consistent");
	assert_string_equal(verdict(&l, 4), "consistent");
	assert_string_equal(verdict(&l, 5), "inconsistent");
	assert_string_equal(l.v[5].reason, "signature differs from bookworm");
	assert_string_equal(verdict(&l, 7), "inconsistent");
	assert_string_equal(l.v[7].reason, "kind differs from bookworm");
	assert_string_equal(verdict(&l, 8), "not-run");
	assert_string_equal(l.v[8].reason, "worker killed by SIGSEGV");
	/* --reference sid: fft's sid is now right and the others differ */
	ap_matrix_judge(&l, "sid");
	assert_string_equal(verdict(&l, 3), "inconsistent");
	assert_string_equal(verdict(&l, 5), "consistent");
	/* --reference bookworm, where clone is absent: its first present
	 * environment stands in, so trixie and sid agree */
	ap_matrix_judge(&l, "bookworm");
	assert_string_equal(verdict(&l, 0), "absent");
	assert_string_equal(verdict(&l, 1), "consistent");
	assert_string_equal(verdict(&l, 2), "consistent");
	ap_matrix_judge(&l, "sid");
	/* judging again changes nothing */
	struct ap_matrix copy = { 0 };
	for (size_t i = 0; i < l.n; i++) {
		struct ap_matrix_line c;
		assert_int_equal(ap_matrix_line_copy(&c, &l.v[i]), 0);
		assert_int_equal(ap_matrix_add(&copy, &c), 0);
	}
	ap_matrix_judge(&copy, "sid");
	assert_true(same(&copy, &l));
	ap_matrix_free(&copy);
	ap_matrix_free(&l);
}

/* Sets line i's check from what autocheck makes of one. */
static void set_check(struct ap_matrix *m, size_t i, json_t *c)
{
	assert_int_equal(ap_matrix_check_read(c, &m->v[i].check), 0);
	json_decref(c);
}

/* Depth probe and numeric: a check that failed, crashed or timed out makes
 * its line inconsistent, in the reference too; one that did not run leaves
 * the verdict to resolution and signature. */
static void failed_checks_make_a_line_inconsistent(void **state)
{
	(void)state;
	static const enum ap_line_check st[] = { AP_LCHECK_CONSISTENT, AP_LCHECK_CRASH,
						 AP_LCHECK_NOTRUN, AP_LCHECK_TIMEOUT };
	struct ap_matrix l = { 0 };
	for (size_t i = 0; i < 3; i++) {
		size_t x = line(&l, envs[i], "torch.m.relu", AP_LSTATUS_PRESENT, "function", "relu(x)");
		size_t n[5] = { 2, 1, i == 1, 0, 2 };
		set_check(&l, x, ap_matrix_check(st[i], i == 1 ? "s#0: SIGSEGV" : NULL, NULL,
						 json_pack("[s]", "relu"), n, NULL));
	}
	size_t x = line(&l, "bookworm", "torch.m.t", AP_LSTATUS_PRESENT, "function", "t()");
	size_t n[5] = { 1, 0, 1, 0, 1 };
	set_check(&l, x, ap_matrix_check(st[3], "s#0: no result", NULL, NULL, n, NULL));
	ap_matrix_sort(&l, envs, 3);
	ap_matrix_judge(&l, NULL);
	assert_string_equal(verdict(&l, 0), "consistent");
	assert_string_equal(verdict(&l, 1), "inconsistent");
	assert_string_equal(l.v[1].reason, "check crash: s#0: SIGSEGV");
	assert_string_equal(verdict(&l, 2), "consistent");
	assert_string_equal(verdict(&l, 3), "inconsistent");
	assert_true(ap_matrix_check_is(&l.v[2], AP_LCHECK_NOTRUN));
	assert_false(ap_matrix_check_is(&l.v[2], AP_LCHECK_CRASH));
	struct ap_buf out = { 0 };
	assert_int_equal(ap_matrix_render(&l, &out), 0);
	assert_non_null(strstr(ap_buf_str(&out), "\"check\":{\"status\":\"crash\",\"reason\":"
			       "\"s#0: SIGSEGV\",\"family\":null,\"operators\":[\"relu\"],\"checks\":2,"
			       "\"passed\":1,\"failed\":1,\"notrun\":0,\"samples\":2,\"digest\":null}"));
	ap_buf_free(&out);
	ap_matrix_free(&l);
}

static void matrix_renders_canonically_and_reads_back(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-matrix-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/matrix.jsonl", dir);
	struct ap_matrix l = { 0 };
	line(&l, "trixie", "torch.m.a", AP_LSTATUS_PRESENT, "function", "a(x: 'é')");
	ap_matrix_judge(&l, NULL);
	struct ap_buf out = { 0 }, err = { 0 };
	assert_int_equal(ap_matrix_render(&l, &out), 0);
	assert_string_equal(ap_buf_str(&out),
		"{\"schema\":\"apiparity.matrix/1\",\"env\":\"trixie\",\"module\":\"torch.m\","
		"\"api\":\"torch.m.a\",\"key\":\"torch.m.a\",\"owner\":null,\"status\":\"present\","
		"\"kind\":\"function\",\"file\":null,\"line\":null,\"defined\":null,\"pure_python\":null,"
		"\"doc\":null,\"signature\":[\"a(x: 'é')\"],\"reaches\":null,\"on_self\":null,\"patched\":null,"
		"\"plugin_added\":false,\"check\":null,\"verdict\":\"consistent\",\"reason\":null}\n");
	/* every field of a line comes back as it was written */
	const char *full =
		"{\"schema\":\"apiparity.matrix/1\",\"env\":\"sid\",\"module\":\"torch.m\","
		"\"api\":\"torch.m.C.f\",\"key\":\"C.f\",\"owner\":\"torch.m.C\",\"status\":\"present\","
		"\"kind\":\"method\",\"file\":\"torch/m.py\",\"line\":12,\"defined\":\"torch.m.C\",\"pure_python\":true,"
		"\"doc\":false,\"signature\":[\"f(self)\",\"f(self, x)\"],\"reaches\":[\"__init__\",\"zero_grad\"],"
		"\"on_self\":[],\"patched\":false,\"plugin_added\":true,"
		"\"check\":{\"status\":\"inconsistent\",\"reason\":\"r\",\"family\":\"mode-context\","
		"\"operators\":[\"f\"],\"checks\":3,\"passed\":2,\"failed\":1,\"notrun\":0,"
		"\"samples\":4,\"digest\":\"ab\"},\"verdict\":\"inconsistent\",\"reason\":\"check\"}\n";
	ap_buf_adds(&out, full);
	assert_int_equal(ap_write_atomic(path, out.data, out.len), 0);
	struct ap_matrix back = { 0 };
	assert_int_equal(ap_matrix_read(dir, &back, &err), 0);
	assert_int_equal(back.n, 2);
	assert_int_equal(back.v[1].line, 12);
	assert_int_equal(back.v[1].pure_python, AP_TRI_TRUE);
	assert_int_equal(back.v[1].doc, AP_TRI_FALSE);
	assert_int_equal(back.v[1].patched, AP_TRI_FALSE);
	assert_true(back.v[1].plugin_added);
	assert_int_equal(back.v[1].check.counts[AP_MCOUNT_SAMPLES], 4);
	assert_int_equal(back.v[1].reaches.n, 2);
	assert_string_equal(back.v[1].reaches.v[1], "zero_grad");
	assert_true(back.v[1].on_self.set);
	assert_int_equal(back.v[1].on_self.n, 0);
	assert_false(back.v[0].reaches.set);
	struct ap_buf again = { 0 };
	ap_matrix_render(&back, &again);
	assert_string_equal(ap_buf_str(&again), ap_buf_str(&out));
	ap_matrix_free(&back);
	ap_buf_free(&again);
	ap_buf_free(&out);
	ap_matrix_free(&l);
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
		  "signature, reaches and on_self must be lists of strings or null" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"reaches\":\"x\"}\n",
		  "signature, reaches and on_self must be lists of strings or null" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"on_self\":[null]}\n",
		  "signature, reaches and on_self must be lists of strings or null" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\"}\n",
		  "env, module and api must be strings" },
		{ "not json\n", "matrix.jsonl:1:" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"../../etc\",\"api\":\"a\",\"status\":\"present\"}\n",
		  "env, module and api must be names" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"check\":{\"status\":\"fine\"}}\n",
		  "check must be null or an object whose status is one of" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"check\":{\"status\":\"crash\",\"checks\":-1}}\n",
		  "check's counts must be numbers" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"line\":\"7\"}\n",
		  "line must be a number or null" },
		{ "{\"schema\":\"apiparity.matrix/1\",\"env\":\"t\",\"module\":\"m\",\"api\":\"a\",\"status\":\"present\",\"patched\":1}\n",
		  "pure_python, doc, patched and plugin_added must be true, false or null" },
	};
	char dir[] = "/tmp/test-matrix-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/matrix.jsonl", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ap_buf err = { 0 };
		struct ap_matrix l = { 0 };
		assert_int_equal(ap_write_atomic(path, cases[i].text, strlen(cases[i].text)), 0);
		assert_int_equal(ap_matrix_read(path, &l, &err), -AP_EPROTO);
		assert_int_equal(l.n, 0);
		assert_non_null(strstr(ap_buf_str(&err), cases[i].want));
		assert_non_null(strstr(ap_buf_str(&err), ":1: "));
		ap_buf_free(&err);
	}
	unlink(path);
	struct ap_buf err = { 0 };
	struct ap_matrix l = { 0 };
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
