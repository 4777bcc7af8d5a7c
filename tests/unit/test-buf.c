/* test-buf.c - unit tests for src/buf.h: a growable, always NUL-terminated buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"

static void zeroed_buffer_reads_as_empty_string_not_null(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	const char *s = ap_buf_str(&b);
	assert_non_null(s);
	assert_string_equal(s, "");
	assert_int_equal(b.len, 0);
}

static void add_appends_bytes_and_keeps_a_terminating_nul(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_buf_add(&b, "abcXYZ", 3), 0);
	assert_int_equal(b.len, 3);
	assert_int_equal(b.data[3], '\0');
	assert_string_equal(ap_buf_str(&b), "abc");
	assert_int_equal(ap_buf_add(&b, "de", 2), 0);
	assert_string_equal(ap_buf_str(&b), "abcde");
	assert_int_equal(b.len, 5);
	ap_buf_free(&b);
}

static void add_keeps_embedded_nul_bytes_in_len(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_buf_add(&b, "a\0b", 3), 0);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "a\0b", 4);
	ap_buf_free(&b);
}

static void add_grows_past_initial_capacity_and_keeps_contents(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	char chunk[100];
	for (int i = 0; i < 50; i++) {
		memset(chunk, 'a' + i % 26, sizeof(chunk));
		assert_int_equal(ap_buf_add(&b, chunk, sizeof(chunk)), 0);
	}
	assert_int_equal(b.len, 5000);
	assert_true(b.cap > b.len);
	assert_int_equal(b.data[5000], '\0');
	for (int i = 0; i < 50; i++)
		assert_int_equal(b.data[i * 100 + 99], 'a' + i % 26);
	ap_buf_free(&b);
}

static void adds_appends_a_whole_string(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_buf_adds(&b, "torch"), 0);
	assert_int_equal(ap_buf_adds(&b, " 2.6"), 0);
	assert_string_equal(ap_buf_str(&b), "torch 2.6");
	assert_int_equal(b.len, 9);
	ap_buf_free(&b);
}

static void addf_formats_after_existing_contents(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_buf_adds(&b, "x="), 0);
	assert_int_equal(ap_buf_addf(&b, "%d %s %05.1f", 42, "npu", 2.5), 0);
	assert_string_equal(ap_buf_str(&b), "x=42 npu 002.5");
	assert_int_equal(b.len, strlen("x=42 npu 002.5"));
	ap_buf_free(&b);
}

static void addf_of_long_output_grows_the_buffer(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_buf_addf(&b, "%300s|", "end"), 0);
	assert_int_equal(b.len, 301);
	assert_int_equal(b.data[299], 'd');
	assert_int_equal(b.data[300], '|');
	assert_int_equal(b.data[301], '\0');
	ap_buf_free(&b);
}

static void addf_of_empty_format_leaves_buffer_empty(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_buf_addf(&b, "%s", ""), 0);
	assert_int_equal(b.len, 0);
	assert_string_equal(ap_buf_str(&b), "");
	ap_buf_free(&b);
}

static void consume_drops_leading_bytes_and_keeps_the_rest_terminated(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_buf_adds(&b, "headerpayload");
	ap_buf_consume(&b, 6);
	assert_int_equal(b.len, 7);
	assert_string_equal(ap_buf_str(&b), "payload");
	ap_buf_consume(&b, 0);
	assert_string_equal(ap_buf_str(&b), "payload");
	ap_buf_free(&b);
}

static void consume_of_the_whole_length_empties_the_buffer(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_buf_adds(&b, "abc");
	ap_buf_consume(&b, 3);
	assert_int_equal(b.len, 0);
	assert_string_equal(ap_buf_str(&b), "");
	assert_int_equal(ap_buf_adds(&b, "z"), 0);
	assert_string_equal(ap_buf_str(&b), "z");
	ap_buf_free(&b);
}

static void consume_on_an_empty_buffer_leaves_it_empty(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_buf_consume(&b, 0);
	assert_int_equal(b.len, 0);
	assert_string_equal(ap_buf_str(&b), "");
}

static void keep_tail_keeps_only_the_last_max_bytes(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_buf_adds(&b, "line1\nline2\nTraceback");
	ap_buf_keep_tail(&b, 9);
	assert_int_equal(b.len, 9);
	assert_string_equal(ap_buf_str(&b), "Traceback");
	ap_buf_keep_tail(&b, 0);
	assert_int_equal(b.len, 0);
	assert_string_equal(ap_buf_str(&b), "");
	ap_buf_free(&b);
}

static void keep_tail_of_a_shorter_buffer_changes_nothing(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_buf_keep_tail(&b, 10);
	assert_string_equal(ap_buf_str(&b), "");
	ap_buf_adds(&b, "short");
	ap_buf_keep_tail(&b, 5);
	assert_string_equal(ap_buf_str(&b), "short");
	ap_buf_keep_tail(&b, 100);
	assert_string_equal(ap_buf_str(&b), "short");
	assert_int_equal(b.len, 5);
	ap_buf_free(&b);
}

static void reset_empties_the_buffer_but_keeps_its_storage(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_buf_adds(&b, "something");
	size_t cap = b.cap;
	ap_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, cap);
	assert_non_null(b.data);
	assert_string_equal(ap_buf_str(&b), "");
	ap_buf_free(&b);
}

static void free_returns_the_buffer_to_the_zeroed_state(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_buf_adds(&b, "something");
	ap_buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	assert_string_equal(ap_buf_str(&b), "");
	assert_int_equal(ap_buf_adds(&b, "again"), 0);
	assert_string_equal(ap_buf_str(&b), "again");
	ap_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(zeroed_buffer_reads_as_empty_string_not_null),
		cmocka_unit_test(add_appends_bytes_and_keeps_a_terminating_nul),
		cmocka_unit_test(add_keeps_embedded_nul_bytes_in_len),
		cmocka_unit_test(add_grows_past_initial_capacity_and_keeps_contents),
		cmocka_unit_test(adds_appends_a_whole_string),
		cmocka_unit_test(addf_formats_after_existing_contents),
		cmocka_unit_test(addf_of_long_output_grows_the_buffer),
		cmocka_unit_test(addf_of_empty_format_leaves_buffer_empty),
		cmocka_unit_test(consume_drops_leading_bytes_and_keeps_the_rest_terminated),
		cmocka_unit_test(consume_of_the_whole_length_empties_the_buffer),
		cmocka_unit_test(consume_on_an_empty_buffer_leaves_it_empty),
		cmocka_unit_test(keep_tail_keeps_only_the_last_max_bytes),
		cmocka_unit_test(keep_tail_of_a_shorter_buffer_changes_nothing),
		cmocka_unit_test(reset_empties_the_buffer_but_keeps_its_storage),
		cmocka_unit_test(free_returns_the_buffer_to_the_zeroed_state),
	};
	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
