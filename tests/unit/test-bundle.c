/* test-bundle.c - unit tests for src/evidence/bundle.h: building a bundle and
 * the questions other modules ask of it (did the target resolve, how many
 * probes passed, which environment is the reference), and for the "-" of
 * base/jsonutil.h that every printer of evidence shows for a missing value. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "base/jsonutil.h"
#include "evidence/bundle.h"

/* A bundle of env name: resolved or not, failed or not. */
static json_t *bundle(const char *name, int resolved, int failed)
{
	struct ap_env env = { .name = (char *)name, .label = (char *)"Label", .device = (char *)"cpu" };
	json_t *b = ap_bundle_new(&env, "torch.no_grad", 0);
	assert_non_null(b);
	json_object_set_new(b, "resolution", json_pack("{s:b}", "found", resolved));
	if (failed)
		ap_bundle_set_error(b, -AP_ETORCH, "import torch failed");
	return b;
}

static void add(json_t *b, const char *name, const char *kind, const char *status)
{
	json_t *c = ap_check_new(name, kind, ap_status_parse(status), NULL);
	ap_bundle_add_check(b, c);
	json_decref(c);
}

static void new_bundle_has_every_section_and_the_schema(void **state)
{
	(void)state;
	json_t *b = bundle("trixie", 0, 0);
	static const char *const nulls[] = { "fingerprint", "resolution", "family", "error" };
	assert_string_equal(ap_json_text(b, "schema"), AP_BUNDLE_SCHEMA);
	assert_string_equal(ap_json_text(b, "target"), "torch.no_grad");
	assert_string_equal(ap_json_text(json_object_get(b, "env"), "name"), "trixie");
	assert_string_equal(ap_json_text(json_object_get(b, "tool"), "name"), "apiparity");
	assert_int_equal(strlen(ap_json_text(b, "started_utc")), strlen("2026-01-01T00:00:00Z"));
	json_object_set_new(b, "resolution", json_null());
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		assert_true(json_is_null(json_object_get(b, nulls[i])));
	assert_int_equal(json_array_size(json_object_get(b, "checks")), 0);
	json_decref(b);
}

static void check_object_has_a_null_reason_when_none_is_given(void **state)
{
	(void)state;
	json_t *c = ap_check_new("resolve", "resolution", AP_NOTRUN, NULL);
	json_t *d = ap_check_new("family", "plan", AP_NOTRUN, "no-family: none");
	assert_true(json_is_null(json_object_get(c, "reason")));
	assert_string_equal(ap_json_text(d, "reason"), "no-family: none");
	assert_int_equal(json_array_size(json_object_get(d, "trace")), 0);
	assert_int_equal(json_integer_value(json_object_get(d, "duration_ms")), 0);
	json_decref(c);
	json_decref(d);
}

static void error_records_kind_exit_code_and_message(void **state)
{
	(void)state;
	json_t *b = bundle("sid", 1, 0);
	assert_false(ap_bundle_failed(b));
	const json_t *e = ap_bundle_set_error(b, -AP_ETORCH, "no torch");
	assert_ptr_equal(e, json_object_get(b, "error"));
	assert_true(ap_bundle_failed(b));
	assert_string_equal(ap_json_text(e, "kind"), ap_strerror(-AP_ETORCH));
	assert_int_equal(json_integer_value(json_object_get(e, "exit_code")),
			 ap_exit_code(-AP_ETORCH));
	assert_string_equal(ap_json_text(e, "message"), "no torch");
	json_decref(b);
}

static void resolved_only_when_found_is_true(void **state)
{
	(void)state;
	json_t *yes = json_pack("{s:b}", "found", 1), *no = json_pack("{s:b}", "found", 0);
	json_t *str = json_pack("{s:s}", "found", "true");
	assert_true(ap_resolved(yes));
	assert_false(ap_resolved(no));
	assert_false(ap_resolved(str));
	assert_false(ap_resolved(NULL));
	json_t *b = bundle("sid", 1, 0), *a = bundle("sid", 0, 0);
	assert_true(ap_bundle_resolved(b));
	assert_false(ap_bundle_resolved(a));
	json_object_set_new(a, "resolution", json_null());
	assert_false(ap_bundle_resolved(a));
	json_decref(yes);
	json_decref(no);
	json_decref(str);
	json_decref(a);
	json_decref(b);
}

static void probe_counts_count_probes_and_scripts_that_ran(void **state)
{
	(void)state;
	json_t *b = bundle("sid", 1, 0);
	int passed = -1, total = -1;
	add(b, "a", "probe", "PASS");
	add(b, "b", "probe", "FAIL");
	add(b, "c", "probe", "NOTRUN");
	add(b, "script:x.py", "script", "PASS");
	add(b, "official", "official", "PASS");
	add(b, "claimed:x", "claim", "PASS");
	add(b, "family", "plan", "NOTRUN");
	ap_bundle_probe_counts(b, &passed, &total);
	assert_int_equal(passed, 2);
	assert_int_equal(total, 3);
	json_decref(b);
}

static void probe_counts_of_no_checks_are_zero(void **state)
{
	(void)state;
	json_t *b = json_object();
	int passed = -1, total = -1;
	ap_bundle_probe_counts(b, &passed, &total);
	assert_int_equal(passed, 0);
	assert_int_equal(total, 0);
	json_decref(b);
}

static void reference_is_the_first_resolved_environment_that_did_not_fail(void **state)
{
	(void)state;
	json_t *b[4] = { bundle("bookworm", 0, 0), bundle("trixie", 1, 1), bundle("sid", 1, 0),
			 bundle("local", 1, 0) };
	assert_int_equal(ap_bundle_pick_reference(b, 4, NULL), 2);
	assert_int_equal(ap_bundle_pick_reference(b, 2, NULL), -1);
	for (size_t i = 0; i < 4; i++)
		json_decref(b[i]);
}

static void named_reference_is_taken_only_when_usable(void **state)
{
	(void)state;
	json_t *b[3] = { bundle("bookworm", 0, 0), bundle("trixie", 1, 1), bundle("sid", 1, 0) };
	assert_int_equal(ap_bundle_pick_reference(b, 3, "sid"), 2);
	assert_int_equal(ap_bundle_pick_reference(b, 3, "bookworm"), -1); /* absent there */
	assert_int_equal(ap_bundle_pick_reference(b, 3, "trixie"), -1);   /* it failed */
	assert_int_equal(ap_bundle_pick_reference(b, 3, "nowhere"), -1);
	for (size_t i = 0; i < 3; i++)
		json_decref(b[i]);
}

static void comparison_without_reference_is_empty(void **state)
{
	(void)state;
	json_t *b = bundle("sid", 1, 0);
	ap_bundle_set_comparison(b, NULL, json_array());
	assert_int_equal(json_object_size(json_object_get(b, "comparison")), 0);
	ap_bundle_set_comparison(b, "trixie", json_array());
	assert_string_equal(ap_json_text(json_object_get(b, "comparison"), "reference"), "trixie");
	assert_true(json_is_array(json_object_get(json_object_get(b, "comparison"), "differences")));
	json_decref(b);
}

static void json_text_is_a_dash_for_anything_but_a_string(void **state)
{
	(void)state;
	json_t *o = json_pack("{s:s, s:i, s:n, s:s}", "s", "text", "i", 3, "n", "e", "");
	assert_string_equal(ap_json_text(o, "s"), "text");
	assert_string_equal(ap_json_text(o, "e"), "");
	assert_string_equal(ap_json_text(o, "i"), "-");
	assert_string_equal(ap_json_text(o, "n"), "-");
	assert_string_equal(ap_json_text(o, "missing"), "-");
	assert_string_equal(ap_json_text(NULL, "s"), "-");
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(new_bundle_has_every_section_and_the_schema),
		cmocka_unit_test(check_object_has_a_null_reason_when_none_is_given),
		cmocka_unit_test(error_records_kind_exit_code_and_message),
		cmocka_unit_test(resolved_only_when_found_is_true),
		cmocka_unit_test(probe_counts_count_probes_and_scripts_that_ran),
		cmocka_unit_test(probe_counts_of_no_checks_are_zero),
		cmocka_unit_test(reference_is_the_first_resolved_environment_that_did_not_fail),
		cmocka_unit_test(named_reference_is_taken_only_when_usable),
		cmocka_unit_test(comparison_without_reference_is_empty),
		cmocka_unit_test(json_text_is_a_dash_for_anything_but_a_string),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
