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
#include "evidence/sweepfile.h"
#include "review/audit.h"
#include "review/docs.h"
#include "review/plugins.h"

#define A2 "Atlas A2 训练系列产品"
#define A3 "Atlas A3 训练系列产品"
#define MT "torch.autograd.grad_mode.set_multithreading_enabled"

static const char *const envs[] = { "a2", "a3" };

/* The environments a2 and a3 of a sweep.json, as the commands read it:
 * each loads the plugins given (NULL: which is not known). */
struct sweep {
	struct ap_sweep_meta meta;
	struct ap_docs_envs envs;
	struct ap_plugins plugins;   /* the built-in specs/plugin-apis.ini */
};

static struct sweep sweep_with_plugins(const struct ap_matrix_strs *plugins)
{
	struct sweep w = { { 0 }, { 0 }, { 0 } };
	struct ap_buf err = { 0 };
	assert_int_equal(ap_plugins_load(&w.plugins, NULL, &err), 0);
	assert_int_equal(ap_sweep_meta_add_env(&w.meta, "a2", A2, "2.6.0", plugins), 0);
	assert_int_equal(ap_sweep_meta_add_env(&w.meta, "a3", A3, "2.6.0", plugins), 0);
	assert_int_equal(ap_docs_envs_read(&w.meta, &w.envs), 0);
	return w;
}

static struct sweep sweep_open(void)
{
	return sweep_with_plugins(NULL);
}

static void sweep_close(struct sweep *w)
{
	ap_docs_envs_free(&w->envs);
	ap_sweep_meta_free(&w->meta);
	ap_plugins_free(&w->plugins);
}

static struct ap_docs_entries parse(const char *page, const char *name)
{
	struct ap_docs_entries e = { 0 };
	assert_int_equal(ap_docs_parse(page, strlen(page), name, &e), 0);
	return e;
}

static struct ap_docs_findings audit(const struct ap_docs_entries *e, const struct sweep *w,
				     const struct ap_matrix *l)
{
	struct ap_docs_findings fs;
	assert_int_equal(ap_docs_audit(e, &w->envs, l, &w->plugins, &fs), 0);
	return fs;
}

/* A label, when set, names the product; else the environment's name does. */
static void envs_are_read_with_their_products(void **state)
{
	(void)state;
	struct ap_sweep_meta m = { 0 };
	char *loaded[] = { "torch_npu" };
	struct ap_matrix_strs plugins = { loaded, 1, 1 };
	assert_int_equal(ap_sweep_meta_add_env(&m, "a2", A2, "2.6.0", &plugins), 0);
	assert_int_equal(ap_sweep_meta_add_env(&m, "b", "", NULL, NULL), 0);
	assert_int_equal(ap_sweep_meta_add_env(&m, NULL, NULL, NULL, NULL), 0);
	struct ap_docs_envs e;
	assert_int_equal(ap_docs_envs_read(&m, &e), 0);
	assert_int_equal(e.n, 3);
	assert_string_equal(e.v[0].product, A2);
	assert_string_equal(e.v[0].torch, "2.6.0");
	assert_string_equal(e.v[1].product, "b");
	assert_null(e.v[1].torch);
	assert_null(e.v[2].name);
	assert_null(e.v[2].product);
	assert_int_equal(e.v[0].plugins->n, 1);
	assert_string_equal(e.v[0].plugins->v[0], "torch_npu");
	assert_null(e.v[1].plugins);
	ap_docs_envs_free(&e);
	ap_sweep_meta_free(&m);
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

/* Sets, on every present line of api, what the walk saw getattr reach
 * there without a line of its own (reaches) and what the class's source
 * assigns on self (on_self): space-separated names, sorted; NULL leaves it
 * unrecorded (a sweep from before either was recorded). */
static void walked_in(struct ap_matrix *lines, const char *api, const char *env,
		      const char *reaches, const char *on_self)
{
	for (size_t i = 0; i < lines->n; i++) {
		struct ap_matrix_line *l = &lines->v[i];
		const char *words[2] = { reaches, on_self };
		struct ap_matrix_strs *to[2] = { &l->reaches, &l->on_self };
		if (strcmp(l->api, api) || l->status != AP_LSTATUS_PRESENT ||
		    (env && strcmp(l->env, env)))
			continue;
		for (size_t k = 0; k < 2; k++) {
			if (!words[k])
				continue;
			for (size_t j = 0; j < to[k]->n; j++)
				free(to[k]->v[j]);
			free(to[k]->v);
			*to[k] = (struct ap_matrix_strs){ .set = 1 };
			to[k]->v = calloc(16, sizeof(char *));
			char *copy = strdup(words[k]), *save = NULL;
			for (char *w = strtok_r(copy, " ", &save); w && to[k]->n < 16;
			     w = strtok_r(NULL, " ", &save))
				to[k]->v[to[k]->n++] = strdup(w);
			free(copy);
		}
	}
}

static void walked(struct ap_matrix *lines, const char *api, const char *reaches,
		   const char *on_self)
{
	walked_in(lines, api, NULL, reaches, on_self);
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
	walked(&l, "torch.m", "", NULL);
	walked(&l, "torch.m.C", "", "");
	return l;
}

static const struct ap_docs_entry *entry(const struct ap_docs_entries *entries, const char *api)
{
	for (size_t i = 0; i < entries->n; i++)
		if (!strcmp(entries->v[i].api, api))
			return &entries->v[i];
	fail_msg("no entry for %s", api);
	return NULL;
}

/* The products of e as "product=1,product=0". */
static void products_are(const struct ap_docs_entry *e, const char *want)
{
	struct ap_buf b = { 0 };
	for (size_t i = 0; i < e->nproducts; i++)
		ap_buf_addf(&b, "%s%s=%d", i ? "," : "", e->products[i].product,
			    e->products[i].supported);
	assert_string_equal(ap_buf_str(&b), want);
	ap_buf_free(&b);
}

static void generated_pages_read_back_as_generated(void **state)
{
	(void)state;
	static const enum ap_docs_format formats[] = { AP_DOCS_TABLE, AP_DOCS_LIST };
	struct sweep w = sweep_open();
	struct ap_matrix lines = small_matrix();
	for (size_t f = 0; f < 2; f++) {
		struct ap_docs_gen pages;
		size_t unlinked;
		/* upstream's sources place torch.m.f only: the others get no URL */
		struct ap_updocs_entry placed = { "torch.m.f", "generated/torch.m.f.html", NULL,
						  AP_UPDOCS_NO_MEMBERS, 0, NULL, 0 };
		struct ap_updocs up = { &placed, 1, 1, "https://pytorch.org/docs/2.6/", 1, 0 };
		ap_docs_generate(&w.envs, &lines, &up, formats[f], &pages, &unlinked);
		assert_int_equal(unlinked, 3);
		assert_int_equal(pages.n, 1);
		assert_string_equal(pages.v[0].name, "torch-m.md");
		struct ap_docs_entries e = parse(ap_buf_str(&pages.v[0].text), "torch-m.md");
		assert_int_equal(e.n, 4);
		const struct ap_docs_entry *f1 = entry(&e, "torch.m.f"), *c = entry(&e, "torch.m.C");
		const struct ap_docs_entry *go = entry(&e, "torch.m.C.go"), *nw = entry(&e, "torch.m.new");
		assert_int_equal(f1->format, formats[f]);
		assert_int_equal(c->kind, AP_DOCS_CLASS);
		assert_int_equal(go->kind, AP_DOCS_METHOD);
		assert_string_equal(f1->doc_url, "https://pytorch.org/docs/2.6/generated/torch.m.f.html");
		assert_null(c->doc_url);
		assert_null(nw->doc_url);
		products_are(f1, A2 "=1," A3 "=1");
		products_are(c, A2 "=1," A3 "=0");
		products_are(nw, A3 "=1");
		/* and the audit of what was generated agrees with itself */
		struct ap_docs_findings fs = audit(&e, &w, &lines);
		for (size_t i = 0; i < fs.n; i++)
			assert_int_equal(fs.v[i].cls, AP_FINDING_BACKED);
		assert_int_equal(fs.n, 4);
		ap_docs_findings_free(&fs);
		ap_docs_entries_free(&e);
		ap_docs_gen_free(&pages);
	}
	ap_matrix_free(&lines);
	sweep_close(&w);
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
	walked(&l, "torch.autograd.graph", "", NULL);
	walked(&l, "torch.autograd.FunctionCtx", "", "");
	return l;
}

static const struct ap_docs_finding *finding(const struct ap_docs_findings *fs, const char *api,
					     enum ap_docs_finding_class cls)
{
	const struct ap_docs_finding *hit = NULL;
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->v[i].api, api) && fs->v[i].cls == cls) {
			assert_null(hit); /* each finding once */
			hit = &fs->v[i];
		}
	return hit;
}

/* A generated page has the backend's furniture: its title, a NOTE that
 * says what its marks mean and links the module's upstream page, a 目录
 * of upstream's sections, and each block under its section's `## `
 * heading in upstream's order (a class with its sub-entries), what no
 * section holds last under 其他; it still reads back entry by entry. */
/* A class's property is not called: its sub-entry has no "()", where its
 * methods and the module's functions have them. */
static void generated_entries_call_only_what_is_called(void **state)
{
	(void)state;
	struct sweep w = sweep_open();
	struct ap_matrix l = { 0 };
	const char *m = "torch.m";
	for (size_t i = 0; i < 2; i++) {
		const char *env = i ? "a3" : "a2";
		add(&l, env, m, "torch.m", "module", NULL, NULL);
		add(&l, env, m, "torch.m.f", "function", NULL, "f(x)");
		add(&l, env, m, "torch.m.C", "class", NULL, "C()");
		add(&l, env, m, "torch.m.C.go", "method", "torch.m.C", "go(self)");
		add(&l, env, m, "torch.m.C.size", "property", "torch.m.C", NULL);
	}
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	struct ap_docs_gen pages;
	size_t unlinked;
	ap_docs_generate(&w.envs, &l, NULL, AP_DOCS_LIST, &pages, &unlinked);
	assert_int_equal(pages.n, 1);
	const char *text = ap_buf_str(&pages.v[0].text);
	assert_non_null(strstr(text, ">go()</font>"));
	assert_non_null(strstr(text, ">size</font>"));
	assert_null(strstr(text, "size()"));
	ap_docs_gen_free(&pages);
	ap_matrix_free(&l);
	sweep_close(&w);
}

static void generated_pages_have_the_furniture_of_the_pages(void **state)
{
	(void)state;
	struct sweep w = sweep_open();
	struct ap_matrix lines = small_matrix();
	struct ap_updocs_entry placed[] = {
		{ "torch.m", "m.html", "module-torch.m", AP_UPDOCS_NO_MEMBERS, 0, NULL, 0 },
		{ "torch.m.C", "m.html", "torch.m.C", AP_UPDOCS_NO_MEMBERS, 0, "Classes (all)", 7 },
		{ "torch.m.new", "m.html", "torch.m.new", AP_UPDOCS_NO_MEMBERS, 0, "Functions", 3 },
	};
	struct ap_updocs up = { placed, 3, 3, "https://pytorch.org/docs/2.6/", 1, 7 };
	struct ap_docs_gen pages;
	size_t unlinked;
	ap_docs_generate(&w.envs, &lines, &up, AP_DOCS_TABLE, &pages, &unlinked);
	assert_int_equal(pages.n, 1);
	const char *text = ap_buf_str(&pages.v[0].text);
	assert_int_equal(strncmp(text, "# torch.m\n\n> [!NOTE]\n>\n> - 本页由 apiparity 根据测量生成。", 60), 0);
	assert_non_null(strstr(text, "\n> - 未收录于本页的API未经测量，请谨慎使用。\n"));
	assert_non_null(strstr(text, "原生文档[LINK](https://pytorch.org/docs/2.6/m.html#module-torch.m)。\n"));
	assert_non_null(strstr(text, "\n## 目录\n\n- [Functions](#functions)\n"
			       "- [Classes (all)](#classes-all)\n- [其他](#其他)\n\n## Functions\n"));
	const char *fn = strstr(text, "\n## Functions\n"), *cl = strstr(text, "\n## Classes (all)\n");
	const char *other = strstr(text, "\n## 其他\n");
	const char *nw = strstr(text, "### torch.m.new\n"), *c = strstr(text, "torch.m.C\n");
	const char *go = strstr(text, "go()</font>"), *f = strstr(text, "### torch.m.f\n");
	assert_true(fn && cl && other && nw && c && go && f);
	assert_true(fn < nw && nw < cl && cl < c && c < go && go < other && other < f);
	struct ap_docs_entries e = parse(text, "torch-m.md");
	assert_int_equal(e.n, 4);
	assert_int_equal(entry(&e, "torch.m.C.go")->kind, AP_DOCS_METHOD);
	ap_docs_entries_free(&e);
	ap_docs_gen_free(&pages);
	/* no sources: no sections, no contents, no link; the NOTE stays */
	ap_docs_generate(&w.envs, &lines, NULL, AP_DOCS_LIST, &pages, &unlinked);
	text = ap_buf_str(&pages.v[0].text);
	assert_null(strstr(text, "\n## "));
	assert_null(strstr(text, "LINK"));
	assert_non_null(strstr(text, "API的**产品支持情况**中，每个产品是一个被测环境："));
	ap_docs_gen_free(&pages);
	ap_matrix_free(&lines);
	sweep_close(&w);
}

static void real_page_is_audited_entry_by_entry(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	struct ap_docs_entries entries;
	assert_int_equal(ap_docs_load("tests/data/backend-docs/table-format-2-13-0", &entries, &err), 0);
	struct sweep w = sweep_open();
	struct ap_matrix lines = autograd_matrix();
	struct ap_docs_findings all = audit(&entries, &w, &lines), *fs = &all;
	size_t i, own = 0;
	for (i = 0; i < fs->n; i++)
		own += fs->v[i].cls != AP_FINDING_MISSING_SUB_ENTRY;
	assert_int_equal(own, entries.n); /* every entry, once */
	const struct ap_docs_finding *miss = finding(fs, MT ".clone", AP_FINDING_MISSING_SUB_ENTRY);
	assert_non_null(miss);
	assert_int_equal(miss->line, 719);
	assert_string_equal(miss->file, "torch-autograd.md");
	assert_non_null(strstr(miss->detail, "not its method clone() (measured consistent in a2, a3)"));
	/* ✘ Ascend 950DT matches no environment; A2 and A3 ✔, measured consistent */
	assert_non_null(finding(fs, MT, AP_FINDING_BACKED));
	/* the page's class-relative member names resolve */
	const struct ap_docs_finding *md =
		finding(fs, "torch.autograd.FunctionCtx.mark_dirty", AP_FINDING_BACKED);
	assert_non_null(md);
	assert_string_equal(md->resolved, "torch.autograd.FunctionCtx.mark_dirty");
	const struct ap_docs_finding *c =
		finding(fs, "torch.autograd.graph.save_on_cpu", AP_FINDING_CONTRADICTED);
	assert_non_null(c);
	assert_non_null(strstr(c->detail, A2 " says supported, measured absent in a2"));
	assert_non_null(finding(fs, "torch.autograd.graph.register_multi_grad_hook", AP_FINDING_ABSENT));
	assert_non_null(finding(fs, "torch.autograd.FunctionCtx.set_materialize_grads",
				AP_FINDING_NOT_FOUND));
	assert_non_null(finding(fs, "torch.autograd.functional.jacobian", AP_FINDING_NOT_SWEPT));
	/* sorted by file and line, an entry's own finding first */
	for (i = 1; i < fs->n; i++)
		assert_true(fs->v[i - 1].line <= fs->v[i].line);
	struct ap_buf text = { 0 };
	ap_docs_audit_text(fs, &text);
	assert_non_null(strstr(ap_buf_str(&text), "torch-autograd.md:719: missing-sub-entry: " MT ".clone: "));
	assert_non_null(strstr(ap_buf_str(&text), "\n1 missing-sub-entry\n"));
	ap_buf_free(&text);
	ap_docs_findings_free(fs);
	ap_matrix_free(&lines);
	sweep_close(&w);
	ap_docs_entries_free(&entries);
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
	struct ap_docs_entries e = parse(page, "p.md");
	struct sweep w = sweep_open();
	struct ap_docs_findings fs = audit(&e, &w, &l);
	assert_int_equal(fs.n, 2);
	assert_string_equal(fs.v[0].resolved, "torch.__config__.show");
	assert_string_equal(fs.v[1].resolved, "torch.autograd.profiler.profile.key_averages");
	assert_int_equal(fs.v[1].cls, AP_FINDING_BACKED);
	ap_docs_findings_free(&fs);
	ap_docs_entries_free(&e);
	sweep_close(&w);
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
		add(&l, envs[i], "torch.autograd.function",
		    "torch.autograd.function.Function.setup_context", "method", fn,
		    "setup_context(ctx)");
	}
	set_source(&l, "torch.autograd.Function", "torch/autograd/function.py", 472);
	set_source(&l, fn, "torch/autograd/function.py", 472);
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	struct ap_docs_entries e = parse(page, "p.md");
	struct sweep w = sweep_open();
	struct ap_docs_findings fs = audit(&e, &w, &l);
	assert_int_equal(fs.n, 4);
	/* Two members missing from one entry share its place: the sort by
	 * place keeps them in the order the audit found them (by name). */
	assert_string_equal(fs.v[1].api, "torch.autograd.Function.backward");
	assert_string_equal(fs.v[2].api, "torch.autograd.Function.setup_context");
	assert_int_equal(fs.v[2].cls, AP_FINDING_MISSING_SUB_ENTRY);
	const struct ap_docs_finding *fw =
		finding(&fs, "torch.autograd.Function.forward", AP_FINDING_BACKED);
	assert_non_null(fw);
	assert_string_equal(fw->resolved, "torch.autograd.function.Function.forward");
	const struct ap_docs_finding *miss =
		finding(&fs, "torch.autograd.Function.backward", AP_FINDING_MISSING_SUB_ENTRY);
	assert_non_null(miss);
	assert_int_equal(miss->line, 1);
	assert_null(finding(&fs, "torch.autograd.Function.forward", AP_FINDING_MISSING_SUB_ENTRY));
	ap_docs_findings_free(&fs);
	ap_docs_entries_free(&e);
	sweep_close(&w);
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
	struct ap_docs_entries e = parse(page, "torch-m.md");
	struct sweep w = sweep_open();
	struct ap_matrix l = small_matrix();
	struct ap_docs_findings all = audit(&e, &w, &l), *fs = &all;
	assert_non_null(finding(fs, "torch.m.f", AP_FINDING_BACKED));
	const struct ap_docs_finding *c = finding(fs, "torch.m.C", AP_FINDING_CONTRADICTED);
	assert_non_null(c);
	assert_int_equal(c->line, 4);
	assert_non_null(strstr(c->detail, A2 " says not supported, measured consistent in a2"));
	assert_non_null(finding(fs, "torch.m.C.nothing", AP_FINDING_NOT_FOUND));
	assert_non_null(finding(fs, "torch.m.odd", AP_FINDING_UNREADABLE));
	assert_non_null(finding(fs, "torch.m.C.go", AP_FINDING_MISSING_SUB_ENTRY));
	assert_int_equal(fs->n, 5);
	struct ap_docs_page pv[2] = {
		{ .file = "torch-m.md", .entries = 4, .formats = { AP_DOCS_API_TABLE, AP_DOCS_UNREADABLE },
		  .counts = { 3, 1 }, .nformats = 2 },
		{ .file = "overview.md" },
	};
	struct ap_docs_pages pages = { pv, 2, 2 };
	struct ap_buf text = { 0 };
	ap_docs_pages_text(&pages, &text);
	assert_string_equal(ap_buf_str(&text),
			    "torch-m.md: formats: api-table 3, unreadable 1\n"
			    "overview.md: formats: none (no entry in a format this parser reads)\n");
	ap_buf_free(&text);
	ap_docs_findings_free(fs);
	ap_docs_entries_free(&e);
	sweep_close(&w);
	ap_matrix_free(&l);
}

/* A name with no line of its own is judged by what the walk saw getattr
 * reach on its module or class: reached (inherited, private, a pybind
 * member) is present where reached, and its claims are checked there; set
 * only on self in the source is an instance attribute; reached nowhere is
 * not found (a member) or absent (a module's name); and where the walk
 * recorded nothing, nothing is claimed but that. */
static void unlisted_names_are_judged_by_what_getattr_reaches(void **state)
{
	(void)state;
	static const char page[] =
		"|API名称|是否支持|限制与说明|\n|--|--|--|\n"
		"|torch.m.C.zero_grad|是|-|\n"
		"|torch.m._assert|是|-|\n"
		"|torch.m.C.data|是|-|\n"
		"|torch.m.C.npu|是|-|\n"
		"|torch.m.gone|是|-|\n"
		"|torch.m.D.x|是|-|\n"
		"|torch.n.gone|是|-|\n";
	struct ap_docs_entries e = parse(page, "torch-m.md");
	struct sweep w = sweep_open();
	struct ap_matrix l = small_matrix();
	add(&l, "a2", "torch.m", "torch.m.D", "class", NULL, "D()");
	add(&l, "a3", "torch.m", "torch.m.D", "class", NULL, "D()");
	add(&l, "a2", "torch.n", "torch.n", "module", NULL, NULL); /* reaches unrecorded */
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	/* zero_grad reached in a3 only: A2's ✔ is contradicted there */
	walked_in(&l, "torch.m.C", "a3", "zero_grad", NULL);
	walked_in(&l, "torch.m.C", "a2", NULL, "data");
	walked(&l, "torch.m", "_assert other", NULL);
	struct ap_docs_findings all = audit(&e, &w, &l), *fs = &all;
	const struct ap_docs_finding *z = finding(fs, "torch.m.C.zero_grad", AP_FINDING_CONTRADICTED);
	assert_non_null(z);
	assert_string_equal(z->resolved, "torch.m.C");
	assert_non_null(strstr(z->detail, A2 " says supported, measured absent in a2"));
	/* in a3 the class's own measurement stands for it (C differs there) */
	assert_non_null(strstr(z->detail, A3 " says supported, measured inconsistent in a3"));
	const struct ap_docs_finding *p = finding(fs, "torch.m._assert", AP_FINDING_BACKED);
	assert_non_null(p);
	assert_string_equal(p->resolved, "torch.m");
	const struct ap_docs_finding *d = finding(fs, "torch.m.C.data", AP_FINDING_INSTANCE_ATTRIBUTE);
	assert_non_null(d);
	assert_non_null(strstr(d->detail, "assigns self.data (a2)"));
	assert_non_null(finding(fs, "torch.m.C.npu", AP_FINDING_NOT_FOUND));
	const struct ap_docs_finding *g = finding(fs, "torch.m.gone", AP_FINDING_ABSENT);
	assert_non_null(g);
	assert_non_null(strstr(g->detail, "import torch.m, then getattr 'gone'"));
	/* D's members were never recorded: no claim that x is missing */
	const struct ap_docs_finding *x = finding(fs, "torch.m.D.x", AP_FINDING_NOT_SWEPT);
	assert_non_null(x);
	assert_non_null(strstr(x->detail, "did not record what getattr reaches on torch.m.D"));
	const struct ap_docs_finding *n = finding(fs, "torch.n.gone", AP_FINDING_NOT_SWEPT);
	assert_non_null(n);
	assert_non_null(strstr(n->detail, "no walk of the sweep lists what it is under"));
	ap_docs_findings_free(&all);
	ap_docs_entries_free(&e);
	sweep_close(&w);
	ap_matrix_free(&l);
}

/* A full path resolves by identity alone: a class named by the module
 * that defines it is the class the walk found under its re-export, with
 * its members; a path whose class is another one's namesake is not that
 * class (no suffix fallback); and a class listed on two pages, by two
 * paths, gets its missing sub-entries said once. */
static void full_paths_resolve_by_identity_and_missing_members_are_said_once(void **state)
{
	(void)state;
	static const char page[] =
		"|API名称|是否支持|限制与说明|\n|--|--|--|\n"
		"|torch.m.defining.C|是|-|\n"
		"|torch.m.defining.C.go|是|-|\n"
		"|torch.other.C.go|是|-|\n"
		"|torch.m.C|是|-|\n"
		"|torch.m.K.run|是|-|\n"
		"|torch.K.run|是|-|\n";
	struct ap_docs_entries e = parse(page, "torch-m.md");
	struct sweep w = sweep_open();
	struct ap_matrix l = small_matrix();
	add(&l, "a2", "torch.m", "torch.m.C.stop", "method", "torch.m.C", "stop(self)");
	add(&l, "a3", "torch.m", "torch.m.C.stop", "method", "torch.m.C", "stop(self)");
	add(&l, "a2", "torch.m", "torch.m.C.size", "property", "torch.m.C", NULL);
	add(&l, "a3", "torch.m", "torch.m.C.size", "property", "torch.m.C", NULL);
	for (size_t i = 0; i < 2; i++) {
		add(&l, envs[i], "torch.m.sub", "torch.m.sub.K.run", "method", "torch.m.sub.K", "run()");
		add(&l, envs[i], "torch.x", "torch.x.K.run", "method", "torch.x.K", "run()");
	}
	for (size_t i = 0; i < l.n; i++)
		if (!strcmp(l.v[i].api, "torch.m.C"))
			l.v[i].defined = strdup("torch.m.defining.C");
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	struct ap_docs_findings all = audit(&e, &w, &l), *fs = &all;
	const struct ap_docs_finding *c = finding(fs, "torch.m.defining.C", AP_FINDING_CONTRADICTED);
	assert_non_null(c);
	assert_string_equal(c->resolved, "torch.m.C");
	const struct ap_docs_finding *go = finding(fs, "torch.m.defining.C.go", AP_FINDING_BACKED);
	assert_non_null(go);
	assert_string_equal(go->resolved, "torch.m.C.go");
	/* no catalog entry covers torch.other: nothing of torch.m.C is claimed */
	assert_non_null(finding(fs, "torch.other.C.go", AP_FINDING_NOT_SWEPT));
	/* stop is missing under the class's first entry, once */
	const struct ap_docs_finding *miss =
		finding(fs, "torch.m.defining.C.stop", AP_FINDING_MISSING_SUB_ENTRY);
	assert_non_null(miss);
	assert_null(finding(fs, "torch.m.C.stop", AP_FINDING_MISSING_SUB_ENTRY));
	assert_non_null(strstr(miss->detail, "not its method stop() (measured"));
	/* a property is not called: no "()" */
	const struct ap_docs_finding *size =
		finding(fs, "torch.m.defining.C.size", AP_FINDING_MISSING_SUB_ENTRY);
	assert_non_null(size);
	assert_non_null(strstr(size->detail, "not its property size (measured"));
	/* a page's path to a class torch keeps deeper: the one namesake under
	 * the page's package; several namesakes: none of them */
	const struct ap_docs_finding *k = finding(fs, "torch.m.K.run", AP_FINDING_BACKED);
	assert_non_null(k);
	assert_string_equal(k->resolved, "torch.m.sub.K.run");
	assert_non_null(finding(fs, "torch.K.run", AP_FINDING_NOT_SWEPT));
	ap_docs_findings_free(&all);
	ap_docs_entries_free(&e);
	sweep_close(&w);
	ap_matrix_free(&l);
}

/* A name a plugin adds (specs/plugin-apis.ini: torch_npu's nn.Module.npu,
 * its device module torch.npu and all under it) that no environment
 * reaches is plugin-api, saying the call that adds it and that no
 * environment loads the plugin; a name upstream's rule does not give it
 * (nn.Module.is_npu) is not found; where an environment loads the plugin
 * its walk would have seen the name: not found, not the plugin's. */
static void names_a_plugin_adds_are_plugin_apis_where_it_is_not_loaded(void **state)
{
	(void)state;
	static const char page[] =
		"|API名称|是否支持|限制与说明|\n|--|--|--|\n"
		"|torch.nn.Module.npu|是|-|\n"
		"|torch.nn.Module.is_npu|是|-|\n"
		"|torch.npu|是|-|\n"
		"|torch.npu.synchronize|是|-|\n";
	struct ap_docs_entries e = parse(page, "torch-nn.md");
	struct ap_matrix l = { 0 };
	for (size_t i = 0; i < 2; i++) {
		add(&l, envs[i], "torch", "torch", "module", NULL, NULL);
		add(&l, envs[i], "torch.nn", "torch.nn.Module", "class", NULL, "Module()");
	}
	ap_matrix_sort(&l, envs, 2);
	ap_matrix_judge(&l, NULL);
	walked(&l, "torch.nn.Module", "cuda", "");
	walked(&l, "torch", "cuda", "");
	struct sweep w = sweep_open();
	struct ap_docs_findings all = audit(&e, &w, &l), *fs = &all;
	const struct ap_docs_finding *m = finding(fs, "torch.nn.Module.npu", AP_FINDING_PLUGIN_API);
	assert_non_null(m);
	assert_null(m->resolved);
	assert_non_null(strstr(m->detail, "torch_npu adds it when it loads (backend npu: "
			       "torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, "
			       "for_module=True, for_storage=True, for_packed_sequence=True); "
			       "specs/plugin-apis.ini:"));
	/* the sweep did not say which plugins its environments load */
	assert_non_null(strstr(m->detail, "), and no measured environment is known to load torch_npu"));
	assert_non_null(finding(fs, "torch.nn.Module.is_npu", AP_FINDING_NOT_FOUND));
	const struct ap_docs_finding *d = finding(fs, "torch.npu", AP_FINDING_PLUGIN_API);
	assert_non_null(d);
	assert_non_null(strstr(d->detail, "(backend npu: torch._register_device_module('npu', ...); "));
	assert_non_null(finding(fs, "torch.npu.synchronize", AP_FINDING_PLUGIN_API));
	ap_docs_findings_free(&all);
	sweep_close(&w);

	/* environments that load no plugin: said plainly */
	char *none[] = { NULL };
	struct ap_matrix_strs no_plugins = { none, 0, 1 };
	w = sweep_with_plugins(&no_plugins);
	all = audit(&e, &w, &l);
	m = finding(fs, "torch.nn.Module.npu", AP_FINDING_PLUGIN_API);
	assert_non_null(m);
	assert_non_null(strstr(m->detail, "), and no measured environment loads torch_npu"));
	ap_docs_findings_free(&all);
	sweep_close(&w);

	/* environments that load torch_npu and still do not reach it */
	char *npu[] = { "torch_npu" };
	struct ap_matrix_strs loaded = { npu, 1, 1 };
	w = sweep_with_plugins(&loaded);
	all = audit(&e, &w, &l);
	assert_non_null(finding(fs, "torch.nn.Module.npu", AP_FINDING_NOT_FOUND));
	assert_non_null(finding(fs, "torch.npu", AP_FINDING_ABSENT));
	assert_null(finding(fs, "torch.npu.synchronize", AP_FINDING_PLUGIN_API));
	ap_docs_findings_free(&all);
	sweep_close(&w);
	ap_docs_entries_free(&e);
	ap_matrix_free(&l);
}

/* The text of the findings: each with file:line and class, then one count
 * per class in order of first appearance; a finding of no known class is
 * printed ("?") but counted nowhere (its class indexes nothing). */
static void findings_text_counts_each_known_class_once_in_order(void **state)
{
	(void)state;
	struct ap_docs_finding v[] = {
		{ "p.md", 3, "torch.x", NULL, AP_FINDING_NOT_FOUND, "d" },
		{ "p.md", 4, "torch.y", NULL, AP_FINDING_NCLASSES, "e" },
		{ "q.md", 5, "torch.z", NULL, AP_FINDING_BACKED, "f" },
		{ "q.md", 6, "torch.w", NULL, AP_FINDING_NOT_FOUND, "g" },
	};
	struct ap_docs_findings f = { v, 4, 4 };
	struct ap_buf out = { 0 };
	ap_docs_audit_text(&f, &out);
	assert_string_equal(ap_buf_str(&out),
			    "p.md:3: not-found: torch.x: d\n"
			    "p.md:4: ?: torch.y: e\n"
			    "q.md:5: backed: torch.z: f\n"
			    "q.md:6: not-found: torch.w: g\n"
			    "2 not-found\n"
			    "1 backed\n");
	ap_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(envs_are_read_with_their_products),
		cmocka_unit_test(generated_pages_read_back_as_generated),
		cmocka_unit_test(generated_entries_call_only_what_is_called),
		cmocka_unit_test(generated_pages_have_the_furniture_of_the_pages),
		cmocka_unit_test(real_page_is_audited_entry_by_entry),
		cmocka_unit_test(markdown_escapes_and_relative_names_resolve),
		cmocka_unit_test(members_of_a_class_reached_by_another_path_count),
		cmocka_unit_test(api_table_rows_are_audited_and_pages_name_their_formats),
		cmocka_unit_test(unlisted_names_are_judged_by_what_getattr_reaches),
		cmocka_unit_test(full_paths_resolve_by_identity_and_missing_members_are_said_once),
		cmocka_unit_test(names_a_plugin_adds_are_plugin_apis_where_it_is_not_loaded),
		cmocka_unit_test(findings_text_counts_each_known_class_once_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
