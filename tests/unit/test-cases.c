/* test-cases.c - unit tests for src/evidence/cases.h: a trace's journal
 * lines applied, the file written and read back, what can be replayed. */
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
#include "evidence/cases.h"
#include "testutil.h"

#define CONV "{\"t\":\"case\",\"id\":%d,\"api\":\"torch.nn.functional.conv2d\",\"kind\":\"function\"," \
	"\"args\":[{\"$desc\":{\"dtype\":\"float32\",\"shape\":[2,3,8,8],\"strides\":[192,64,8,1]," \
	"\"device\":\"cpu\",\"requires_grad\":false}}],\"kwargs\":{\"stride\":1}}"

static void apply(struct ap_trace *t, const char *line)
{
	assert_int_equal(ap_trace_apply(t, line, strlen(line)), 0);
}

static void applyf(struct ap_trace *t, const char *fmt, int id)
{
	char line[1024];
	snprintf(line, sizeof(line), fmt, id);
	apply(t, line);
}

/* Cases as they come, counts as the last counts line says, the calls past
 * max_cases counted too; what is not a record is counted and skipped. */
static void test_journal_lines_make_the_trace(void **state)
{
	(void)state;
	struct ap_trace t = { 0 };
	apply(&t, "{\"t\":\"counts\",\"counts\":[],\"over\":{},\"aten\":[]}");
	assert_true(t.torch);
	applyf(&t, CONV, 0);
	apply(&t, "{\"t\":\"case\",\"id\":1,\"api\":\"torch.nn.Conv2d\",\"kind\":\"module\",\"args\":[],\"kwargs\":{}}");
	applyf(&t, CONV, 5);          /* not the next id */
	apply(&t, "{\"t\":\"case\"");  /* torn */
	apply(&t, "{\"t\":\"counts\",\"counts\":[3,0],\"over\":{\"torch.nn.functional.conv2d\":4},"
		  "\"aten\":[[\"aten.convolution.default\"],[]]}");
	assert_int_equal(t.n, 2);
	assert_int_equal(t.bad_lines, 2);
	assert_int_equal(t.v[0].count, 3);
	assert_int_equal(t.v[1].count, 1); /* seen: never below one */
	assert_string_equal(json_string_value(json_array_get(t.v[0].aten, 0)),
			    "aten.convolution.default");
	assert_int_equal(ap_trace_calls(&t), 3 + 1 + 4);
	struct ap_trace_api *apis;
	size_t n;
	assert_int_equal(ap_trace_apis(&t, &apis, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(apis[0].api, "torch.nn.functional.conv2d");
	assert_int_equal(apis[0].calls, 7);
	assert_int_equal(apis[1].kind, AP_CASE_MODULE);
	free(apis);
	ap_trace_free(&t);
}

static void test_the_file_reads_back_as_written(void **state)
{
	(void)state;
	char dir[4096], path[4200];
	struct ap_trace t = { 0 }, u;
	struct ap_buf err = { 0 };
	assert_int_equal(t_tempdir(dir, sizeof(dir), "test-cases"), 0);
	snprintf(path, sizeof(path), "%s/cases.jsonl", dir);
	ap_argv_push(&t.command, "python3");
	ap_argv_push(&t.command, "model\n.py");
	t.env = strdup("trixie");
	t.has_returncode = 1;
	t.returncode = -11;
	t.max_cases = 8;
	applyf(&t, CONV, 0);
	apply(&t, "{\"t\":\"counts\",\"counts\":[20],\"over\":{\"torch.add\":2},\"aten\":[]}");
	assert_int_equal(ap_trace_write(&t, path), 0);
	assert_int_equal(ap_trace_load(&u, path, &err), 0);
	assert_string_equal(u.command.v[1], "model\n.py");
	assert_string_equal(u.env, "trixie");
	assert_int_equal(u.returncode, -11);
	assert_true(u.torch);
	assert_int_equal(u.n, 1);
	assert_int_equal(u.v[0].count, 20);
	assert_int_equal(ap_trace_calls(&u), 22);
	ap_trace_free(&u);
	ap_trace_free(&t);
	/* not a trace: a line that is not the header, a case with count 0 */
	FILE *f = fopen(path, "w");
	fputs("{\"format\":\"apiparity-cases/9\"}\n", f);
	fclose(f);
	assert_int_equal(ap_trace_load(&u, path, &err), -AP_EINPUT);
	assert_non_null(strstr(ap_buf_str(&err), ":1: not a apiparity-cases/1 header"));
	assert_int_equal(ap_trace_load(&u, dir, &err), -AP_EINPUT);
	unlink(path);
	rmdir(dir);
	ap_buf_free(&err);
}

static struct ap_case a_case(const char *api, enum ap_case_kind kind, const char *args,
			     const char *aten)
{
	struct ap_case c = { 0, (char *)api, kind, 1, json_loads(args, 0, NULL), json_object(),
			     json_loads(aten, 0, NULL) };
	return c;
}

static int replayable(const char *api, enum ap_case_kind kind, const char *args,
		      const char *aten, const char *why_has)
{
	struct ap_case c = a_case(api, kind, args, aten);
	struct ap_buf why = { 0 };
	int r = ap_case_replayable(&c, &why);
	if (why_has)
		assert_non_null(strstr(ap_buf_str(&why), why_has));
	json_decref(c.args);
	json_decref(c.kwargs);
	json_decref(c.aten);
	ap_buf_free(&why);
	return r;
}

#define T1 "[{\"$desc\":{\"dtype\":\"float32\",\"shape\":[4,8],\"strides\":[8,1]}}]"

static void test_what_is_replayed_and_why_not(void **state)
{
	(void)state;
	assert_true(replayable("torch.relu", AP_CASE_FUNCTION, T1, "[\"aten.relu.default\"]", NULL));
	assert_false(replayable("torch.nn.Linear", AP_CASE_MODULE, T1, "[]", "a module call"));
	assert_false(replayable("torch.ones", AP_CASE_FUNCTION, "[3]", "[]", "no tensor"));
	assert_false(replayable("torch.nn.init.uniform_", AP_CASE_FUNCTION, "[]", "[]",
				"keyword arguments only"));
	assert_false(replayable("torch.Tensor.normal_", AP_CASE_FUNCTION, T1,
				"[\"aten.normal_.default\"]", "random"));
	assert_false(replayable("torch.dropout", AP_CASE_FUNCTION, T1,
				"[\"aten.native_dropout.default\"]", "random"));
	/* a name that only starts like a random operator is not one */
	assert_true(replayable("torch.randomized", AP_CASE_FUNCTION, T1,
			       "[\"aten.uniformity.default\", \"aten.normalize.default\"]", NULL));
	assert_false(replayable("torch.add", AP_CASE_FUNCTION, "[1, {\"$opaque\": \"Stream\"}]", "[]",
				"type Stream"));
	assert_false(replayable("torch.x-y", AP_CASE_FUNCTION, T1, "[]", "not a dotted name"));
	assert_false(replayable("torch.add", AP_CASE_FUNCTION,
				"[{\"$desc\":{\"dtype\":\"float32\",\"shape\":[4],\"layout\":\"torch.sparse_coo\"}}]",
				"[]", "layout torch.sparse_coo"));
}

static void test_tensor_bytes(void **state)
{
	(void)state;
	struct ap_case c = a_case("torch.add", AP_CASE_FUNCTION,
				  "[{\"$desc\":{\"dtype\":\"float32\",\"shape\":[768,512]}},"
				  " {\"$tuple\":[{\"$desc\":{\"dtype\":\"int64\",\"shape\":[3]}}]}, 2]", "[]");
	assert_true(ap_case_tensor_bytes(&c) == 768.0 * 512 * 4 + 3 * 8);
	json_decref(c.args);
	json_decref(c.kwargs);
	json_decref(c.aten);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_lines_make_the_trace),
		cmocka_unit_test(test_the_file_reads_back_as_written),
		cmocka_unit_test(test_what_is_replayed_and_why_not),
		cmocka_unit_test(test_tensor_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
