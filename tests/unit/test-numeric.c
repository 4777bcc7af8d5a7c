/* test-numeric.c - unit tests for src/check/numeric.h: what the worker ships,
 * decoded and judged. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/limits.h"
#include "check/numeric.h"
#include "check/tolerances.h"

/* [1.0f, 2.0f] as float32 little-endian, in base64. */
#define ONE_TWO "AACAPwAAAEA="
/* [1.0f, 2.002f] */
#define ONE_TWO_OFF "AACAP8UgAEA="

static json_t *tensor(const char *dtype, const char *data, json_int_t n, json_int_t stride)
{
	return json_pack("{s:{s:s, s:[I], s:[I], s:b, s:s}}", "$tensor", "dtype", dtype, "shape", n,
			 "strides", stride, "requires_grad", 0, "data", data);
}

static json_t *sample(const char *dtype, const char *kind)
{
	json_t *s = json_pack("{s:s, s:s, s:s?, s:s, s:i, s:b, s:b, s:{s:n, s:{s:[]}, s:{}},"
			      " s:s, s:s}", "op", "nn.functional.gelu", "variant", "", "dtype", dtype,
			      "kind", kind, "index", 0, "grad", 0, "inplace", 0, "sample", "input",
			      "args", "$tuple", "kwargs", "id", "nn.functional.gelu float32 sample#0",
			      "input_digest", "d");
	assert_non_null(s);
	return s;
}

static json_t *ok_part(const char *data)
{
	return json_pack("{s:s, s:[o], s:[]}", "status", "ok", "outputs",
			 tensor("float32", data, 2, 1), "grads");
}

static json_t *frame2(json_t *cpu, json_t *dev)
{
	return json_pack("{s:s, s:i, s:{s:o, s:o}}", "type", "sample", "i", 0, "parts", "cpu", cpu,
			 "npu", dev);
}

/* The one check of sample s's frame f on devices, compared with ctx's
 * overrides and limits. */
static json_t *one_check_in(const struct ap_numeric_ctx *ctx, const json_t *s, const json_t *f,
			    const char *devices)
{
	json_t *out = json_array();
	ap_numeric_device_checks(ctx, s, f, devices, 0, out);
	assert_int_equal(json_array_size(out), 1);
	json_t *c = json_incref(json_array_get(out, 0));
	json_decref(out);
	return c;
}

/* The same with no overrides and no limits. */
static json_t *one_check(const json_t *s, const json_t *f, const char *devices)
{
	const struct ap_numeric_ctx none = { 0 };
	return one_check_in(&none, s, f, devices);
}

static const char *text(const json_t *c, const char *key)
{
	const char *v = json_string_value(json_object_get(c, key));
	return v ? v : "(null)";
}

static void decodes_a_tensor_and_refuses_every_bad_part(void **state)
{
	(void)state;
	struct ap_tensor t;
	struct ap_buf store = { 0 }, why = { 0 };
	json_t *v = tensor("float32", ONE_TWO, 2, 1);
	assert_int_equal(ap_numeric_tensor(v, &t, &store, &why), 0);
	assert_int_equal(t.dtype, AP_DT_FLOAT32);
	assert_int_equal(t.ndim, 1);
	assert_int_equal(t.nbytes, 8);
	json_decref(v);
	struct { json_t *v; const char *why; } bad[] = {
		{ tensor("float32", ONE_TWO, 3, 1), "read past its bytes" },
		{ tensor("float32", ONE_TWO, 2, 2), "read past its bytes" },
		{ tensor("complex32", ONE_TWO, 1, 1), "does not decode" },
		{ tensor("float32", "AACAPwAAAEA", 2, 1), "not base64" },
		{ tensor("float32", ONE_TWO, -1, 1), "not a list of sizes" },
		{ json_pack("{s:{s:s, s:[i], s:[], s:s}}", "$tensor", "dtype", "float32", "shape", 2,
			    "strides", "data", ONE_TWO), "not a list of sizes" },
		{ json_pack("{s:s}", "$tensor", "x"), "not a tensor" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ap_buf_reset(&store);
		ap_buf_reset(&why);
		assert_int_equal(ap_numeric_tensor(bad[i].v, &t, &store, &why), -EINVAL);
		if (!strstr(ap_buf_str(&why), bad[i].why))
			fail_msg("case %zu: '%s' lacks '%s'", i, ap_buf_str(&why), bad[i].why);
		json_decref(bad[i].v);
	}
	ap_buf_free(&store);
	ap_buf_free(&why);
}

static void device_equal_to_cpu_passes_with_measurements(void **state)
{
	(void)state;
	json_t *s = sample("float32", "sample"), *f = frame2(ok_part(ONE_TWO), ok_part(ONE_TWO));
	json_t *c = one_check(s, f, "npu");
	assert_string_equal(text(c, "name"), "nn.functional.gelu float32 sample#0 npu vs cpu");
	assert_string_equal(text(c, "status"), "PASS");
	assert_string_equal(text(c, "against"), "cpu");
	json_t *m = json_array_get(json_object_get(c, "measurements"), 0);
	assert_string_equal(text(m, "output"), "out[0]");
	assert_int_equal(json_integer_value(json_object_get(m, "mismatches")), 0);
	assert_true(json_real_value(json_object_get(m, "rtol")) == 1.3e-6);
	assert_string_equal(text(m, "digest"), text(m, "digest_expected"));
	json_decref(c);
	json_decref(f);
	json_decref(s);
}

static void device_off_by_1e_3_fails_naming_the_errors(void **state)
{
	(void)state;
	json_t *s = sample("float32", "sample"), *f = frame2(ok_part(ONE_TWO), ok_part(ONE_TWO_OFF));
	json_t *c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), "FAIL");
	if (!strstr(text(c, "reason"), "out[0]: 1 of 2 elements out of tolerance (first at 1): "
		    "max_abs 0.002, max_rel 0.001"))
		fail_msg("reason: %s", text(c, "reason"));
	json_t *m = json_array_get(json_object_get(c, "measurements"), 0);
	assert_int_equal(json_integer_value(json_object_get(m, "first_mismatch")), 1);
	json_decref(c);
	json_decref(f);
	json_decref(s);
}

static void an_override_widens_the_tolerance_and_names_its_reason(void **state)
{
	(void)state;
	static const char ini[] = "[gelu-npu]\nop = torch.nn.functional.gelu\ndtype = float32\n"
				  "device = npu\nrtol = 2e-3\nreason = the npu rounds gelu\n";
	struct ap_tolerances t = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(ap_tolerances_parse(&t, ini, sizeof(ini) - 1, "tol.ini", &err), 0);
	json_t *s = sample("float32", "sample"), *f = frame2(ok_part(ONE_TWO), ok_part(ONE_TWO_OFF));
	const struct ap_numeric_ctx gelu = { &t, NULL, "torch.nn.functional.gelu" };
	const struct ap_numeric_ctx relu = { &t, NULL, "torch.nn.functional.relu" };
	json_t *c = one_check_in(&gelu, s, f, "npu");
	json_t *d = one_check_in(&relu, s, f, "npu"); /* another op: the default */
	assert_string_equal(text(c, "status"), "PASS");
	json_t *m = json_array_get(json_object_get(c, "measurements"), 0);
	if (!strstr(json_string_value(json_object_get(m, "tol_source")), "tol.ini:1: the npu rounds gelu"))
		fail_msg("tol_source: %s", json_string_value(json_object_get(m, "tol_source")));
	assert_string_equal(text(d, "status"), "FAIL");
	json_decref(c);
	json_decref(d);
	json_decref(f);
	json_decref(s);
	ap_tolerances_free(&t);
	ap_buf_free(&err);
}

static void another_dtype_or_exception_fails(void **state)
{
	(void)state;
	json_t *s = sample("float32", "sample");
	json_t *dev = json_pack("{s:s, s:[o], s:[]}", "status", "ok", "outputs",
				tensor("float64", "AAAAAAAA8D8AAAAAAAAAQA==", 2, 1), "grads");
	json_t *f = frame2(ok_part(ONE_TWO), dev), *c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), "FAIL");
	assert_non_null(strstr(text(c, "reason"), "dtype float64, expected float32"));
	json_decref(c);
	json_decref(f);
	f = frame2(ok_part(ONE_TWO), json_pack("{s:s, s:s, s:s}", "status", "raised", "exception",
					       "RuntimeError", "message", "boom"));
	c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), "FAIL");
	assert_string_equal(text(c, "reason"), "raised RuntimeError on npu (boom), did not raise on cpu");
	json_decref(c);
	json_decref(f);
	json_decref(s);
}

static json_t *raised(const char *type, const char *message)
{
	return json_pack("{s:s, s:s, s:s}", "status", "raised", "exception", type, "message", message);
}

/* A known limit of the backend excuses the very failure it describes, on
 * the target it names: NOTRUN, naming the backend and the reason, keeping
 * what the device said. Any other failure stays a failure. */
static void a_known_limit_excuses_only_its_failure(void **state)
{
	(void)state;
	static const char ini[] = "[npu-str]\nbackend = npu\nop = torch.nn.functional.*\n"
				  "what = str arguments\nraises = RuntimeError: cannot send str\n"
				  "reason = the npu pipe takes no str\n";
	struct ap_limits l = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(ap_limits_parse(&l, ini, sizeof(ini) - 1, "lim.ini", &err), 0);
	json_t *s = sample("float32", "sample");
	json_t *str = frame2(ok_part(ONE_TWO), raised("RuntimeError", "x: cannot send str here"));
	const struct ap_numeric_ctx gelu = { NULL, &l, "torch.nn.functional.gelu" };
	const struct ap_numeric_ctx matmul = { NULL, &l, "torch.matmul" };
	const struct ap_numeric_ctx no_limits = { NULL, NULL, "torch.nn.functional.gelu" };
	json_t *c = one_check_in(&gelu, s, str, "npu");
	assert_string_equal(text(c, "status"), "NOTRUN");
	assert_string_equal(text(c, "reason"), "known limit of npu: the npu pipe takes no str");
	json_t *lim = json_object_get(c, "limit");
	assert_string_equal(text(lim, "name"), "npu-str");
	assert_string_equal(text(lim, "what"), "str arguments");
	assert_string_equal(text(lim, "where"), "lim.ini:1");
	assert_string_equal(text(lim, "seen"), "raised RuntimeError on npu (x: cannot send str here), "
			    "did not raise on cpu");
	json_decref(c);

	/* not excused: a wrong number, another message, another exception type,
	 * the CPU raising too, an operator the limit does not name, no limits */
	json_t *other[] = {
		frame2(ok_part(ONE_TWO), ok_part(ONE_TWO_OFF)),
		frame2(ok_part(ONE_TWO), raised("RuntimeError", "cannot send bool")),
		frame2(ok_part(ONE_TWO), raised("TypeError", "cannot send str")),
		frame2(raised("ValueError", "bad"), raised("RuntimeError", "cannot send str")),
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		c = one_check_in(&gelu, s, other[i], "npu");
		if (strcmp(text(c, "status"), "FAIL") || json_object_get(c, "limit"))
			fail_msg("case %zu: %s: %s", i, text(c, "status"), text(c, "reason"));
		json_decref(c);
		json_decref(other[i]);
	}
	c = one_check_in(&matmul, s, str, "npu");
	assert_string_equal(text(c, "status"), "FAIL");
	json_decref(c);
	c = one_check_in(&no_limits, s, str, "npu");
	assert_string_equal(text(c, "status"), "FAIL");
	json_decref(c);
	json_decref(str);
	json_decref(s);
	ap_limits_free(&l);
	ap_buf_free(&err);
}

static void notrun_keeps_its_reason_and_a_lost_sample_its_status(void **state)
{
	(void)state;
	json_t *s = sample("float32", "sample");
	json_t *f = frame2(ok_part(ONE_TWO), json_pack("{s:s, s:s}", "status", "notrun", "reason",
						       "dtype float32 is not supported on npu"));
	json_t *c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), "NOTRUN");
	assert_string_equal(text(c, "reason"), "dtype float32 is not supported on npu");
	json_decref(c);
	json_decref(f);
	f = json_pack("{s:s, s:i, s:{s:s, s:s}}", "type", "sample", "i", 0, "lost", "status", "CRASH",
		      "reason", "SIGABRT");
	c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), "CRASH");
	assert_string_equal(text(c, "reason"), "the sample was lost: SIGABRT");
	json_decref(c);
	json_decref(f);
	json_decref(s);
}

/* The check of a sample the worker says was lost as lost (a JSON text of
 * facts), judged as the engine judges every frame. */
static void expect_lost(const char *lost, const char *status, const char *reason)
{
	json_error_t err;
	json_t *s = sample("float32", "sample");
	json_t *f = json_pack("{s:s, s:i, s:o}", "type", "sample", "i", 0, "lost",
			      json_loads(lost, 0, &err));
	assert_int_equal(ap_numeric_frame_judge(f), 0);
	json_t *c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), status);
	assert_string_equal(text(c, "reason"), reason);
	json_decref(c);
	json_decref(f);
	json_decref(s);
}

static void a_lost_sample_is_judged_from_how_the_runner_ended(void **state)
{
	(void)state;
	expect_lost("{\"phase\": \"sample\", \"timed_out\": true, \"signal\": null, "
		    "\"exit_status\": null, \"limit_s\": 30}", "TIMEOUT",
		    "the sample was lost: no result within 30 s");
	/* a signal is a crash, never the limit's */
	expect_lost("{\"phase\": \"sample\", \"timed_out\": false, \"signal\": \"SIGSEGV\", "
		    "\"exit_status\": null, \"limit_s\": 30}", "CRASH",
		    "the sample was lost: SIGSEGV");
	expect_lost("{\"phase\": \"sample\", \"timed_out\": false, \"signal\": null, "
		    "\"exit_status\": 3, \"limit_s\": 30}", "CRASH",
		    "the sample was lost: the runner exited with status 3 during the sample");
	expect_lost("{\"phase\": \"start\", \"timed_out\": true, \"signal\": null, "
		    "\"exit_status\": null, \"limit_s\": 120}", "TIMEOUT",
		    "the sample was lost: the devices did not start within 120 s");
	expect_lost("{\"phase\": \"start\", \"timed_out\": false, \"signal\": \"SIGKILL\", "
		    "\"exit_status\": null, \"limit_s\": 120}", "ERROR",
		    "the sample was lost: the runner ended before the sample began");
	/* a limit cut from the CPU's time says how it was derived */
	expect_lost("{\"phase\": \"sample\", \"timed_out\": true, \"signal\": null, "
		    "\"exit_status\": null, \"limit_s\": 15.1, \"cpu_s\": 0.002}", "TIMEOUT",
		    "the sample was lost: no result within 15.1 s (15 s + 200 x the CPU's 0.002 s)");
	/* the runner the worker stopped because the device's daemon died */
	expect_lost("{\"phase\": \"sample\", \"timed_out\": true, \"signal\": null, "
		    "\"exit_status\": null, \"limit_s\": 15, \"daemon\": {\"pid\": 42, "
		    "\"signal\": \"SIGKILL\", \"exit_status\": null}}", "CRASH",
		    "the sample was lost: the device's daemon died of SIGKILL; the "
		    "runner, waiting on it, was stopped");
	expect_lost("{\"phase\": \"sample\", \"timed_out\": true, \"signal\": null, "
		    "\"exit_status\": null, \"limit_s\": 15, \"daemon\": {\"pid\": 42, "
		    "\"signal\": null, \"exit_status\": 1}}", "CRASH",
		    "the sample was lost: the device's daemon died with status 1; the "
		    "runner, waiting on it, was stopped");
	/* a runner that ended of itself after its daemon died: as it ended */
	expect_lost("{\"phase\": \"sample\", \"timed_out\": false, \"signal\": \"SIGABRT\", "
		    "\"exit_status\": null, \"limit_s\": 15, \"daemon\": {\"pid\": 42, "
		    "\"signal\": null, \"exit_status\": null}}", "CRASH",
		    "the sample was lost: SIGABRT");
}

/* The other forms of a sample: named in its id; in place and out=, the
 * tensor written is compared too; a dtype sample runs everywhere and asks
 * only who accepts it. */
static void forms_are_named_and_alias_is_compared(void **state)
{
	(void)state;
	json_t *s = sample("float32", "sample");
	json_object_del(s, "id");
	json_object_set_new(s, "form", json_string("inplace"));
	json_object_set_new(s, "call", json_string("torch.Tensor.abs_"));
	json_t *answer = json_pack("{s:[O]}", "samples", s);
	struct ap_buf why = { 0 };
	json_t *p = ap_numeric_prepare(answer, &why);
	assert_non_null(p);
	assert_string_equal(text(json_array_get(p, 0), "id"),
			    "nn.functional.gelu float32 sample#0 inplace");
	json_t *cpu = ok_part(ONE_TWO), *dev = ok_part(ONE_TWO);
	json_object_set_new(cpu, "alias", json_true());
	json_object_set_new(dev, "alias", json_false());
	json_t *f = frame2(cpu, dev), *c = one_check(json_array_get(p, 0), f, "npu");
	assert_string_equal(text(c, "status"), "FAIL");
	assert_string_equal(text(c, "form"), "inplace");
	assert_string_equal(text(c, "reason"), "the inplace form returned a new tensor on npu, "
			    "the tensor it was given on cpu");
	json_decref(c);
	json_object_set_new(dev, "alias", json_true());
	c = one_check(json_array_get(p, 0), f, "npu");
	assert_string_equal(text(c, "status"), "PASS");
	json_decref(c);
	json_decref(f);
	/* a form the worker does not make is not a sample */
	json_object_set_new(s, "form", json_string("sideways"));
	json_decref(p);
	p = ap_numeric_prepare(answer, &why);
	assert_null(p);
	json_decref(answer);
	json_decref(s);
	ap_buf_free(&why);
}

static void a_dtype_sample_asks_who_accepts_it(void **state)
{
	(void)state;
	json_t *s = sample("int64", "dtype");
	json_t *opinfo = json_pack("{s:[{s:s, s:s, s:{s:[s], s:[s]}}]}", "ops", "name",
				   "nn.functional.gelu", "variant", "", "dtypes", "cpu", "float32",
				   "npu", "float32");
	json_t *samples = json_pack("[O]", s);
	json_t *n = ap_numeric_notrun(samples, opinfo, "npu");
	char *got = json_dumps(n, JSON_COMPACT);
	assert_string_equal(got, "[{}]"); /* run everywhere, claimed or not */
	free(got);
	/* refused on both sides, whatever the type: they agree */
	json_t *f = frame2(raised("RuntimeError", "not implemented for 'Long'"),
			   raised("NotImplementedError", "no kernel")), *c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), "PASS");
	json_decref(c);
	json_decref(f);
	/* accepted by the device alone */
	f = frame2(raised("RuntimeError", "not implemented for 'Long'"), ok_part(ONE_TWO));
	c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), "FAIL");
	assert_string_equal(text(c, "reason"), "dtype int64, which OpInfo does not claim for "
			    "nn.functional.gelu: did not raise on npu, raised RuntimeError on cpu "
			    "(not implemented for 'Long')");
	json_decref(c);
	json_decref(f);
	/* the same exceptions of different types in an ordinary sample differ */
	json_object_set_new(s, "kind", json_string("sample"));
	f = frame2(raised("RuntimeError", "x"), raised("NotImplementedError", "x"));
	c = one_check(s, f, "npu");
	assert_string_equal(text(c, "status"), "FAIL");
	json_decref(c);
	json_decref(f);
	json_decref(n);
	json_decref(samples);
	json_decref(opinfo);
	json_decref(s);
}

static void notrun_is_chosen_here_from_the_dtypes_opinfo_claims(void **state)
{
	(void)state;
	json_t *samples = json_pack("[o, o, o]", sample("float32", "sample"),
				    sample("bfloat16", "sample"), sample(NULL, "error"));
	/* gelu names its dtypes on cpu and npu; the xpu side it says nothing of */
	json_t *opinfo = json_pack("{s:[{s:s, s:s, s:{s:[s,s], s:[s]}}]}", "ops", "name",
				   "nn.functional.gelu", "variant", "", "dtypes", "cpu", "bfloat16",
				   "float32", "npu", "float32");
	json_t *n = ap_numeric_notrun(samples, opinfo, "npu xpu");
	char *got = json_dumps(n, JSON_COMPACT);
	assert_string_equal(got, "[{},{\"npu\":\"dtype bfloat16 is not supported on npu by this "
			    "torch's OpInfo for nn.functional.gelu\"},{}]");
	free(got);
	json_decref(n);
	/* no entry here to say otherwise: it runs everywhere */
	n = ap_numeric_notrun(samples, NULL, "npu");
	got = json_dumps(n, JSON_COMPACT);
	assert_string_equal(got, "[{},{},{}]");
	free(got);
	json_decref(n);
	json_decref(opinfo);
	json_decref(samples);
}

static void cpu_alone_keeps_the_digests(void **state)
{
	(void)state;
	json_t *s = sample("float32", "sample");
	json_t *f = json_pack("{s:i, s:{s:o}}", "i", 0, "parts", "cpu", ok_part(ONE_TWO));
	json_t *c = one_check(s, f, "cpu");
	assert_string_equal(text(c, "name"), "nn.functional.gelu float32 sample#0 cpu");
	assert_string_equal(text(c, "status"), "PASS");
	assert_true(json_is_null(json_object_get(c, "against")));
	assert_int_equal(strlen(text(json_array_get(json_object_get(c, "outputs"), 0), "digest")), 64);
	json_decref(c);
	json_decref(f);
	json_decref(s);
}

static void cross_check_compares_cpu_with_the_reference(void **state)
{
	(void)state;
	const struct ap_numeric_ctx none = { 0 };
	json_t *s = sample("float32", "sample");
	json_t *f = json_pack("{s:i, s:{s:o}}", "i", 0, "parts", "cpu", ok_part(ONE_TWO_OFF));
	json_t *r = json_pack("{s:i, s:{s:o}}", "i", 0, "parts", "cpu", ok_part(ONE_TWO));
	json_t *c = ap_numeric_cross_check(&none, s, f, r, "trixie", 0, 0);
	assert_string_equal(text(c, "name"), "nn.functional.gelu float32 sample#0 cpu vs trixie");
	assert_string_equal(text(c, "status"), "FAIL");
	assert_string_equal(text(c, "across"), "trixie");
	assert_true(json_is_false(json_object_get(c, "same_torch")));
	json_decref(c);
	c = ap_numeric_cross_check(&none, s, r, r, "trixie", 1, 0);
	assert_string_equal(text(c, "status"), "PASS");
	json_decref(c);
	json_decref(f);
	json_decref(r);
	json_decref(s);
}

static void prepare_names_and_digests_each_sample(void **state)
{
	(void)state;
	json_t *s = sample("float32", "sample"), *e = sample(NULL, "error");
	json_object_del(s, "id");
	json_t *answer = json_pack("{s:[o, o]}", "samples", s, e), *bad = json_pack("{s:[{}]}", "samples");
	struct ap_buf why = { 0 };
	json_t *p = ap_numeric_prepare(answer, &why);
	assert_non_null(p);
	assert_string_equal(text(json_array_get(p, 0), "id"), "nn.functional.gelu float32 sample#0");
	assert_string_equal(text(json_array_get(p, 1), "id"), "nn.functional.gelu error#0");
	assert_int_equal(strlen(text(json_array_get(p, 0), "input_digest")), 64);
	assert_null(ap_numeric_prepare(bad, &why));
	assert_string_equal(ap_buf_str(&why), "sample 0 is not as the worker makes samples");
	json_decref(p);
	json_decref(answer);
	json_decref(bad);
	ap_buf_free(&why);
}


/* A sample lost on the device after the CPU raised, because the device's
 * daemon exited of itself: the CPU's part stands (the cross check compares
 * it), the device's check is CRASH unless a limit names that failure. */
static void a_daemon_that_exits_where_the_cpu_raised(void **state)
{
	(void)state;
	static const char ini[] = "[npu-errors]\nbackend = npu\nop = *\n"
				  "what = errors on the device\n"
				  "raises = DaemonExit: where the CPU raised\n"
				  "reason = its daemon dies of an error\n";
	struct ap_limits l = { 0 };
	struct ap_buf err = { 0 };
	json_error_t jerr;
	assert_int_equal(ap_limits_parse(&l, ini, sizeof(ini) - 1, "lim.ini", &err), 0);
	json_t *s = sample("int64", "dtype");
	const char *facts = "{\"phase\": \"sample\", \"timed_out\": true, \"signal\": null, "
			    "\"exit_status\": null, \"limit_s\": 15, \"daemon\": {\"pid\": 9, "
			    "\"signal\": null, \"exit_status\": 1}}";
	json_t *f = json_pack("{s:s, s:i, s:o, s:{s:o}}", "type", "sample", "i", 0, "lost",
			      json_loads(facts, 0, &jerr), "parts", "cpu",
			      raised("RuntimeError", "not implemented for 'Long'"));
	assert_int_equal(ap_numeric_frame_judge(f), 0);
	const struct ap_numeric_ctx with = { NULL, &l, "torch.nn.functional.gelu" };
	json_t *c = one_check_in(&with, s, f, "npu");
	assert_string_equal(text(c, "status"), "NOTRUN");
	assert_string_equal(text(c, "reason"), "known limit of npu: its daemon dies of an error");
	assert_string_equal(text(json_object_get(c, "limit"), "message"),
			    "exited with status 1 where the CPU raised RuntimeError");
	json_decref(c);
	c = one_check(s, f, "npu"); /* no limit: the crash it is */
	assert_string_equal(text(c, "status"), "CRASH");
	json_decref(c);
	/* killed, not exited: no limit of this kind excuses it */
	json_t *k = json_deep_copy(f);
	json_object_del(json_object_get(k, "lost"), "daemon_exit");
	c = one_check_in(&with, s, k, "npu");
	assert_string_equal(text(c, "status"), "CRASH");
	json_decref(c);
	json_decref(k);
	/* the CPU's part came: it is compared with the reference's */
	json_t *ref = json_pack("{s:s, s:i, s:{s:o}}", "type", "sample", "i", 0, "parts", "cpu",
				raised("RuntimeError", "not implemented for 'Long'"));
	const struct ap_numeric_ctx none = { 0 };
	c = ap_numeric_cross_check(&none, s, f, ref, "trixie", 1, 0);
	assert_string_equal(text(c, "status"), "PASS");
	json_decref(c);
	json_decref(ref);
	json_decref(f);
	json_decref(s);
	ap_limits_free(&l);
	ap_buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_a_tensor_and_refuses_every_bad_part),
		cmocka_unit_test(device_equal_to_cpu_passes_with_measurements),
		cmocka_unit_test(device_off_by_1e_3_fails_naming_the_errors),
		cmocka_unit_test(an_override_widens_the_tolerance_and_names_its_reason),
		cmocka_unit_test(another_dtype_or_exception_fails),
		cmocka_unit_test(a_known_limit_excuses_only_its_failure),
		cmocka_unit_test(notrun_keeps_its_reason_and_a_lost_sample_its_status),
		cmocka_unit_test(a_lost_sample_is_judged_from_how_the_runner_ended),
		cmocka_unit_test(notrun_is_chosen_here_from_the_dtypes_opinfo_claims),
		cmocka_unit_test(cpu_alone_keeps_the_digests),
		cmocka_unit_test(cross_check_compares_cpu_with_the_reference),
		cmocka_unit_test(prepare_names_and_digests_each_sample),
		cmocka_unit_test(forms_are_named_and_alias_is_compared),
		cmocka_unit_test(a_dtype_sample_asks_who_accepts_it),
		cmocka_unit_test(a_daemon_that_exits_where_the_cpu_raised),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
