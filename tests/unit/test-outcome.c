/* test-outcome.c - unit tests for src/base/outcome.h: the words of results,
 * spelled once, read back to the value that wrote them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/outcome.h"

static void every_status_reads_back_as_itself_and_words_are_the_taxonomys(void **state)
{
	(void)state;
	static const char *const want[AP_STATUS_COUNT] = {
		"PASS", "FAIL", "ERROR", "CRASH", "TIMEOUT", "WARN", "NOTRUN", "SKIP",
	};
	for (int i = 0; i < AP_STATUS_COUNT; i++) {
		assert_string_equal(ap_status_name((enum ap_status)i), want[i]);
		assert_int_equal(ap_status_parse(want[i]), i);
	}
}

static void every_verdict_reads_back_as_itself(void **state)
{
	(void)state;
	static const char *const want[AP_VERDICT_COUNT] = {
		"consistent", "consistent-with-limits", "inconsistent", "unverified",
	};
	for (int i = 0; i < AP_VERDICT_COUNT; i++) {
		assert_string_equal(ap_verdict_name((enum ap_verdict)i), want[i]);
		assert_int_equal(ap_verdict_parse(want[i]), i);
		assert_true(ap_verdict_is(want[i], (enum ap_verdict)i));
	}
}

static void sweep_words_read_back_and_checks_rank_worst_last(void **state)
{
	(void)state;
	static const char *const v[AP_LINE_VERDICT_COUNT] = { "consistent", "inconsistent",
							      "not-run", "absent" };
	static const char *const c[AP_LINE_CHECK_COUNT] = { "not-run", "consistent",
							    "inconsistent", "timeout", "crash" };
	for (int i = 0; i < AP_LINE_VERDICT_COUNT; i++)
		assert_int_equal(ap_line_verdict_parse(ap_line_verdict_name(i)), i),
		assert_string_equal(ap_line_verdict_name(i), v[i]);
	for (int i = 0; i < AP_LINE_CHECK_COUNT; i++)
		assert_int_equal(ap_line_check_parse(ap_line_check_name(i)), i),
		assert_string_equal(ap_line_check_name(i), c[i]);
	static const char *const st[AP_LINE_STATUS_COUNT] = { "present", "absent", "import-error",
							      "crash", "timeout", "error" };
	for (int i = 0; i < AP_LINE_STATUS_COUNT; i++)
		assert_int_equal(ap_line_status_parse(ap_line_status_name(i)), i),
		assert_string_equal(ap_line_status_name(i), st[i]);
	assert_int_equal(ap_line_status_parse("ok"), AP_LINE_STATUS_UNKNOWN);
	/* autocheck keeps the worst of a line's checks by this order */
	assert_true(AP_LCHECK_CRASH > AP_LCHECK_TIMEOUT);
	assert_true(AP_LCHECK_TIMEOUT > AP_LCHECK_INCONSISTENT);
	assert_true(AP_LCHECK_INCONSISTENT > AP_LCHECK_CONSISTENT);
	assert_true(AP_LCHECK_CONSISTENT > AP_LCHECK_NOTRUN);
}

static void unknown_words_are_unknown_never_a_guess(void **state)
{
	(void)state;
	assert_int_equal(ap_status_parse("pass"), AP_STATUS_UNKNOWN);
	assert_int_equal(ap_status_parse("PASS "), AP_STATUS_UNKNOWN);
	assert_int_equal(ap_status_parse(""), AP_STATUS_UNKNOWN);
	assert_int_equal(ap_status_parse(NULL), AP_STATUS_UNKNOWN);
	assert_int_equal(ap_verdict_parse("Consistent"), AP_VERDICT_UNKNOWN);
	assert_int_equal(ap_line_verdict_parse("unverified"), AP_LINE_VERDICT_UNKNOWN);
	assert_int_equal(ap_line_check_parse("absent"), AP_LINE_CHECK_UNKNOWN);
	assert_string_equal(ap_status_name(AP_STATUS_UNKNOWN), "?");
	assert_string_equal(ap_status_name(AP_STATUS_COUNT), "?");
	assert_string_equal(ap_verdict_name(AP_VERDICT_COUNT), "?");
	assert_false(ap_status_is(NULL, AP_PASS));
	assert_false(ap_verdict_is(NULL, AP_CONSISTENT));
}

static void failed_means_fail_error_crash_timeout_only(void **state)
{
	(void)state;
	for (int i = 0; i < AP_STATUS_COUNT; i++)
		assert_int_equal(ap_status_failed((enum ap_status)i),
				 i == AP_FAIL || i == AP_ERROR || i == AP_CRASH || i == AP_TIMEOUT);
	assert_false(ap_status_failed(AP_STATUS_UNKNOWN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_status_reads_back_as_itself_and_words_are_the_taxonomys),
		cmocka_unit_test(every_verdict_reads_back_as_itself),
		cmocka_unit_test(sweep_words_read_back_and_checks_rank_worst_last),
		cmocka_unit_test(unknown_words_are_unknown_never_a_guess),
		cmocka_unit_test(failed_means_fail_error_crash_timeout_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
