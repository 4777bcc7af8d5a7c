/* test-verdict.c - unit tests for src/verdict.h: trace differences against a
 * reference, the verdict of a bundle, and the device-independence conclusion,
 * all on bundle objects shaped like bundle.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/outcome.h"
#include "check/verdict.h"

#define TARGET "torch.autograd.grad_mode.no_grad"

/* A check object as bundle.json has it; trace is stolen. */
static json_t *check(const char *name, const char *status, json_t *trace)
{
	json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:o, s:i, s:s}",
			      "name", name, "kind", "probe", "status", status, "reason", "",
			      "says", "en", "what it checks", "zh", "检查内容",
			      "trace", trace ? trace : json_array(), "duration_ms", 3,
			      "output", "");
	assert_non_null(c);
	return c;
}

/* A two-step trace: "state inside" then "state after". */
static json_t *trace2(int inside, int after)
{
	return json_pack("[{s:s, s:b}, {s:s, s:b}]", "step", "state inside, mode False", "value",
			 inside, "step", "state after, mode False", "value", after);
}

static json_t *trace_of(const char *const *steps, size_t n)
{
	json_t *t = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(t, json_pack("{s:s, s:i}", "step", steps[i], "value", (int)i));
	return t;
}

/* A device trace: available, with ops and tensor_devices (both stolen). */
static json_t *device_trace(json_t *ops, json_t *devs)
{
	return json_pack("{s:b, s:n, s:o, s:o}", "available", 1, "why", "ops",
			 ops ? ops : json_object(), "tensor_devices", devs ? devs : json_object());
}

static json_t *no_device_trace(const char *why)
{
	return json_pack("{s:b, s:s, s:{}, s:{}}", "available", 0, "why", why, "ops",
			 "tensor_devices");
}

/* A bundle for TARGET in env "trixie", found, not patched, compared against
 * "bookworm" with no differences; checks is stolen. */
static json_t *bundle(json_t *checks)
{
	json_t *b = json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:n,"
		" s:{s:s, s:b, s:s, s:{s:b, s:b, s:[]}},"
		" s:o, s:{s:s, s:[]}}",
		"schema", "apiparity.bundle/1", "target", TARGET,
		"env", "name", "trixie", "device", "cpu", "error",
		"resolution", "target", TARGET, "found", 1, "canonical", TARGET,
		"patch", "compared", 1, "patched", 0, "changes",
		"checks", checks ? checks : json_array(),
		"comparison", "reference", "bookworm", "differences");
	assert_non_null(b);
	return b;
}

static void set_patched(json_t *b)
{
	json_t *patch = json_object_get(json_object_get(b, "resolution"), "patch");
	json_object_set_new(patch, "patched", json_true());
}

static const char *verdict_of(const json_t *b)
{
	const char *v = json_string_value(json_object_get(b, "verdict"));
	assert_non_null(v);
	return v;
}

/* Whether some verdict reason contains every one of the NULL-ended words. */
static int reason_has(const json_t *b, ...)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(b, "verdict_reasons"), i, r) {
		va_list ap;
		const char *word;
		int all = 1;
		va_start(ap, b);
		while ((word = va_arg(ap, const char *)))
			all = all && strstr(json_string_value(r), word);
		va_end(ap);
		if (all)
			return 1;
	}
	return 0;
}

/* ---- ap_trace_diff ---- */

static void identical_traces_have_no_differences(void **state)
{
	(void)state;
	json_t *ref = json_pack("[o, o]", check("a", "PASS", trace2(0, 1)),
				check("b", "FAIL", trace2(1, 1)));
	json_t *seen = json_deep_copy(ref);
	json_t *d = ap_trace_diff(ref, seen);
	assert_true(json_is_array(d));
	assert_int_equal(json_array_size(d), 0);
	json_decref(d);
	json_decref(ref);
	json_decref(seen);
}

static void one_differing_value_gives_one_difference(void **state)
{
	(void)state;
	json_t *ref = json_pack("[o, o]", check("a", "PASS", trace2(0, 1)),
				check("b", "PASS", trace2(0, 1)));
	json_t *seen = json_pack("[o, o]", check("a", "PASS", trace2(0, 1)),
				 check("b", "PASS", trace2(0, 0)));
	json_t *d = ap_trace_diff(ref, seen);
	json_t *want = json_pack("[{s:s, s:s, s:b, s:b}]", "check", "b", "step",
				 "state after, mode False", "expected", 1, "seen", 0);
	assert_true(json_equal(d, want));
	json_decref(want);
	json_decref(d);
	json_decref(ref);
	json_decref(seen);
}

static void differing_status_is_an_outcome_difference(void **state)
{
	(void)state;
	json_t *ref = json_pack("[o]", check("a", "PASS", trace2(0, 1)));
	json_t *seen = json_pack("[o]", check("a", "FAIL", trace2(0, 1)));
	json_t *d = ap_trace_diff(ref, seen);
	json_t *want = json_pack("[{s:s, s:s, s:s, s:s}]", "check", "a", "step", "(outcome)",
				 "expected", "PASS", "seen", "FAIL");
	assert_true(json_equal(d, want));
	json_decref(want);
	json_decref(d);
	json_decref(ref);
	json_decref(seen);
}

static void traces_out_of_step_give_only_the_first_divergence(void **state)
{
	(void)state;
	static const char *const ref_steps[] = { "start", "middle", "end", "later" };
	static const char *const seen_steps[] = { "start", "other", "end", "more", "extra" };
	json_t *ref = json_pack("[o]", check("a", "PASS", trace_of(ref_steps, 4)));
	json_t *seen = json_pack("[o]", check("a", "PASS", trace_of(seen_steps, 5)));
	json_t *d = ap_trace_diff(ref, seen);
	assert_int_equal(json_array_size(d), 1);
	const json_t *e = json_array_get(d, 0);
	assert_string_equal(json_string_value(json_object_get(e, "check")), "a");
	assert_string_equal(json_string_value(json_object_get(e, "step")), "middle");
	assert_int_equal(json_integer_value(json_object_get(e, "expected")), 1);
	assert_string_equal(json_string_value(json_object_get(e, "seen")),
			    "(step 'other' instead)");
	json_decref(d);
	json_decref(ref);
	json_decref(seen);
}

static void trace_of_another_length_is_one_difference_at_the_first_unmatched_step(void **state)
{
	(void)state;
	static const char *const steps[] = { "start", "middle", "end" };
	json_t *ref = json_pack("[o]", check("a", "PASS", trace_of(steps, 3)));
	json_t *seen = json_pack("[o]", check("a", "PASS", trace_of(steps, 1)));
	json_t *d = ap_trace_diff(ref, seen);
	json_t *want = json_pack("[{s:s, s:s, s:i, s:s}]", "check", "a", "step", "middle",
				 "expected", 1, "seen", "(no such step)");
	assert_true(json_equal(d, want));
	json_decref(want);
	json_decref(d);

	/* and the other way round: a step the reference never reached */
	d = ap_trace_diff(seen, ref);
	assert_int_equal(json_array_size(d), 1);
	const json_t *e = json_array_get(d, 0);
	assert_string_equal(json_string_value(json_object_get(e, "step")), "middle");
	assert_string_equal(json_string_value(json_object_get(e, "expected")), "(no such step)");
	json_decref(d);
	json_decref(ref);
	json_decref(seen);
}

static void failed_probe_that_stopped_early_differs_only_in_outcome(void **state)
{
	(void)state;
	static const char *const steps[] = { "start", "middle", "end" };
	json_t *ref = json_pack("[o]", check("a", "PASS", trace_of(steps, 3)));
	json_t *seen = json_pack("[o]", check("a", "CRASH", trace_of(steps, 1)));
	json_t *d = ap_trace_diff(ref, seen);
	json_t *want = json_pack("[{s:s, s:s, s:s, s:s}]", "check", "a", "step", "(outcome)",
				 "expected", "PASS", "seen", "CRASH");
	assert_true(json_equal(d, want));
	json_decref(want);
	json_decref(d);
	json_decref(ref);
	json_decref(seen);
}

static void check_the_reference_lacks_is_not_compared(void **state)
{
	(void)state;
	json_t *ref = json_pack("[o]", check("a", "PASS", trace2(0, 1)));
	json_t *seen = json_pack("[o, o]", check("new-probe", "FAIL", trace2(1, 1)),
				 check("a", "PASS", trace2(0, 1)));
	json_t *d = ap_trace_diff(ref, seen);
	assert_int_equal(json_array_size(d), 0);
	json_decref(d);
	json_decref(ref);
	json_decref(seen);
}

static void differences_of_several_checks_are_all_listed_in_order(void **state)
{
	(void)state;
	json_t *ref = json_pack("[o, o]", check("a", "PASS", trace2(0, 1)),
				check("b", "PASS", trace2(0, 1)));
	json_t *seen = json_pack("[o, o]", check("b", "PASS", trace2(1, 1)),
				 check("a", "PASS", trace2(0, 0)));
	json_t *d = ap_trace_diff(ref, seen);
	assert_int_equal(json_array_size(d), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(d, 0), "check")), "b");
	assert_string_equal(json_string_value(json_object_get(json_array_get(d, 0), "step")),
			    "state inside, mode False");
	assert_string_equal(json_string_value(json_object_get(json_array_get(d, 1), "check")), "a");
	assert_string_equal(json_string_value(json_object_get(json_array_get(d, 1), "step")),
			    "state after, mode False");
	json_decref(d);
	json_decref(ref);
	json_decref(seen);
}

/* ---- ap_verdict_decide ---- */

static void environment_error_is_unverified(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", check("a", "PASS", NULL)));
	json_object_set_new(b, "error", json_pack("{s:s, s:i, s:s}", "kind", "worker died",
						  "exit_code", 8, "message", "worker killed by SIGKILL"));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "unverified");
	assert_true(reason_has(b, "worker killed by SIGKILL", NULL));
	json_decref(b);
}

static void absent_target_is_unverified_and_says_absent(void **state)
{
	(void)state;
	json_t *b = bundle(NULL);
	json_object_set_new(json_object_get(b, "resolution"), "found", json_false());
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "unverified");
	assert_true(reason_has(b, TARGET, "absent", NULL));
	json_decref(b);
}

static void all_passing_without_differences_is_consistent(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o, o, o]", check("a", "PASS", NULL),
				     check("b", "PASS", NULL), check("c", "NOTRUN", NULL)));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "consistent");
	assert_int_equal(json_array_size(json_object_get(b, "verdict_reasons")), 0);
	json_decref(b);
}

static void one_failing_check_is_inconsistent_naming_it(void **state)
{
	(void)state;
	json_t *failing = check("clone-keeps-mode", "FAIL", NULL);
	json_object_set_new(failing, "reason", json_string("clone() of mode False has mode True"));
	json_t *b = bundle(json_pack("[o, o]", check("a", "PASS", NULL), failing));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "inconsistent");
	assert_true(reason_has(b, "clone-keeps-mode", "FAIL", "has mode True", NULL));
	json_decref(b);
}

/* A numeric check that compared with env across (NULL: the device against
 * its own CPU). */
static json_t *numeric(const char *status, const char *across, int same_torch)
{
	json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:[], s:s?, s:b}", "name", "gelu float32 sample#0",
			      "kind", "numeric", "status", status, "reason", "out[0]: 3 of 4 out",
			      "trace", "across", across, "same_torch", same_torch);
	assert_non_null(c);
	return c;
}

static void numeric_checks_verify_and_fail_like_probes(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", numeric("PASS", NULL, 1)));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "consistent");
	json_decref(b);
	b = bundle(json_pack("[o, o]", numeric("PASS", NULL, 1), numeric("FAIL", NULL, 1)));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "inconsistent");
	assert_true(reason_has(b, "gelu float32 sample#0", "FAIL", "3 of 4 out", NULL));
	json_decref(b);
}

/* A device sample NOTRUN as a known limit of its backend. */
static json_t *excused(void)
{
	json_t *c = numeric("NOTRUN", NULL, 1);
	json_object_set_new(c, "against", json_string("cpu"));
	json_object_set_new(c, "reason", json_string("known limit of npu: no str"));
	json_object_set_new(c, "limit", json_pack("{s:s}", "name", "npu-str"));
	return c;
}

/* Samples a known limit excused neither verify nor fail: the verdict is the
 * compared samples', and with none compared on the device, unverified. */
static void known_limits_leave_the_verdict_to_the_samples_compared(void **state)
{
	(void)state;
	json_t *on_device = numeric("PASS", NULL, 1);
	json_object_set_new(on_device, "against", json_string("cpu"));
	json_t *b = bundle(json_pack("[o, o]", on_device, excused()));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "consistent");
	json_decref(b);
	/* only the CPU compared (with another environment's): unverified */
	b = bundle(json_pack("[o, o]", numeric("PASS", "sid", 1), excused()));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "unverified");
	assert_true(reason_has(b, "no sample was compared on the device", "known limit", NULL));
	json_decref(b);
	/* a failure beside them is still an inconsistency */
	b = bundle(json_pack("[o, o, o]", numeric("PASS", NULL, 1), excused(), numeric("FAIL", NULL, 1)));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "inconsistent");
	json_decref(b);
}

static void cpu_differing_from_the_reference_is_a_limit_only_across_versions(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o, o]", numeric("PASS", NULL, 1), numeric("FAIL", "sid", 1)));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "inconsistent");
	json_decref(b);
	b = bundle(json_pack("[o, o]", numeric("PASS", NULL, 1), numeric("FAIL", "sid", 0)));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "consistent-with-limits");
	assert_true(reason_has(b, "gelu float32 sample#0", "3 of 4 out", "change between versions", NULL));
	json_decref(b);
}

static void crash_error_and_timeout_are_failures_too(void **state)
{
	(void)state;
	static const char *const bad[] = { "ERROR", "CRASH", "TIMEOUT" };
	for (size_t i = 0; i < 3; i++) {
		json_t *b = bundle(json_pack("[o, o]", check("a", "PASS", NULL),
					     check("b", bad[i], NULL)));
		ap_verdict_decide(b);
		assert_string_equal(verdict_of(b), "inconsistent");
		assert_true(reason_has(b, "check b", bad[i], NULL));
		json_decref(b);
	}
}

static void trace_difference_is_inconsistent_with_step_values_and_reference(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", check("clone-keeps-mode", "PASS", NULL)));
	json_array_append_new(json_object_get(json_object_get(b, "comparison"), "differences"),
			      json_pack("{s:s, s:s, s:s, s:s}", "check", "clone-keeps-mode",
					"step", "mode of clone, mode False",
					"expected", "alpha-value", "seen", "beta-value"));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "inconsistent");
	assert_true(reason_has(b, "clone-keeps-mode", "mode of clone, mode False", "alpha-value",
			       "beta-value", "bookworm", NULL));
	const char *r = json_string_value(json_array_get(json_object_get(b, "verdict_reasons"), 0));
	assert_true(strstr(r, "alpha-value") < strstr(r, "beta-value"));
	json_decref(b);
}

static void patched_target_passing_every_probe_is_consistent_with_limits(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", check("a", "PASS", NULL)));
	set_patched(b);
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "consistent-with-limits");
	assert_true(reason_has(b, "plugin", NULL));
	json_decref(b);
}

static void patched_target_with_a_failure_is_inconsistent(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", check("a", "FAIL", NULL)));
	set_patched(b);
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "inconsistent");
	json_decref(b);
}

static void only_checks_that_did_not_run_is_unverified(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o, o]", check("a", "NOTRUN", NULL),
				     check("b", "NOTRUN", NULL)));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "unverified");
	assert_true(reason_has(b, "no probe", NULL));
	json_decref(b);
}

static void deciding_again_replaces_the_verdict(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", check("a", "FAIL", NULL)));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "inconsistent");
	json_object_set_new(json_array_get(json_object_get(b, "checks"), 0), "status",
			    json_string("PASS"));
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "consistent");
	assert_int_equal(json_array_size(json_object_get(b, "verdict_reasons")), 0);
	json_decref(b);
}

static void failed_statuses_are_fail_error_crash_and_timeout(void **state)
{
	(void)state;
	assert_true(ap_status_failed(ap_status_parse("FAIL")));
	assert_true(ap_status_failed(ap_status_parse("ERROR")));
	assert_true(ap_status_failed(ap_status_parse("CRASH")));
	assert_true(ap_status_failed(ap_status_parse("TIMEOUT")));
	assert_false(ap_status_failed(ap_status_parse("PASS")));
	assert_false(ap_status_failed(ap_status_parse("NOTRUN")));
	assert_false(ap_status_failed(ap_status_parse("fail")));
	assert_false(ap_status_failed(ap_status_parse(NULL)));
}

/* ---- ap_adaptation_decide ---- */

static json_t *probe_with(const char *name, json_t *dt)
{
	json_t *c = check(name, "PASS", NULL);
	json_object_set_new(c, "device_trace", dt);
	return c;
}

static const json_t *adaptation(const json_t *b)
{
	const json_t *a = json_object_get(b, "adaptation");
	assert_true(json_is_object(a));
	return a;
}

static const char *conclusion_en(const json_t *b)
{
	const char *s = json_string_value(json_object_get(adaptation(b), "conclusion_en"));
	assert_non_null(s);
	return s;
}

static void no_tensors_no_ops_not_patched_is_device_independent(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o, o]", probe_with("a", device_trace(NULL, NULL)),
				     probe_with("b", device_trace(NULL, NULL))));
	ap_adaptation_decide(b);
	const json_t *a = adaptation(b);
	assert_true(json_is_true(json_object_get(a, "device_independent")));
	assert_true(json_is_true(json_object_get(a, "traced")));
	assert_true(json_is_false(json_object_get(a, "patched")));
	assert_int_equal(strncmp(conclusion_en(b), "device-independent", 18), 0);
	assert_true(json_is_string(json_object_get(a, "conclusion_zh")));
	assert_true(json_is_true(json_object_get(json_object_get(b, "device_trace"), "available")));
	json_decref(b);
}

static void operators_seen_make_it_device_dependent_naming_them(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o, o]", probe_with("a", device_trace(NULL, NULL)),
				     probe_with("b", device_trace(json_pack("{s:i}", "aten::add.Tensor", 2),
								  NULL))));
	ap_adaptation_decide(b);
	const json_t *a = adaptation(b);
	assert_true(json_is_false(json_object_get(a, "device_independent")));
	assert_true(json_is_true(json_object_get(a, "traced")));
	assert_non_null(strstr(conclusion_en(b), "aten::add.Tensor"));
	assert_int_not_equal(strncmp(conclusion_en(b), "device-independent", 18), 0);
	json_decref(b);
}

static void tensors_seen_make_it_device_dependent(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", probe_with("a", device_trace(
		NULL, json_pack("{s:i}", "cpu", 1)))));
	ap_adaptation_decide(b);
	assert_true(json_is_false(json_object_get(adaptation(b), "device_independent")));
	assert_non_null(strstr(conclusion_en(b), "cpu"));
	json_decref(b);
}

static void patched_target_is_not_device_independent(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", probe_with("a", device_trace(NULL, NULL))));
	set_patched(b);
	ap_adaptation_decide(b);
	const json_t *a = adaptation(b);
	assert_true(json_is_false(json_object_get(a, "device_independent")));
	assert_true(json_is_true(json_object_get(a, "patched")));
	assert_non_null(strstr(conclusion_en(b), "patched by a plugin (now " TARGET ")"));
	json_decref(b);
}

static void untraceable_device_is_not_determined_saying_why(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o, o]",
				     probe_with("a", no_device_trace("no TorchDispatchMode in 1.8")),
				     probe_with("b", no_device_trace("no TorchDispatchMode in 1.8"))));
	ap_adaptation_decide(b);
	const json_t *a = adaptation(b);
	assert_true(json_is_false(json_object_get(a, "traced")));
	assert_true(json_is_false(json_object_get(a, "device_independent")));
	assert_int_equal(strncmp(conclusion_en(b), "not determined", 14), 0);
	assert_non_null(strstr(conclusion_en(b), "no TorchDispatchMode in 1.8"));
	json_decref(b);
}

static void no_device_trace_at_all_is_not_determined(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack("[o]", check("a", "NOTRUN", NULL)));
	ap_adaptation_decide(b);
	const json_t *a = adaptation(b);
	assert_true(json_is_false(json_object_get(a, "traced")));
	assert_int_equal(strncmp(conclusion_en(b), "not determined", 14), 0);
	assert_null(strstr(conclusion_en(b), "(null)"));
	json_decref(b);
}

static void merged_device_trace_sums_counts_across_checks(void **state)
{
	(void)state;
	json_t *b = bundle(json_pack(
		"[o, o, o, o]",
		probe_with("a", device_trace(json_pack("{s:i, s:i}", "aten::add", 2, "aten::mul", 1),
					     json_pack("{s:i}", "cpu", 3))),
		probe_with("b", device_trace(json_pack("{s:i}", "aten::add", 3),
					     json_pack("{s:i, s:i}", "cuda:0", 1, "cpu", 1))),
		probe_with("c", no_device_trace("this probe forked")),
		check("d", "NOTRUN", NULL)));
	ap_adaptation_decide(b);
	const json_t *dt = json_object_get(b, "device_trace");
	assert_true(json_is_true(json_object_get(dt, "available")));
	json_t *ops = json_pack("{s:i, s:i}", "aten::add", 5, "aten::mul", 1);
	json_t *devs = json_pack("{s:i, s:i}", "cpu", 4, "cuda:0", 1);
	assert_true(json_equal(json_object_get(dt, "ops"), ops));
	assert_true(json_equal(json_object_get(dt, "tensor_devices"), devs));
	assert_true(json_is_true(json_object_get(adaptation(b), "traced")));
	json_decref(ops);
	json_decref(devs);
	json_decref(b);
}

static void absent_target_gets_no_adaptation(void **state)
{
	(void)state;
	json_t *b = bundle(NULL);
	json_object_set_new(json_object_get(b, "resolution"), "found", json_false());
	ap_adaptation_decide(b);
	assert_null(json_object_get(b, "adaptation"));
	assert_true(json_is_object(json_object_get(b, "device_trace")));
	json_decref(b);
}

/* ---- ap_verdict_judge ---- */

static json_t *env_bundle(const char *env, json_t *checks)
{
	json_t *b = bundle(checks);
	json_object_set_new(json_object_get(b, "env"), "name", json_string(env));
	json_object_del(b, "comparison");
	return b;
}

static void judging_compares_each_environment_with_the_first_usable_one(void **state)
{
	(void)state;
	json_t *b[3] = {
		env_bundle("bookworm", json_pack("[o]", check("p", "PASS", trace2(0, 1)))),
		env_bundle("trixie", json_pack("[o]", check("p", "PASS", trace2(0, 1)))),
		env_bundle("sid", json_pack("[o]", check("p", "PASS", trace2(1, 1)))),
	};
	json_object_set_new(json_object_get(b[0], "resolution"), "found", json_false());
	ap_verdict_judge(b, 3, NULL);
	assert_int_equal(json_object_size(json_object_get(b[0], "comparison")), 0);
	assert_string_equal(verdict_of(b[0]), "unverified");
	for (int i = 1; i < 3; i++) {
		const json_t *cmp = json_object_get(b[i], "comparison");
		assert_string_equal(json_string_value(json_object_get(cmp, "reference")), "trixie");
		assert_non_null(json_object_get(b[i], "finished_utc"));
		assert_non_null(json_object_get(b[i], "adaptation"));
	}
	assert_string_equal(verdict_of(b[1]), "consistent");
	assert_string_equal(verdict_of(b[2]), "inconsistent");
	assert_true(reason_has(b[2], "trace differs", "as in trixie", NULL));
	for (int i = 0; i < 3; i++)
		json_decref(b[i]);
}

static void judging_against_a_named_reference_that_failed_compares_nothing(void **state)
{
	(void)state;
	json_t *b[2] = {
		env_bundle("trixie", json_pack("[o]", check("p", "PASS", trace2(0, 1)))),
		env_bundle("sid", json_pack("[o]", check("p", "PASS", trace2(1, 1)))),
	};
	json_object_set_new(b[0], "error", json_pack("{s:s}", "message", "broken"));
	ap_verdict_judge(b, 2, "trixie");
	assert_int_equal(json_object_size(json_object_get(b[1], "comparison")), 0);
	assert_string_equal(verdict_of(b[0]), "unverified");
	assert_string_equal(verdict_of(b[1]), "consistent");
	for (int i = 0; i < 2; i++)
		json_decref(b[i]);
}

/* An official test of status st here, and ref in the reference (NULL: not
 * run there), beside a passing probe. */
static json_t *with_official(const char *st, const char *ref)
{
	json_t *o = check("test/test_autograd.py::TestAutograd::test_x", st, NULL);
	json_object_set_new(o, "kind", json_string("official"));
	json_object_set_new(o, "reference_status", ref ? json_string(ref) : json_null());
	return bundle(json_pack("[o, o]", check("a", "PASS", NULL), o));
}

static void official_failing_here_but_passing_in_the_reference_is_inconsistent(void **state)
{
	(void)state;
	json_t *b = with_official("FAIL", "PASS");
	ap_verdict_decide(b);
	assert_string_equal(verdict_of(b), "inconsistent");
	assert_true(reason_has(b, "check test/test_autograd.py", "FAIL", NULL));
	json_decref(b);
}

static void official_failing_in_the_reference_too_is_a_limit(void **state)
{
	(void)state;
	const char *refs[] = { "FAIL", NULL };
	for (int i = 0; i < 2; i++) {
		json_t *b = with_official("ERROR", refs[i]);
		ap_verdict_decide(b);
		assert_string_equal(verdict_of(b), "consistent-with-limits");
		assert_true(reason_has(b, "official test", refs[i] ? "FAIL in the reference"
				       : "not run in the reference", NULL));
		json_decref(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identical_traces_have_no_differences),
		cmocka_unit_test(one_differing_value_gives_one_difference),
		cmocka_unit_test(differing_status_is_an_outcome_difference),
		cmocka_unit_test(traces_out_of_step_give_only_the_first_divergence),
		cmocka_unit_test(trace_of_another_length_is_one_difference_at_the_first_unmatched_step),
		cmocka_unit_test(failed_probe_that_stopped_early_differs_only_in_outcome),
		cmocka_unit_test(check_the_reference_lacks_is_not_compared),
		cmocka_unit_test(differences_of_several_checks_are_all_listed_in_order),
		cmocka_unit_test(environment_error_is_unverified),
		cmocka_unit_test(absent_target_is_unverified_and_says_absent),
		cmocka_unit_test(all_passing_without_differences_is_consistent),
		cmocka_unit_test(one_failing_check_is_inconsistent_naming_it),
		cmocka_unit_test(crash_error_and_timeout_are_failures_too),
		cmocka_unit_test(numeric_checks_verify_and_fail_like_probes),
		cmocka_unit_test(cpu_differing_from_the_reference_is_a_limit_only_across_versions),
		cmocka_unit_test(known_limits_leave_the_verdict_to_the_samples_compared),
		cmocka_unit_test(trace_difference_is_inconsistent_with_step_values_and_reference),
		cmocka_unit_test(patched_target_passing_every_probe_is_consistent_with_limits),
		cmocka_unit_test(patched_target_with_a_failure_is_inconsistent),
		cmocka_unit_test(only_checks_that_did_not_run_is_unverified),
		cmocka_unit_test(deciding_again_replaces_the_verdict),
		cmocka_unit_test(failed_statuses_are_fail_error_crash_and_timeout),
		cmocka_unit_test(no_tensors_no_ops_not_patched_is_device_independent),
		cmocka_unit_test(operators_seen_make_it_device_dependent_naming_them),
		cmocka_unit_test(tensors_seen_make_it_device_dependent),
		cmocka_unit_test(patched_target_is_not_device_independent),
		cmocka_unit_test(untraceable_device_is_not_determined_saying_why),
		cmocka_unit_test(no_device_trace_at_all_is_not_determined),
		cmocka_unit_test(merged_device_trace_sums_counts_across_checks),
		cmocka_unit_test(absent_target_gets_no_adaptation),
		cmocka_unit_test(judging_compares_each_environment_with_the_first_usable_one),
		cmocka_unit_test(judging_against_a_named_reference_that_failed_compares_nothing),
		cmocka_unit_test(official_failing_here_but_passing_in_the_reference_is_inconsistent),
		cmocka_unit_test(official_failing_in_the_reference_too_is_a_limit),
	};
	return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
