/* test-text.c - unit tests for src/base/text.h: strings from data made safe
 * to print on a terminal, and the UTF-8 well-formedness they rest on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/text.h"

/* ap_text_term() of s[0..n) with flags, as a string the test owns. */
static char *term(const char *s, size_t n, int flags)
{
	struct ap_buf b = { 0 };
	assert_int_equal(ap_text_term(&b, s, n, flags), 0);
	char *r = strdup(ap_buf_str(&b));
	ap_buf_free(&b);
	return r;
}

static void utf8_seq_accepts_well_formed_sequences_of_each_length(void **state)
{
	(void)state;
	assert_int_equal(ap_utf8_seq((const unsigned char *)"a", 1), 1);
	assert_int_equal(ap_utf8_seq((const unsigned char *)"\xC3\xA9", 2), 2);      /* é */
	assert_int_equal(ap_utf8_seq((const unsigned char *)"\xE6\x94\xAF", 3), 3);  /* 支 */
	assert_int_equal(ap_utf8_seq((const unsigned char *)"\xF0\x9F\x98\x80", 4), 4);
}

static void utf8_seq_refuses_overlong_surrogate_truncated_and_stray_bytes(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", /* overlong '/', overlong, U+D800 */
		"\xF4\x90\x80\x80", "\xF5\x80\x80\x80",    /* above U+10FFFF */
		"\x80", "\xFF", "\xC3",                     /* stray continuation, 0xFF, cut */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ap_utf8_seq((const unsigned char *)bad[i], strlen(bad[i])), 0);
	assert_int_equal(ap_utf8_seq((const unsigned char *)"\xE6\x94", 2), 0);
}

static void term_shows_escape_and_control_bytes_instead_of_sending_them(void **state)
{
	(void)state;
	static const char in[] = "a\x1b[2Jb\rc\x07\x7f";
	char *r = term(in, sizeof(in) - 1, AP_TEXT_LINE);
	assert_string_equal(r, "a\\x1b[2Jb\\x0dc\\x07\\x7f");
	assert_null(strchr(r, 0x1b));
	free(r);
}

static void term_line_escapes_newline_and_tab_block_keeps_them(void **state)
{
	(void)state;
	char *line = term("a\nb\tc", 5, AP_TEXT_LINE);
	char *block = term("a\nb\tc", 5, AP_TEXT_BLOCK);
	assert_string_equal(line, "a\\x0ab\\x09c");
	assert_string_equal(block, "a\nb\tc");
	free(line);
	free(block);
}

static void term_shows_c1_controls_nul_and_bad_utf8_but_keeps_good_utf8(void **state)
{
	(void)state;
	/* U+009B is an 8-bit CSI: as dangerous as ESC [ on some terminals. */
	static const char in[] = "\xC2\x9B" "2J\xFF\xC3 x\0y \xE6\x94\xAF\xE6\x8C\x81 \xC3\xA9";
	char *r = term(in, sizeof(in) - 1, AP_TEXT_LINE);
	assert_string_equal(r, "\\u009b2J\\xff\\xc3 x\\x00y \xE6\x94\xAF\xE6\x8C\x81 \xC3\xA9");
	free(r);
}

static void text_line_of_null_writes_nothing(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_text_line(&b, NULL), 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(ap_text_line(&b, "plain text, unchanged"), 0);
	assert_string_equal(ap_buf_str(&b), "plain text, unchanged");
	ap_buf_free(&b);
}

static void dotted_names_are_identifiers_joined_by_single_dots(void **state)
{
	(void)state;
	assert_true(ap_dotted_name_ok("torch.nn.functional.gelu", 256));
	assert_true(ap_dotted_name_ok("_C._is_multithreading_enabled", 256));
	assert_true(ap_dotted_name_ok("a1.b_2", 256));
	assert_false(ap_dotted_name_ok("", 256));
	assert_false(ap_dotted_name_ok(".torch", 256));
	assert_false(ap_dotted_name_ok("torch.", 256));
	assert_false(ap_dotted_name_ok("torch..nn", 256));
	assert_false(ap_dotted_name_ok("torch.1nn", 256));
	assert_false(ap_dotted_name_ok("torch;rm", 256));
	assert_false(ap_dotted_name_ok("torch nn", 256));
	assert_false(ap_dotted_name_ok("t\xc3\xa9", 256));
	assert_true(ap_dotted_name_ok("abcd", 4));
	assert_false(ap_dotted_name_ok("abcde", 4));
}

static void words_have_no_space_or_control_byte(void **state)
{
	(void)state;
	assert_true(ap_word_ok("nn.functional.*"));
	assert_true(ap_word_ok("RuntimeError"));
	assert_false(ap_word_ok(""));
	assert_false(ap_word_ok("two words"));
	assert_false(ap_word_ok("tab\there"));
	assert_false(ap_word_ok("del\x7f"));
	assert_false(ap_word_ok("line\n"));
}

/* A cut at max bytes never splits a UTF-8 character: it moves back to the
 * character's start; a shorter string is whole. */
static void utf8_prefix_cuts_between_characters(void **state)
{
	(void)state;
	assert_int_equal(ap_utf8_prefix("abc", 10), 3);
	assert_int_equal(ap_utf8_prefix("abc", 2), 2);
	assert_int_equal(ap_utf8_prefix("a\xe6\x94\xaf", 2), 1);  /* 支 is 3 bytes */
	assert_int_equal(ap_utf8_prefix("a\xe6\x94\xaf", 3), 1);
	assert_int_equal(ap_utf8_prefix("a\xe6\x94\xaf" "b", 4), 4);
	assert_int_equal(ap_utf8_prefix("", 4), 0);
}

static void control_bytes_are_found_and_nothing_else(void **state)
{
	(void)state;
	assert_false(ap_text_has_control("/opt/venv/bin/python3 é"));
	assert_false(ap_text_has_control(NULL));
	assert_true(ap_text_has_control("a\nb"));
	assert_true(ap_text_has_control("\x1b[2J"));
	assert_true(ap_text_has_control("del\x7f"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(control_bytes_are_found_and_nothing_else),
		cmocka_unit_test(utf8_prefix_cuts_between_characters),
		cmocka_unit_test(utf8_seq_accepts_well_formed_sequences_of_each_length),
		cmocka_unit_test(utf8_seq_refuses_overlong_surrogate_truncated_and_stray_bytes),
		cmocka_unit_test(term_shows_escape_and_control_bytes_instead_of_sending_them),
		cmocka_unit_test(term_line_escapes_newline_and_tab_block_keeps_them),
		cmocka_unit_test(term_shows_c1_controls_nul_and_bad_utf8_but_keeps_good_utf8),
		cmocka_unit_test(text_line_of_null_writes_nothing),
		cmocka_unit_test(dotted_names_are_identifiers_joined_by_single_dots),
		cmocka_unit_test(words_have_no_space_or_control_byte),
	};
	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
