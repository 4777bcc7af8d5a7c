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
#if AP_PNG
#include <png.h>
#endif

#include "testutil.h"
#include "base/buf.h"
#include "review/html.h"
#include "review/png.h"
#include "review/svg.h"

/* Two environments, a2 (the reference, consistent) and a3 (unverified); a
 * probe that passed in a2 and failed in a3, a numeric check only a3 ran, and
 * a trace whose second step differs. */
static struct ap_bundle_facts ap_a2 = { .label = "A2", .verdict_word = "consistent",
	.verdict = AP_CONSISTENT, .found = 1, .probes_passed = 1, .probes_total = 1 };
static struct ap_bundle_facts ap_a3 = { .label = "A3", .verdict_word = "unverified",
	.verdict = AP_UNVERIFIED, .found = 1, .probes_passed = 0, .probes_total = 1 };
static struct ap_report_env ap_envs[] = { { .name = "a2", .b = &ap_a2 }, { .name = "a3", .b = &ap_a3 } };
static struct ap_report_column ap_cols[] = {
	{ "a2", "A2", "consistent", AP_CONSISTENT, 1 },
	{ "a3", "A3", "unverified", AP_UNVERIFIED, 0 } };
static struct ap_report_cell ap_probe_cells[] = {
	{ "a2", 1, AP_PASS, "PASS", NULL }, { "a3", 1, AP_FAIL, "FAIL", "no" } };
static struct ap_report_cell ap_numeric_cells[] = {
	{ "a2", 0, AP_STATUS_UNKNOWN, NULL, NULL },
	{ "a3", 1, AP_STATUS_UNKNOWN, "SOMETHING-NEW", NULL } };
static struct ap_report_row ap_rows[] = { { "probe", "p1", ap_probe_cells },
					  { "numeric", "add/float32", ap_numeric_cells } };
static struct ap_report_value ap_agree[] = {
	{ "a2", 1, "s-agree", NULL, "1", 0 }, { "a3", 1, "s-agree", NULL, "1", 0 } };
static struct ap_report_value ap_differ[] = {
	{ "a2", 1, "s-differ", NULL, "true", 0 }, { "a3", 1, "s-differ", NULL, "false", 1 } };
static struct ap_report_step ap_steps[] = { { "s-agree", 0, ap_agree, &ap_agree[0] },
					    { "s-differ", 1, ap_differ, &ap_differ[0] } };
static struct ap_report_trace ap_traces[] = { { "probe", "p1", 1, ap_steps, 2 } };
static const char *ap_ok[] = { "a2" }, *ap_unv[] = { "a3" };

static struct ap_report ap_model = {
	.target = "torch.x", .reference = "a2", .envs = ap_envs, .nenvs = 2,
	.conclusion = { AP_CONSISTENT, ap_ok, NULL, ap_unv, 1, 0, 1 },
	.columns = ap_cols, .rows = ap_rows, .nrows = 2, .traces = ap_traces, .ntraces = 1 };

static const struct ap_report *model(void)
{
	return &ap_model;
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
	ap_report_html(model(), l, out);
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
	const struct ap_style *u = ap_verdict_style(AP_UNVERIFIED), *c = ap_verdict_style(AP_CONSISTENT);
	const struct ap_style *pass = ap_status_style(AP_PASS);
	assert_string_equal(u->cls, "v-unverified");
	assert_string_not_equal(u->fill, c->fill);
	assert_string_not_equal(u->fill, pass->fill);
	assert_string_equal(ap_verdict_style(AP_VERDICT_UNKNOWN)->cls, "v-other");
	assert_string_not_equal(ap_verdict_style(AP_VERDICT_UNKNOWN)->fill, c->fill);
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
	const struct ap_report *m = model();
	struct ap_buf b = { 0 };
	char want[128];
	(void)state;
	ap_svg_card(m, &m->envs[1], &b);
	snprintf(want, sizeof(want), "fill=\"%s\"", ap_verdict_style(AP_UNVERIFIED)->fill);
	assert_contains(ap_buf_str(&b), want);
	assert_contains(ap_buf_str(&b), ">verdict: unverified</text>");
	assert_null(strstr(ap_buf_str(&b), ap_verdict_style(AP_CONSISTENT)->fill));
	ap_buf_free(&b);
}

static void matrix_svg_has_a_cell_per_check_and_environment(void **state)
{
	const struct ap_report *m = model();
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
}

static void png_of_an_svg_has_its_size_and_text(void **state)
{
	AP_PNG_SKIP();
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

/* The PNG's pixels as straight RGBA, decoded by libpng (its own reader,
 * not png.c's writer); *type is the PNG's colour type. */
#if AP_PNG
static unsigned char *png_pixels(const struct ap_buf *png, int *type)
{
	png_image im = { .version = PNG_IMAGE_VERSION };
	assert_true(png_image_begin_read_from_memory(&im, png->data, png->len));
	*type = im.format & PNG_FORMAT_FLAG_ALPHA ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB;
	im.format = PNG_FORMAT_RGBA;
	unsigned char *px = malloc(PNG_IMAGE_SIZE(im));
	assert_non_null(px);
	assert_true(png_image_finish_read(&im, NULL, px, 0, NULL));
	return px;
}

#endif

static void png_pixels_are_the_svgs_colours(void **state)
{
	AP_PNG_SKIP();
#if AP_PNG
	static const char opaque[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"2\">"
				     "<rect width=\"4\" height=\"2\" fill=\"#9a6700\"/></svg>";
	/* Half-transparent red: cairo keeps it premultiplied (128, 0, 0, 128);
	 * a PNG's alpha is straight, so the red is 255 again. */
	static const char half[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"2\">"
				   "<rect width=\"4\" height=\"2\" fill=\"#ff0000\" fill-opacity=\"0.5\"/>"
				   "<rect width=\"1\" height=\"1\" fill=\"#1a7f37\"/></svg>";
	struct ap_buf png = { 0 }, err = { 0 };
	int type;
	(void)state;
	assert_int_equal(ap_png_from_svg(opaque, strlen(opaque), NULL, &png, &err), 0);
	unsigned char *px = png_pixels(&png, &type);
	assert_int_equal(type, PNG_COLOR_TYPE_RGB);
	assert_memory_equal(px + 4 * 7, "\x9a\x67\x00\xff", 4);
	free(px);
	ap_buf_reset(&png);
	assert_int_equal(ap_png_from_svg(half, strlen(half), NULL, &png, &err), 0);
	px = png_pixels(&png, &type);
	assert_int_equal(type, PNG_COLOR_TYPE_RGBA);
	assert_memory_equal(px, "\x1a\x7f\x37\xff", 4);
	assert_int_equal(px[4 * 7 + 0], 255);
	assert_int_equal(px[4 * 7 + 1], 0);
	assert_in_range(px[4 * 7 + 3], 127, 128);
	free(px);
	ap_buf_free(&png);
	ap_buf_free(&err);
#else
	(void)state;
#endif
}

static void png_of_what_is_no_svg_is_refused(void **state)
{
	AP_PNG_SKIP();
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
		cmocka_unit_test(png_pixels_are_the_svgs_colours),
		cmocka_unit_test(png_of_what_is_no_svg_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
