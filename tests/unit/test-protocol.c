/* test-protocol.c - unit tests for src/env/protocol.h: the table of the
 * worker's operations, a request builder for each (the frame the worker is
 * sent, to the byte), the readers of its replies. That the table names the
 * worker's own operations is tests/integration/t-protocol.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "env/protocol.h"

static json_t *strings(const char *a, const char *b)
{
	return b ? json_pack("[s,s]", a, b) : json_pack("[s]", a);
}

/* A request of op, as a caller builds one. The switch has no default: an
 * operation added without a builder here does not compile (-Wswitch). */
static json_t *sample(enum ap_op op)
{
	json_t *bind = json_pack("{s:i}", "x", 1), *req = NULL;
	switch (op) {
	case AP_OP_FINGERPRINT:
		req = ap_proto_fingerprint(strings("cuda", "npu"), strings("torch_npu", NULL), 60);
		break;
	case AP_OP_RESOLVE:
		req = ap_proto_resolve("torch.add", strings("torch_npu", NULL));
		break;
	case AP_OP_PROBE:
		req = ap_proto_probe("enter", "pass", bind, 7);
		break;
	case AP_OP_PACKAGE:
		req = ap_proto_package("python3-torch");
		break;
	case AP_OP_TESTS_INDEX:
		req = ap_proto_tests_index("/src/test");
		break;
	case AP_OP_SAME_OBJECT:
		req = ap_proto_same_object("torch.Tensor", bind);
		break;
	case AP_OP_TESTS_PREFLIGHT:
		req = ap_proto_tests_preflight(&(struct ap_proto_preflight){
			"/src/test", "test_a.py", 1, 1, 0, 5, json_object(), bind, NULL });
		break;
	case AP_OP_TESTS_IMPORT:
		req = ap_proto_tests_import(bind);
		break;
	case AP_OP_TESTS_RUN:
		req = ap_proto_tests_run(&(struct ap_proto_tests_run){
			"/src/test", "test_a.py", NULL, "grad", 30, 90, NULL, NULL });
		break;
	case AP_OP_TESTS_GENERATED:
		req = ap_proto_tests_generated("torch.add", "cpu", bind, bind, bind);
		break;
	case AP_OP_OPINFO:
		req = ap_proto_opinfo("torch.add", strings("cpu", NULL));
		break;
	case AP_OP_SAMPLES:
		req = ap_proto_samples("torch.add", strings("float32", NULL), 4, 1);
		break;
	case AP_OP_RUN:
		req = ap_proto_run("torch.add", bind, strings("cpu", NULL),
				   json_pack("[{s:s}]", "npu", "dtype"),
				   &(struct ap_proto_run_limits){ 10, 60, 15, 200 },
				   "openreg-forked-daemons");
		break;
	case AP_OP_SWEEP_BEGIN:
		req = ap_proto_sweep_begin(strings("torch_npu", NULL), json_array(), bind);
		break;
	case AP_OP_SWEEP_WALK:
		req = ap_proto_sweep_walk("torch", "module", json_array(), NULL, "resolve", bind);
		break;
	case AP_OP_CASE_SAMPLES:
		req = ap_proto_case_samples("torch.add", json_pack("[{s:i}]", "id", 0), 1);
		break;
	case AP_OP_EXIT:
		req = ap_proto_exit();
		break;
	case AP_OP_COUNT:
	case AP_OP_UNKNOWN:
		break;
	}
	json_decref(bind);
	return req;
}

static void expect_frame(json_t *req, const char *want)
{
	assert_non_null(req);
	char *s = json_dumps(req, JSON_COMPACT);
	assert_string_equal(s, want);
	free(s);
	json_decref(req);
}

static void every_op_name_reads_back_and_only_exit_is_outside_ops(void **state)
{
	(void)state;
	for (int i = 0; i < AP_OP_COUNT; i++) {
		assert_non_null(ap_op_name((enum ap_op)i));
		assert_int_equal(ap_op_parse(ap_op_name((enum ap_op)i)), i);
		assert_int_equal(ap_op_dispatched((enum ap_op)i), i != AP_OP_EXIT);
	}
	assert_string_equal(ap_op_name(AP_OP_TESTS_RUN), "tests_run");
	assert_int_equal(ap_op_parse("tests-run"), AP_OP_UNKNOWN);
	assert_int_equal(ap_op_parse(NULL), AP_OP_UNKNOWN);
}

static void every_builder_carries_its_fields_and_limits(void **state)
{
	(void)state;
	for (int i = 0; i < AP_OP_COUNT; i++) {
		struct ap_buf why = { 0 };
		json_t *req = sample((enum ap_op)i);
		assert_non_null(req);
		assert_string_equal(json_string_value(json_object_get(req, "op")),
				    ap_op_name((enum ap_op)i));
		if (ap_proto_check(req, &why))
			fail_msg("%s: %s", ap_op_name((enum ap_op)i), ap_buf_str(&why));
		for (const char *const *l = ap_op_limits((enum ap_op)i); *l; l++)
			assert_true(json_is_integer(json_object_get(req, *l)));
		ap_buf_free(&why);
		json_decref(req);
	}
}

static void the_limits_are_those_the_worker_refuses_to_guess(void **state)
{
	(void)state;
	const char *const *l = ap_op_limits(AP_OP_TESTS_RUN);
	assert_string_equal(l[0], "timeout_s");
	assert_string_equal(l[1], "deadline_s");
	assert_null(l[2]);
	assert_string_equal(ap_op_limits(AP_OP_FINGERPRINT)[0], "device_timeout_s");
	assert_string_equal(ap_op_limits(AP_OP_RUN)[1], "start_s");
	assert_null(ap_op_limits(AP_OP_RESOLVE)[0]);
}

static void check_refuses_a_request_without_a_field_or_a_limit(void **state)
{
	(void)state;
	struct ap_buf why = { 0 };
	json_t *req = sample(AP_OP_RESOLVE);
	json_object_del(req, "plugins");
	assert_int_equal(ap_proto_check(req, &why), -AP_EPROTO);
	assert_non_null(strstr(ap_buf_str(&why), "'plugins'"));
	json_decref(req);
	ap_buf_reset(&why);
	req = sample(AP_OP_TESTS_RUN);
	json_object_set_new(req, "deadline_s", json_integer(0));
	assert_int_equal(ap_proto_check(req, &why), -AP_EPROTO);
	assert_non_null(strstr(ap_buf_str(&why), "'deadline_s'"));
	json_decref(req);
	ap_buf_reset(&why);
	req = json_pack("{s:s}", "op", "teleport");
	assert_int_equal(ap_proto_check(req, &why), -AP_EPROTO);
	json_decref(req);
	ap_buf_free(&why);
}

/* The frames as the call sites built them before this module: same fields,
 * same values, same order. */
static void requests_are_the_frames_the_worker_is_sent(void **state)
{
	(void)state;
	expect_frame(sample(AP_OP_FINGERPRINT),
		     "{\"op\":\"fingerprint\",\"backends\":[\"cuda\",\"npu\"],"
		     "\"plugins\":[\"torch_npu\"],\"device_timeout_s\":60}");
	expect_frame(sample(AP_OP_RESOLVE),
		     "{\"op\":\"resolve\",\"target\":\"torch.add\",\"plugins\":[\"torch_npu\"]}");
	expect_frame(sample(AP_OP_PROBE), "{\"op\":\"probe\",\"probe\":{\"name\":\"enter\","
		     "\"code\":\"pass\",\"bind\":{\"x\":1}},\"timeout_s\":7}");
	expect_frame(sample(AP_OP_PACKAGE), "{\"op\":\"package\",\"name\":\"python3-torch\"}");
	expect_frame(sample(AP_OP_TESTS_INDEX), "{\"op\":\"tests_index\",\"root\":\"/src/test\"}");
	expect_frame(sample(AP_OP_SAME_OBJECT),
		     "{\"op\":\"same_object\",\"target\":\"torch.Tensor\",\"names\":{\"x\":1}}");
	expect_frame(sample(AP_OP_TESTS_PREFLIGHT),
		     "{\"op\":\"tests_preflight\",\"root\":\"/src/test\",\"file\":\"test_a.py\","
		     "\"try_import\":true,\"keep\":true,\"wait\":false,\"timeout_s\":5,"
		     "\"setenv\":{},\"names\":{\"x\":1},\"imports\":null}");
	expect_frame(sample(AP_OP_TESTS_IMPORT), "{\"op\":\"tests_import\",\"runner\":{\"x\":1}}");
	expect_frame(sample(AP_OP_TESTS_RUN),
		     "{\"op\":\"tests_run\",\"root\":\"/src/test\",\"file\":\"test_a.py\","
		     "\"select\":\"grad\",\"timeout_s\":30,\"deadline_s\":90,\"setenv\":{}}");
	expect_frame(sample(AP_OP_OPINFO),
		     "{\"op\":\"opinfo\",\"target\":\"torch.add\",\"devices\":[\"cpu\"]}");
	expect_frame(sample(AP_OP_SAMPLES), "{\"op\":\"samples\",\"target\":\"torch.add\","
		     "\"dtypes\":[\"float32\"],\"max_samples\":4,\"seed\":1}");
	expect_frame(sample(AP_OP_RUN), "{\"op\":\"run\",\"target\":\"torch.add\",\"samples\":"
		     "{\"x\":1},\"devices\":[\"cpu\"],\"notrun\":[{\"npu\":\"dtype\"}],"
		     "\"timeout_s\":10,\"start_s\":60,\"floor_s\":15,\"factor\":200,"
		     "\"adapter\":\"openreg-forked-daemons\"}");
	expect_frame(sample(AP_OP_SWEEP_BEGIN),
		     "{\"op\":\"sweep_begin\",\"plugins\":[\"torch_npu\"],\"entries\":[],"
		     "\"surface\":{\"x\":1}}");
	expect_frame(sample(AP_OP_SWEEP_WALK), "{\"op\":\"sweep_walk\",\"entry\":\"torch\","
		     "\"walk\":\"module\",\"exclude\":[],\"skip\":[],\"depth\":\"resolve\","
		     "\"surface\":{\"x\":1}}");
	expect_frame(sample(AP_OP_EXIT), "{\"op\":\"exit\"}");
}

static void tests_run_sends_nodes_and_runner_when_given(void **state)
{
	(void)state;
	json_t *runner = json_string("r1"), *setenv = json_pack("{s:s}", "A", "1");
	struct ap_proto_tests_run t = { "/t", "test_b.py", json_pack("[[s,s]]", "C", "test_x"),
					NULL, 20, 40, setenv, runner };
	expect_frame(ap_proto_tests_run(&t),
		     "{\"op\":\"tests_run\",\"root\":\"/t\",\"file\":\"test_b.py\",\"nodes\":"
		     "[[\"C\",\"test_x\"]],\"timeout_s\":20,\"deadline_s\":40,\"setenv\":{\"A\":\"1\"},"
		     "\"runner\":\"r1\"}");
	/* without a runner, the nodes' run says so: runner null */
	struct ap_proto_tests_run bare = { "/t", "test_b.py", json_pack("[[s,s]]", "C", "test_x"),
					   NULL, 20, 40, NULL, NULL };
	expect_frame(ap_proto_tests_run(&bare),
		     "{\"op\":\"tests_run\",\"root\":\"/t\",\"file\":\"test_b.py\",\"nodes\":"
		     "[[\"C\",\"test_x\"]],\"timeout_s\":20,\"deadline_s\":40,\"setenv\":{},"
		     "\"runner\":null}");
	json_t *imports = json_pack("[s]", "torch");
	struct ap_proto_preflight p = { "/t", "test_b.py", 0, 0, 1, 5, json_object(), runner,
					imports };
	expect_frame(ap_proto_tests_preflight(&p),
		     "{\"op\":\"tests_preflight\",\"root\":\"/t\",\"file\":\"test_b.py\","
		     "\"try_import\":false,\"keep\":false,\"wait\":true,\"timeout_s\":5,"
		     "\"setenv\":{},\"names\":\"r1\",\"imports\":[\"torch\"]}");
	json_t *skip = json_pack("[s]", "torch.x");
	json_t *surface = json_pack("{s:[s]}", "private", "_");
	expect_frame(ap_proto_sweep_walk("torch", "module", json_array(), skip, "probe", surface),
		     "{\"op\":\"sweep_walk\",\"entry\":\"torch\",\"walk\":\"module\","
		     "\"exclude\":[],\"skip\":[\"torch.x\"],\"depth\":\"probe\","
		     "\"surface\":{\"private\":[\"_\"]}}");
	expect_frame(ap_proto_sweep_begin(json_array(), json_array(), surface),
		     "{\"op\":\"sweep_begin\",\"plugins\":[],\"entries\":[],"
		     "\"surface\":{\"private\":[\"_\"]}}");
	expect_frame(ap_proto_sweep_entry("torch.nn", "class", json_array()),
		     "{\"name\":\"torch.nn\",\"walk\":\"class\",\"exclude\":[]}");
	/* borrowed arguments stay the caller's */
	assert_int_equal(runner->refcount, 1);
	assert_int_equal(imports->refcount, 1);
	assert_int_equal(skip->refcount, 1);
	assert_int_equal(surface->refcount, 1);
	json_decref(surface);
	json_decref(runner);
	json_decref(imports);
	json_decref(skip);
}

static void hello_gives_the_python_and_anything_else_is_a_protocol_error(void **state)
{
	(void)state;
	const char *py = NULL;
	json_t *hello = json_pack("{s:s, s:i, s:s}", "type", "hello", "proto", 1, "python", "3.13.1");
	assert_int_equal(ap_proto_hello(hello, &py), 0);
	assert_string_equal(py, "3.13.1");
	json_decref(hello);
	hello = json_pack("{s:s, s:s}", "type", "result", "python", "3.13.1");
	assert_int_equal(ap_proto_hello(hello, &py), -AP_EPROTO);
	json_decref(hello);
	hello = json_pack("{s:s}", "type", "hello");
	assert_int_equal(ap_proto_hello(hello, &py), -AP_EPROTO);
	json_decref(hello);
	assert_int_equal(ap_proto_hello(NULL, &py), -AP_EPROTO);
}

static void replies_are_read_into_their_fields(void **state)
{
	(void)state;
	json_t *res = json_pack("{s:b, s:s}", "found", 1, "canonical", "torch.add");
	assert_true(ap_proto_resolve_found(res));
	json_object_set_new(res, "found", json_false());
	assert_false(ap_proto_resolve_found(res));
	assert_false(ap_proto_resolve_found(NULL));
	json_decref(res);

	struct ap_proto_resolution rs;
	res = json_pack("{s:s, s:b, s:s, s:s, s:s}", "target",
			"torch.autograd.grad_mode.set_multithreading_enabled.clone", "found", 1,
			"kind", "method", "owner", "torch.autograd.grad_mode.set_multithreading_enabled",
			"canonical", "torch.autograd.grad_mode.set_multithreading_enabled.clone");
	ap_proto_resolution_read(res, &rs);
	assert_true(rs.found);
	assert_string_equal(rs.target, "torch.autograd.grad_mode.set_multithreading_enabled.clone");
	assert_string_equal(rs.kind, "method");
	assert_string_equal(rs.owner, "torch.autograd.grad_mode.set_multithreading_enabled");
	assert_string_equal(rs.canonical, "torch.autograd.grad_mode.set_multithreading_enabled.clone");
	json_decref(res);
	res = json_pack("{s:s, s:b, s:n}", "target", "torch.nope", "found", 0, "owner");
	ap_proto_resolution_read(res, &rs);
	assert_false(rs.found);
	assert_null(rs.owner);
	assert_null(rs.canonical);
	assert_null(rs.kind);
	json_decref(res);

	struct ap_proto_package pk;
	res = json_pack("{s:b, s:s, s:s, s:s}", "found", 1, "source", "pytorch", "version",
			"2.6.0+dfsg-7", "codename", "trixie");
	ap_proto_package_read(res, &pk);
	assert_true(pk.found);
	assert_string_equal(pk.source, "pytorch");
	assert_string_equal(pk.version, "2.6.0+dfsg-7");
	assert_string_equal(pk.codename, "trixie");
	assert_null(pk.why);
	assert_string_equal(ap_proto_package_version(res), "2.6.0+dfsg-7");
	json_decref(res);
	res = json_pack("{s:b, s:s}", "found", 0, "why", "python3-torch is not installed");
	ap_proto_package_read(res, &pk);
	assert_false(pk.found);
	assert_null(pk.version);
	assert_null(ap_proto_package_version(res));
	assert_string_equal(pk.why, "python3-torch is not installed");
	json_decref(res);

	res = json_pack("{s:s}", "path", "/tmp/index.json");
	assert_string_equal(ap_proto_tests_index_path(res), "/tmp/index.json");
	json_decref(res);
	res = json_pack("{s:[b,b]}", "same", 0, 1);
	assert_false(ap_proto_same_object_is(res, 0));
	assert_true(ap_proto_same_object_is(res, 1));
	assert_false(ap_proto_same_object_is(res, 2));
	json_decref(res);

	struct ap_proto_walked w;
	res = json_pack("{s:s, s:[]}", "status", "ok", "apis");
	ap_proto_sweep_walked(res, &w);
	assert_string_equal(w.status, "ok");
	assert_null(w.reason);
	assert_true(json_is_array(w.apis));
	json_decref(res);
}

static void official_tests_replies_are_read_into_their_fields(void **state)
{
	(void)state;
	struct ap_proto_tests_ran ran;
	struct ap_proto_test t;
	json_t *frames = json_array();
	for (int i = 0; i < AP_PROTO_FRAMES + 2; i++)
		json_array_append_new(frames, json_pack("{s:s, s:i, s:s}", "file", "t.py", "line", i,
							 "function", "f"));
	json_t *res = json_pack(
		"{s:{s:b, s:i}, s:s, s:[{s:s, s:s, s:{s:i, s:i, s:s, s:{s:s, s:s, s:s, s:s, s:[s], "
		"s:o}}, s:i, s:s}, {s:n, s:s, s:{s:i, s:s}}, {s:s, s:s, s:{s:i}}]}",
		"import", "ok", 1, "ms", 812, "log", "imported\n", "tests",
		"class", "TestA", "test", "test_x", "unittest", "tests_run", 1, "errors", 1, "error",
		"Traceback", "error_exception", "type", "KeyError", "qualname", "KeyError", "module",
		"builtins", "message", "'k'", "notes", "hint", "frames", frames, "duration_ms", 37,
		"output", "E\n",
		"class", "test", "test_fn", "died", "signal", 11, "signal_name", "SIGSEGV",
		"class", "TestA", "test", "test_y", "died", "timeout_s", 3);
	ap_proto_tests_run_read(res, &ran);
	assert_true(ran.import.present && ran.import.ok);
	assert_int_equal(ran.import.ms, 812);
	assert_string_equal(ran.log, "imported\n");
	assert_int_equal(ran.ntests, 3);
	ap_proto_tests_ran_test(&ran, 0, &t);
	assert_int_equal(t.kind, AP_TEST_UNITTEST);
	assert_string_equal(t.cls, "TestA");
	assert_true(t.has_duration);
	assert_int_equal(t.duration_ms, 37);
	assert_string_equal(t.output, "E\n");
	assert_int_equal(t.unittest.errors, 1);
	assert_true(t.unittest.error_exc.known);
	assert_false(t.unittest.failure_exc.known);
	assert_string_equal(t.unittest.error_exc.message, "'k'");
	assert_string_equal(ap_proto_exc_note(&t.unittest.error_exc, 0), "hint");
	assert_null(ap_proto_exc_note(&t.unittest.error_exc, 1));
	/* the last frames, innermost last */
	assert_int_equal(t.unittest.error_exc.nframes, AP_PROTO_FRAMES);
	assert_int_equal(t.unittest.error_exc.frames[AP_PROTO_FRAMES - 1].line, AP_PROTO_FRAMES + 1);
	ap_proto_tests_ran_test(&ran, 1, &t);
	assert_int_equal(t.kind, AP_TEST_DIED);
	assert_null(t.cls);
	assert_false(t.died.timed_out);
	assert_int_equal(t.died.signal, 11);
	assert_string_equal(t.died.signal_name, "SIGSEGV");
	assert_false(t.has_duration);
	assert_null(t.output);
	ap_proto_tests_ran_test(&ran, 2, &t);
	assert_true(t.died.timed_out);
	assert_true(t.died.timeout_s == 3.0);
	json_decref(res);

	struct ap_proto_preflighted p;
	struct ap_proto_module m;
	struct ap_proto_defined_class c;
	res = json_pack("{s:s, s:b, s:[{s:s, s:s, s:b, s:s}], s:s}", "file", "test/test_a.py",
			"file_exists", 1, "modules", "module", "common", "where", "local", "present", 0,
			"path", "test/common.py", "runner", "41");
	ap_proto_preflight_read(res, &p);
	assert_string_equal(p.file, "test/test_a.py");
	assert_true(p.file_exists);
	assert_false(p.import.present);
	assert_string_equal(json_string_value(p.runner), "41");
	assert_int_equal(p.nmodules, 1);
	ap_proto_preflight_module(&p, 0, &m);
	assert_string_equal(m.path, "test/common.py");
	assert_false(m.present);
	json_t *ans = json_pack("{s:{s:b, s:i, s:[{s:s, s:s, s:[{s:s, s:b, s:[s]}]}]}, s:n}",
				"import", "ok", 1, "ms", 5, "defined", "class", "TestA", "test",
				"test_x", "classes", "name", "TestACPU", "own", 0, "methods",
				"test_x_cpu", "runner");
	ap_proto_tests_import_read(ans, &p);
	assert_true(p.import.present && p.import.ok);
	assert_null(p.runner);
	assert_int_equal(ap_proto_defined_class(p.import.defined, "TestA", "test_x", 0, &c), 0);
	assert_string_equal(c.name, "TestACPU");
	assert_false(c.own);
	assert_int_equal(json_array_size(c.methods), 1);
	assert_int_equal(ap_proto_defined_class(p.import.defined, "TestA", "test_x", 1, &c), -1);
	assert_int_equal(ap_proto_defined_class(p.import.defined, "TestB", "test_x", 0, &c), -1);
	json_decref(ans);
	json_decref(res);
}

static void how_a_child_ended_and_a_probe_reply_are_read_as_facts(void **state)
{
	(void)state;
	struct ap_proto_lost l;
	json_t *f = json_pack("{s:i, s:{s:s, s:b, s:s, s:n, s:i}}", "i", 2, "lost", "phase", "start",
			      "timed_out", 0, "signal", "SIGSEGV", "exit_status", "limit_s", 9);
	assert_int_equal(ap_proto_frame_lost(f, &l), 1);
	assert_true(l.before_start);
	assert_false(l.ended.timed_out);
	assert_string_equal(l.ended.signal, "SIGSEGV");
	assert_false(l.ended.has_exit_status);
	assert_true(l.ended.limit_s == 9.0);
	json_decref(f);
	f = json_pack("{s:i, s:{}}", "i", 2, "parts");
	assert_int_equal(ap_proto_frame_lost(f, &l), 0);
	json_decref(f);

	struct ap_proto_probe_reply p;
	json_t *r = json_pack("{s:{s:{s:s, s:b, s:s%}, s:[]}, s:[], s:{s:b, s:n, s:i, s:i},"
			      " s:i, s:s}", "result", "raised", "type", "ValueError", "check", 0,
			      "message", "a\0b", (size_t)3, "trace", "steps", "ended", "timed_out",
			      0, "signal", "exit_status", 0, "limit_s", 5, "duration_ms", 4,
			      "output", "");
	ap_proto_probe_read(r, &p);
	assert_true(p.has_result);
	assert_true(p.raised);
	assert_false(p.exc.check);
	assert_string_equal(p.exc.type, "ValueError");
	assert_int_equal(p.exc.message_len, 3);
	assert_null(p.exc.traceback);
	assert_true(json_is_array(p.trace));
	assert_null(p.device_trace);
	assert_true(p.ended.has_exit_status);
	assert_int_equal(p.ended.exit_status, 0);
	json_decref(r);
}

static void numeric_replies_are_read_into_their_fields(void **state)
{
	(void)state;
	struct ap_proto_resolution res;
	json_t *r = json_pack("{s:s, s:b, s:s, s:n, s:s, s:{}}", "target", "torch.add", "found", 1,
			      "canonical", "torch.add", "owner", "kind", "function",
			      "signature_data");
	ap_proto_resolution_read(r, &res);
	assert_true(res.found);
	assert_string_equal(res.cls, "torch.add");
	assert_null(res.owner);
	assert_string_equal(res.kind, "function");
	assert_true(json_is_object(res.signature_data));
	json_decref(r);
	r = json_pack("{s:b, s:s, s:s}", "found", 1, "owner", "torch.nn.Linear", "canonical", "x");
	ap_proto_resolution_read(r, &res);
	assert_string_equal(res.cls, "torch.nn.Linear");
	json_decref(r);

	for (int i = 0; i < AP_PART_STATUS_COUNT; i++)
		assert_int_equal(ap_proto_part_status_parse(ap_proto_part_status_name(i)), i);
	for (int i = 0; i < AP_SAMPLE_KIND_COUNT; i++)
		assert_int_equal(ap_proto_sample_kind_parse(ap_proto_sample_kind_name(i)), i);
	for (int i = 0; i < AP_FORM_COUNT; i++)
		assert_int_equal(ap_proto_form_parse(ap_proto_form_name(i)), i);
	/* A value out of range names nothing: no read outside the table. */
	assert_null(ap_proto_form_name(AP_FORM_COUNT));
	assert_null(ap_proto_form_name((enum ap_proto_form)-1));
	assert_null(ap_proto_sample_kind_name(AP_SAMPLE_KIND_COUNT));
	assert_null(ap_proto_sample_kind_name((enum ap_proto_sample_kind)-1));
	assert_null(ap_proto_part_status_name(AP_PART_STATUS_COUNT));
	assert_null(ap_proto_part_status_name((enum ap_proto_part_status)-1));
	assert_int_equal(ap_proto_part_status_parse("OK"), AP_PART_STATUS_UNKNOWN);
	assert_int_equal(ap_proto_part_status_parse(NULL), AP_PART_STATUS_UNKNOWN);

	struct ap_proto_samples sr;
	struct ap_proto_sample s;
	r = json_pack("{s:[{s:s, s:s, s:n, s:s, s:i, s:s, s:{}}, {s:s, s:s, s:n, s:s, s:i, s:{}}],"
		      " s:[]}", "samples", "op", "add", "variant", "", "dtype", "kind", "error",
		      "index", 2, "error_type", "RuntimeError", "sample", "op", "add", "variant", "",
		      "dtype", "kind", "sample", "index", 0, "sample", "skipped");
	ap_proto_samples_read(r, &sr);
	assert_int_equal(sr.n, 2);
	assert_true(json_is_array(sr.skipped));
	ap_proto_sample_read(json_array_get(sr.samples, 0), &s);
	assert_true(s.ok);
	assert_int_equal(s.kind, AP_SAMPLE_ERROR);
	assert_int_equal(s.index, 2);
	assert_null(s.dtype);
	assert_string_equal(s.error_type, "RuntimeError");
	assert_null(s.id);
	ap_proto_sample_read(json_array_get(sr.samples, 1), &s);
	assert_false(s.ok); /* a null dtype only for an error sample */
	json_t *c = ap_proto_sample_prepared(json_array_get(sr.samples, 0), "add error#2", "ab");
	ap_proto_sample_read(c, &s);
	assert_string_equal(s.id, "add error#2");
	assert_string_equal(s.input_digest, "ab");
	json_decref(c);
	json_decref(r);
}

static void a_run_frame_is_read_side_by_side(void **state)
{
	(void)state;
	struct ap_proto_run_frame f;
	struct ap_proto_part cpu, dev, none;
	json_t *r = json_pack("{s:s, s:i, s:{s:{s:s, s:[], s:[]}, s:{s:s, s:s, s:s, s:{}}}}",
			      "type", "sample", "i", 3, "parts", "cpu", "status", "ok", "outputs",
			      "grads", "openreg", "status", "raised", "exception", "TypeError",
			      "message", "no", "device_trace");
	ap_proto_run_frame_read(r, &f);
	assert_true(f.has_index);
	assert_int_equal(f.index, 3);
	assert_false(f.lost);
	ap_proto_run_frame_part(&f, "cpu", &cpu);
	ap_proto_run_frame_part(&f, "openreg", &dev);
	ap_proto_run_frame_part(&f, "cuda", &none);
	assert_true(cpu.present);
	assert_int_equal(cpu.status, AP_PART_OK);
	assert_true(json_is_array(cpu.outputs));
	assert_null(cpu.device_trace);
	assert_true(dev.present);
	assert_int_equal(dev.status, AP_PART_RAISED);
	assert_string_equal(dev.status_word, "raised");
	assert_string_equal(dev.exception, "TypeError");
	assert_string_equal(dev.message, "no");
	assert_non_null(dev.device_trace);
	assert_false(none.present);
	assert_int_equal(none.status, AP_PART_STATUS_UNKNOWN);
	json_t *keep = ap_proto_frame_result(r, "cpu");
	char *text = json_dumps(keep, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"exception\":null,\"lost\":null,\"outputs\":[],\"status\":\"ok\"}");
	free(text);
	json_decref(keep);
	assert_int_equal(ap_proto_frame_set_lost(r, "CRASH", "SIGSEGV", 7, -1), 0);
	/* a loss on another side (or of this one, once it has a result) is
	 * not in the result; nor, where the side has none, the loss's reason */
	keep = ap_proto_frame_result(r, "cpu");
	text = json_dumps(keep, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"exception\":null,\"lost\":null,\"outputs\":[],\"status\":\"ok\"}");
	free(text);
	json_decref(keep);
	keep = ap_proto_frame_result(r, "cuda");
	text = json_dumps(keep, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"exception\":null,\"lost\":\"CRASH\",\"outputs\":null,\"status\":null}");
	free(text);
	json_decref(keep);
	ap_proto_run_frame_read(r, &f);
	assert_true(f.lost);
	assert_string_equal(f.lost_status, "CRASH");
	assert_string_equal(f.lost_reason, "SIGSEGV");
	assert_int_equal(f.lost_daemon_exit, -1);
	assert_int_equal(ap_proto_frame_set_lost(r, "CRASH", "daemon", 6, 3), 0);
	ap_proto_run_frame_read(r, &f);
	assert_int_equal(f.lost_daemon_exit, 3);
	/* a daemon that exited 0 of itself did exit: 0 is a status, not none */
	assert_int_equal(ap_proto_frame_set_lost(r, "CRASH", "daemon", 6, 0), 0);
	ap_proto_run_frame_read(r, &f);
	assert_int_equal(f.lost_daemon_exit, 0);
	json_decref(r);
	r = ap_proto_lost_frame(5, "ERROR", "unreadable result frame");
	ap_proto_run_frame_read(r, &f);
	assert_int_equal(f.index, 5);
	assert_true(f.lost);
	assert_string_equal(f.lost_reason, "unreadable result frame");
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_op_name_reads_back_and_only_exit_is_outside_ops),
		cmocka_unit_test(every_builder_carries_its_fields_and_limits),
		cmocka_unit_test(the_limits_are_those_the_worker_refuses_to_guess),
		cmocka_unit_test(check_refuses_a_request_without_a_field_or_a_limit),
		cmocka_unit_test(requests_are_the_frames_the_worker_is_sent),
		cmocka_unit_test(tests_run_sends_nodes_and_runner_when_given),
		cmocka_unit_test(hello_gives_the_python_and_anything_else_is_a_protocol_error),
		cmocka_unit_test(replies_are_read_into_their_fields),
		cmocka_unit_test(official_tests_replies_are_read_into_their_fields),
		cmocka_unit_test(how_a_child_ended_and_a_probe_reply_are_read_as_facts),
		cmocka_unit_test(numeric_replies_are_read_into_their_fields),
		cmocka_unit_test(a_run_frame_is_read_side_by_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
