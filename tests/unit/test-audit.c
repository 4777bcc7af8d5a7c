/* test-audit.c - unit tests for src/review/audit.h: pages generated from a
 * matrix read back by the docs parser as generated (table and list), and the
 * real 2.13 page audited: every entry classified once, names resolved as a
 * reader would, claims checked per product, and the missing clone()
 * sub-entry of set_multithreading_enabled found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evidence/matrix.h"
#include "review/audit.h"
#include "review/docs.h"

#define A2 "Atlas A2 训练系列产品"
#define A3 "Atlas A3 训练系列产品"
#define MT "torch.autograd.grad_mode.set_multithreading_enabled"

static const char *const envs[] = { "a2", "a3" };

static json_t *meta(void)
{
	return json_pack("{s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}], s:s}", "envs", "name", "a2",
			 "label", A2, "torch", "2.6.0", "name", "a3", "label", A3, "torch", "2.6.0",
			 "depth", "signature");
}

/* A line of api under module in env: present with kind (NULL: absent). */
static void add(struct ap_matrix *lines, const char *env, const char *module, const char *api,
		const char *kind, const char *owner, const char *sig)
{
	struct ap_matrix_line l;
	assert_int_equal(ap_matrix_line_init(&l, env, module, api,
					     kind ? AP_LSTATUS_PRESENT : AP_LSTATUS_ABSENT), 0);
	l.kind = kind ? strdup(kind) : NULL;
	if (owner) {
		l.owner = strdup(owner);
		const char *dot = strrchr(owner, '.');
		char key[128];
		snprintf(key, sizeof(key), "%s.%s", dot + 1, strrchr(api, '.') + 1);
		free(l.key);
		l.key = strdup(key);
	}
	if (sig) {
		l.signature.set = 1;
		l.signature.v = calloc(1, sizeof(char *));
		l.signature.v[l.signature.n++] = strdup(sig);
	}
	assert_int_equal(ap_matrix_add(lines, &l), 0);
}

static struct ap_matrix small_matrix(void)
{
	struct ap_matrix l = { 0 };
	const char *m = "torch.m";
	add(&l, "a2", m, "torch.m", "module", NULL, NULL);
	add(&l, "a3", m, "torch.m", "module", NULL, NULL);
	add(&l, "a2", m, "torch.m.f", "function", NULL, "f(x)");
	add(&l, "a3", m, "torch.m.f", "function", NULL, "f(x)");
	add(&l, "a2", m, "torch.m.C", "class", NULL, "C()");
	add(&l, "a3", m, "torch.m.C", "class", NULL, "C(y)");     /* inconsistent in a3 */
	add(&l, "a2", m, "torch.m.C.go", "method", "torch.m.C", "go(self)");
	add(&l, "a3", m, "torch.m.C.go", "method", "torch.m.C", "go(self)");
	add(&l, "a2", m, "torch.m.new", NULL, NULL, NULL);        /* only in a3 */
	add(&l, "a3", m, "torch.m.new", "function", NULL, "new()");
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	return l;
}

static const json_t *entry(const json_t *entries, const char *api)
{
	size_t i;
	json_t *e;
	json_array_foreach(entries, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "api")), api))
			return e;
	return NULL;
}

static void products_are(const json_t *e, const char *want)
{
	char *s = json_dumps(json_object_get(e, "products"), JSON_COMPACT);
	assert_string_equal(s, want);
	free(s);
}

static void generated_pages_read_back_as_generated(void **state)
{
	(void)state;
	static const char *const formats[] = { "table", "list" };
	json_t *mt = meta();
	struct ap_matrix lines = small_matrix();
	for (size_t f = 0; f < 2; f++) {
		json_t *pages = ap_docs_generate(mt, &lines, formats[f]);
		const char *page = json_string_value(json_object_get(pages, "torch-m.md"));
		assert_non_null(page);
		assert_int_equal(json_object_size(pages), 1);
		json_t *e = ap_docs_parse(page, strlen(page), "torch-m.md");
		assert_int_equal(json_array_size(e), 4);
		const json_t *f1 = entry(e, "torch.m.f"), *c = entry(e, "torch.m.C");
		const json_t *go = entry(e, "torch.m.C.go"), *nw = entry(e, "torch.m.new");
		assert_non_null(f1);
		assert_string_equal(json_string_value(json_object_get(f1, "format")), formats[f]);
		assert_string_equal(json_string_value(json_object_get(c, "kind")), "class");
		assert_string_equal(json_string_value(json_object_get(go, "kind")), "method");
		assert_string_equal(json_string_value(json_object_get(f1, "doc_url")),
				    "https://pytorch.org/docs/2.6/generated/torch.m.f.html");
		products_are(f1, "[{\"product\":\"" A2 "\",\"supported\":true},{\"product\":\"" A3 "\",\"supported\":true}]");
		products_are(c, "[{\"product\":\"" A2 "\",\"supported\":true},{\"product\":\"" A3 "\",\"supported\":false}]");
		products_are(nw, "[{\"product\":\"" A3 "\",\"supported\":true}]");
		/* and the audit of what was generated agrees with itself */
		json_t *fs = ap_docs_audit(e, mt, &lines);
		size_t i;
		json_t *x;
		json_array_foreach(fs, i, x)
			assert_string_equal(json_string_value(json_object_get(x, "class")), "backed");
		assert_int_equal(json_array_size(fs), 4);
		json_decref(fs);
		json_decref(e);
		json_decref(pages);
	}
	ap_matrix_free(&lines);
	json_decref(mt);
}

/* A matrix of the README's example: set_multithreading_enabled and its
 * clone, a function the page lists, FunctionCtx with its members under
 * torch.autograd, and torch.autograd.graph measured. */
static struct ap_matrix autograd_matrix(void)
{
	struct ap_matrix l = { 0 };
	for (size_t i = 0; i < 2; i++) {
		const char *e = envs[i];
		add(&l, e, "torch.autograd.grad_mode", "torch.autograd.grad_mode", "module", NULL, NULL);
		add(&l, e, "torch.autograd.grad_mode", MT, "class", NULL, "set_multithreading_enabled(mode)");
		add(&l, e, "torch.autograd.grad_mode", MT ".clone", "method", MT, "clone(self)");
		add(&l, e, "torch.autograd", "torch.autograd", "module", NULL, NULL);
		add(&l, e, "torch.autograd", "torch.autograd.FunctionCtx", "class", NULL, "FunctionCtx()");
		add(&l, e, "torch.autograd", "torch.autograd.FunctionCtx.mark_dirty", "method",
		    "torch.autograd.FunctionCtx", "mark_dirty(self, *args)");
		add(&l, e, "torch.autograd", "torch.autograd.FunctionCtx.save_for_backward", "method",
		    "torch.autograd.FunctionCtx", "save_for_backward(self, *t)");
		/* in a2 graph.save_on_cpu is absent: the page's ✔ for A2 is contradicted */
		add(&l, e, "torch.autograd", "torch.autograd.graph", "module", NULL, NULL);
		add(&l, e, "torch.autograd.graph", "torch.autograd.graph", "module", NULL, NULL);
		add(&l, e, "torch.autograd.graph", "torch.autograd.graph.save_on_cpu",
		    i ? "class" : NULL, NULL, "save_on_cpu()");
		add(&l, e, "torch.autograd.graph", "torch.autograd.graph.saved_tensors_hooks", "class",
		    NULL, "saved_tensors_hooks()");
	}
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	return l;
}

static const json_t *finding(const json_t *fs, const char *api, const char *cls)
{
	size_t i;
	json_t *f;
	json_array_foreach(fs, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "api")), api) &&
		    !strcmp(json_string_value(json_object_get(f, "class")), cls))
			return f;
	return NULL;
}

static void real_page_is_audited_entry_by_entry(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	json_t *entries = ap_docs_load("tests/data/backend-docs/table-format-2-13-0", &err);
	assert_non_null(entries);
	json_t *mt = meta();
	struct ap_matrix lines = autograd_matrix();
	json_t *fs = ap_docs_audit(entries, mt, &lines);
	size_t i, own = 0;
	json_t *f;
	json_array_foreach(fs, i, f)
		own += strcmp(json_string_value(json_object_get(f, "class")), "missing-sub-entry") != 0;
	assert_int_equal(own, json_array_size(entries)); /* every entry, once */
	const json_t *miss = finding(fs, MT ".clone", "missing-sub-entry");
	assert_non_null(miss);
	assert_int_equal(json_integer_value(json_object_get(miss, "line")), 719);
	assert_string_equal(json_string_value(json_object_get(miss, "file")), "torch-autograd.md");
	assert_non_null(strstr(json_string_value(json_object_get(miss, "detail")),
			       "not its method clone() (measured consistent in a2, a3)"));
	/* ✘ Ascend 950DT matches no environment; A2 and A3 ✔, measured consistent */
	assert_non_null(finding(fs, MT, "backed"));
	/* the page's class-relative member names resolve */
	const json_t *md = finding(fs, "torch.autograd.FunctionCtx.mark_dirty", "backed");
	assert_non_null(md);
	assert_string_equal(json_string_value(json_object_get(md, "resolved")),
			    "torch.autograd.FunctionCtx.mark_dirty");
	const json_t *c = finding(fs, "torch.autograd.graph.save_on_cpu", "contradicted");
	assert_non_null(c);
	assert_non_null(strstr(json_string_value(json_object_get(c, "detail")),
			       A2 " says supported, measured absent in a2"));
	assert_non_null(finding(fs, "torch.autograd.graph.register_multi_grad_hook", "absent"));
	assert_non_null(finding(fs, "torch.autograd.FunctionCtx.set_materialize_grads",
				"instance-attribute"));
	assert_non_null(finding(fs, "torch.autograd.functional.jacobian", "not-swept"));
	/* sorted by file and line, an entry's own finding first */
	for (i = 1; i < json_array_size(fs); i++)
		assert_true(json_integer_value(json_object_get(json_array_get(fs, i - 1), "line")) <=
			    json_integer_value(json_object_get(json_array_get(fs, i), "line")));
	struct ap_buf text = { 0 };
	ap_docs_audit_text(fs, &text);
	assert_non_null(strstr(ap_buf_str(&text), "torch-autograd.md:719: missing-sub-entry: " MT ".clone: "));
	assert_non_null(strstr(ap_buf_str(&text), "\n1 missing-sub-entry\n"));
	ap_buf_free(&text);
	json_decref(fs);
	ap_matrix_free(&lines);
	json_decref(mt);
	json_decref(entries);
}

static void markdown_escapes_and_relative_names_resolve(void **state)
{
	(void)state;
	static const char page[] =
		"### torch.\\_\\_config\\_\\_.show\n\n**是否支持**：是\n\n"
		"### profile.key\\_averages()\n\n**是否支持**：是\n";
	struct ap_matrix l = { 0 };
	for (size_t i = 0; i < 2; i++) {
		add(&l, envs[i], "torch.__config__", "torch.__config__.show", "function", NULL, "show()");
		add(&l, envs[i], "torch.autograd.profiler", "torch.autograd.profiler.profile.key_averages",
		    "method", "torch.autograd.profiler.profile", "key_averages(self)");
	}
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	json_t *e = ap_docs_parse(page, strlen(page), "p.md"), *mt = meta();
	json_t *fs = ap_docs_audit(e, mt, &l);
	assert_int_equal(json_array_size(fs), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(fs, 0), "resolved")),
			    "torch.__config__.show");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fs, 1), "resolved")),
			    "torch.autograd.profiler.profile.key_averages");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fs, 1), "class")), "backed");
	json_decref(fs);
	json_decref(e);
	json_decref(mt);
	ap_matrix_free(&l);
}

/* Sets file:line on every line of api (a class's identity in the matrix). */
static void set_source(struct ap_matrix *lines, const char *api, const char *file, int line)
{
	for (size_t i = 0; i < lines->n; i++)
		if (!strcmp(lines->v[i].api, api)) {
			free(lines->v[i].file);
			lines->v[i].file = strdup(file);
			lines->v[i].has_line = 1;
			lines->v[i].line = line;
		}
}

/* torch.autograd.Function is torch.autograd.function.Function: the sweep
 * walks its members once, under the module that defines it, and the audit
 * finds them through the class's file:line from the path the page uses. */
static void members_of_a_class_reached_by_another_path_count(void **state)
{
	(void)state;
	static const char page[] =
		"### <code><i>class</i></code> torch.autograd.Function\n\n**是否支持**：是\n\n"
		"> <font size=\"3\">forward()</font>\n\n**是否支持**：是\n";
	const char *fn = "torch.autograd.function.Function";
	struct ap_matrix l = { 0 };
	for (size_t i = 0; i < 2; i++) {
		add(&l, envs[i], "torch.autograd", "torch.autograd.Function", "class", NULL, "Function()");
		add(&l, envs[i], "torch.autograd.function", fn, "class", NULL, "Function()");
		add(&l, envs[i], "torch.autograd.function", "torch.autograd.function.Function.forward",
		    "method", fn, "forward(ctx)");
		add(&l, envs[i], "torch.autograd.function", "torch.autograd.function.Function.backward",
		    "method", fn, "backward(ctx)");
	}
	set_source(&l, "torch.autograd.Function", "torch/autograd/function.py", 472);
	set_source(&l, fn, "torch/autograd/function.py", 472);
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	json_t *e = ap_docs_parse(page, strlen(page), "p.md"), *mt = meta();
	json_t *fs = ap_docs_audit(e, mt, &l);
	assert_int_equal(json_array_size(fs), 3);
	const json_t *fw = finding(fs, "torch.autograd.Function.forward", "backed");
	assert_non_null(fw);
	assert_string_equal(json_string_value(json_object_get(fw, "resolved")),
			    "torch.autograd.function.Function.forward");
	const json_t *miss = finding(fs, "torch.autograd.Function.backward", "missing-sub-entry");
	assert_non_null(miss);
	assert_int_equal(json_integer_value(json_object_get(miss, "line")), 1);
	assert_null(finding(fs, "torch.autograd.Function.forward", "missing-sub-entry"));
	json_decref(fs);
	json_decref(e);
	json_decref(mt);
	ap_matrix_free(&l);
}

/* The oldest pages' rows are audited like headings: a member no class
 * carries, a claim that the matrix contradicts, a class whose member the
 * table leaves out; and the page says which format it was read in. */
static void api_table_rows_are_audited_and_pages_name_their_formats(void **state)
{
	(void)state;
	static const char page[] =
		"|API名称|是否支持|限制与说明|\n|--|--|--|\n"
		"|torch.m.f|是|-|\n"
		"|torch.m.C|否|-|\n"
		"|torch.m.C.nothing|是|-|\n"
		"|torch.m.odd|也许|-|\n";
	json_t *e = ap_docs_parse(page, strlen(page), "torch-m.md"), *mt = meta();
	struct ap_matrix l = small_matrix();
	json_t *fs = ap_docs_audit(e, mt, &l);
	assert_non_null(finding(fs, "torch.m.f", "backed"));
	const json_t *c = finding(fs, "torch.m.C", "contradicted");
	assert_non_null(c);
	assert_int_equal(json_integer_value(json_object_get(c, "line")), 4);
	assert_non_null(strstr(json_string_value(json_object_get(c, "detail")),
			       A2 " says not supported, measured consistent in a2"));
	assert_non_null(finding(fs, "torch.m.C.nothing", "instance-attribute"));
	assert_non_null(finding(fs, "torch.m.odd", "unreadable"));
	assert_non_null(finding(fs, "torch.m.C.go", "missing-sub-entry"));
	assert_int_equal(json_array_size(fs), 5);
	json_t *pages = json_pack("[{s:s, s:i, s:{s:i, s:i}}, {s:s, s:i, s:{}}]", "file", "torch-m.md",
				  "entries", 4, "formats", "api-table", 3, "unreadable", 1, "file",
				  "overview.md", "entries", 0, "formats");
	struct ap_buf text = { 0 };
	ap_docs_pages_text(pages, &text);
	assert_string_equal(ap_buf_str(&text),
			    "torch-m.md: formats: api-table 3, unreadable 1\n"
			    "overview.md: formats: none (no entry in a format this parser reads)\n");
	ap_buf_free(&text);
	json_decref(pages);
	json_decref(fs);
	json_decref(e);
	json_decref(mt);
	ap_matrix_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(generated_pages_read_back_as_generated),
		cmocka_unit_test(real_page_is_audited_entry_by_entry),
		cmocka_unit_test(markdown_escapes_and_relative_names_resolve),
		cmocka_unit_test(members_of_a_class_reached_by_another_path_count),
		cmocka_unit_test(api_table_rows_are_audited_and_pages_name_their_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
