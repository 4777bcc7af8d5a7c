/* test-docs.c - unit tests for src/docs.h: a backend's native API support
 * pages read in their table, list and line formats, unreadable entries kept
 * with file:line, damaged input survived, lookup with the class fallback, and
 * an entry written in the list format that reads back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "review/docs.h"
#include "base/fsutil.h"

/* The real pages, relative to the repository root the tests run from. */
#ifndef AP_SHARED
#define AP_SHARED "tests/data/backend-docs"
#endif
#define TABLE_PAGE "table-format-2-13-0/torch-autograd.md"
#define LIST_PAGE "list-format-2-10-0/torch-autograd.md"
#define FFT_PAGE "oneline-format-2-7-1/torch-fft.md"
#define OPTIM_PAGE "oneline-format-2-7-1/torch-optim.md"
#define LINALG_PAGE "table-format-oldest/torch-linalg.md"
#define SPECIAL_PAGE "table-format-oldest/torch-special.md"
#define CONFIG_PAGE "table-format-oldest/torch-__config__.md"

#define A2 "Atlas A2 训练系列产品"
#define A3 "Atlas A3 训练系列产品"
#define DT "Ascend 950DT"

/* ---- helpers ---- */

static char *slurp(const char *path, size_t *len)
{
	struct ap_buf b = { 0 };
	char chunk[4096];
	size_t k;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		ap_buf_add(&b, chunk, k);
	fclose(f);
	ap_buf_add(&b, "", 0);
	*len = b.len;
	return b.data;
}

/* The text of a real page; skips the test when the shared data is absent. */
static char *real_page(const char *rel, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", AP_SHARED, rel);
	char *text = slurp(path, len);
	if (!text)
		skip();
	return text;
}

/* The tests read entries as report.json writes them (ap_docs_entry_json()):
 * the struct through its one serializer. */
static json_t *entries_view(const struct ap_docs_entries *es)
{
	json_t *a = json_array();
	for (size_t i = 0; i < es->n; i++)
		json_array_append_new(a, ap_docs_entry_json(&es->v[i]));
	return a;
}

static json_t *parse_view(const char *text, size_t len, const char *name)
{
	struct ap_docs_entries es = { 0 };
	assert_int_equal(ap_docs_parse(text, len, name, &es), 0);
	json_t *a = entries_view(&es);
	ap_docs_entries_free(&es);
	return a;
}

/* The pages as {"file", "entries": N, "formats": {format: N}}. */
static json_t *pages_view(const struct ap_docs_pages *ps)
{
	json_t *a = json_array();
	for (size_t i = 0; i < ps->n; i++) {
		const struct ap_docs_page *p = &ps->v[i];
		json_t *f = json_object();
		for (size_t k = 0; k < p->nformats; k++)
			json_object_set_new(f, ap_docs_format_name(p->formats[k]),
					    json_integer((json_int_t)p->counts[k]));
		json_array_append_new(a, json_pack("{s:s, s:I, s:o, s:s*}", "file", p->file, "entries",
						   (json_int_t)p->entries, "formats", f, "not_read",
						   p->not_read));
	}
	return a;
}

/* ap_docs_load_pages() as views; NULL when it fails. */
static json_t *load_pages_view(const char *dir, json_t **pages, struct ap_buf *err)
{
	struct ap_docs_entries es;
	struct ap_docs_pages ps;
	if (ap_docs_load_pages(dir, &es, pages ? &ps : NULL, err))
		return NULL;
	json_t *a = entries_view(&es);
	if (pages) {
		*pages = pages_view(&ps);
		ap_docs_pages_free(&ps);
	}
	ap_docs_entries_free(&es);
	return a;
}

static json_t *load_view(const char *dir, struct ap_buf *err)
{
	struct ap_docs_entries es;
	if (ap_docs_load(dir, &es, err))
		return NULL;
	json_t *a = entries_view(&es);
	ap_docs_entries_free(&es);
	return a;
}

static json_t *parse(const char *text)
{
	json_t *a = parse_view(text, strlen(text), "t.md");
	assert_non_null(a);
	return a;
}

static const char *str(const json_t *e, const char *key)
{
	return json_string_value(json_object_get(e, key));
}

static int line_of(const json_t *e)
{
	return (int)json_integer_value(json_object_get(e, "line"));
}

/* 1 or 0 as the entry states product's support, -1 when it names no such product. */
static int supported(const json_t *e, const char *product)
{
	size_t i;
	const json_t *p;
	json_array_foreach(json_object_get(e, "products"), i, p)
		if (!strcmp(str(p, "product"), product))
			return json_is_true(json_object_get(p, "supported"));
	return -1;
}

static size_t nproducts(const json_t *e)
{
	return json_array_size(json_object_get(e, "products"));
}

/* The first entry for api, asserting there is one (ap_docs_find() is
 * tested on the structs themselves). */
static const json_t *entry(const json_t *a, const char *api)
{
	size_t i;
	const json_t *e;
	json_array_foreach(a, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "api")), api))
			return e;
	fail_msg("no entry for %s", api);
	return NULL;
}

static size_t count(const json_t *a, const char *key, const char *value)
{
	size_t i, n = 0;
	const json_t *e;
	json_array_foreach(a, i, e)
		n += !strcmp(str(e, key), value);
	return n;
}

/* Every entry has every field, with the type and the values the contract allows. */
static void assert_well_formed(const json_t *a, int nlines)
{
	size_t i, k;
	const json_t *e, *p;
	assert_true(json_is_array(a));
	json_array_foreach(a, i, e) {
		assert_non_null(str(e, "api"));
		assert_non_null(str(e, "file"));
		assert_true(line_of(e) >= 1 && line_of(e) <= nlines);
		assert_non_null(strstr("function class method row", str(e, "kind")));
		assert_non_null(strstr("table list line api-table unreadable", str(e, "format")));
		assert_true(json_is_null(json_object_get(e, "doc_url")) || str(e, "doc_url"));
		assert_true(json_is_null(json_object_get(e, "limits")) || str(e, "limits"));
		assert_true(json_is_boolean(json_object_get(e, "all_products")));
		assert_true(json_is_boolean(json_object_get(e, "others")) ||
			    json_is_null(json_object_get(e, "others")));
		assert_true(json_is_array(json_object_get(e, "products")));
		json_array_foreach(json_object_get(e, "products"), k, p) {
			assert_non_null(str(p, "product"));
			assert_true(json_is_boolean(json_object_get(p, "supported")));
		}
		if (!strcmp(str(e, "format"), "unreadable"))
			assert_true(json_is_null(json_object_get(e, "others")));
		if (!strcmp(str(e, "format"), "unreadable"))
			assert_int_equal(nproducts(e), 0);
	}
}

static int lines_in(const char *text, size_t len)
{
	int n = 1;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

/* ---- the table page (2.13.0) ---- */

static void table_page_has_every_heading_and_method_as_an_entry(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(TABLE_PAGE, &len);
	json_t *a = parse_view(text, len, TABLE_PAGE);
	assert_non_null(a);
	assert_well_formed(a, lines_in(text, len));
	/* 33 `###` headings and 15 `> <font>` methods, no `##` section */
	assert_int_equal(json_array_size(a), 48);
	assert_int_equal(count(a, "kind", "class"), 4);
	assert_int_equal(count(a, "kind", "method"), 15);
	assert_int_equal(count(a, "format", "table"), 46);
	assert_int_equal(count(a, "api", "Functional higher level API"), 0);
	assert_string_equal(str(json_array_get(a, 0), "api"), "torch.autograd.forward_ad.dual_level");
	assert_string_equal(str(json_array_get(a, 0), "file"), TABLE_PAGE);
	json_decref(a);
	free(text);
}

static void table_page_reads_make_dual_with_link_support_and_limits(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(TABLE_PAGE, &len);
	json_t *a = parse_view(text, len, TABLE_PAGE);
	const json_t *e = entry(a, "torch.autograd.forward_ad.make_dual");
	assert_string_equal(str(e, "kind"), "function");
	assert_string_equal(str(e, "format"), "table");
	assert_int_equal(line_of(e), 41);
	assert_string_equal(str(e, "doc_url"),
			    "https://pytorch.org/docs/2.13/generated/"
			    "torch.autograd.forward_ad.make_dual.html");
	assert_int_equal(nproducts(e), 3);
	assert_int_equal(supported(e, A2), 1);
	assert_int_equal(supported(e, A3), 1);
	assert_int_equal(supported(e, DT), 0);
	assert_false(json_is_true(json_object_get(e, "all_products")));
	assert_string_equal(str(e, "limits"), "`input`仅支持fp32");
	assert_true(json_is_null(json_object_get(e, "others"))); /* a table names its products */
	assert_non_null(strstr(str(e, "limits"), "仅支持fp32"));
	json_decref(a);
	free(text);
}

static void table_page_method_is_class_api_and_name_not_the_link_text(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(TABLE_PAGE, &len);
	json_t *a = parse_view(text, len, TABLE_PAGE);
	/* its link reads [FunctionCtx.mark_dirty](...) */
	const json_t *e = entry(a, "torch.autograd.FunctionCtx.mark_dirty");
	assert_string_equal(str(e, "kind"), "method");
	assert_int_equal(line_of(e), 83);
	assert_string_equal(str(e, "format"), "table");
	assert_int_equal(supported(e, DT), 0);
	e = entry(a, "torch.autograd.profiler.KinetoStepTracker.current_step");
	assert_int_equal(line_of(e), 667);
	assert_int_equal(supported(e, A3), 1);
	json_decref(a);
	free(text);
}

static void table_page_class_without_its_own_support_is_unreadable_at_its_line(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(TABLE_PAGE, &len);
	json_t *a = parse_view(text, len, TABLE_PAGE);
	assert_int_equal(count(a, "format", "unreadable"), 2);
	const json_t *e = entry(a, "torch.autograd.FunctionCtx");
	assert_string_equal(str(e, "kind"), "class");
	assert_string_equal(str(e, "format"), "unreadable");
	assert_int_equal(line_of(e), 79);
	assert_int_equal(line_of(entry(a, "torch.autograd.Node")), 149);
	e = entry(a, "torch.autograd.Function");
	assert_string_equal(str(e, "kind"), "class");
	assert_string_equal(str(e, "format"), "table");
	assert_int_equal(supported(e, DT), 1);
	json_decref(a);
	free(text);
}

/* A mark spelled as an HTML entity (the 2.12 pages' torch.nn entries) is
 * the mark the rendered page shows; any other entity is no mark. */
static void table_marks_spelled_as_html_entities_are_read(void **state)
{
	(void)state;
	json_t *a = parse("### torch.m.f\n\n**支持情况**：\n\n| 硬件 | 是否支持 |\n| ---- | :----: |\n"
			  "| <term>A</term> | &#10004; |\n| <term>B</term> | &#x2718; |\n\n"
			  "### torch.m.g\n\n**支持情况**：\n\n| 硬件 | 是否支持 |\n| ---- | :----: |\n"
			  "| <term>A</term> | &#10003; |\n");
	const json_t *f = entry(a, "torch.m.f");
	assert_string_equal(str(f, "format"), "table");
	assert_int_equal(supported(f, "A"), 1);
	assert_int_equal(supported(f, "B"), 0);
	assert_string_equal(str(entry(a, "torch.m.g"), "format"), "unreadable");
	json_decref(a);
}

static void table_page_limits_list_is_joined_and_text_before_code_kept(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(TABLE_PAGE, &len);
	json_t *a = parse_view(text, len, TABLE_PAGE);
	assert_string_equal(str(entry(a, "torch.autograd.backward"), "limits"),
			    "`input`仅支持bf16，fp16，fp32，fp64; 不支持稀疏张量");
	assert_string_equal(str(entry(a, "torch.autograd.profiler.profile"), "limits"),
			    "采集NPU上的profiling数据时，“`use_device`”需设置为“npu”，例如：");
	assert_true(json_is_null(json_object_get(entry(a, "torch.autograd.grad"), "limits")));
	json_decref(a);
	free(text);
}

/* ---- the list page (2.10.0) ---- */

static void list_page_reads_backward_supported_everywhere_with_limits(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(LIST_PAGE, &len);
	json_t *a = parse_view(text, len, LIST_PAGE);
	assert_non_null(a);
	assert_well_formed(a, lines_in(text, len));
	/* 8 `###` headings and 2 methods, all readable */
	assert_int_equal(json_array_size(a), 10);
	assert_int_equal(count(a, "format", "list"), 10);
	const json_t *e = entry(a, "torch.autograd.backward");
	assert_int_equal(line_of(e), 8);
	assert_string_equal(str(e, "kind"), "function");
	assert_true(json_is_null(json_object_get(e, "doc_url")));
	assert_int_equal(nproducts(e), 3);
	assert_int_equal(supported(e, A2), 1);
	assert_int_equal(supported(e, A3), 1);
	assert_int_equal(supported(e, DT), 1);
	assert_string_equal(str(e, "limits"), "`tensors`仅支持bf16，fp16，fp32，fp64; 不支持稀疏张量");
	assert_string_equal(str(entry(a, "torch.autograd.forward_ad.make_dual"), "limits"),
			    "`tensor`仅支持fp32");
	json_decref(a);
	free(text);
}

static void list_page_reads_function_class_and_its_methods(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(LIST_PAGE, &len);
	json_t *a = parse_view(text, len, LIST_PAGE);
	const json_t *e = entry(a, "torch.autograd.Function");
	assert_string_equal(str(e, "kind"), "class");
	assert_int_equal(line_of(e), 55);
	assert_int_equal(supported(e, DT), 1);
	e = entry(a, "torch.autograd.Function.forward");
	assert_string_equal(str(e, "kind"), "method");
	assert_string_equal(str(e, "format"), "list");
	assert_int_equal(line_of(e), 65);
	assert_int_equal(supported(e, A2), 1);
	assert_int_equal(supported(e, DT), 0);
	assert_int_equal(line_of(entry(a, "torch.autograd.Function.backward")), 77);
	e = entry(a, "torch.autograd.profiler.emit_nvtx");
	assert_string_equal(str(e, "kind"), "class");
	assert_int_equal(supported(e, A2), 0);
	assert_int_equal(supported(e, DT), 0);
	/* after the `## Debugging` section the heading is no method of Function */
	assert_string_equal(str(json_array_get(a, 9), "api"),
			    "torch.autograd.grad_mode.set_multithreading_enabled");
	json_decref(a);
	free(text);
}

/* ---- a directory of pages ---- */

static void load_reads_every_real_page_sorted_with_relative_names(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	struct stat st;
	json_t *pages = NULL;
	if (stat(AP_SHARED, &st))
		skip();
	json_t *a = load_pages_view(AP_SHARED, &pages, &err);
	assert_non_null(a);
	assert_int_equal(err.len, 0);
	/* 10 + 10 (one-line) + 48 + 11 (API tables) */
	assert_int_equal(json_array_size(a), 79);
	assert_string_equal(str(json_array_get(a, 0), "file"), LIST_PAGE);
	assert_string_equal(str(json_array_get(a, 10), "file"), FFT_PAGE);
	assert_string_equal(str(json_array_get(a, 20), "file"), TABLE_PAGE);
	assert_string_equal(str(json_array_get(a, 68), "file"), CONFIG_PAGE);
	assert_int_equal(count(a, "file", "README.md"), 0);
	assert_int_equal(count(a, "format", "unreadable"), 2);
	/* the README is a page too, in no format: listed, with no entries */
	assert_int_equal(json_array_size(pages), 8);
	char *s = json_dumps(json_array_get(pages, 0), JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"entries\":0,\"file\":\"README.md\",\"formats\":{}}");
	free(s);
	s = json_dumps(json_array_get(pages, 7), JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"entries\":4,\"file\":\"" SPECIAL_PAGE "\",\"formats\":{\"api-table\":4}}");
	free(s);
	json_decref(pages);
	json_decref(a);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(ap_write_atomic(path, text, strlen(text)), 0);
}

static void load_walks_subdirectories_and_reads_only_md_files(void **state)
{
	(void)state;
	char dir[256], sub[300];
	const char *tmp = getenv("TMPDIR");
	struct ap_buf err = { 0 };
	snprintf(dir, sizeof(dir), "%s/test-docs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/b/c", dir);
	assert_int_equal(ap_mkdirs(sub), 0);
	write_file(dir, "b/c/deep.md", "### b.deep\n**是否支持**：是\n");
	write_file(dir, "a.md", "# a\n\n### a.one\n**是否支持**：否\n");
	write_file(dir, "b/notes.txt", "### not.a.page\n**是否支持**：是\n");
	write_file(dir, "README.md", "# only prose\n");
	json_t *a = load_view(dir, &err);
	assert_non_null(a);
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(str(json_array_get(a, 0), "file"), "a.md");
	assert_int_equal(line_of(json_array_get(a, 0)), 3);
	assert_string_equal(str(json_array_get(a, 1), "file"), "b/c/deep.md");
	assert_string_equal(str(json_array_get(a, 1), "api"), "b.deep");
	json_decref(a);
	assert_int_equal(ap_rm_tree(dir), 0);
}

static void load_of_a_missing_directory_fails_naming_it(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	assert_null(load_view("/nonexistent/apiparity-docs", &err));
	assert_non_null(strstr(ap_buf_str(&err), "/nonexistent/apiparity-docs"));
	assert_non_null(strstr(ap_buf_str(&err), strerror(ENOENT)));
	ap_buf_free(&err);
}

/* ---- the line format ---- */

static const char line_page[] =
	"# torch.x\n"                                            /* 1 */
	"\n"
	"### torch.x.yes\n"                                      /* 3 */
	"**是否支持**：是\n"
	"**限制与说明**：仅支持fp32\n"                          /* 5 */
	"### torch.x.except_one\n"                               /* 6 */
	"**是否支持**：是，暂不支持<term>Ascend 950DT</term>\n"
	"### torch.x.except_two\n"                               /* 8 */
	"**是否支持**：是，暂不支持<term>A</term>、<term>B</term>\n"
	"### torch.x.no\n"                                       /* 10 */
	"**是否支持**：否\n";

static void line_format_yes_is_all_products_and_exceptions_are_unsupported(void **state)
{
	(void)state;
	json_t *a = parse(line_page);
	assert_well_formed(a, 11);
	assert_int_equal(json_array_size(a), 4);
	assert_int_equal(count(a, "format", "line"), 4);
	const json_t *e = entry(a, "torch.x.yes");
	assert_int_equal(line_of(e), 3);
	assert_true(json_is_true(json_object_get(e, "all_products")));
	assert_int_equal(nproducts(e), 0);
	assert_string_equal(str(e, "limits"), "仅支持fp32");
	e = entry(a, "torch.x.except_one");
	assert_int_equal(line_of(e), 6);
	assert_false(json_is_true(json_object_get(e, "all_products")));
	assert_int_equal(nproducts(e), 1);
	assert_int_equal(supported(e, DT), 0);
	e = entry(a, "torch.x.except_two");
	assert_int_equal(nproducts(e), 2);
	assert_int_equal(supported(e, "A"), 0);
	assert_int_equal(supported(e, "B"), 0);
	e = entry(a, "torch.x.no");
	assert_int_equal(line_of(e), 10);
	assert_false(json_is_true(json_object_get(e, "all_products")));
	assert_int_equal(nproducts(e), 0);
	assert_string_equal(str(e, "format"), "line");
	json_decref(a);
}

/* ---- the one-line pages (2.7.1 variant) ---- */

static void oneline_page_reads_yes_no_and_named_exceptions_at_their_lines(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(FFT_PAGE, &len);
	json_t *a = parse_view(text, len, FFT_PAGE);
	assert_non_null(a);
	assert_well_formed(a, lines_in(text, len));
	assert_int_equal(json_array_size(a), 5);
	assert_int_equal(count(a, "format", "line"), 5);
	const json_t *e = entry(a, "torch.fft.fft");
	assert_int_equal(line_of(e), 13);
	assert_string_equal(str(e, "kind"), "function");
	assert_true(json_is_true(json_object_get(e, "all_products")));
	assert_int_equal(nproducts(e), 0);
	assert_string_equal(str(e, "doc_url"), "https://pytorch.org/docs/2.7/generated/torch.fft.fft.html");
	assert_string_equal(str(e, "limits"), "支持fp32，complex64");
	e = entry(a, "torch.fft.rfftn");
	assert_int_equal(line_of(e), 25);
	assert_false(json_is_true(json_object_get(e, "all_products")));
	/* every product but Ascend 950DT */
	assert_true(json_is_true(json_object_get(e, "others")));
	assert_int_equal(nproducts(e), 1);
	assert_int_equal(supported(e, DT), 0);
	assert_string_equal(str(e, "limits"), "支持fp32; 支持1-8维");
	e = entry(a, "torch.fft.hfft2");
	assert_int_equal(line_of(e), 40);
	assert_false(json_is_true(json_object_get(e, "all_products")));
	assert_true(json_is_false(json_object_get(e, "others")));
	assert_int_equal(nproducts(e), 0);
	assert_true(json_is_null(json_object_get(e, "limits")));
	e = entry(a, "torch.fft.fftfreq");
	assert_int_equal(line_of(e), 52);
	assert_int_equal(nproducts(e), 2);
	assert_int_equal(supported(e, A2), 0);
	assert_int_equal(supported(e, DT), 0);
	assert_int_equal(line_of(entry(a, "torch.fft.fftshift")), 62);
	json_decref(a);
	free(text);
}

static void oneline_page_class_tag_and_methods(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(OPTIM_PAGE, &len);
	json_t *a = parse_view(text, len, OPTIM_PAGE);
	assert_non_null(a);
	assert_well_formed(a, lines_in(text, len));
	assert_int_equal(json_array_size(a), 5);
	assert_int_equal(count(a, "kind", "class"), 3);
	assert_int_equal(count(a, "format", "line"), 5);
	/* `### _`class`_ torch.optim.Optimizer`: the tag is no part of the name */
	const json_t *e = entry(a, "torch.optim.Optimizer");
	assert_int_equal(line_of(e), 12);
	assert_true(json_is_true(json_object_get(e, "all_products")));
	e = entry(a, "torch.optim.Optimizer.step");
	assert_string_equal(str(e, "kind"), "method");
	assert_int_equal(line_of(e), 20);
	assert_int_equal(supported(e, DT), 0);
	assert_string_equal(str(e, "doc_url"),
			    "https://pytorch.org/docs/2.7/generated/torch.optim.Optimizer.step.html");
	assert_int_equal(line_of(entry(a, "torch.optim.Optimizer.zero_grad")), 30);
	e = entry(a, "torch.optim.SGD");
	assert_string_equal(str(e, "kind"), "class");
	assert_int_equal(line_of(e), 42);
	assert_string_equal(str(e, "limits"), "支持fp16，fp32");
	e = entry(a, "torch.optim.LBFGS");
	assert_int_equal(line_of(e), 54);
	assert_false(json_is_true(json_object_get(e, "all_products")));
	assert_int_equal(nproducts(e), 0);
	json_decref(a);
	free(text);
}

/* ---- the oldest pages: an API table ---- */

static void api_table_rows_are_entries_at_their_lines(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(LINALG_PAGE, &len);
	json_t *a = parse_view(text, len, LINALG_PAGE);
	assert_non_null(a);
	assert_well_formed(a, lines_in(text, len));
	assert_int_equal(json_array_size(a), 5);
	assert_int_equal(count(a, "format", "api-table"), 5);
	assert_int_equal(count(a, "kind", "row"), 5);
	/* a linked name: the link text is the api, the target its doc_url */
	const json_t *e = entry(a, "torch.linalg.cholesky");
	assert_int_equal(line_of(e), 8);
	assert_string_equal(str(e, "doc_url"),
			    "https://pytorch.org/docs/2.1/generated/torch.linalg.cholesky.html");
	assert_false(json_is_true(json_object_get(e, "all_products")));
	assert_int_equal(nproducts(e), 1);
	assert_int_equal(supported(e, DT), 0);
	assert_string_equal(str(e, "limits"), "支持fp32");
	assert_true(json_is_true(json_object_get(e, "others")));
	e = entry(a, "torch.linalg.norm");
	assert_int_equal(line_of(e), 9);
	assert_true(json_is_true(json_object_get(e, "all_products")));
	assert_int_equal(nproducts(e), 0);
	assert_true(json_is_null(json_object_get(entry(a, "torch.linalg.vector_norm"), "limits")));
	e = entry(a, "torch.linalg.matmul");
	assert_int_equal(line_of(e), 11);
	assert_string_equal(str(e, "limits"), "支持fp16，fp32; 输入最大支持6维");
	e = entry(a, "torch.linalg.ldl_factor");
	assert_int_equal(line_of(e), 12);
	assert_true(json_is_false(json_object_get(e, "others")));
	assert_false(json_is_true(json_object_get(e, "all_products")));
	assert_int_equal(nproducts(e), 0);
	json_decref(a);
	free(text);
}

static void api_table_with_blanks_and_escaped_names(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(SPECIAL_PAGE, &len);
	json_t *a = parse_view(text, len, SPECIAL_PAGE);
	assert_non_null(a);
	assert_int_equal(json_array_size(a), 4);
	const json_t *e = entry(a, "torch.special.erf");
	assert_int_equal(line_of(e), 8);
	assert_true(json_is_true(json_object_get(e, "all_products")));
	assert_true(json_is_null(json_object_get(e, "limits")));
	assert_true(json_is_null(json_object_get(e, "doc_url")));
	assert_string_equal(str(entry(a, "torch.special.expit"), "limits"), "支持fp16，fp32");
	e = entry(a, "torch.special.i0");
	assert_int_equal(line_of(e), 10);
	assert_false(json_is_true(json_object_get(e, "all_products")));
	/* the name as written: the audit drops the escapes as a reader would */
	assert_int_equal(line_of(entry(a, "torch.special.log\\_softmax")), 11);
	json_decref(a);
	free(text);
	text = real_page(CONFIG_PAGE, &len);
	a = parse_view(text, len, CONFIG_PAGE);
	assert_int_equal(json_array_size(a), 2);
	assert_int_equal(line_of(entry(a, "torch.\\_\\_config\\_\\_.show")), 8);
	assert_int_equal(count(a, "format", "api-table"), 2);
	json_decref(a);
	free(text);
}

static const char table_bad_page[] =
	"# torch.x\n"                                             /* 1 */
	"\n"
	"| 序号 | API名称 | 是否支持 | 限制与说明 |\n"
	"| -- | -- | -- | -- |\n"
	"| 1 | torch.x.ok | 是 | - |\n"                         /* 5 */
	"| 2 | torch.x.partly | 部分支持 | - |\n"                 /* 6 */
	"| 3 | torch.x.short | 是 |\n"                           /* 7 */
	"| 4 |  | 是 | - |\n"                                    /* 8 */
	"| 5 | torch.x.check | ✔ | - |\n"                        /* 9 */
	"| 6 | torch.x.open_break | 是<br>暂不支持 | - |\n"      /* 10 */
	"| 7 | torch.x.pipe | 否 | <br>a \\| b<br>c |\n"         /* 11 */
	"\n"
	"### torch.x.heading\n"                                   /* 13 */
	"**是否支持**：是\n"
	"\n"
	"|API名称|是否支持|\n"                                    /* 16 */
	"|torch.x.no_rule|是|\n"                                  /* 17 */
	"\n"
	"|API名称|是否支持|\n"
	"|:--|:--:|\n"
	"|torch.x.after|是<br/>暂不支持<term>A</term>、<term>B</term>|\n" /* 21 */
	"> <font size=\"3\">stray()</font>\n";                     /* 22 */

static void api_table_rows_it_cannot_read_are_unreadable_at_their_lines(void **state)
{
	(void)state;
	json_t *a = parse(table_bad_page);
	assert_well_formed(a, 23);
	static const struct {
		const char *api;
		int line;
	} bad[] = {
		{ "torch.x.partly", 6 }, { "torch.x.short", 7 }, { "", 8 },
		{ "torch.x.check", 9 },  { "torch.x.open_break", 10 }, { "torch.x.no_rule", 17 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const json_t *e = entry(a, bad[i].api);
		assert_string_equal(str(e, "format"), "unreadable");
		assert_string_equal(str(e, "kind"), "row");
		assert_int_equal(line_of(e), bad[i].line);
		assert_false(json_is_true(json_object_get(e, "all_products")));
	}
	/* a 序号 column is left unread; an escaped pipe stays in its cell; a
	 * break that opens a limits cell opens no limit */
	const json_t *e = entry(a, "torch.x.ok");
	assert_int_equal(line_of(e), 5);
	assert_string_equal(str(e, "format"), "api-table");
	e = entry(a, "torch.x.pipe");
	assert_string_equal(str(e, "format"), "api-table");
	assert_string_equal(str(e, "limits"), "a \\| b; c");
	assert_int_equal(line_of(entry(a, "torch.x.heading")), 13);
	e = entry(a, "torch.x.after");
	assert_int_equal(line_of(e), 21);
	assert_int_equal(nproducts(e), 2);
	assert_int_equal(supported(e, "B"), 0);
	/* a sub-entry after a table hangs on no heading of a page above */
	e = entry(a, "stray");
	assert_string_equal(str(e, "kind"), "method");
	assert_int_equal(json_array_size(a), 11);
	json_decref(a);
}


static void load_pages_says_which_formats_each_page_is_in(void **state)
{
	(void)state;
	char dir[256];
	const char *tmp = getenv("TMPDIR");
	struct ap_buf err = { 0 };
	json_t *pages = NULL;
	snprintf(dir, sizeof(dir), "%s/test-docs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	write_file(dir, "a.md", table_bad_page);
	write_file(dir, "b.md", line_page);
	/* the 1.8.1 pages' table: no 是否支持 column, so no format of ours */
	write_file(dir, "c.md", "| 序号 | API名称 | 支持情况 |\n| -- | -- | -- |\n| 1 | torch.abs | |\n");
	json_t *a = load_pages_view(dir, &pages, &err);
	assert_non_null(a);
	assert_int_equal(json_array_size(pages), 3);
	char *s = json_dumps(pages, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "[{\"entries\":11,\"file\":\"a.md\",\"formats\":"
			       "{\"api-table\":3,\"line\":1,\"unreadable\":7}},"
			       "{\"entries\":4,\"file\":\"b.md\",\"formats\":{\"line\":4}},"
			       "{\"entries\":0,\"file\":\"c.md\",\"formats\":{}}]");
	free(s);
	json_decref(pages);
	json_decref(a);
	assert_int_equal(ap_rm_tree(dir), 0);
}

/* The audit stays inside its folder and reads pages of a page's size: a
 * link (to a page outside, to a device) and a page of 50 MB are listed as
 * not read, and the folder's own pages are read all the same. */
static void pages_outside_the_folder_or_too_large_are_not_read(void **state)
{
	(void)state;
	char dir[256], path[400];
	const char *tmp = getenv("TMPDIR");
	struct ap_buf err = { 0 };
	json_t *pages = NULL;
	snprintf(dir, sizeof(dir), "%s/test-docs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	write_file(dir, "b.md", line_page);
	snprintf(path, sizeof(path), "%s/out.md", dir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	snprintf(path, sizeof(path), "%s/zero.md", dir);
	assert_int_equal(symlink("/dev/zero", path), 0);
	snprintf(path, sizeof(path), "%s/big.md", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(ftruncate(fileno(fp), 50 << 20), 0);
	assert_int_equal(fclose(fp), 0);
	json_t *a = load_pages_view(dir, &pages, &err);
	assert_non_null(a);
	char *s = json_dumps(pages, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "[{\"entries\":4,\"file\":\"b.md\",\"formats\":{\"line\":4}},"
			       "{\"entries\":0,\"file\":\"big.md\",\"formats\":{},\"not_read\":"
			       "\"not read: larger than 8 MiB, which no page is\"},"
			       "{\"entries\":0,\"file\":\"out.md\",\"formats\":{},\"not_read\":"
			       "\"not read: not a regular file of the folder (a link, a device ...)\"},"
			       "{\"entries\":0,\"file\":\"zero.md\",\"formats\":{},\"not_read\":"
			       "\"not read: not a regular file of the folder (a link, a device ...)\"}]");
	assert_int_equal(json_array_size(a), 4);
	free(s);
	json_decref(pages);
	json_decref(a);
	assert_int_equal(ap_rm_tree(dir), 0);
}

/* ---- what cannot be read ---- */

static const char bad_page[] =
	"### torch.x.no_marker\n"                                /* 1 */
	"**原生文档**：[torch.x.no_marker](https://x/no_marker)\n"
	"\n"
	"### torch.x.odd_cell\n"                                 /* 4 */
	"**支持情况**：\n"
	"\n"
	"| 硬件 | 是否支持 |\n"
	"| ---- | :----: |\n"
	"| <term>A</term> | ✔ |\n"
	"| <term>B</term> | 部分 |\n"                           /* 10 */
	"**限制与说明**：见说明\n"
	"### torch.x.odd_item\n"                                 /* 12 */
	"**产品支持情况**：\n"
	"- <term>A</term>：部分支持\n"
	"### torch.x.odd_line\n"                                 /* 15 */
	"**是否支持**：视情况而定\n"
	"### torch.x.two_statements\n"                           /* 17 */
	"**是否支持**：是\n"
	"**是否支持**：否\n"
	"### torch.x.no_rule\n"                                  /* 20 */
	"**支持情况**：\n"
	"| 硬件 | 是否支持 |\n"
	"| <term>A</term> | ✔ |\n"
	"### torch.x.empty_list\n"                               /* 24 */
	"**产品支持情况**：\n"
	"\n"
	"### torch.x.fine\n"                                     /* 27 */
	"**是否支持**：是\n";

/* A rule is made of | - : and blanks alone, its first byte too: a table
 * whose second line only ends like one is no table, and the row under it
 * is not read as an API's support. */
static void api_table_rule_is_rule_characters_from_its_first_byte(void **state)
{
	(void)state;
	json_t *a = parse("# torch.y\n\n|API名称|是否支持|\nx|--|--|\n|torch.y.a|是|\n\n"
			  "|API名称|是否支持|\n|--|--|\n|torch.y.b|是|\n");
	assert_int_equal(json_array_size(a), 1);
	assert_string_equal(str(json_array_get(a, 0), "api"), "torch.y.b");
	assert_string_equal(str(json_array_get(a, 0), "format"), "api-table");
	json_decref(a);
}

/* A generated table has a row per product given, and reads no further: a
 * product after the nproducts given is not written. */
static void generated_table_has_a_row_per_product_and_no_more(void **state)
{
	(void)state;
	const struct ap_docs_product p[] = { { "A", 1 }, { "B", 0 }, { "C", 1 } };
	struct ap_buf out = { 0 };
	ap_docs_block(AP_DOCS_TABLE, AP_DOCS_FUNCTION, "torch.y.f", NULL, p, 2, NULL, 0, &out);
	const char *t = ap_buf_str(&out);
	assert_non_null(strstr(t, "| <term>A</term> | ✔ |\n| <term>B</term> | ✘ |\n\n"));
	assert_null(strstr(t, "<term>C</term>"));
	ap_buf_free(&out);
}

static void unreadable_entries_are_kept_with_their_line_and_no_products(void **state)
{
	(void)state;
	json_t *a = parse(bad_page);
	assert_well_formed(a, 28);
	assert_int_equal(json_array_size(a), 8);
	static const struct {
		const char *api;
		int line;
	} bad[] = {
		{ "torch.x.no_marker", 1 },  { "torch.x.odd_cell", 4 },
		{ "torch.x.odd_item", 12 },  { "torch.x.odd_line", 15 },
		{ "torch.x.two_statements", 17 }, { "torch.x.no_rule", 20 },
		{ "torch.x.empty_list", 24 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const json_t *e = entry(a, bad[i].api);
		assert_string_equal(str(e, "format"), "unreadable");
		assert_int_equal(line_of(e), bad[i].line);
		assert_false(json_is_true(json_object_get(e, "all_products")));
	}
	/* what could be read around the support part is still there */
	assert_string_equal(str(entry(a, "torch.x.no_marker"), "doc_url"), "https://x/no_marker");
	assert_string_equal(str(entry(a, "torch.x.odd_cell"), "limits"), "见说明");
	assert_string_equal(str(entry(a, "torch.x.fine"), "format"), "line");
	json_decref(a);
}

/* ---- damaged input ---- */

static void crlf_page_reads_the_same_as_lf(void **state)
{
	(void)state;
	struct ap_buf crlf = { 0 };
	for (const char *p = line_page; *p; p++)
		ap_buf_adds(&crlf, *p == '\n' ? "\r\n" : (char[]){ *p, 0 });
	json_t *a = parse(line_page);
	json_t *b = parse_view(crlf.data, crlf.len, "t.md");
	assert_non_null(b);
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	ap_buf_free(&crlf);
}

static void crlf_real_page_reads_the_same_as_lf(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(TABLE_PAGE, &len);
	struct ap_buf crlf = { 0 };
	for (size_t i = 0; i < len; i++)
		ap_buf_add(&crlf, text[i] == '\n' ? "\r\n" : &text[i], text[i] == '\n' ? 2 : 1);
	json_t *a = parse_view(text, len, TABLE_PAGE);
	json_t *b = parse_view(crlf.data, crlf.len, TABLE_PAGE);
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	ap_buf_free(&crlf);
	free(text);
}

static void empty_input_gives_an_empty_array(void **state)
{
	(void)state;
	json_t *a = parse_view("", 0, "empty.md");
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
	a = parse_view(NULL, 0, NULL);
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
	a = parse("# just a title\n\n## a section\n\nprose\n");
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
}

static void page_cut_inside_a_table_keeps_what_was_read(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(TABLE_PAGE, &len);
	const char *row = strstr(text, "| <term>Atlas A3");
	assert_non_null(row);
	/* cut inside the second row's <term>: that entry can no longer be read */
	size_t cut = (size_t)(row - text) + 14;
	json_t *a = parse_view(text, cut, TABLE_PAGE);
	assert_int_equal(json_array_size(a), 1);
	assert_string_equal(str(json_array_get(a, 0), "format"), "unreadable");
	json_decref(a);
	/* cut right after the first row: one product, read as far as it goes */
	cut = (size_t)(row - text);
	a = parse_view(text, cut, TABLE_PAGE);
	assert_string_equal(str(json_array_get(a, 0), "format"), "table");
	assert_int_equal(nproducts(json_array_get(a, 0)), 1);
	json_decref(a);
	free(text);
}

/* Every prefix of a page of each format, cut mid-line, mid-tag or
 * mid-character, parses into well-formed entries (ASan checks that nothing
 * is read past the cut). */
static void every_prefix_of_a_real_page_gives_well_formed_entries(void **state)
{
	(void)state;
	static const char *const pages[] = { TABLE_PAGE, OPTIM_PAGE, LINALG_PAGE };
	for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
		size_t len;
		char *text = real_page(pages[p], &len);
		for (size_t cut = 0; cut <= len; cut += cut < 2000 ? 1 : 97) {
			char *copy = malloc(cut ? cut : 1);
			memcpy(copy, text, cut);
			json_t *a = parse_view(copy, cut, pages[p]);
			assert_non_null(a);
			assert_well_formed(a, lines_in(copy, cut));
			json_decref(a);
			free(copy);
		}
		free(text);
	}
}

static void invalid_utf8_and_nul_bytes_are_replaced_not_refused(void **state)
{
	(void)state;
	static const char page[] = "### torch.\xff\x00x\n**是否支持**：是\n### torch.\xe6\xad";
	json_t *a = parse_view(page, sizeof(page) - 1, "bad\xc0.md");
	assert_non_null(a);
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(str(json_array_get(a, 0), "api"), "torch.\xef\xbf\xbd\xef\xbf\xbdx");
	assert_string_equal(str(json_array_get(a, 0), "file"), "bad\xef\xbf\xbd.md");
	assert_string_equal(str(json_array_get(a, 0), "format"), "line");
	assert_string_equal(str(json_array_get(a, 1), "format"), "unreadable");
	json_decref(a);
}

static void unclosed_tags_and_links_do_not_read_past_the_line(void **state)
{
	(void)state;
	static const char page[] =
		"### <code><i>class</i></code> torch.x.C\n"                /* 1 */
		"**原生文档**：[torch.x.C](https://x/C\n"
		"**产品支持情况**：\n"
		"- <term>A：支持\n"
		"> <font size=\"3\">m(\n"                                   /* 5 */
		"**产品支持情况**：\n"
		"- <term>A</term>：支持\n"
		"> <font size=\"3\"";                                       /* 8 */
	json_t *a = parse(page);
	assert_well_formed(a, 8);
	assert_int_equal(json_array_size(a), 3);
	assert_string_equal(str(json_array_get(a, 0), "format"), "unreadable");
	assert_true(json_is_null(json_object_get(json_array_get(a, 0), "doc_url")));
	assert_string_equal(str(json_array_get(a, 1), "api"), "torch.x.C.m");
	assert_string_equal(str(json_array_get(a, 1), "format"), "list");
	assert_int_equal(line_of(json_array_get(a, 2)), 8);
	json_decref(a);
}

static void headings_inside_code_blocks_are_not_entries(void **state)
{
	(void)state;
	static const char page[] =
		"\xef\xbb\xbf### torch.x.f\n"                               /* 1 */
		"**是否支持**：是\n"
		"**限制与说明**：例如：\n"
		"```python\n"
		"### not an entry\n"                                        /* 5 */
		"**是否支持**：否\n"
		"```\n"
		"### torch.x.g\n"                                           /* 8 */
		"**是否支持**：否\n";
	json_t *a = parse(page);
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(str(json_array_get(a, 0), "api"), "torch.x.f");
	assert_string_equal(str(json_array_get(a, 0), "format"), "line");
	assert_int_equal(line_of(json_array_get(a, 1)), 8);
	json_decref(a);
}

/* ---- lookup ---- */

static void find_prefers_the_exact_entry_then_falls_back_to_the_class(void **state)
{
	(void)state;
	static const char page[] =
		"### <code><i>class</i></code> torch.x.C\n"
		"**是否支持**：是\n"
		"> <font size=\"3\">m()</font>\n"
		"**是否支持**：否\n"
		"### torch.x.grad_mode.set_multithreading_enabled\n"
		"**是否支持**：是\n";
	struct ap_docs_entries a = { 0 };
	assert_int_equal(ap_docs_parse(page, strlen(page), "t.md", &a), 0);
	int exact = -1;
	const struct ap_docs_entry *e = ap_docs_find(&a, "torch.x.C.m", &exact);
	assert_int_equal(exact, 1);
	assert_int_equal(e->kind, AP_DOCS_METHOD);
	e = ap_docs_find(&a, "torch.x.C.other", &exact);
	assert_int_equal(exact, 0);
	assert_string_equal(e->api, "torch.x.C");
	/* the page may list a class without its class tag: still its fallback */
	e = ap_docs_find(&a, "torch.x.grad_mode.set_multithreading_enabled.clone", &exact);
	assert_int_equal(exact, 0);
	assert_string_equal(e->api, "torch.x.grad_mode.set_multithreading_enabled");
	/* only the last component is stripped */
	assert_null(ap_docs_find(&a, "torch.x.C.m.deeper.still", &exact));
	assert_null(ap_docs_find(&a, "torch.x.D", &exact));
	assert_int_equal(exact, 0);
	assert_null(ap_docs_find(&a, "nodots", NULL));
	assert_null(ap_docs_find(&a, "torch.x", NULL));
	ap_docs_entries_free(&a);
}

/* ---- writing an entry ---- */

static const struct ap_docs_product two[] = { { A2, 1 }, { DT, 0 } };

static json_t *two_products(void)
{
	return json_pack("[{s:s,s:b},{s:s,s:b}]", "product", A2, "supported", 1, "product", DT,
			 "supported", 0);
}

static void entry_is_written_in_the_list_format_of_the_pages(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	json_t *products = two_products();
	ap_docs_entry("torch.x.f", "https://x/f.html", two, 2, "仅支持fp32", &out);
	assert_string_equal(ap_buf_str(&out),
			    "### torch.x.f\n"
			    "\n"
			    "<div style=\"margin-left: 2em\">\n"
			    "\n"
			    "**原生文档**：[torch.x.f](https://x/f.html)\n"
			    "\n"
			    "**产品支持情况**：\n"
			    "\n"
			    "- <term>" A2 "</term>：支持\n"
			    "- <term>" DT "</term>：不支持\n"
			    "\n"
			    "**限制与说明**：仅支持fp32\n"
			    "\n"
			    "</div>\n");
	json_decref(products);
	ap_buf_free(&out);
}

static void written_entry_reads_back_the_same(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	json_t *products = two_products();
	ap_docs_entry("torch.x.f", "https://x/f.html", two, 2, "仅支持fp32\n第二行", &out);
	ap_buf_adds(&out, "\n");
	ap_docs_entry("torch.x.g", NULL, two, 2, NULL, &out);
	json_t *a = parse_view(out.data, out.len, "out.md");
	assert_well_formed(a, lines_in(out.data, out.len));
	assert_int_equal(json_array_size(a), 2);
	const json_t *e = json_array_get(a, 0);
	assert_string_equal(str(e, "api"), "torch.x.f");
	assert_string_equal(str(e, "format"), "list");
	assert_string_equal(str(e, "doc_url"), "https://x/f.html");
	assert_true(json_equal(json_object_get(e, "products"), products));
	assert_string_equal(str(e, "limits"), "仅支持fp32 第二行");
	e = json_array_get(a, 1);
	assert_string_equal(str(e, "api"), "torch.x.g");
	assert_int_equal(line_of(e), 16);
	assert_true(json_is_null(json_object_get(e, "doc_url")));
	assert_true(json_is_null(json_object_get(e, "limits")));
	assert_true(json_equal(json_object_get(e, "products"), products));
	json_decref(a);
	json_decref(products);
	ap_buf_free(&out);
}

/* A member's entry is a sub-entry inside its class's block, as the pages
 * write members: it reads back as the member, with its products and
 * limits, under a class that states no support of its own; a property is
 * written without "()". */
static void member_entry_is_a_sub_entry_of_its_class(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	json_t *products = two_products();
	ap_docs_member_entry("torch.x.C", "torch.x.C.go", 0, "https://x/C.html#torch.x.C.go", two,
			     2, "仅支持fp32", &out);
	assert_string_equal(ap_buf_str(&out),
			    "### <code><i>class</i></code> torch.x.C\n"
			    "\n"
			    "<div style=\"margin-left: 2em\">\n"
			    "\n"
			    "> <font size=\"3\">go()</font>\n"
			    "\n"
			    "<div style=\"margin-left: 2em\">\n"
			    "\n"
			    "**原生文档**：[torch.x.C.go](https://x/C.html#torch.x.C.go)\n"
			    "\n"
			    "**产品支持情况**：\n"
			    "\n"
			    "- <term>" A2 "</term>：支持\n"
			    "- <term>" DT "</term>：不支持\n"
			    "\n"
			    "**限制与说明**：仅支持fp32\n"
			    "\n"
			    "</div>\n"
			    "\n"
			    "</div>\n");
	ap_buf_adds(&out, "\n");
	ap_docs_member_entry("torch.x.C", "torch.x.C.size", AP_DOCS_NO_CALL, NULL, two, 2, NULL,
			     &out);
	json_t *a = parse_view(out.data, out.len, "out.md");
	const json_t *c = entry(a, "torch.x.C"), *go = entry(a, "torch.x.C.go");
	assert_string_equal(str(c, "kind"), "class");
	assert_string_equal(str(c, "format"), "unreadable");
	assert_string_equal(str(go, "kind"), "method");
	assert_string_equal(str(go, "format"), "list");
	assert_string_equal(str(go, "doc_url"), "https://x/C.html#torch.x.C.go");
	assert_true(json_equal(json_object_get(go, "products"), products));
	assert_string_equal(str(go, "limits"), "仅支持fp32");
	const json_t *size = entry(a, "torch.x.C.size");
	assert_true(json_equal(json_object_get(size, "products"), products));
	assert_non_null(strstr(ap_buf_str(&out), "> <font size=\"3\">size</font>\n"));
	json_decref(a);
	json_decref(products);
	ap_buf_free(&out);
}

/* A real entry, written again from what was read, reads back the same. */
static void real_entry_round_trips_through_entry_and_parse(void **state)
{
	(void)state;
	size_t len;
	char *text = real_page(LIST_PAGE, &len);
	json_t *a = parse_view(text, len, LIST_PAGE);
	const json_t *e = entry(a, "torch.autograd.backward");
	struct ap_docs_entries es = { 0 };
	assert_int_equal(ap_docs_parse(text, len, LIST_PAGE, &es), 0);
	const struct ap_docs_entry *se = ap_docs_find(&es, "torch.autograd.backward", NULL);
	struct ap_buf out = { 0 };
	ap_docs_entry(se->api, NULL, se->products, se->nproducts, se->limits, &out);
	ap_docs_entries_free(&es);
	json_t *b = parse_view(out.data, out.len, "out.md");
	const json_t *f = json_array_get(b, 0);
	assert_string_equal(str(f, "api"), "torch.autograd.backward");
	assert_true(json_equal(json_object_get(f, "products"), json_object_get(e, "products")));
	assert_string_equal(str(f, "limits"), str(e, "limits"));
	json_decref(b);
	json_decref(a);
	ap_buf_free(&out);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_page_has_every_heading_and_method_as_an_entry),
		cmocka_unit_test(table_page_reads_make_dual_with_link_support_and_limits),
		cmocka_unit_test(table_page_method_is_class_api_and_name_not_the_link_text),
		cmocka_unit_test(table_page_class_without_its_own_support_is_unreadable_at_its_line),
		cmocka_unit_test(table_page_limits_list_is_joined_and_text_before_code_kept),
		cmocka_unit_test(table_marks_spelled_as_html_entities_are_read),
		cmocka_unit_test(list_page_reads_backward_supported_everywhere_with_limits),
		cmocka_unit_test(list_page_reads_function_class_and_its_methods),
		cmocka_unit_test(load_reads_every_real_page_sorted_with_relative_names),
		cmocka_unit_test(load_walks_subdirectories_and_reads_only_md_files),
		cmocka_unit_test(load_of_a_missing_directory_fails_naming_it),
		cmocka_unit_test(line_format_yes_is_all_products_and_exceptions_are_unsupported),
		cmocka_unit_test(oneline_page_reads_yes_no_and_named_exceptions_at_their_lines),
		cmocka_unit_test(oneline_page_class_tag_and_methods),
		cmocka_unit_test(api_table_rows_are_entries_at_their_lines),
		cmocka_unit_test(api_table_with_blanks_and_escaped_names),
		cmocka_unit_test(api_table_rows_it_cannot_read_are_unreadable_at_their_lines),
		cmocka_unit_test(api_table_rule_is_rule_characters_from_its_first_byte),
		cmocka_unit_test(generated_table_has_a_row_per_product_and_no_more),
		cmocka_unit_test(load_pages_says_which_formats_each_page_is_in),
		cmocka_unit_test(unreadable_entries_are_kept_with_their_line_and_no_products),
		cmocka_unit_test(crlf_page_reads_the_same_as_lf),
		cmocka_unit_test(crlf_real_page_reads_the_same_as_lf),
		cmocka_unit_test(empty_input_gives_an_empty_array),
		cmocka_unit_test(page_cut_inside_a_table_keeps_what_was_read),
		cmocka_unit_test(every_prefix_of_a_real_page_gives_well_formed_entries),
		cmocka_unit_test(invalid_utf8_and_nul_bytes_are_replaced_not_refused),
		cmocka_unit_test(unclosed_tags_and_links_do_not_read_past_the_line),
		cmocka_unit_test(headings_inside_code_blocks_are_not_entries),
		cmocka_unit_test(find_prefers_the_exact_entry_then_falls_back_to_the_class),
		cmocka_unit_test(entry_is_written_in_the_list_format_of_the_pages),
		cmocka_unit_test(member_entry_is_a_sub_entry_of_its_class),
		cmocka_unit_test(pages_outside_the_folder_or_too_large_are_not_read),
		cmocka_unit_test(written_entry_reads_back_the_same),
		cmocka_unit_test(real_entry_round_trips_through_entry_and_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
