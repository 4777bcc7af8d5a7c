#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/jsonutil.h"
#include "review/escape.h"
#include "check/signature.h"
#include "check/verdict.h"
#include "evidence/bundle.h"
#include "evidence/manifest.h"
#include "review/docs.h"
#include "review/report.h"

/* ------------------------------------------------------------ the model */

struct evidence_list {
	const char *dir;
	json_t *files;
};

static int evidence_add(void *ctx, const char *sha256, const char *rel)
{
	struct evidence_list *l = ctx;
	struct ap_buf path = { 0 };
	ap_buf_addf(&path, "%s/%s", l->dir, rel);
	json_array_append_new(l->files, json_pack("{s:s, s:s, s:s}", "file", rel, "sha256", sha256,
						  "path", ap_buf_str(&path)));
	ap_buf_free(&path);
	return 0;
}

/* The files the manifest of dir lists: [{file, sha256, path}], empty when
 * there is no readable manifest (verify names that). */
static json_t *report_evidence(const char *dir)
{
	struct evidence_list l = { dir, json_array() };
	ap_manifest_list(dir, evidence_add, &l);
	return l.files;
}

static int env_exit_code(const json_t *b)
{
	if (ap_bundle_failed(b))
		return (int)json_integer_value(json_object_get(json_object_get(b, "error"),
							       "exit_code"));
	const char *v = ap_json_text(b, "verdict");
	return !strcmp(v, "inconsistent") ? 1 : 0;
}

static json_t *model_checks(const json_t *b)
{
	json_t *out = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		const char *kind = ap_json_text(c, "kind"), *st = ap_json_text(c, "status");
		const json_t *says = json_object_get(c, "says");
		json_array_append_new(out, json_pack("{s:O?, s:s, s:s, s:O?, s:O?, s:O?, s:O?, s:O?}",
			"name", json_object_get(c, "name"), "kind", kind, "status", st,
			"reason", json_object_get(c, "reason"), "says_en", json_object_get(says, "en"),
			"says_zh", json_object_get(says, "zh"), "duration_ms",
			json_object_get(c, "duration_ms"), "trace", json_object_get(c, "trace")));
	}
	return out;
}

/* A measurement's number: a JSON number, or the tag of inf/nan (taken as
 * the largest), as a double. */
static double num(const json_t *v)
{
	if (json_is_number(v))
		return json_number_value(v);
	return json_is_object(v) ? HUGE_VAL : 0;
}

/* The numeric checks of b summed per operator, dtype and comparison:
 * [{op, dtype, device, against, samples, passed, failed, notrun, max_abs,
 * max_rel, worst_ratio, rtol, atol}], in the order first seen. */
static json_t *model_numeric(const json_t *b)
{
	json_t *rows = json_array(), *index = json_object(), *c;
	size_t i, k;
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		if (strcmp(ap_json_text(c, "kind"), "numeric") || !json_object_get(c, "op"))
			continue;
		const char *dt = json_is_string(json_object_get(c, "dtype")) ?
			ap_json_text(c, "dtype") : "error inputs";
		const char *against = json_is_string(json_object_get(c, "across")) ?
			ap_json_text(c, "across") : json_is_string(json_object_get(c, "against")) ?
			ap_json_text(c, "against") : "nothing (ran only)";
		struct ap_buf key = { 0 };
		ap_buf_addf(&key, "%s\n%s\n%s\n%s", ap_json_text(c, "op"), dt,
			    ap_json_text(c, "device"), against);
		json_t *row = json_object_get(index, ap_buf_str(&key));
		if (!row) {
			row = json_pack("{s:O, s:s, s:O, s:s, s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:n, s:n}",
					"op", json_object_get(c, "op"), "dtype", dt, "device",
					json_object_get(c, "device"), "against", against, "samples", 0,
					"passed", 0, "failed", 0, "notrun", 0, "max_abs", 0.0, "max_rel",
					0.0, "worst_ratio", 0.0, "rtol", "atol");
			json_object_set_new(index, ap_buf_str(&key), row);
			json_array_append(rows, row);
		}
		ap_buf_free(&key);
		const char *st = ap_json_text(c, "status");
		const char *field = !strcmp(st, "PASS") ? "passed" : !strcmp(st, "NOTRUN") ?
			"notrun" : "failed";
		json_object_set_new(row, "samples", json_integer(
			json_integer_value(json_object_get(row, "samples")) + 1));
		json_object_set_new(row, field, json_integer(
			json_integer_value(json_object_get(row, field)) + 1));
		json_t *m;
		json_array_foreach(json_object_get(c, "measurements"), k, m) {
			static const char *const worst[] = { "max_abs", "max_rel", "worst_ratio" };
			for (size_t w = 0; w < 3; w++) {
				double v = num(json_object_get(m, worst[w]));
				if (v > json_real_value(json_object_get(row, worst[w])))
					json_object_set_new(row, worst[w], json_real(isfinite(v) ? v : 1e308));
			}
			if (json_is_null(json_object_get(row, "rtol")) && json_is_number(json_object_get(m, "rtol"))) {
				json_object_set(row, "rtol", json_object_get(m, "rtol"));
				json_object_set(row, "atol", json_object_get(m, "atol"));
			}
		}
	}
	json_decref(index);
	return rows;
}

static json_t *model_env(const struct ap_sub_env *e)
{
	const json_t *b = e->bundle, *fp = json_object_get(b, "fingerprint");
	const json_t *res = json_object_get(b, "resolution"), *env = json_object_get(b, "env");
	json_t *plugins = json_array();
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(fp, "plugins"), i, p) {
		struct ap_buf s = { 0 };
		ap_buf_addf(&s, "%s %s", ap_json_text(p, "name"), ap_json_text(p, "version"));
		json_array_append_new(plugins, json_string(ap_buf_str(&s)));
		ap_buf_free(&s);
	}
	int passed, total;
	json_t *checks = model_checks(b);
	ap_bundle_probe_counts(b, &passed, &total);
	const json_t *err = json_object_get(b, "error");
	return json_pack("{s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:o, s:O?, s:b,"
			 " s:O?, s:i, s:{s:i, s:i}, s:o, s:O?, s:o, s:O?, s:O?, s:O?, s:O?, s:O?, s:o}",
		"name", e->name, "label", json_object_get(env, "label"),
		"device", json_object_get(env, "device"), "verdict", json_object_get(b, "verdict"),
		"verdict_reasons", json_object_get(b, "verdict_reasons"),
		"error", json_is_null(err) ? NULL : json_object_get(err, "message"),
		"python", json_object_get(json_object_get(fp, "python"), "version"),
		"torch", json_object_get(json_object_get(fp, "torch"), "version"),
		"plugins", plugins, "devices", json_object_get(fp, "devices"),
		"found", ap_resolved(res),
		"nearest", json_object_get(res, "nearest"), "exit_code", env_exit_code(b),
		"probes", "passed", passed, "total", total, "checks", checks,
		"official_version", json_object_get(json_object_get(b, "official"), "package_version"),
		"evidence", report_evidence(e->dir), "resolution", res,
		"adaptation", json_object_get(b, "adaptation"),
		"differences", json_object_get(json_object_get(b, "comparison"), "differences"),
		"reference", json_object_get(json_object_get(b, "comparison"), "reference"),
		"os", json_object_get(json_object_get(fp, "os"), "name"),
		"numeric", model_numeric(b));
}

/* The focused checks in words, and the official nodes with the versions at
 * which they were found, across environments. */
static json_t *model_scope(const json_t *envs)
{
	json_t *probes = json_array(), *nodes = json_array(), *seen = json_object();
	size_t i, k;
	json_t *e, *c;
	json_array_foreach(envs, i, e) {
		json_array_foreach(json_object_get(e, "checks"), k, c) {
			const char *kind = ap_json_text(c, "kind"), *name = ap_json_text(c, "name");
			struct ap_buf key = { 0 };
			ap_buf_addf(&key, "%s/%s", kind, name);
			int official = !strcmp(kind, "official") && strstr(name, "::");
			if ((!strcmp(kind, "probe") || !strcmp(kind, "script") || official) &&
			    !json_object_get(seen, ap_buf_str(&key))) {
				json_object_set_new(seen, ap_buf_str(&key), json_true());
				if (official)
					json_array_append_new(nodes, json_pack("{s:s, s:O?}", "node", name,
						"version", json_object_get(e, "official_version")));
				else
					json_array_append_new(probes, json_pack("{s:s, s:O?, s:O?}", "name", name,
						"says_en", json_object_get(c, "says_en"),
						"says_zh", json_object_get(c, "says_zh")));
			}
			ap_buf_free(&key);
		}
	}
	json_decref(seen);
	return json_pack("{s:o, s:o}", "probes", probes, "official_nodes", nodes);
}

/* Letters and digits of the ASCII part, lowercased: "Atlas A2 (910B3)" and
 * "<term>Atlas A2 训练系列产品</term>" meet on "atlasa2". */
static void norm(const char *s, size_t max, struct ap_buf *out)
{
	for (size_t i = 0; s[i] && i < max; i++)
		if (isalnum((unsigned char)s[i]) && !((unsigned char)s[i] & 0x80))
			ap_buf_addf(out, "%c", tolower((unsigned char)s[i]));
}

static const json_t *env_for_product(const json_t *envs, const char *product)
{
	struct ap_buf pn = { 0 };
	size_t i;
	json_t *e;
	const json_t *hit = NULL;
	norm(product, strlen(product), &pn);
	json_array_foreach(envs, i, e) {
		const char *label = json_string_value(json_object_get(e, "label"));
		struct ap_buf ln = { 0 };
		if (label)
			norm(label, strcspn(label, "("), &ln);
		if (ln.len >= 3 && pn.len && strstr(ap_buf_str(&pn), ap_buf_str(&ln)))
			hit = e;
		ap_buf_free(&ln);
	}
	ap_buf_free(&pn);
	return hit;
}

static json_t *model_docs(const json_t *docs, const char *target, const json_t *envs)
{
	int exact = 0;
	if (!docs)
		return json_pack("{s:b}", "checked", 0);
	const json_t *entry = ap_docs_find(docs, target, &exact);
	json_t *contra = json_array();
	size_t i;
	json_t *p;
	int compared = 0;
	json_array_foreach(entry ? json_object_get(entry, "products") : NULL, i, p) {
		const json_t *e = env_for_product(envs, ap_json_text(p, "product"));
		if (!e)
			continue;
		compared++;
		const char *v = ap_json_text(e, "verdict");
		int supported = json_is_true(json_object_get(p, "supported"));
		int works = !strcmp(v, "consistent") || !strcmp(v, "consistent-with-limits");
		if (supported != works)
			json_array_append_new(contra, json_pack("{s:s, s:b, s:s, s:s}", "product",
				ap_json_text(p, "product"), "claimed", supported, "env", ap_json_text(e, "name"),
				"verdict", v));
	}
	return json_pack("{s:b, s:O?, s:b, s:o, s:i}", "checked", 1, "entry", entry, "exact", exact,
			 "contradictions", contra, "compared", compared);
}

static json_t *model_conclusion(const json_t *envs)
{
	json_t *ok = json_array(), *bad = json_array(), *unv = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(envs, i, e) {
		const char *v = ap_json_text(e, "verdict");
		json_array_append(!strcmp(v, "inconsistent") ? bad : !strcmp(v, "unverified") ? unv : ok,
				  json_object_get(e, "name"));
	}
	const char *overall = json_array_size(bad) ? "inconsistent"
			    : json_array_size(ok) ? "consistent" : "unverified";
	return json_pack("{s:s, s:o, s:o, s:o}", "verdict", overall, "consistent", ok,
			 "inconsistent", bad, "unverified", unv);
}

/* The target's signature in each environment that has a signature check,
 * and how it compares with the reference's (check/signature.h). */
static json_t *model_signatures(const struct ap_submission *s)
{
	json_t *out = json_array(), *c;
	size_t k;
	for (size_t i = 0; i < s->n; i++)
		json_array_foreach(json_object_get(s->v[i].bundle, "checks"), k, c) {
			const json_t *d = json_object_get(c, "signature");
			if (!ap_is_signature_check(c) || !json_is_object(d))
				continue;
			json_array_append_new(out, json_pack(
				"{s:s, s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}",
				"env", s->v[i].name, "status", ap_json_text(c, "status"),
				"reason", json_object_get(c, "reason"),
				"text", json_object_get(json_object_get(s->v[i].bundle, "resolution"),
							"signature"),
				"source", json_object_get(d, "source"),
				"reference", json_object_get(d, "reference"),
				"torch", json_object_get(d, "torch"),
				"same_torch", json_object_get(d, "same_torch"),
				"differences", json_object_get(d, "differences")));
		}
	return out;
}

json_t *ap_report_model(const struct ap_submission *s, const json_t *docs)
{
	json_t *envs = json_array();
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(envs, model_env(&s->v[i]));
	const json_t *b0 = s->n ? s->v[0].bundle : NULL;
	const char *target = ap_json_text(b0, "target");
	/* The reference environment speaks for the implementation; failing
	 * that, the first where the target exists. */
	const char *ref = json_string_value(json_object_get(json_object_get(b0, "comparison"),
							     "reference"));
	const struct ap_sub_env *re = ref ? ap_submission_find(s, ref) : NULL;
	const json_t *res = re ? re->bundle : NULL;
	for (size_t i = 0; i < s->n && !res; i++)
		if (ap_bundle_resolved(s->v[i].bundle))
			res = s->v[i].bundle;
	const char *owner = json_string_value(json_object_get(json_object_get(res, "resolution"),
							      "owner"));
	json_t *m = json_pack("{s:s, s:s, s:O?, s:o, s:o, s:O?, s:O?, s:o}",
		"schema", "apiparity.report/1", "target", target, "tool", json_object_get(b0, "tool"),
		"scope", model_scope(envs), "docs", model_docs(docs, target, envs),
		"resolution", json_object_get(res, "resolution"),
		"adaptation", json_object_get(res, "adaptation"),
		"conclusion", model_conclusion(envs));
	json_object_set_new(m, "environments", envs);
	json_object_set_new(m, "class", owner ? json_string(owner) : json_null());
	json_object_set_new(m, "signatures", model_signatures(s));
	return m;
}

/* ------------------------------------------------------------ words */

enum ap_msg {
	M_TITLE, M_COVERS, M_SCOPE, M_TARGET, M_OFFICIAL_CASE, M_NONE_FOUND, M_FOCUSED,
	M_RESULTS, M_PYTHON, M_TORCH, M_PLUGIN, M_DEVICES, M_PROBES, M_EXIT, M_EVIDENCE,
	M_OFFICIAL, M_ABSENT, M_NEAREST, M_ENV_ERROR, M_ADAPT, M_IMPL, M_DOCS, M_DOCS_NOT,
	M_DOCS_NONE, M_DOCS_ENTRY, M_DOCS_CLASS, M_DOCS_CONTRA, M_DOCS_OK, M_DOCS_UNCOMPARED, M_CONCLUSION,
	M_PASSED_IN, M_FAILED_IN, M_UNVERIFIED_IN, M_VERDICT, M_REASONS, M_NONE, M_NOT_RUN,
	M_PATCH_NEEDED, M_PATCH_NOT, M_DIFF, M_SUPPORTED, M_UNSUPPORTED, M_MISSING, M_NUMERIC,
	M_NUMERIC_ROW, M_SIGS, M_SIG_REF, M_SIG_SAME, M_SIG_OTHER, M_SIG_AS, M_SIG_NONE, M_COUNT
};

static const char *const ap_words[M_COUNT][2] = {
	[M_TITLE] = { "API 一致性任务：%s 支持验证", "API consistency task: %s support verification" },
	[M_COVERS] = { "本报告覆盖以下环境：", "This report covers these environments: " },
	[M_SCOPE] = { "验证范围", "Scope" },
	[M_TARGET] = { "目标 API", "Target API" },
	[M_OFFICIAL_CASE] = { "官方测试用例", "Official test cases" },
	[M_NONE_FOUND] = { "未找到（见各环境的说明）", "none found (see each environment)" },
	[M_FOCUSED] = { "专项检查", "Focused checks" },
	[M_RESULTS] = { "%s 结果", "%s results" },
	[M_PYTHON] = { "Python 版本", "Python" },
	[M_TORCH] = { "torch 版本", "torch" },
	[M_PLUGIN] = { "后端插件", "Backend plugin" },
	[M_DEVICES] = { "设备", "Devices" },
	[M_PROBES] = { "专项检查结果", "Focused checks" },
	[M_EXIT] = { "退出码", "Exit code" },
	[M_EVIDENCE] = { "证据", "Evidence" },
	[M_OFFICIAL] = { "官方测试", "Official tests" },
	[M_ABSENT] = { "该版本中不存在此 API", "the API is absent in this version" },
	[M_NEAREST] = { "最接近的名称", "nearest names" },
	[M_ENV_ERROR] = { "环境无法使用", "the environment could not be used" },
	[M_ADAPT] = { "后端适配结论", "Backend adaptation conclusion" },
	[M_IMPL] = { "上游实现位置", "Upstream implementation" },
	[M_DOCS] = { "原生 API 文档支持情况", "Native API documentation" },
	[M_DOCS_NOT] = { "未检查（未提供 --docs）", "not checked (no --docs given)" },
	[M_DOCS_NONE] = { "文档中没有该 API 的条目，需要新增文档条目",
			  "the docs have no entry for this API: an entry needs to be added" },
	[M_DOCS_ENTRY] = { "文档已有该 API 的条目", "the docs have an entry for this API" },
	[M_DOCS_CLASS] = { "文档中仅有其所属类的条目", "the docs have an entry for its class only" },
	[M_DOCS_CONTRA] = { "文档声明与测量不符", "docs claim contradicted by measurement" },
	[M_DOCS_OK] = { "文档声明与测量一致", "the docs' claims agree with the measurements" },
	[M_DOCS_UNCOMPARED] = { "没有测量环境对应文档中的任何产品，文档声明未与测量比较",
				"no measured environment matches a product of the page: the docs' "
				"claims were not compared with any measurement" },
	[M_CONCLUSION] = { "结论", "Conclusion" },
	[M_PASSED_IN] = { "一致（专项检查全部通过）的环境", "Consistent (every focused check passed) in" },
	[M_FAILED_IN] = { "不一致的环境", "Inconsistent in" },
	[M_UNVERIFIED_IN] = { "未验证的环境", "Unverified in" },
	[M_VERDICT] = { "结论", "Verdict" },
	[M_REASONS] = { "原因", "Reasons" },
	[M_NONE] = { "无", "none" },
	[M_NOT_RUN] = { "未运行", "not run" },
	[M_PATCH_NEEDED] = { "需要评估后端专门适配", "a backend-specific patch needs review" },
	[M_PATCH_NOT] = { "无需后端专门适配", "no backend-specific patch is needed" },
	[M_DIFF] = { "与参考环境 %s 的轨迹差异", "trace differences from the reference %s" },
	[M_SUPPORTED] = { "支持", "supported" },
	[M_UNSUPPORTED] = { "不支持", "unsupported" },
	[M_MISSING] = { "缺失的证据", "Missing evidence" },
	[M_NUMERIC] = { "数值检查（OpInfo 样本，逐算子、逐数据类型）",
			"Numeric checks (OpInfo samples, per operator and dtype)" },
	[M_NUMERIC_ROW] = { "%s 个样本：%s 通过，%s 不一致，%s 未运行；最大绝对误差 %s，最大相对误差 %s，"
			    "为容差的 %s 倍（rtol %s，atol %s）",
			    "%s samples: %s passed, %s failed, %s not run; max_abs %s, max_rel %s, "
			    "%sx the tolerance (rtol %s, atol %s)" },
	[M_SIGS] = { "签名比较", "Signatures" },
	[M_SIG_REF] = { "参考环境", "the reference" },
	[M_SIG_SAME] = { "与 %s 的 torch 版本相同，签名差异即不一致",
			 "the same torch release as %s: a difference is an inconsistency" },
	[M_SIG_OTHER] = { "与 %s 的 torch 版本不同，签名差异为已说明的限制",
			  "another torch release than %s: a difference is a stated limit" },
	[M_SIG_AS] = { "与 %s 一致", "as in %s" },
	[M_SIG_NONE] = { "无可比较的签名（目标不可调用或不存在）",
			 "no signature compared (the target is absent or not callable)" },
};

static const char *W(enum ap_lang l, enum ap_msg m)
{
	return ap_words[m][l == AP_LANG_EN];
}

/* ------------------------------------------------------------ Markdown */

/* Every value from data goes through E() (inline text) or C() (a code span)
 * before it meets a template: the escaped copy lives in one of a few slots
 * reused in turn, enough for the values of any one line; md_slots_free()
 * releases them when a rendering ends. */
#define AP_MD_SLOTS 8
static _Thread_local struct ap_buf ap_md_slot[AP_MD_SLOTS];
static _Thread_local unsigned ap_md_next;

static const char *md_escaped(const char *s, int code)
{
	struct ap_buf *b = &ap_md_slot[ap_md_next++ % AP_MD_SLOTS];
	ap_buf_reset(b);
	if (code)
		ap_escape_md_code(s, b);
	else
		ap_escape_md(s, b);
	return ap_buf_str(b);
}

static const char *E(const char *s)
{
	return md_escaped(s, 0);
}

static const char *C(const char *s)
{
	return md_escaped(s, 1);
}

static void md_slots_free(void)
{
	for (size_t i = 0; i < AP_MD_SLOTS; i++)
		ap_buf_free(&ap_md_slot[i]);
}

static void md_devices(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *d;
	int any = 0;
	json_array_foreach(json_object_get(e, "devices"), i, d) {
		if (!json_is_true(json_object_get(d, "available")))
			continue;
		const char *name = json_string_value(json_array_get(json_object_get(d, "names"), 0));
		ap_buf_addf(out, "%s%s: %lld x %s", any++ ? "; " : "", E(ap_json_text(d, "type")),
			    (long long)json_integer_value(json_object_get(d, "count")),
			    name ? E(name) : "?");
	}
	json_array_foreach(json_object_get(e, "devices"), i, d)
		if (!json_is_true(json_object_get(d, "available")))
			ap_buf_addf(out, "%s%s: %s (%s)", any++ ? "; " : "", E(ap_json_text(d, "type")),
				    l == AP_LANG_EN ? "unavailable" : "不可用", E(ap_json_text(d, "reason")));
	if (!any)
		ap_buf_adds(out, "cpu");
}

/* A number of a numeric row as text. */
static const char *fmt_num(const json_t *v, char buf[32])
{
	if (json_is_integer(v))
		snprintf(buf, 32, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, 32, "%.3g", json_real_value(v));
	else
		snprintf(buf, 32, "-");
	return buf;
}

/* The numeric checks summed per operator, dtype and comparison (the checks
 * themselves are in bundle.json and the run log). */
static void md_env_numeric(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *r;
	char b[9][32];
	if (!json_array_size(json_object_get(e, "numeric")))
		return;
	ap_buf_addf(out, "- %s:\n", W(l, M_NUMERIC));
	json_array_foreach(json_object_get(e, "numeric"), i, r) {
		ap_buf_addf(out, "  - %s %s, %s vs %s: ", C(ap_json_text(r, "op")), E(ap_json_text(r, "dtype")),
			    E(ap_json_text(r, "device")), E(ap_json_text(r, "against")));
		ap_buf_addf(out, W(l, M_NUMERIC_ROW), fmt_num(json_object_get(r, "samples"), b[0]),
			    fmt_num(json_object_get(r, "passed"), b[1]),
			    fmt_num(json_object_get(r, "failed"), b[2]),
			    fmt_num(json_object_get(r, "notrun"), b[3]),
			    fmt_num(json_object_get(r, "max_abs"), b[4]),
			    fmt_num(json_object_get(r, "max_rel"), b[5]),
			    fmt_num(json_object_get(r, "worst_ratio"), b[6]),
			    fmt_num(json_object_get(r, "rtol"), b[7]),
			    fmt_num(json_object_get(r, "atol"), b[8]));
		ap_buf_adds(out, "\n");
	}
}

static void md_env_checks(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(e, "checks"), i, c) {
		const char *kind = ap_json_text(c, "kind");
		if (!strcmp(kind, "official") || (!strcmp(kind, "numeric") &&
						   !ap_status_failed(ap_json_text(c, "status"))))
			continue;
		const char *reason = json_string_value(json_object_get(c, "reason"));
		ap_buf_addf(out, "  - %s %s", E(ap_json_text(c, "status")), C(ap_json_text(c, "name")));
		if (reason)
			ap_buf_addf(out, ": %s", E(reason));
		ap_buf_adds(out, "\n");
	}
	(void)l;
}

static void md_env_official(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *c;
	int any = 0;
	ap_buf_addf(out, "- %s:\n", W(l, M_OFFICIAL));
	json_array_foreach(json_object_get(e, "checks"), i, c) {
		if (strcmp(ap_json_text(c, "kind"), "official"))
			continue;
		const char *reason = json_string_value(json_object_get(c, "reason"));
		ap_buf_addf(out, "  - %s %s", E(ap_json_text(c, "status")), C(ap_json_text(c, "name")));
		ap_buf_addf(out, "%s%s\n", reason ? ": " : "", reason ? E(reason) : "");
		any = 1;
	}
	if (!any)
		ap_buf_addf(out, "  - %s\n", W(l, M_NOT_RUN));
}

static void md_env(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	const json_t *p = json_object_get(e, "probes");
	struct ap_buf dev = { 0 };
	size_t i;
	json_t *v;
	ap_buf_adds(out, "\n### ");
	ap_buf_addf(out, W(l, M_RESULTS), E(ap_json_text(e, "name")));
	ap_buf_addf(out, " (%s)\n\n", E(ap_json_text(e, "label")));
	if (json_is_string(json_object_get(e, "error")))
		ap_buf_addf(out, "- %s: %s\n", W(l, M_ENV_ERROR), E(ap_json_text(e, "error")));
	md_devices(e, l, &dev);
	ap_buf_addf(out, "- %s: %s\n- %s: %s\n- %s: ", W(l, M_PYTHON), E(ap_json_text(e, "python")),
		    W(l, M_TORCH), E(ap_json_text(e, "torch")), W(l, M_PLUGIN));
	json_array_foreach(json_object_get(e, "plugins"), i, v)
		ap_buf_addf(out, "%s%s", i ? ", " : "", E(json_string_value(v)));
	ap_buf_addf(out, "%s\n- %s: %s\n", json_array_size(json_object_get(e, "plugins")) ? "" :
		    W(l, M_NONE), W(l, M_DEVICES), ap_buf_str(&dev));
	if (!json_is_true(json_object_get(e, "found"))) {
		ap_buf_addf(out, "- %s: %s (%s:", W(l, M_PROBES), W(l, M_ABSENT), W(l, M_NEAREST));
		json_array_foreach(json_object_get(e, "nearest"), i, v)
			ap_buf_addf(out, " %s", E(json_string_value(v)));
		ap_buf_adds(out, ")\n");
	} else
		ap_buf_addf(out, "- %s: %lld/%lld PASS, %s %s\n", W(l, M_PROBES),
			    (long long)json_integer_value(json_object_get(p, "passed")),
			    (long long)json_integer_value(json_object_get(p, "total")),
			    W(l, M_VERDICT), E(ap_json_text(e, "verdict")));
	md_env_checks(e, l, out);
	md_env_numeric(e, l, out);
	ap_buf_addf(out, "- %s: %lld\n- %s:\n", W(l, M_EXIT),
		    (long long)json_integer_value(json_object_get(e, "exit_code")), W(l, M_EVIDENCE));
	json_array_foreach(json_object_get(e, "evidence"), i, v)
		ap_buf_addf(out, "  - %s sha256 %s\n", C(ap_json_text(v, "path")), C(ap_json_text(v, "sha256")));
	md_env_official(e, l, out);
	ap_buf_free(&dev);
}

static void md_scope(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *scope = json_object_get(m, "scope");
	size_t i;
	json_t *v;
	ap_buf_addf(out, "\n## %s\n\n- %s: %s", W(l, M_SCOPE), W(l, M_TARGET), C(ap_json_text(m, "target")));
	ap_buf_addf(out, "\n- %s:\n", W(l, M_OFFICIAL_CASE));
	json_array_foreach(json_object_get(scope, "official_nodes"), i, v)
		ap_buf_addf(out, "  - %s (PyTorch %s)\n", C(ap_json_text(v, "node")), E(ap_json_text(v, "version")));
	if (!json_array_size(json_object_get(scope, "official_nodes")))
		ap_buf_addf(out, "  - %s\n", W(l, M_NONE_FOUND));
	ap_buf_addf(out, "- %s:\n", W(l, M_FOCUSED));
	json_array_foreach(json_object_get(scope, "probes"), i, v)
		ap_buf_addf(out, "  - %s (%s)\n", E(ap_json_text(v, l == AP_LANG_EN ? "says_en" : "says_zh")),
			    E(ap_json_text(v, "name")));
}

/* One line per environment: its signature, where it came from, the status
 * of its comparison; each difference under it. */
static void md_signatures(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	size_t i, k;
	json_t *g, *d;
	ap_buf_addf(out, "\n## %s\n\n", W(l, M_SIGS));
	if (!json_array_size(json_object_get(m, "signatures")))
		ap_buf_addf(out, "- %s\n", W(l, M_SIG_NONE));
	json_array_foreach(json_object_get(m, "signatures"), i, g) {
		const char *ref = json_string_value(json_object_get(g, "reference"));
		const char *reason = json_string_value(json_object_get(g, "reason"));
		ap_buf_addf(out, "- %s (%s): %s: %s", E(ap_json_text(g, "env")),
			    E(ap_json_text(g, "source")), C(ap_json_text(g, "text")),
			    E(ap_json_text(g, "status")));
		int differs = json_array_size(json_object_get(g, "differences")) > 0;
		enum ap_msg how = !differs ? M_SIG_AS : json_is_true(json_object_get(g, "same_torch"))
			? M_SIG_SAME : M_SIG_OTHER;
		if (!ref)
			ap_buf_addf(out, ", %s", W(l, M_SIG_REF));
		else {
			ap_buf_adds(out, ", ");
			ap_buf_addf(out, W(l, how), E(ref));
		}
		if (reason && !differs)
			ap_buf_addf(out, " (%s)", E(reason));
		ap_buf_adds(out, "\n");
		json_array_foreach(json_object_get(g, "differences"), k, d)
			ap_buf_addf(out, "  - %s\n", E(ap_json_text(d, "text")));
	}
}

static void md_adaptation(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *r = json_object_get(m, "resolution"), *a = json_object_get(m, "adaptation");
	struct ap_buf where = { 0 };
	ap_buf_addf(out, "\n## %s\n\n", W(l, M_ADAPT));
	if (!r) {
		ap_buf_addf(out, "- %s\n", W(l, M_ABSENT));
		return;
	}
	ap_buf_addf(&where, "%s:%lld", ap_json_text(r, "file"),
		    (long long)json_integer_value(json_object_get(r, "line")));
	ap_buf_addf(out, "- %s: %s (%s)\n", W(l, M_IMPL), C(ap_buf_str(&where)), E(ap_json_text(r, "kind")));
	ap_buf_addf(out, "- %s\n- %s\n", E(ap_json_text(a, l == AP_LANG_EN ? "conclusion_en" : "conclusion_zh")),
		    json_is_true(json_object_get(a, "device_independent")) ? W(l, M_PATCH_NOT)
									    : W(l, M_PATCH_NEEDED));
	ap_buf_free(&where);
}

static void md_docs(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *d = json_object_get(m, "docs"), *e = json_object_get(d, "entry");
	size_t i;
	json_t *p;
	ap_buf_addf(out, "\n## %s\n\n", W(l, M_DOCS));
	if (!json_is_true(json_object_get(d, "checked"))) {
		ap_buf_addf(out, "- %s\n", W(l, M_DOCS_NOT));
		return;
	}
	if (!e || json_is_null(e)) {
		ap_buf_addf(out, "- %s\n", W(l, M_DOCS_NONE));
		return;
	}
	ap_buf_addf(out, "- %s: %s (%s:%lld)\n", json_is_true(json_object_get(d, "exact")) ?
		    W(l, M_DOCS_ENTRY) : W(l, M_DOCS_CLASS), C(ap_json_text(e, "api")), E(ap_json_text(e, "file")),
		    (long long)json_integer_value(json_object_get(e, "line")));
	json_array_foreach(json_object_get(e, "products"), i, p)
		ap_buf_addf(out, "  - %s: %s\n", E(ap_json_text(p, "product")),
			    json_is_true(json_object_get(p, "supported")) ? W(l, M_SUPPORTED)
									  : W(l, M_UNSUPPORTED));
	json_array_foreach(json_object_get(d, "contradictions"), i, p)
		ap_buf_addf(out, "- %s: %s %s, %s %s\n", W(l, M_DOCS_CONTRA), E(ap_json_text(p, "product")),
			    json_is_true(json_object_get(p, "claimed")) ? W(l, M_SUPPORTED)
									: W(l, M_UNSUPPORTED),
			    E(ap_json_text(p, "env")), E(ap_json_text(p, "verdict")));
	if (!json_integer_value(json_object_get(d, "compared")))
		ap_buf_addf(out, "- %s\n", W(l, M_DOCS_UNCOMPARED));
	else if (!json_array_size(json_object_get(d, "contradictions")))
		ap_buf_addf(out, "- %s\n", W(l, M_DOCS_OK));
}

static void md_names(const json_t *list, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		ap_buf_addf(out, "%s%s", i ? ", " : "", E(json_string_value(v)));
	if (!json_array_size(list))
		ap_buf_adds(out, W(l, M_NONE));
}

static void md_conclusion(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *c = json_object_get(m, "conclusion");
	size_t i;
	json_t *e, *r;
	ap_buf_addf(out, "\n## %s\n\n- %s: **%s**\n- %s: ", W(l, M_CONCLUSION), W(l, M_VERDICT),
		    E(ap_json_text(c, "verdict")), W(l, M_PASSED_IN));
	md_names(json_object_get(c, "consistent"), l, out);
	ap_buf_addf(out, "\n- %s: ", W(l, M_FAILED_IN));
	md_names(json_object_get(c, "inconsistent"), l, out);
	ap_buf_addf(out, "\n- %s: ", W(l, M_UNVERIFIED_IN));
	md_names(json_object_get(c, "unverified"), l, out);
	ap_buf_addf(out, "\n- %s:\n", W(l, M_REASONS));
	json_array_foreach(json_object_get(m, "environments"), i, e) {
		size_t k;
		json_array_foreach(json_object_get(e, "verdict_reasons"), k, r)
			ap_buf_addf(out, "  - %s: %s\n", E(ap_json_text(e, "name")), E(json_string_value(r)));
	}
}

void ap_report_markdown(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *e;
	ap_buf_adds(out, "# ");
	ap_buf_addf(out, W(l, M_TITLE), E(ap_json_text(m, "target")));
	ap_buf_addf(out, "\n\n%s", W(l, M_COVERS));
	json_array_foreach(json_object_get(m, "environments"), i, e)
		ap_buf_addf(out, "%s%s (%s)", i ? ", " : "", E(ap_json_text(e, "name")), E(ap_json_text(e, "label")));
	ap_buf_adds(out, "\n");
	md_scope(m, l, out);
	json_array_foreach(json_object_get(m, "environments"), i, e)
		md_env(e, l, out);
	md_signatures(m, l, out);
	md_adaptation(m, l, out);
	md_docs(m, l, out);
	md_conclusion(m, l, out);
	md_slots_free();
}

/* ------------------------------------------------------------ JUnit, HTML */

static void junit_case(const char *env, const json_t *c, struct ap_buf *out)
{
	const char *st = ap_json_text(c, "status");
	const char *reason = json_string_value(json_object_get(c, "reason"));
	ap_buf_adds(out, "    <testcase classname=\"");
	ap_escape_xml(env, out);
	ap_buf_adds(out, ".");
	ap_escape_xml(ap_json_text(c, "kind"), out);
	ap_buf_adds(out, "\" name=\"");
	ap_escape_xml(ap_json_text(c, "name"), out);
	ap_buf_addf(out, "\" time=\"%.3f\">", json_integer_value(json_object_get(c, "duration_ms")) / 1000.0);
	const char *tag = !strcmp(st, "FAIL") ? "failure" : ap_status_failed(st) ? "error"
			: !strcmp(st, "PASS") ? NULL : "skipped";
	if (tag) {
		ap_buf_addf(out, "<%s message=\"", tag);
		ap_escape_xml(st, out);
		if (reason) {
			ap_buf_adds(out, ": ");
			ap_escape_xml(reason, out);
		}
		ap_buf_addf(out, "\"/>");
	}
	ap_buf_adds(out, "</testcase>\n");
}

void ap_report_junit(const json_t *m, struct ap_buf *out)
{
	size_t i, k;
	json_t *e, *c;
	ap_buf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"apiparity ");
	ap_escape_xml(ap_json_text(m, "target"), out);
	ap_buf_adds(out, "\">\n");
	json_array_foreach(json_object_get(m, "environments"), i, e) {
		int n = 0, fail = 0, err = 0, skip = 0;
		json_array_foreach(json_object_get(e, "checks"), k, c) {
			const char *st = ap_json_text(c, "status");
			n++;
			fail += !strcmp(st, "FAIL");
			err += ap_status_failed(st) && strcmp(st, "FAIL");
			skip += !ap_status_failed(st) && strcmp(st, "PASS");
		}
		ap_buf_adds(out, "  <testsuite name=\"");
		ap_escape_xml(ap_json_text(e, "name"), out);
		ap_buf_addf(out, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n",
			    n, fail, err, skip);
		json_array_foreach(json_object_get(e, "checks"), k, c)
			junit_case(ap_json_text(e, "name"), c, out);
		ap_buf_adds(out, "  </testsuite>\n");
	}
	ap_buf_adds(out, "</testsuites>\n");
}

/* An SVG card standing in for a terminal screenshot: the fingerprint and the
 * result lines, with the sha256 of the run log that holds the full record. */
static void html_card(const json_t *m, const json_t *e, struct ap_buf *out)
{
	struct ap_buf lines[8] = { { 0 } };
	const json_t *p = json_object_get(e, "probes");
	const char *logsum = "-";
	size_t i, n = 0;
	json_t *v;
	json_array_foreach(json_object_get(e, "evidence"), i, v)
		if (!strcmp(ap_json_text(v, "file"), "run.log"))
			logsum = ap_json_text(v, "sha256");
	ap_buf_addf(&lines[n++], "$ apiparity check %s --env %s", ap_json_text(m, "target"),
		    ap_json_text(e, "name"));
	ap_buf_addf(&lines[n++], "python %s   torch %s", ap_json_text(e, "python"),
		    ap_json_text(e, "torch"));
	ap_buf_addf(&lines[n++], "os %s", ap_json_text(e, "os"));
	ap_buf_adds(&lines[n], "devices:");
	json_array_foreach(json_object_get(e, "devices"), i, v)
		if (json_is_true(json_object_get(v, "available")))
			ap_buf_addf(&lines[n], " %s x%lld", ap_json_text(v, "type"),
				    (long long)json_integer_value(json_object_get(v, "count")));
	ap_buf_adds(&lines[n], lines[n].len > 8 ? "" : " cpu only");
	n++;
	ap_buf_addf(&lines[n++], "probes %lld/%lld PASS   exit %lld",
		    (long long)json_integer_value(json_object_get(p, "passed")),
		    (long long)json_integer_value(json_object_get(p, "total")),
		    (long long)json_integer_value(json_object_get(e, "exit_code")));
	ap_buf_addf(&lines[n++], "verdict: %s", ap_json_text(e, "verdict"));
	ap_buf_addf(&lines[n++], "run.log sha256 %s", logsum);
	ap_buf_addf(out, "<svg class=\"card\" xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" "
		    "height=\"%zu\" role=\"img\" aria-label=\"evidence card ", 24 + n * 20);
	ap_escape_xml(ap_json_text(e, "name"), out);
	ap_buf_addf(out, "\"><rect width=\"760\" height=\"%zu\" rx=\"6\" fill=\"#1e1e1e\"/>", 24 + n * 20);
	for (i = 0; i < n; i++) {
		ap_buf_addf(out, "<text x=\"12\" y=\"%zu\" fill=\"%s\" font-family=\"monospace\" "
			    "font-size=\"13\">", 24 + i * 20, i == n - 2 ? "#7ee787" : "#e6e6e6");
		ap_escape_xml(ap_buf_str(&lines[i]), out);
		ap_buf_adds(out, "</text>");
		ap_buf_free(&lines[i]);
	}
	ap_buf_adds(out, "</svg>\n");
}

static const json_t *trace_value(const json_t *e, const char *check, const char *step)
{
	size_t i, k;
	json_t *c, *s;
	json_array_foreach(json_object_get(e, "checks"), i, c) {
		if (strcmp(ap_json_text(c, "name"), check))
			continue;
		json_array_foreach(json_object_get(c, "trace"), k, s)
			if (!strcmp(ap_json_text(s, "step"), step))
				return json_object_get(s, "value");
	}
	return NULL;
}

/* Traces side by side: a row per (check, step) of the first environment that
 * has them, a column per environment, cells that differ from the first
 * column marked. */
static void html_traces(const json_t *m, struct ap_buf *out)
{
	const json_t *envs = json_object_get(m, "environments"), *first = NULL;
	size_t i, k, j;
	json_t *e, *c, *s;
	json_array_foreach(envs, i, e)
		if (!first && json_is_true(json_object_get(e, "found")))
			first = e;
	ap_buf_adds(out, "<h2>Traces</h2>\n<table class=\"traces\"><tr><th>check</th><th>step</th>");
	json_array_foreach(envs, i, e) {
		ap_buf_adds(out, "<th>");
		ap_escape_xml(ap_json_text(e, "name"), out);
		ap_buf_adds(out, "</th>");
	}
	ap_buf_adds(out, "</tr>\n");
	json_array_foreach(first ? json_object_get(first, "checks") : NULL, k, c)
		json_array_foreach(json_object_get(c, "trace"), j, s) {
			const json_t *ref = json_object_get(s, "value");
			ap_buf_adds(out, "<tr><td>");
			ap_escape_xml(ap_json_text(c, "name"), out);
			ap_buf_adds(out, "</td><td>");
			ap_escape_xml(ap_json_text(s, "step"), out);
			ap_buf_adds(out, "</td>");
			json_array_foreach(envs, i, e) {
				const json_t *v = trace_value(e, ap_json_text(c, "name"), ap_json_text(s, "step"));
				char *txt = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
				ap_buf_addf(out, "<td%s>", v && !json_equal(v, ref) ? " class=\"diff\"" : "");
				ap_escape_xml(txt ? txt : "", out);
				ap_buf_adds(out, "</td>");
				free(txt);
			}
			ap_buf_adds(out, "</tr>\n");
		}
	ap_buf_adds(out, "</table>\n");
}

static void html_cell(const char *text, struct ap_buf *out)
{
	ap_buf_adds(out, "<td>");
	ap_escape_xml(text, out);
	ap_buf_adds(out, "</td>");
}

/* The signatures as a table: a row per environment, its differences listed. */
static void html_signatures(const json_t *m, struct ap_buf *out)
{
	size_t i, k;
	json_t *g, *d;
	ap_buf_adds(out, "<h2>Signatures</h2>\n<table class=\"signatures\"><tr><th>environment</th>"
		    "<th>status</th><th>source</th><th>signature</th><th>against</th>"
		    "<th>differences</th></tr>\n");
	json_array_foreach(json_object_get(m, "signatures"), i, g) {
		int differs = json_array_size(json_object_get(g, "differences")) > 0;
		ap_buf_addf(out, "<tr%s>", differs ? " class=\"diff\"" : "");
		html_cell(ap_json_text(g, "env"), out);
		html_cell(ap_json_text(g, "status"), out);
		html_cell(ap_json_text(g, "source"), out);
		html_cell(ap_json_text(g, "text"), out);
		html_cell(json_is_string(json_object_get(g, "reference")) ?
			  ap_json_text(g, "reference") : "(the reference)", out);
		ap_buf_adds(out, "<td><ul>");
		json_array_foreach(json_object_get(g, "differences"), k, d) {
			ap_buf_adds(out, "<li>");
			ap_escape_xml(ap_json_text(d, "text"), out);
			ap_buf_adds(out, "</li>");
		}
		ap_buf_adds(out, "</ul></td></tr>\n");
	}
	ap_buf_adds(out, "</table>\n");
}

/* Where v (an error over its tolerance, > 0) falls on the chart's log scale,
 * 1e-6 to 1e2, in pixels of width w. */
static double chart_x(double v, double w)
{
	double lo = -6, hi = 2, x = v > 0 ? log10(v) : lo;
	x = x < lo ? lo : x > hi ? hi : x;
	return (x - lo) / (hi - lo) * w;
}

/* Per environment, a bar per numeric row: its worst error over its
 * tolerance on a log scale, the tolerance itself a red line at 1. */
static void html_numeric(const json_t *m, struct ap_buf *out)
{
	size_t i, k;
	json_t *e, *r;
	const double w = 420, left = 330;
	int any = 0;
	json_array_foreach(json_object_get(m, "environments"), i, e)
		any |= json_array_size(json_object_get(e, "numeric")) > 0;
	if (!any)
		return;
	ap_buf_adds(out, "<h2>Numeric checks: error / tolerance (log scale, 1e-6 to 1e2)</h2>\n");
	json_array_foreach(json_object_get(m, "environments"), i, e) {
		size_t n = json_array_size(json_object_get(e, "numeric"));
		if (!n)
			continue;
		ap_buf_addf(out, "<svg class=\"numeric\" xmlns=\"http://www.w3.org/2000/svg\" "
			    "width=\"%.0f\" height=\"%zu\" role=\"img\" aria-label=\"numeric ",
			    left + w + 90, 30 + n * 18);
		ap_escape_xml(ap_json_text(e, "name"), out);
		ap_buf_addf(out, "\"><text x=\"4\" y=\"14\" font-size=\"13\" font-weight=\"bold\">");
		ap_escape_xml(ap_json_text(e, "name"), out);
		ap_buf_adds(out, "</text>");
		json_array_foreach(json_object_get(e, "numeric"), k, r) {
			double ratio = num(json_object_get(r, "worst_ratio"));
			double y = 22 + (double)k * 18;
			int bad = json_integer_value(json_object_get(r, "failed")) > 0;
			struct ap_buf label = { 0 };
			ap_buf_addf(&label, "%s %s %s vs %s", ap_json_text(r, "op"), ap_json_text(r, "dtype"),
				    ap_json_text(r, "device"), ap_json_text(r, "against"));
			ap_buf_addf(out, "<text x=\"4\" y=\"%.0f\" font-size=\"11\" "
				    "font-family=\"monospace\">", y + 11);
			ap_escape_xml(ap_buf_str(&label), out);
			ap_buf_addf(out, "</text><rect x=\"%.0f\" y=\"%.0f\" width=\"%.1f\" height=\"12\" "
				    "fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%.2g</text>",
				    left, y, chart_x(ratio, w) + 1, bad ? "#d73a49" : "#2da44e",
				    left + w + 6, y + 11, isfinite(ratio) ? ratio : 1e308);
			ap_buf_free(&label);
		}
		ap_buf_addf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"20\" y2=\"%zu\" stroke=\"red\" "
			    "stroke-dasharray=\"3 2\"/></svg>\n", left + chart_x(1, w), left + chart_x(1, w),
			    24 + n * 18);
	}
}

static const char ap_html_style[] =
	"body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
	"table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}"
	"td.diff,tr.diff td{background:#ffd7d5;font-weight:bold}.verdict{font-size:1.3em}"
	".card{display:block;margin:8px 0}pre{white-space:pre-wrap}";

void ap_report_html(const json_t *m, struct ap_buf *out)
{
	struct ap_buf md = { 0 };
	size_t i;
	json_t *e;
	ap_buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "style-src 'unsafe-inline'; img-src data:\"><title>apiparity: ");
	ap_escape_xml(ap_json_text(m, "target"), out);
	ap_buf_addf(out, "</title><style>%s</style></head><body>\n<h1>API consistency: ", ap_html_style);
	ap_escape_xml(ap_json_text(m, "target"), out);
	ap_buf_adds(out, "</h1>\n<p class=\"verdict\" id=\"verdict\">Verdict: <strong>");
	ap_escape_xml(ap_json_text(json_object_get(m, "conclusion"), "verdict"), out);
	ap_buf_adds(out, "</strong></p>\n<h2>Evidence cards</h2>\n");
	json_array_foreach(json_object_get(m, "environments"), i, e) {
		ap_buf_adds(out, "<section class=\"env\" data-env=\"");
		ap_escape_xml(ap_json_text(e, "name"), out);
		ap_buf_adds(out, "\"><h3>");
		ap_escape_xml(ap_json_text(e, "name"), out);
		ap_buf_adds(out, "</h3>\n");
		html_card(m, e, out);
		ap_buf_adds(out, "</section>\n");
	}
	html_traces(m, out);
	html_signatures(m, out);
	html_numeric(m, out);
	ap_report_markdown(m, AP_LANG_EN, &md);
	ap_buf_adds(out, "<h2>Report (Markdown)</h2>\n<pre>");
	ap_escape_xml(ap_buf_str(&md), out);
	ap_buf_adds(out, "</pre>\n</body></html>\n");
	ap_buf_free(&md);
}
