/* test-html.c - unit tests for src/review/html.h, svg.h and png.h: the page,
 * the pictures and the palette, rendered from hand-made report models (the
 * renderers read the model only). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "review/html.h"
#include "review/png.h"
#include "review/svg.h"

/* Two environments, a2 (the reference, consistent) and a3 (unverified); a
 * probe that passed in a2 and failed in a3, a numeric check only a3 ran, and
 * a trace whose second step differs. */
static const char ap_model[] =
	"{\"target\": \"torch.x\", \"reference\": \"a2\","
	" \"conclusion\": {\"verdict\": \"consistent\", \"consistent\": [\"a2\"],"
	"   \"inconsistent\": [], \"unverified\": [\"a3\"]},"
	" \"matrix\": {\"columns\": ["
	"   {\"env\": \"a2\", \"label\": \"A2\", \"verdict\": \"consistent\", \"reference\": true},"
	"   {\"env\": \"a3\", \"label\": \"A3\", \"verdict\": \"unverified\", \"reference\": false}],"
	"  \"rows\": ["
	"   {\"kind\": \"probe\", \"name\": \"p1\", \"cells\": [{\"env\": \"a2\", \"status\": \"PASS\"},"
	"     {\"env\": \"a3\", \"status\": \"FAIL\", \"reason\": \"no\"}]},"
	"   {\"kind\": \"numeric\", \"name\": \"add/float32\", \"cells\": [{\"env\": \"a2\", \"status\": null},"
	"     {\"env\": \"a3\", \"status\": \"SOMETHING-NEW\"}]}]},"
	" \"traces\": [{\"kind\": \"probe\", \"check\": \"p1\", \"differing\": 1, \"steps\": ["
	"   {\"step\": \"s-agree\", \"differs\": false, \"values\": [{\"env\": \"a2\", \"ran\": true,"
	"     \"step\": \"s-agree\", \"value\": 1}, {\"env\": \"a3\", \"ran\": true, \"step\": \"s-agree\", \"value\": 1}]},"
	"   {\"step\": \"s-differ\", \"differs\": true, \"values\": [{\"env\": \"a2\", \"ran\": true,"
	"     \"step\": \"s-differ\", \"value\": true}, {\"env\": \"a3\", \"ran\": true, \"step\": \"s-differ\","
	"     \"value\": false}]}]}],"
	" \"environments\": [{\"name\": \"a2\", \"label\": \"A2\", \"verdict\": \"consistent\","
	"   \"found\": true, \"probes\": {\"passed\": 1, \"total\": 1}, \"exit_code\": 0, \"checks\": []},"
	"  {\"name\": \"a3\", \"label\": \"A3\", \"verdict\": \"unverified\", \"found\": true,"
	"   \"probes\": {\"passed\": 0, \"total\": 1}, \"exit_code\": 0, \"checks\": []}]}";

static json_t *model(void)
{
	json_error_t e;
	json_t *m = json_loads(ap_model, 0, &e);
	if (!m)
		fail_msg("model: %s", e.text);
	return m;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("'%s' not found in:\n%s", needle, hay);
}

/* The element that starts with open, up to its first '>', as a string. */
static void tag(const char *html, const char *open, char *out, size_t size)
{
	const char *p = strstr(html, open);
	if (!p)
		fail_msg("'%s' not found", open);
	size_t n = strcspn(p, ">");
	assert_true(n < size);
	memcpy(out, p, n);
	out[n] = '\0';
}

static void render(enum ap_lang l, struct ap_buf *out)
{
	json_t *m = model();
	ap_report_html(m, l, out);
	json_decref(m);
}

static void matrix_cells_take_the_class_of_their_status(void **state)
{
	struct ap_buf b = { 0 };
	(void)state;
	render(AP_LANG_EN, &b);
	const char *h = ap_buf_str(&b);
	assert_contains(h, "<td class=\"cell st-pass\" data-env=\"a2\" data-status=\"PASS\"");
	assert_contains(h, "<td class=\"cell st-fail\" data-env=\"a3\" data-status=\"FAIL\" title=\"no\"");
	/* a check of a new kind is a row like any other */
	assert_contains(h, "<tr data-kind=\"numeric\" data-check=\"add/float32\">");
	assert_contains(h, "<td class=\"cell st-none\" data-env=\"a2\" data-status=\"\"");
	assert_contains(h, "<td class=\"cell st-other\" data-env=\"a3\" data-status=\"SOMETHING-NEW\"");
	assert_contains(h, "<th data-env=\"a2\" class=\"ref\"");
	ap_buf_free(&b);
}

static void unverified_is_never_green(void **state)
{
	struct ap_buf b = { 0 };
	char th[512];
	(void)state;
	const struct ap_style *u = ap_verdict_style("unverified"), *c = ap_verdict_style("consistent");
	const struct ap_style *pass = ap_status_style("PASS");
	assert_string_equal(u->cls, "v-unverified");
	assert_string_not_equal(u->fill, c->fill);
	assert_string_not_equal(u->fill, pass->fill);
	assert_string_equal(ap_verdict_style("no-such-verdict")->cls, "v-other");
	assert_string_not_equal(ap_verdict_style("no-such-verdict")->fill, c->fill);
	render(AP_LANG_EN, &b);
	tag(ap_buf_str(&b), "<th data-env=\"a3\"", th, sizeof(th));
	assert_contains(strstr(ap_buf_str(&b), th), "<small class=\"v-unverified\">unverified</small>");
	ap_buf_free(&b);
}

static void differing_step_is_open_and_agreeing_step_folded(void **state)
{
	struct ap_buf b = { 0 };
	char el[512];
	(void)state;
	render(AP_LANG_EN, &b);
	const char *h = ap_buf_str(&b);
	tag(h, "<details class=\"step diff\" data-step=\"s-differ\"", el, sizeof(el));
	assert_non_null(strstr(el, " open"));
	tag(h, "<details class=\"step same\" data-step=\"s-agree\"", el, sizeof(el));
	assert_null(strstr(el, " open"));
	tag(h, "<details class=\"trace\" data-kind=\"probe\" data-check=\"p1\"", el, sizeof(el));
	assert_non_null(strstr(el, " open"));
	assert_contains(h, "<td class=\"diff\"><code>false</code></td>");
	ap_buf_free(&b);
}

static void headings_follow_the_language(void **state)
{
	struct ap_buf zh = { 0 }, en = { 0 };
	(void)state;
	render(AP_LANG_ZH, &zh);
	render(AP_LANG_EN, &en);
	assert_contains(ap_buf_str(&zh), "<html lang=\"zh-CN\">");
	assert_contains(ap_buf_str(&zh), "<h2>检查矩阵</h2>");
	assert_contains(ap_buf_str(&zh), "<h2>验证范围</h2>");
	assert_contains(ap_buf_str(&zh), "id=\"verdict\">结论: <strong>consistent</strong>");
	assert_contains(ap_buf_str(&en), "<html lang=\"en\">");
	assert_contains(ap_buf_str(&en), "<h2>Check matrix</h2>");
	assert_contains(ap_buf_str(&en), "<h2>Scope</h2>");
	ap_buf_free(&zh);
	ap_buf_free(&en);
}

static void page_loads_and_runs_nothing(void **state)
{
	struct ap_buf b = { 0 };
	(void)state;
	render(AP_LANG_ZH, &b);
	assert_contains(ap_buf_str(&b), "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"");
	assert_null(strstr(ap_buf_str(&b), "<script"));
	assert_null(strstr(ap_buf_str(&b), "src=\"http"));
	ap_buf_free(&b);
}

static void card_draws_the_verdict_in_its_colour(void **state)
{
	json_t *m = model();
	struct ap_buf b = { 0 };
	char want[128];
	(void)state;
	ap_svg_card(m, json_array_get(json_object_get(m, "environments"), 1), &b);
	snprintf(want, sizeof(want), "fill=\"%s\"", ap_verdict_style("unverified")->fill);
	assert_contains(ap_buf_str(&b), want);
	assert_contains(ap_buf_str(&b), ">verdict: unverified</text>");
	assert_null(strstr(ap_buf_str(&b), ap_verdict_style("consistent")->fill));
	ap_buf_free(&b);
	json_decref(m);
}

static void matrix_svg_has_a_cell_per_check_and_environment(void **state)
{
	json_t *m = model();
	struct ap_buf b = { 0 };
	(void)state;
	ap_svg_matrix(m, AP_LANG_EN, &b);
	const char *s = ap_buf_str(&b);
	assert_contains(s, "<rect class=\"st-pass\"");
	assert_contains(s, "<rect class=\"st-fail\"");
	assert_contains(s, "<rect class=\"st-none\"");
	assert_contains(s, "<rect class=\"st-other\"");
	assert_contains(s, ">reference</text>");
	ap_buf_free(&b);
	json_decref(m);
}

static void png_of_an_svg_has_its_size_and_text(void **state)
{
	static const char svg[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"30\">"
				  "<rect width=\"40\" height=\"30\" fill=\"#9a6700\"/></svg>";
	struct ap_buf png = { 0 }, err = { 0 };
	(void)state;
	assert_int_equal(ap_png_from_svg(svg, strlen(svg), "verdict: unverified", &png, &err), 0);
	assert_true(png.len > 33);
	assert_memory_equal(png.data, "\x89PNG\r\n\x1a\n", 8);
	/* IHDR: width and height, big-endian */
	assert_memory_equal(png.data + 16, "\0\0\0\x28\0\0\0\x1e", 8);
	assert_memory_equal(png.data + 37, "iTXtDescription", 15);
	assert_non_null(memmem(png.data, png.len, "verdict: unverified", 19));
	ap_buf_free(&png);
	ap_buf_free(&err);
}

static void png_of_what_is_no_svg_is_refused(void **state)
{
	struct ap_buf png = { 0 }, err = { 0 };
	(void)state;
	assert_int_equal(ap_png_from_svg("not svg", 7, NULL, &png, &err), -EINVAL);
	assert_true(err.len > 0);
	assert_int_equal(png.len, 0);
	ap_buf_reset(&err);
	static const char huge[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40000\" height=\"3\"/>";
	assert_int_equal(ap_png_from_svg(huge, strlen(huge), NULL, &png, &err), -EINVAL);
	assert_contains(ap_buf_str(&err), "40000");
	ap_buf_free(&png);
	ap_buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matrix_cells_take_the_class_of_their_status),
		cmocka_unit_test(unverified_is_never_green),
		cmocka_unit_test(differing_step_is_open_and_agreeing_step_folded),
		cmocka_unit_test(headings_follow_the_language),
		cmocka_unit_test(page_loads_and_runs_nothing),
		cmocka_unit_test(card_draws_the_verdict_in_its_colour),
		cmocka_unit_test(matrix_svg_has_a_cell_per_check_and_environment),
		cmocka_unit_test(png_of_an_svg_has_its_size_and_text),
		cmocka_unit_test(png_of_what_is_no_svg_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
