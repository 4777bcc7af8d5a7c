/* test-probe.c - unit tests for src/check/probe.h: a probe's status and
 * reason, decided from the facts the worker reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/probe.h"

/* A reply whose child ended as ended says (a JSON text), with result (NULL:
 * none came). */
static json_t *reply(const char *result, const char *ended)
{
	json_error_t err;
	json_t *r = json_pack("{s:o, s:[{s:s, s:i}], s:o, s:i, s:s}", "result",
			      result ? json_loads(result, 0, &err) : json_null(), "steps", "step",
			      "a", "value", 1, "ended", json_loads(ended, 0, &err), "duration_ms", 12,
			      "output", "out");
	assert_non_null(r);
	return r;
}

#define EXITED(n) "{\"timed_out\": false, \"signal\": null, \"exit_status\": " #n \
		  ", \"limit_s\": 7}"
#define SIGNALLED(s) "{\"timed_out\": false, \"signal\": \"" s "\", \"exit_status\": null, " \
		     "\"limit_s\": 7}"
#define TIMED_OUT "{\"timed_out\": true, \"signal\": null, \"exit_status\": null, \"limit_s\": 2.5}"

/* The check of a reply as compact JSON, keys in the order written. */
static void expect_probe_check(json_t *r, const char *want)
{
	json_t *c = ap_probe_check(r);
	char *got = json_dumps(c, JSON_COMPACT);
	assert_string_equal(got, want);
	free(got);
	json_decref(c);
	json_decref(r);
}

static enum ap_status status_of(json_t *r, struct ap_buf *why)
{
	struct ap_proto_probe_reply p;
	ap_buf_reset(why);
	ap_proto_probe_read(r, &p);
	enum ap_status st = ap_probe_status(&p, why);
	json_decref(r);
	return st;
}

static void a_child_with_no_result_is_a_timeout_a_crash_or_an_error(void **state)
{
	(void)state;
	struct ap_buf why = { 0 };
	assert_int_equal(status_of(reply(NULL, TIMED_OUT), &why), AP_TIMEOUT);
	assert_string_equal(ap_buf_str(&why), "no result within 2.5 s");
	/* a signal is a crash, never read as the limit */
	assert_int_equal(status_of(reply(NULL, SIGNALLED("SIGSEGV")), &why), AP_CRASH);
	assert_string_equal(ap_buf_str(&why), "SIGSEGV");
	assert_int_equal(status_of(reply(NULL, EXITED(3)), &why), AP_ERROR);
	assert_string_equal(ap_buf_str(&why), "probe exited with status 3 before reporting");
	assert_int_equal(status_of(reply(NULL, "{}"), &why), AP_ERROR);
	ap_buf_free(&why);
}

static void what_the_probe_raised_decides_fail_or_error(void **state)
{
	(void)state;
	struct ap_buf why = { 0 };
	assert_int_equal(status_of(reply("{\"raised\": null, \"trace\": []}", EXITED(0)), &why),
			 AP_PASS);
	assert_int_equal(why.len, 0);
	assert_int_equal(status_of(reply("{\"raised\": {\"type\": \"ProbeFailure\", \"check\": true,"
					 " \"message\": \"no grad\"}}", EXITED(0)), &why), AP_FAIL);
	assert_string_equal(ap_buf_str(&why), "no grad");
	/* an assert of the probe's own, not check(): an error, as any exception */
	assert_int_equal(status_of(reply("{\"raised\": {\"type\": \"AssertionError\", \"check\": "
					 "false, \"message\": \"x\"}}", EXITED(0)), &why), AP_ERROR);
	assert_string_equal(ap_buf_str(&why), "AssertionError: x");
	assert_int_equal(status_of(reply("{\"harness\": \"OSError: pipe\"}", EXITED(0)), &why),
			 AP_ERROR);
	assert_string_equal(ap_buf_str(&why), "OSError: pipe");
	assert_int_equal(status_of(reply("{\"unreadable\": true, \"trace\": []}", EXITED(0)), &why),
			 AP_ERROR);
	assert_string_equal(ap_buf_str(&why), "unreadable result frame");
	ap_buf_free(&why);
}

static void the_check_holds_the_fields_the_facts_have_in_order(void **state)
{
	(void)state;
	expect_probe_check(reply("{\"raised\": null, \"trace\": [], \"device_trace\": {\"available\": "
			   "false}}", EXITED(0)),
		     "{\"status\":\"PASS\",\"reason\":null,\"trace\":[],\"device_trace\":"
		     "{\"available\":false},\"duration_ms\":12,\"output\":\"out\"}");
	expect_probe_check(reply("{\"raised\": {\"type\": \"ProbeFailure\", \"check\": true, \"message\": "
			   "\"m\", \"traceback\": \"tb\"}, \"trace\": []}", EXITED(0)),
		     "{\"status\":\"FAIL\",\"reason\":\"m\",\"trace\":[],\"duration_ms\":12,"
		     "\"output\":\"out\"}");
	expect_probe_check(reply("{\"raised\": {\"type\": \"KeyError\", \"check\": false, \"message\": "
			   "\"'k'\", \"traceback\": \"tb\"}, \"trace\": []}", EXITED(0)),
		     "{\"status\":\"ERROR\",\"reason\":\"KeyError: 'k'\",\"traceback\":\"tb\","
		     "\"trace\":[],\"duration_ms\":12,\"output\":\"out\"}");
	/* no result: the steps streamed before the end are its trace */
	expect_probe_check(reply(NULL, TIMED_OUT),
		     "{\"status\":\"TIMEOUT\",\"reason\":\"no result within 2.5 s\",\"trace\":"
		     "[{\"step\":\"a\",\"value\":1}],\"duration_ms\":12,\"output\":\"out\"}");
	/* a harness failure in the child has no trace */
	expect_probe_check(reply("{\"harness\": \"E: x\"}", EXITED(0)),
		     "{\"status\":\"ERROR\",\"reason\":\"E: x\",\"duration_ms\":12,"
		     "\"output\":\"out\"}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_child_with_no_result_is_a_timeout_a_crash_or_an_error),
		cmocka_unit_test(what_the_probe_raised_decides_fail_or_error),
		cmocka_unit_test(the_check_holds_the_fields_the_facts_have_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
