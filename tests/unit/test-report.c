/* test-report.c - unit tests for src/report.h: the report model derived from a
 * submission's bundles, and its Markdown, JUnit and HTML renderings. */
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
#include "review/html.h"
#include "review/report.h"
#include "evidence/submission.h"
#include "testutil.h"

#define TARGET "torch.nn.functional.gelu"
#define RUNLOG_SHA "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

struct fixture {
	char top[4096];
	struct ap_submission s;
	struct ap_report *report;
	json_t *model; /* report as report.json has it */
	struct ap_buf out;
};

static int make_tempdir(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (t_tempdir(f->top, sizeof(f->top), "test-report")) {
		free(f);
		return -1;
	}
	f->s.dir = strdup(f->top);
	*state = f;
	return f->s.dir ? 0 : -1;
}

static int remove_tempdir(void **state)
{
	struct fixture *f = *state;
	int r = t_rmtree(f->top);
	ap_submission_free(&f->s);
	json_decref(f->model);
	ap_report_free(f->report);
	ap_buf_free(&f->out);
	free(f);
	return r;
}

static json_t *fingerprint(void)
{
	return json_pack("{s:{s:s}, s:{s:s}, s:{s:s}, s:[{s:s, s:s}], s:[{s:s, s:b, s:i, s:[s]}]}",
			 "python", "version", "3.10.12", "torch", "version", "2.1.0",
			 "os", "name", "Ubuntu 22.04.4 LTS",
			 "plugins", "name", "torch_npu", "version", "2.1.0.post3",
			 "devices", "type", "npu", "available", 1, "count", 1, "names", "Ascend910B3");
}

/* A check as bundle.json holds it; reason may be NULL. */
static json_t *check(const char *name, const char *kind, const char *status, const char *reason)
{
	return json_pack("{s:s, s:s, s:s, s:s?, s:{s:s, s:s}, s:[{s:s, s:i}], s:i}",
			 "name", name, "kind", kind, "status", status, "reason", reason,
			 "says", "en", "gelu matches the reference", "zh", "gelu 与参考一致",
			 "trace", "step", "out", "value", 1, "duration_ms", 1500);
}

static json_t *bundle(const char *name, const char *label, const char *target,
		      const char *verdict, json_t *checks)
{
	json_t *b = json_pack(
		"{s:s, s:{s:s, s:s}, s:s, s:{s:s, s:s, s:s}, s:o,"
		" s:{s:b, s:s, s:s, s:s, s:i, s:s, s:s}, s:o, s:{s:s, s:[]}, s:s, s:[s],"
		" s:{s:b, s:s, s:s}}",
		"schema", "apiparity.bundle/1", "tool", "name", "apiparity", "version", "0.1.0",
		"target", target, "env", "name", name, "label", label, "device", "npu",
		"fingerprint", fingerprint(),
		"resolution", "found", 1, "kind", "function", "owner", "torch.nn.functional",
		"file", "torch/nn/functional.py", "line", 1672, "canonical", TARGET, "target", target,
		"checks", checks, "comparison", "reference", "a2", "differences",
		"verdict", verdict, "verdict_reasons", "why it is so",
		"adaptation", "device_independent", 1, "conclusion_en", "composed of generic ops",
		"conclusion_zh", "由通用算子组成");
	assert_non_null(b);
	return b;
}

/* Adds environment name to the submission, with a directory holding a
 * MANIFEST.sha256 that lists run.log. */
static void add_env(struct fixture *f, const char *name, const char *label, const char *target,
		    const char *verdict, json_t *checks)
{
	char dir[8192], path[8300];
	assert_non_null(checks);
	snprintf(dir, sizeof(dir), "%s/%s", f->top, name);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/MANIFEST.sha256", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%s  run.log\n", RUNLOG_SHA);
	assert_int_equal(fclose(fp), 0);
	struct ap_sub_env *v = realloc(f->s.v, (f->s.n + 1) * sizeof(*v));
	assert_non_null(v);
	f->s.v = v;
	f->s.v[f->s.n++] = (struct ap_sub_env){ strdup(name), strdup(dir),
						bundle(name, label, target, verdict, checks) };
}

static json_t *passing_checks(void)
{
	return json_pack("[o, o]", check("gelu_matches", "probe", "PASS", NULL),
			 check("test_nn.py::test_gelu", "official", "PASS", NULL));
}

static void two_envs(struct fixture *f, const char *v2, const char *v3)
{
	add_env(f, "a2", "Atlas A2 (910B3)", TARGET, v2, passing_checks());
	add_env(f, "a3", "Atlas A3 (x)", TARGET, v3, passing_checks());
}

/* The report model of f's submission, and its JSON. */
static void build(struct fixture *f, const struct ap_docs_entries *docs)
{
	f->report = ap_report_model(&f->s, docs);
	assert_non_null(f->report);
	f->model = ap_report_json(f->report);
}

static const json_t *conclusion(const struct fixture *f)
{
	return json_object_get(f->model, "conclusion");
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	assert_non_null(s);
	return s;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("'%s' not found in:\n%s", needle, hay);
}

/* ------------------------------------------------------------ the model */

static void any_inconsistent_env_makes_the_conclusion_inconsistent(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "consistent", "inconsistent");
	build(f, NULL);
	assert_non_null(f->model);
	assert_string_equal(str(conclusion(f), "verdict"), "inconsistent");
	assert_int_equal(json_array_size(json_object_get(conclusion(f), "consistent")), 1);
	assert_string_equal(json_string_value(json_array_get(
		json_object_get(conclusion(f), "inconsistent"), 0)), "a3");
	assert_int_equal(json_array_size(json_object_get(conclusion(f), "inconsistent")), 1);
}

static void all_unverified_envs_make_the_conclusion_unverified(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "unverified", "unverified");
	build(f, NULL);
	assert_string_equal(str(conclusion(f), "verdict"), "unverified");
	assert_int_equal(json_array_size(json_object_get(conclusion(f), "unverified")), 2);
	assert_int_equal(json_array_size(json_object_get(conclusion(f), "consistent")), 0);
}

static void consistent_and_unverified_envs_make_the_conclusion_consistent(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "consistent-with-limits", "unverified");
	build(f, NULL);
	assert_string_equal(str(conclusion(f), "verdict"), "consistent");
	assert_string_equal(json_string_value(json_array_get(
		json_object_get(conclusion(f), "consistent"), 0)), "a2");
}

static void environments_are_copied_from_the_bundles(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "consistent", "inconsistent");
	build(f, NULL);
	assert_string_equal(str(f->model, "schema"), "apiparity.report/1");
	assert_string_equal(str(f->model, "target"), TARGET);
	assert_string_equal(str(f->model, "class"), "torch.nn.functional");
	const json_t *envs = json_object_get(f->model, "environments");
	assert_int_equal(json_array_size(envs), 2);
	const json_t *e = json_array_get(envs, 1);
	assert_string_equal(str(e, "name"), "a3");
	assert_string_equal(str(e, "label"), "Atlas A3 (x)");
	assert_string_equal(str(e, "python"), "3.10.12");
	assert_string_equal(str(e, "torch"), "2.1.0");
	assert_string_equal(str(e, "os"), "Ubuntu 22.04.4 LTS");
	assert_string_equal(json_string_value(json_array_get(json_object_get(e, "plugins"), 0)),
			    "torch_npu 2.1.0.post3");
	assert_string_equal(str(e, "verdict"), "inconsistent");
	assert_int_equal(json_integer_value(json_object_get(e, "exit_code")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(envs, 0), "exit_code")), 0);
	assert_int_equal(json_array_size(json_object_get(e, "checks")), 2);
}

static void probes_count_only_probe_and_script_checks_that_ran(void **state)
{
	struct fixture *f = *state;
	add_env(f, "a2", "Atlas A2", TARGET, "inconsistent",
		json_pack("[o, o, o, o, o, o, o]",
			  check("p1", "probe", "PASS", NULL), check("p2", "probe", "FAIL", "off"),
			  check("s1", "script", "PASS", NULL),
			  check("p3", "probe", "NOTRUN", "no device"),
			  check("s2", "script", "NOTRUN", NULL),
			  check("test_a.py::test_b", "official", "PASS", NULL),
			  check("c1", "claim", "PASS", NULL)));
	build(f, NULL);
	const json_t *p = json_object_get(json_array_get(json_object_get(f->model, "environments"),
							 0), "probes");
	assert_int_equal(json_integer_value(json_object_get(p, "passed")), 2);
	assert_int_equal(json_integer_value(json_object_get(p, "total")), 3);
	/* the environment's section lists each check but the official ones
	 * (their own list) and numeric ones that passed (their table): a
	 * probe that passed too */
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	const char *md = ap_buf_str(&f->out);
	assert_contains(md, "\n  - PASS `p1`\n  - FAIL `p2`: off\n  - PASS `s1`\n");
	assert_contains(md, "\n  - PASS `c1`\n");
}

static void evidence_lists_the_manifest_with_paths_relative_to_the_submission(void **state)
{
	struct fixture *f = *state;
	char want[8192];
	two_envs(f, "consistent", "consistent");
	build(f, NULL);
	const json_t *ev = json_object_get(json_array_get(json_object_get(f->model, "environments"),
							  1), "evidence");
	assert_int_equal(json_array_size(ev), 1);
	assert_string_equal(str(json_array_get(ev, 0), "file"), "run.log");
	assert_string_equal(str(json_array_get(ev, 0), "sha256"), RUNLOG_SHA);
	snprintf(want, sizeof(want), "a3/run.log");
	assert_string_equal(str(json_array_get(ev, 0), "path"), want);
}

static void scope_lists_each_probe_and_official_node_once(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "consistent", "consistent");
	build(f, NULL);
	const json_t *scope = json_object_get(f->model, "scope");
	assert_int_equal(json_array_size(json_object_get(scope, "probes")), 1);
	assert_string_equal(str(json_array_get(json_object_get(scope, "probes"), 0), "name"),
			    "gelu_matches");
	assert_int_equal(json_array_size(json_object_get(scope, "official_nodes")), 1);
	assert_string_equal(str(json_array_get(json_object_get(scope, "official_nodes"), 0), "node"),
			    "test_nn.py::test_gelu");
}

/* A check given twice in one environment (a probe run in two families) is
 * one line of the scope, as one given in two environments is. */
static void scope_lists_a_check_repeated_in_one_env_once(void **state)
{
	struct fixture *f = *state;
	add_env(f, "a2", "Atlas A2 (910B3)", TARGET, "consistent",
		json_pack("[o, o]", check("gelu_matches", "probe", "PASS", NULL),
			  check("gelu_matches", "probe", "PASS", NULL)));
	build(f, NULL);
	const json_t *scope = json_object_get(f->model, "scope");
	assert_int_equal(json_array_size(json_object_get(scope, "probes")), 1);
}

/* ------------------------------------------------------------ Markdown */

static void markdown_zh_has_every_section_and_the_versions(void **state)
{
	struct fixture *f = *state;
	char ev[8192];
	two_envs(f, "consistent", "inconsistent");
	build(f, NULL);
	ap_report_markdown(f->report, AP_LANG_ZH, &f->out);
	const char *md = ap_buf_str(&f->out);
	assert_contains(md, "# API 一致性任务：" TARGET " 支持验证");
	assert_contains(md, "\n## 验证范围\n");
	assert_contains(md, "\n## 后端适配结论\n");
	assert_contains(md, "\n## 原生 API 文档支持情况\n");
	assert_contains(md, "\n## 结论\n");
	assert_contains(md, "### a2 结果 (Atlas A2 (910B3))");
	assert_contains(md, "### a3 结果 (Atlas A3 (x))");
	assert_contains(md, "Python 版本: 3.10.12");
	assert_contains(md, "torch 版本: 2.1.0");
	assert_contains(md, "torch_npu 2.1.0.post3");
	assert_contains(md, "由通用算子组成");
	assert_contains(md, "gelu 与参考一致 (gelu_matches)");
	assert_contains(md, "**inconsistent**");
	assert_contains(md, "  - a3: why it is so\n");
	snprintf(ev, sizeof(ev), "`a2/run.log` sha256 `%s`", RUNLOG_SHA);
	assert_contains(md, ev);
	assert_null(strstr(md, "Backend adaptation conclusion"));
}

static void markdown_en_has_every_section_and_the_versions(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "consistent", "consistent");
	build(f, NULL);
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	const char *md = ap_buf_str(&f->out);
	assert_contains(md, "# API consistency task: " TARGET " support verification");
	assert_contains(md, "\n## Scope\n");
	assert_contains(md, "\n## Backend adaptation conclusion\n");
	assert_contains(md, "\n## Native API documentation\n");
	assert_contains(md, "\n## Conclusion\n");
	assert_contains(md, "- Python: 3.10.12\n");
	assert_contains(md, "- torch: 2.1.0\n");
	assert_contains(md, "- Backend plugin: torch_npu 2.1.0.post3\n");
	assert_contains(md, "- Devices: npu: 1 x Ascend910B3\n");
	assert_contains(md, "- Focused checks: 1/1 PASS, Verdict consistent\n");
	assert_contains(md, "`torch/nn/functional.py:1672` (function)");
	assert_contains(md, "composed of generic ops");
	assert_contains(md, "no backend-specific patch is needed");
	assert_contains(md, "`test_nn.py::test_gelu`");
	assert_contains(md, "- Verdict: **consistent**\n");
	assert_null(strstr(md, "验证范围"));
}

static void docs_section_says_not_checked_without_docs(void **state)
{
	struct fixture *f = *state;
	struct ap_buf zh = { 0 };
	two_envs(f, "consistent", "consistent");
	build(f, NULL);
	assert_true(json_is_false(json_object_get(json_object_get(f->model, "docs"), "checked")));
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	ap_report_markdown(f->report, AP_LANG_ZH, &zh);
	assert_contains(ap_buf_str(&f->out), "## Native API documentation\n\n- not checked");
	assert_contains(ap_buf_str(&zh), "## 原生 API 文档支持情况\n\n- 未检查");
	ap_buf_free(&zh);
}

/* A signature check of env against "a2" with one hostile difference; the
 * signature text in the resolution is hostile too. */
static void add_signature(struct fixture *f, size_t i, const char *status, int same)
{
	json_t *b = f->s.v[i].bundle;
	json_object_set_new(json_object_get(b, "resolution"), "signature",
			    json_string("gelu(x=\"`\\n# <b>\")"));
	json_t *c = check("signature", "signature", status, "differs");
	json_object_set_new(c, "signature", json_pack(
		"{s:s, s:s, s:s, s:b, s:[{s:s, s:s, s:s}]}", "reference", "a2", "torch",
		"2.1.0", "source", "inspect", "same_torch", same,
		"differences", "what", "default", "param", "x", "text",
		"default of 'x' changed: 1 -> \"<script>\n## heading\""));
	json_array_append_new(json_object_get(b, "checks"), c);
}

static void signature_differences_are_reported_and_escaped(void **state)
{
	struct fixture *f = *state;
	struct ap_buf zh = { 0 }, html = { 0 };
	two_envs(f, "consistent", "inconsistent");
	add_signature(f, 1, "FAIL", 1);
	build(f, NULL);
	const json_t *g = json_array_get(json_object_get(f->model, "signatures"), 0);
	assert_int_equal(json_array_size(json_object_get(f->model, "signatures")), 1);
	assert_string_equal(str(g, "env"), "a3");
	assert_string_equal(str(g, "status"), "FAIL");
	assert_string_equal(str(json_array_get(json_object_get(g, "differences"), 0), "param"), "x");
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	ap_report_markdown(f->report, AP_LANG_ZH, &zh);
	ap_report_html(f->report, AP_LANG_EN, &html);
	const char *md = ap_buf_str(&f->out);
	assert_contains(md, "\n## Signatures\n\n- a3 (inspect): ");
	assert_contains(md, ": FAIL, the same torch release as a2: a difference is an inconsistency\n");
	assert_contains(ap_buf_str(&zh), "\n## 签名比较\n\n- a3 (inspect): ");
	assert_contains(ap_buf_str(&zh), "与 a2 的 torch 版本相同，签名差异即不一致");
	/* No value starts a line, a heading or HTML. */
	assert_null(strstr(md, "\n## heading"));
	assert_null(strstr(md, "\n# <b>"));
	assert_null(strstr(md, "<script>"));
	assert_null(strstr(ap_buf_str(&html), "<script>"));
	assert_null(strstr(ap_buf_str(&html), "<b>"));
	assert_contains(ap_buf_str(&html), "<h2>Signatures</h2>");
	assert_contains(ap_buf_str(&html), "<li>default of &#39;x&#39; changed: 1 -&gt; &quot;&lt;script&gt;");
	ap_buf_free(&zh);
	ap_buf_free(&html);
}

static void signature_change_at_another_release_is_told_as_a_limit(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "consistent", "consistent-with-limits");
	add_signature(f, 1, "WARN", 0);
	build(f, NULL);
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	assert_contains(ap_buf_str(&f->out), ": WARN, another torch release than a2: a difference is a "
			"stated limit\n");
}

static void report_without_signature_checks_says_none_compared(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "consistent", "consistent");
	build(f, NULL);
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	assert_int_equal(json_array_size(json_object_get(f->model, "signatures")), 0);
	assert_contains(ap_buf_str(&f->out), "## Signatures\n\n- no signature compared");
}

/* One entry of a page, for api: both products supported. The model points
 * into it: it lives until the next call. */
static struct ap_docs_entries *docs_entries(const char *api)
{
	static struct ap_docs_product products[2];
	static struct ap_docs_entry e;
	static struct ap_docs_entries docs = { &e, 1, 1 };
	products[0] = (struct ap_docs_product){ "Atlas A2 训练系列产品", 1 };
	products[1] = (struct ap_docs_product){ "Atlas A3 训练系列产品", 1 };
	e = (struct ap_docs_entry){ .api = (char *)api, .kind = AP_DOCS_FUNCTION,
				    .file = "torch-nn-functional.md", .line = 12,
				    .format = AP_DOCS_LIST, .products = products, .nproducts = 2,
				    .others = -1 };
	return &docs;
}

static void docs_claim_of_support_contradicted_by_an_inconsistent_env_is_listed(void **state)
{
	struct fixture *f = *state;
	struct ap_docs_entries *docs = docs_entries(TARGET);
	two_envs(f, "consistent", "inconsistent");
	build(f, docs);
	const json_t *d = json_object_get(f->model, "docs");
	assert_true(json_is_true(json_object_get(d, "checked")));
	assert_true(json_is_true(json_object_get(d, "exact")));
	/* the entry as report.json writes it */
	const json_t *e = json_object_get(d, "entry");
	assert_string_equal(str(e, "file"), "torch-nn-functional.md");
	assert_int_equal(json_integer_value(json_object_get(e, "line")), 12);
	assert_string_equal(str(e, "format"), "list");
	assert_string_equal(str(json_array_get(json_object_get(e, "products"), 1), "product"),
			    "Atlas A3 训练系列产品");
	assert_true(json_is_null(json_object_get(e, "others")));
	const json_t *c = json_object_get(d, "contradictions");
	assert_int_equal(json_array_size(c), 1);
	assert_string_equal(str(json_array_get(c, 0), "product"), "Atlas A3 训练系列产品");
	assert_string_equal(str(json_array_get(c, 0), "env"), "a3");
	assert_true(json_is_true(json_object_get(json_array_get(c, 0), "claimed")));
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	assert_contains(ap_buf_str(&f->out), "the docs have an entry for this API: `" TARGET
			"` (torch-nn-functional.md:12)");
	assert_contains(ap_buf_str(&f->out), "- docs claim contradicted by measurement: "
			"Atlas A3 训练系列产品 supported, a3 inconsistent\n");
}

static void docs_that_agree_with_every_env_have_no_contradiction(void **state)
{
	struct fixture *f = *state;
	struct ap_docs_entries *docs = docs_entries(TARGET);
	two_envs(f, "consistent", "consistent-with-limits");
	build(f, docs);
	assert_int_equal(json_array_size(json_object_get(json_object_get(f->model, "docs"),
							 "contradictions")), 0);
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	assert_contains(ap_buf_str(&f->out), "the docs' claims agree with the measurements");
}

/* The other direction: the docs deny support where the measurement finds it. */
static void docs_claim_of_no_support_contradicted_by_a_consistent_env_is_listed(void **state)
{
	struct fixture *f = *state;
	struct ap_docs_entries *docs = docs_entries(TARGET);
	docs->v[0].products[0].supported = 0;
	two_envs(f, "consistent", "inconsistent");
	build(f, docs);
	const json_t *c = json_object_get(json_object_get(f->model, "docs"), "contradictions");
	assert_int_equal(json_array_size(c), 2);
	assert_string_equal(str(json_array_get(c, 0), "product"), "Atlas A2 训练系列产品");
	assert_true(json_is_false(json_object_get(json_array_get(c, 0), "claimed")));
	assert_string_equal(str(json_array_get(c, 0), "verdict"), "consistent");
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	assert_contains(ap_buf_str(&f->out), "- docs claim contradicted by measurement: "
			"Atlas A2 训练系列产品 unsupported, a2 consistent\n");
}

static void docs_without_an_entry_for_the_target_ask_for_one(void **state)
{
	struct fixture *f = *state;
	struct ap_docs_entries *docs = docs_entries("torch.nn.functional.relu");
	two_envs(f, "consistent", "consistent");
	build(f, docs);
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	assert_contains(ap_buf_str(&f->out), "the docs have no entry for this API");
}

static void docs_whose_products_match_no_env_say_nothing_was_compared(void **state)
{
	struct fixture *f = *state;
	struct ap_buf zh = { 0 };
	struct ap_docs_entries *docs = docs_entries(TARGET);
	docs->v[0].products[0] = (struct ap_docs_product){ "Atlas 300I 推理系列产品", 0 };
	docs->v[0].nproducts = 1;
	two_envs(f, "consistent", "consistent");
	build(f, docs);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(f->model, "docs"),
							    "compared")), 0);
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	ap_report_markdown(f->report, AP_LANG_ZH, &zh);
	assert_contains(ap_buf_str(&f->out), "- no measured environment matches a product of the "
			"page: the docs' claims were not compared with any measurement\n");
	assert_null(strstr(ap_buf_str(&f->out), "agree with the measurements"));
	assert_contains(ap_buf_str(&zh), "没有测量环境对应文档中的任何产品");
	assert_null(strstr(ap_buf_str(&zh), "文档声明与测量一致"));
	ap_buf_free(&zh);
}

/* ------------------------------------------------------------ JUnit */

/* The <testcase> element whose name attribute is name, copied into el. */
static void testcase(const char *xml, const char *name, char *el, size_t size)
{
	char attr[512];
	snprintf(attr, sizeof(attr), "name=\"%s\"", name);
	const char *p = strstr(xml, attr), *end = p ? strstr(p, "</testcase>") : NULL;
	if (!end)
		fail_msg("no testcase %s in:\n%s", name, xml);
	snprintf(el, size, "%.*s", (int)(end - p), p);
}

static void junit_has_one_testcase_per_check_tagged_by_status(void **state)
{
	struct fixture *f = *state;
	char el[4096];
	add_env(f, "a2", "Atlas A2", TARGET, "inconsistent",
		json_pack("[o, o, o, o, o]", check("ok", "probe", "PASS", NULL),
			  check("bad", "probe", "FAIL", "wrong value"),
			  check("boom", "script", "CRASH", "SIGSEGV"),
			  check("skip", "official", "SKIP", "needs cuda"),
			  check("notrun", "official", "NOTRUN", "no source")));
	build(f, NULL);
	ap_report_junit(f->report, &f->out);
	const char *xml = ap_buf_str(&f->out);
	assert_int_equal(count(xml, "<testcase "), 5);
	assert_int_equal(count(xml, "</testcase>"), 5);
	assert_contains(xml, "tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"2\"");
	testcase(xml, "ok", el, sizeof(el));
	assert_null(strstr(el, "<failure"));
	assert_null(strstr(el, "<error"));
	assert_null(strstr(el, "<skipped"));
	testcase(xml, "bad", el, sizeof(el));
	assert_contains(el, "<failure message=\"FAIL: wrong value\"/>");
	testcase(xml, "boom", el, sizeof(el));
	assert_contains(el, "<error message=\"CRASH: SIGSEGV\"/>");
	testcase(xml, "skip", el, sizeof(el));
	assert_contains(el, "<skipped message=\"SKIP: needs cuda\"/>");
	testcase(xml, "notrun", el, sizeof(el));
	assert_contains(el, "<skipped message=\"NOTRUN: no source\"/>");
	assert_contains(xml, "classname=\"a2.script\" name=\"boom\" time=\"1.500\"");
}

static void junit_escapes_names_reasons_and_statuses(void **state)
{
	struct fixture *f = *state;
	add_env(f, "a2", "Atlas A2", "t<&\"", "inconsistent",
		json_pack("[o, o]", check("a<b & \"c\"", "probe", "FAIL", "x<y & \"z\""),
			  check("s", "probe", "X\"/><evil", NULL)));
	build(f, NULL);
	ap_report_junit(f->report, &f->out);
	const char *xml = ap_buf_str(&f->out);
	assert_contains(xml, "name=\"a&lt;b &amp; &quot;c&quot;\"");
	assert_contains(xml, "message=\"FAIL: x&lt;y &amp; &quot;z&quot;\"");
	assert_contains(xml, "<testsuites name=\"apiparity t&lt;&amp;&quot;\">");
	assert_contains(xml, "<skipped message=\"X&quot;/&gt;&lt;evil\"/>");
	assert_null(strstr(xml, "a<b"));
	assert_null(strstr(xml, "<evil"));
}

/* ------------------------------------------------------------ escaping */

static void escape_xml_escapes_markup_characters(void **state)
{
	struct fixture *f = *state;
	ap_escape_xml("a<b>c&d\"e'f", &f->out);
	assert_string_equal(ap_buf_str(&f->out), "a&lt;b&gt;c&amp;d&quot;e&#39;f");
}

static void escape_xml_replaces_control_characters_but_keeps_tab_newline_and_utf8(void **state)
{
	struct fixture *f = *state;
	ap_escape_xml("a\x01" "b\x1f" "c\td\ne\x1b" "支持", &f->out);
	assert_string_equal(ap_buf_str(&f->out), "a&#xFFFD;b&#xFFFD;c\td\ne&#xFFFD;支持");
}

static void escape_xml_of_empty_or_null_adds_nothing(void **state)
{
	struct fixture *f = *state;
	ap_escape_xml("", &f->out);
	ap_escape_xml(NULL, &f->out);
	assert_int_equal(f->out.len, 0);
}

/* ------------------------------------------------------------ hostile data */

static const char *const hostile[] = {
	"ok\n# Conclusion: ACCEPT", "# heading", "> quote", "- item", "1. ordered", "```",
	"<div>html block</div>", "<script>alert(1)</script>", "|a|b|\n|-|-|", "    code",
	"***", "x\r\n## heading\x1b[2J", "+ item", "~~~", "<!-- c", "===",
};

/* Replaces every string value of v (recursively) with the next of the
 * hostile ones, or with "v" when benign: the same paths through the
 * renderers, with data that tries to break out of its place. */
static void poison(json_t *v, size_t *k, int benign)
{
	size_t i;
	const char *key;
	json_t *x;
	if (json_is_object(v)) {
		json_object_foreach(v, key, x) {
			if (json_is_string(x))
				json_object_set_new(v, key, json_string(benign ? "v" :
					hostile[(*k)++ % (sizeof(hostile) / sizeof(hostile[0]))]));
			else
				poison(x, k, benign);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			if (json_is_string(x))
				json_array_set_new(v, i, json_string(benign ? "v" :
					hostile[(*k)++ % (sizeof(hostile) / sizeof(hostile[0]))]));
			else
				poison(x, k, benign);
		}
	}
}

/* What a Markdown line opens, once its list markers are stripped: "h"
 * heading, "q" quote, "f" fence, "<" HTML, "|" table row, "o" ordered
 * item, "c" indented code, "t" text; prefixed by its indent and markers. */
static void line_kind(const char *line, size_t len, struct ap_buf *out)
{
	size_t i = 0;
	while (i < len && line[i] == ' ')
		i++;
	ap_buf_addf(out, "%zu", i);
	while (i + 1 < len && strchr("-*+", line[i]) && line[i + 1] == ' ') {
		ap_buf_adds(out, "-");
		i += 2;
		size_t sp = 0;
		while (i < len && line[i] == ' ')
			i++, sp++;
		if (sp >= 4)
			ap_buf_adds(out, "c");
	}
	const char *p = line + i;
	size_t d = strspn(p, "0123456789");
	ap_buf_adds(out, i >= len ? "" : *p == '#' ? "h" : *p == '>' ? "q" : *p == '<' ? "<"
		    : *p == '|' ? "|" : *p == '`' || *p == '~' ? "f" : strchr("-*+_=", *p) ? "b"
		    : d && (p[d] == '.' || p[d] == ')') ? "o" : "t");
	ap_buf_adds(out, "\n");
}

static void md_kinds(const char *md, struct ap_buf *out)
{
	for (const char *p = md; *p;) {
		size_t len = strcspn(p, "\n");
		line_kind(p, len, out);
		p += len + (p[len] == '\n');
	}
}

/* md without its code spans, where '<' is literal text (CommonMark 6.1). */
static void outside_code(const char *md, struct ap_buf *out)
{
	for (const char *p = md; *p;) {
		size_t n = strspn(p, "`");
		if (!n) {
			ap_buf_add(out, p++, 1);
			continue;
		}
		const char *q = p + n;
		while ((q = strchr(q, '`')) && strspn(q, "`") != n)
			q += strspn(q, "`");
		p = q ? q + n : p + n;
	}
}

/* Renders the report of a2 and a3 with every string of their bundles (and
 * the names of the environments) poisoned. */
static void render_poisoned(struct fixture *f, int benign, enum ap_lang l, struct ap_buf *md)
{
	two_envs(f, "consistent", "inconsistent");
	size_t k = 0;
	for (size_t i = 0; i < f->s.n; i++) {
		json_t *checks = json_object_get(f->s.v[i].bundle, "checks");
		json_array_append_new(checks, check("o", "official", "FAIL", "why"));
		json_object_set_new(json_object_get(f->s.v[i].bundle, "resolution"), "nearest",
				    json_pack("[s]", "n"));
		poison(f->s.v[i].bundle, &k, benign);
		free(f->s.v[i].name);
		f->s.v[i].name = strdup(benign ? "v" : hostile[i]);
	}
	build(f, NULL);
	ap_report_markdown(f->report, l, md);
}

static void no_data_value_adds_a_line_or_a_block_to_the_markdown(void **state)
{
	struct fixture *f = *state;
	for (int l = AP_LANG_ZH; l <= AP_LANG_EN; l++) {
		struct ap_buf plain = { 0 }, evil = { 0 }, kp = { 0 }, ke = { 0 };
		render_poisoned(f, 1, l, &plain);
		remove_tempdir(state);
		make_tempdir(state);
		f = *state;
		render_poisoned(f, 0, l, &evil);
		md_kinds(ap_buf_str(&plain), &kp);
		md_kinds(ap_buf_str(&evil), &ke);
		if (strcmp(ap_buf_str(&kp), ap_buf_str(&ke)))
			fail_msg("the structure changed:\n%s\n---- from ----\n%s", ap_buf_str(&evil),
				 ap_buf_str(&plain));
		struct ap_buf text = { 0 };
		outside_code(ap_buf_str(&evil), &text);
		if (strpbrk(ap_buf_str(&text), "<>"))
			fail_msg("raw markup outside code spans:\n%s", ap_buf_str(&evil));
		ap_buf_free(&text);
		assert_null(strchr(ap_buf_str(&evil), '\x1b'));
		assert_null(strchr(ap_buf_str(&evil), '\r'));
		assert_contains(ap_buf_str(&evil), "&lt;script&gt;");
		ap_buf_free(&plain);
		ap_buf_free(&evil);
		ap_buf_free(&kp);
		ap_buf_free(&ke);
		remove_tempdir(state);
		make_tempdir(state);
		f = *state;
	}
}

static void no_data_value_opens_a_tag_in_html_or_junit(void **state)
{
	struct fixture *f = *state;
	struct ap_buf md = { 0 }, html = { 0 };
	render_poisoned(f, 0, AP_LANG_EN, &md);
	ap_report_html(f->report, AP_LANG_EN, &html);
	ap_report_junit(f->report, &f->out);
	const char *docs[] = { ap_buf_str(&html), ap_buf_str(&f->out) };
	for (size_t i = 0; i < 2; i++) {
		assert_null(strstr(docs[i], "<script"));
		assert_null(strstr(docs[i], "<div"));
		assert_null(strstr(docs[i], "<!--"));
		assert_null(strchr(docs[i], '\x1b'));
		assert_null(strchr(docs[i], '\r'));
	}
	ap_buf_free(&md);
	ap_buf_free(&html);
}

/* ------------------------------------------------------------ matrix, traces */

static void matrix_has_a_row_per_check_of_any_kind_and_a_cell_per_env(void **state)
{
	struct fixture *f = *state;
	add_env(f, "a2", "Atlas A2", TARGET, "consistent", passing_checks());
	add_env(f, "a3", "Atlas A3", TARGET, "inconsistent",
		json_pack("[o, o]", check("gelu_matches", "probe", "FAIL", "off by one"),
			  check("add/float32", "numeric", "PASS", NULL)));
	build(f, NULL);
	const json_t *mx = json_object_get(f->model, "matrix");
	const json_t *rows = json_object_get(mx, "rows");
	assert_int_equal(json_array_size(rows), 3);
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(mx, "columns"), 0),
						  "reference")));
	const json_t *probe = json_array_get(rows, 0), *numeric = json_array_get(rows, 2);
	assert_string_equal(str(probe, "name"), "gelu_matches");
	assert_string_equal(str(json_array_get(json_object_get(probe, "cells"), 1), "status"), "FAIL");
	assert_string_equal(str(json_array_get(json_object_get(probe, "cells"), 1), "reason"), "off by one");
	assert_string_equal(str(numeric, "kind"), "numeric");
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(numeric, "cells"), 0),
						 "status")));
	assert_string_equal(str(json_array_get(json_object_get(numeric, "cells"), 1), "env"), "a3");
}

static void trace_step_differs_where_an_env_recorded_another_value(void **state)
{
	struct fixture *f = *state;
	json_t *c2 = check("gelu_matches", "probe", "PASS", NULL), *c3 = json_deep_copy(c2);
	json_array_append_new(json_object_get(c2, "trace"), json_pack("{s:s, s:b}", "step", "sign", "value", 1));
	json_array_append_new(json_object_get(c3, "trace"), json_pack("{s:s, s:b}", "step", "sign", "value", 0));
	add_env(f, "a2", "Atlas A2", TARGET, "consistent", json_pack("[o]", c2));
	add_env(f, "a3", "Atlas A3", TARGET, "inconsistent", json_pack("[o]", c3));
	build(f, NULL);
	const json_t *t = json_array_get(json_object_get(f->model, "traces"), 0);
	assert_string_equal(str(t, "check"), "gelu_matches");
	assert_int_equal(json_integer_value(json_object_get(t, "differing")), 1);
	const json_t *same = json_array_get(json_object_get(t, "steps"), 0);
	const json_t *diff = json_array_get(json_object_get(t, "steps"), 1);
	assert_string_equal(str(same, "step"), "out");
	assert_true(json_is_false(json_object_get(same, "differs")));
	assert_string_equal(str(diff, "step"), "sign");
	assert_true(json_is_true(json_object_get(diff, "differs")));
	assert_true(json_is_false(json_object_get(json_array_get(json_object_get(diff, "values"), 1),
						  "value")));
}

/* ------------------------------------------------------------ HTML */

static void html_escapes_a_script_in_the_target(void **state)
{
	struct fixture *f = *state;
	const char *evil = "x<script>alert(1)</script>";
	add_env(f, "a2", "Atlas A2", evil, "consistent", passing_checks());
	add_env(f, "a3", "Atlas <script>", evil, "consistent", passing_checks());
	build(f, NULL);
	ap_report_html(f->report, AP_LANG_EN, &f->out);
	const char *html = ap_buf_str(&f->out);
	assert_null(strstr(html, "<script"));
	assert_contains(html, "x&lt;script&gt;alert(1)&lt;/script&gt;");
}

static void html_has_a_section_per_environment_and_the_verdict(void **state)
{
	struct fixture *f = *state;
	two_envs(f, "consistent", "inconsistent");
	build(f, NULL);
	ap_report_html(f->report, AP_LANG_EN, &f->out);
	const char *html = ap_buf_str(&f->out);
	assert_int_equal(count(html, "<section class=\"env\""), 2);
	assert_contains(html, "<section class=\"env\" data-env=\"a2\">");
	assert_contains(html, "<section class=\"env\" data-env=\"a3\">");
	assert_contains(html, "id=\"verdict\">Verdict: <strong>inconsistent</strong>");
	assert_contains(html, "run.log sha256 " RUNLOG_SHA);
}

/* ------------------------------------------------------------ numeric */

/* A numeric check of op on dtype, device against "cpu", with one measurement. */
static json_t *numeric(const char *op, const char *dtype, const char *status, double ratio)
{
	json_t *c = json_pack("{s:s, s:s, s:s, s:n, s:[], s:i, s:s, s:s, s:s, s:s, s:s, s:n,"
			      " s:[{s:s, s:f, s:f, s:f, s:f, s:f}]}",
			      "name", "n", "kind", "numeric", "status", status, "reason", "trace",
			      "duration_ms", 0, "op", op, "dtype", dtype, "device", "npu",
			      "against", "cpu", "sample_kind", "sample", "across", "measurements",
			      "output", "out[0]", "max_abs", ratio * 1e-5, "max_rel", ratio * 1e-6,
			      "worst_ratio", ratio, "rtol", 1.3e-6, "atol", 1e-5);
	assert_non_null(c);
	return c;
}

static void numeric_rows_sum_samples_and_keep_the_worst_error(void **state)
{
	struct fixture *f = *state;
	add_env(f, "a2", "Atlas A2", TARGET, "inconsistent", json_pack("[o, o, o]",
		numeric("gelu", "float32", "PASS", 0.5), numeric("gelu", "float32", "FAIL", 770.0),
		numeric("gelu", "float64", "PASS", 0.0)));
	build(f, NULL);
	const json_t *rows = json_object_get(json_array_get(json_object_get(f->model, "environments"), 0),
					     "numeric");
	assert_int_equal(json_array_size(rows), 2);
	const json_t *r = json_array_get(rows, 0);
	assert_string_equal(str(r, "dtype"), "float32");
	assert_int_equal(json_integer_value(json_object_get(r, "samples")), 2);
	assert_int_equal(json_integer_value(json_object_get(r, "failed")), 1);
	assert_true(json_real_value(json_object_get(r, "worst_ratio")) == 770.0);
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	assert_contains(ap_buf_str(&f->out), "- Numeric checks (OpInfo samples, per operator and dtype):\n"
			"  - `gelu` float32, npu vs cpu: 2 samples: 1 passed, 1 failed, 0 not run; "
			"max_abs 0.0077, max_rel 0.00077, 770x the tolerance (rtol 1.3e-06, atol 1e-05)");
	ap_buf_reset(&f->out);
	ap_report_markdown(f->report, AP_LANG_ZH, &f->out);
	assert_contains(ap_buf_str(&f->out), "数值检查");
}

/* A row's tolerance is its first measured one: an operator whose outputs
 * are a float and an integer (max with dim: values, indices) is compared
 * with the float's tolerance, not the integers' exact 0/0 that follows. */
static void numeric_row_takes_the_first_measured_tolerance(void **state)
{
	struct fixture *f = *state;
	json_t *c = numeric("max", "float32", "PASS", 0.5);
	json_array_append_new(json_object_get(c, "measurements"),
			      json_pack("{s:s, s:f, s:f, s:f, s:f, s:f}", "output", "out[1]", "max_abs",
					0.0, "max_rel", 0.0, "worst_ratio", 0.0, "rtol", 0.0, "atol", 0.0));
	add_env(f, "a2", "Atlas A2", TARGET, "consistent", json_pack("[o]", c));
	build(f, NULL);
	ap_report_markdown(f->report, AP_LANG_EN, &f->out);
	assert_contains(ap_buf_str(&f->out), "  - `max` float32, npu vs cpu: 1 samples: 1 passed, 0 failed, "
			"0 not run; max_abs 5e-06, max_rel 5e-07, 0.5x the tolerance (rtol 1.3e-06, atol 1e-05)");
}

static void numeric_chart_marks_failures_and_escapes_names(void **state)
{
	struct fixture *f = *state;
	add_env(f, "a2", "Atlas A2", TARGET, "inconsistent", json_pack("[o, o]",
		numeric("<script>x", "float32", "FAIL", 770.0), numeric("gelu", "float64", "PASS", 0.01)));
	build(f, NULL);
	ap_report_html(f->report, AP_LANG_EN, &f->out);
	const char *html = ap_buf_str(&f->out);
	assert_null(strstr(html, "<script"));
	assert_int_equal(count(html, "<svg class=\"numeric\""), 1);
	assert_contains(html, "&lt;script&gt;x float32 npu vs cpu</text>");
	assert_int_equal(count(html, "fill=\"#d73a49\""), 1);
	assert_int_equal(count(html, "fill=\"#2da44e\""), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_tempdir, remove_tempdir)
		T(any_inconsistent_env_makes_the_conclusion_inconsistent),
		T(all_unverified_envs_make_the_conclusion_unverified),
		T(consistent_and_unverified_envs_make_the_conclusion_consistent),
		T(environments_are_copied_from_the_bundles),
		T(probes_count_only_probe_and_script_checks_that_ran),
		T(evidence_lists_the_manifest_with_paths_relative_to_the_submission),
		T(scope_lists_each_probe_and_official_node_once),
		T(scope_lists_a_check_repeated_in_one_env_once),
		T(markdown_zh_has_every_section_and_the_versions),
		T(markdown_en_has_every_section_and_the_versions),
		T(signature_differences_are_reported_and_escaped),
		T(signature_change_at_another_release_is_told_as_a_limit),
		T(report_without_signature_checks_says_none_compared),
		T(docs_section_says_not_checked_without_docs),
		T(docs_claim_of_support_contradicted_by_an_inconsistent_env_is_listed),
		T(docs_that_agree_with_every_env_have_no_contradiction),
		T(docs_claim_of_no_support_contradicted_by_a_consistent_env_is_listed),
		T(docs_without_an_entry_for_the_target_ask_for_one),
		T(docs_whose_products_match_no_env_say_nothing_was_compared),
		T(junit_has_one_testcase_per_check_tagged_by_status),
		T(junit_escapes_names_reasons_and_statuses),
		T(escape_xml_escapes_markup_characters),
		T(escape_xml_replaces_control_characters_but_keeps_tab_newline_and_utf8),
		T(escape_xml_of_empty_or_null_adds_nothing),
		T(matrix_has_a_row_per_check_of_any_kind_and_a_cell_per_env),
		T(trace_step_differs_where_an_env_recorded_another_value),
		T(html_escapes_a_script_in_the_target),
		T(html_has_a_section_per_environment_and_the_verdict),
		T(no_data_value_adds_a_line_or_a_block_to_the_markdown),
		T(no_data_value_opens_a_tag_in_html_or_junit),
		T(numeric_rows_sum_samples_and_keep_the_worst_error),
		T(numeric_row_takes_the_first_measured_tolerance),
		T(numeric_chart_marks_failures_and_escapes_names),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
