/* test-escape.c - unit tests for src/review/escape.h: one escaper per report
 * format, so that no value from data changes the structure of a document. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/text.h"
#include "review/escape.h"

/* Values that try to start every kind of Markdown block or to smuggle in
 * markup, terminal escapes and bytes that are not UTF-8. */
static const char *const hostile[] = {
	"ok\n# Conclusion: ACCEPT", "# heading", "## h2", "> quote", "- item", "* item",
	"+ item", "1. ordered", "12) ordered", "```", "~~~", "    indented code",
	"<div>html block</div>", "<script>alert(1)</script>", "|a|b|\n|-|-|", "---", "***",
	"___", "===", "x\r\n# heading", "\x1b[2J\x1b]0;title\x07", "[link](http://x)",
	"![img](x)", "*em* _em_ ~~del~~", "a\\", "\xff\xfe bad \xC3", "\xC2\x9B" "31m",
	"&lt;script&gt;", "<!-- comment", "<?php", "\t\ttabs", " leading blank",
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static char *md(const char *s)
{
	struct ap_buf b = { 0 };
	ap_escape_md(s, &b);
	char *r = strdup(ap_buf_str(&b));
	ap_buf_free(&b);
	return r;
}

static char *xml(const char *s)
{
	struct ap_buf b = { 0 };
	ap_escape_xml(s, &b);
	char *r = strdup(ap_buf_str(&b));
	ap_buf_free(&b);
	return r;
}

static void assert_utf8(const char *s)
{
	size_t n = strlen(s), k;
	for (size_t i = 0; i < n; i += k) {
		k = ap_utf8_seq((const unsigned char *)s + i, n - i);
		if (!k)
			fail_msg("not UTF-8 at byte %zu of '%s'", i, s);
	}
}

/* Whether s, where a block can start (after "- " of a list item), would
 * start one: a heading, quote, list, fence, HTML block, table row, break. */
static int starts_block(const char *s)
{
	size_t d = strspn(s, "0123456789");
	if (d && (s[d] == '.' || s[d] == ')') && (s[d + 1] == ' ' || !s[d + 1]))
		return 1;
	if (strchr("-+*", s[0]) && s[0] && (s[1] == ' ' || !s[1] || s[1] == s[0]))
		return 1;
	return s[0] && (strchr("#>`~<|=_ \t", s[0]) != NULL);
}

static void md_keeps_every_value_on_its_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < NHOSTILE; i++) {
		char *r = md(hostile[i]);
		if (strpbrk(r, "\n\r\x1b"))
			fail_msg("'%s' escaped to '%s' still breaks the line", hostile[i], r);
		assert_utf8(r);
		free(r);
	}
}

static void md_value_starts_no_block_and_holds_no_raw_html(void **state)
{
	(void)state;
	for (size_t i = 0; i < NHOSTILE; i++) {
		char *r = md(hostile[i]);
		if (starts_block(r))
			fail_msg("'%s' escaped to '%s' starts a block", hostile[i], r);
		if (strpbrk(r, "<>"))
			fail_msg("'%s' escaped to '%s' holds markup", hostile[i], r);
		free(r);
	}
}

static void md_escapes_inline_markup_and_shows_controls(void **state)
{
	(void)state;
	char *r = md("*a* [l](u) `c` |t| _u_ x\n# y\x1b[2J");
	assert_string_equal(r, "\\*a\\* \\[l\\](u) \\`c\\` \\|t\\| \\_u\\_ x\\n\\# y\\x1b\\[2J");
	free(r);
	r = md("\xff" "a\xC2\x9B" "b\xEF\xBF\xBF");
	assert_string_equal(r, "\\xffa\\u009bb\xEF\xBF\xBD");
	free(r);
}

static void md_leaves_names_and_versions_as_they_read(void **state)
{
	(void)state;
	static const char *const plain[] = {
		"torch.autograd.grad_mode.set_multithreading_enabled", "torch_npu 2.1.0.post3",
		"3.10.12", "Atlas A2 (910B3)", "支持验证", "-", "2.6.0+cpu",
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		char *r = md(plain[i]);
		if (strcmp(r, plain[i]) && strcmp(plain[i], "-"))
			fail_msg("'%s' became '%s'", plain[i], r);
		free(r);
	}
}

static void md_code_fence_outruns_every_backquote_run(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_escape_md_code("a``b", &b);
	assert_string_equal(ap_buf_str(&b), "```a``b```");
	ap_buf_reset(&b);
	ap_escape_md_code("`x", &b);
	assert_string_equal(ap_buf_str(&b), "`` `x ``");
	ap_buf_reset(&b);
	ap_escape_md_code("p\n# q\x1b", &b);
	assert_string_equal(ap_buf_str(&b), "`p\\n# q\\x1b`");
	ap_buf_reset(&b);
	ap_escape_md_code(NULL, &b);
	assert_string_equal(ap_buf_str(&b), "``");
	ap_buf_free(&b);
}

static void xml_opens_no_tag_and_stays_well_formed(void **state)
{
	(void)state;
	for (size_t i = 0; i < NHOSTILE; i++) {
		char *r = xml(hostile[i]);
		if (strpbrk(r, "<>\"'\x1b\r"))
			fail_msg("'%s' escaped to '%s' holds markup or a control", hostile[i], r);
		assert_utf8(r);
		free(r);
	}
}

static void xml_replaces_bad_utf8_and_controls_with_the_replacement_character(void **state)
{
	(void)state;
	char *r = xml("a\xff" "b\x1b" "c\xEF\xBF\xBE" "d\xC2\x85" "e\tf\ng");
	assert_string_equal(r, "a&#xFFFD;b&#xFFFD;c&#xFFFD;d&#xFFFD;e\tf\ng");
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(md_keeps_every_value_on_its_line),
		cmocka_unit_test(md_value_starts_no_block_and_holds_no_raw_html),
		cmocka_unit_test(md_escapes_inline_markup_and_shows_controls),
		cmocka_unit_test(md_leaves_names_and_versions_as_they_read),
		cmocka_unit_test(md_code_fence_outruns_every_backquote_run),
		cmocka_unit_test(xml_opens_no_tag_and_stays_well_formed),
		cmocka_unit_test(xml_replaces_bad_utf8_and_controls_with_the_replacement_character),
	};
	return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}
