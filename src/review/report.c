#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/jsonutil.h"
#include "review/escape.h"
#include "check/limits.h"
#include "check/signature.h"
#include "check/verdict.h"
#include "evidence/bundle.h"
#include "evidence/manifest.h"
#include "review/docs.h"
#include "review/report.h"
#include "review/words.h"

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
	return ap_bundle_verdict(b) == AP_INCONSISTENT ? 1 : 0;
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
		enum ap_status st = ap_check_status(c);
		const char *field = st == AP_PASS ? "passed" : st == AP_NOTRUN ? "notrun" : "failed";
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
			 " s:O?, s:i, s:{s:i, s:i}, s:o, s:O?, s:o, s:O?, s:O?, s:O?, s:O?, s:O?, s:o,"
			 " s:o}",
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
		"numeric", model_numeric(b), "limits", ap_limits_applied(json_object_get(b, "checks")));
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
		enum ap_verdict ve = ap_verdict_parse(v);
		int works = ve == AP_CONSISTENT || ve == AP_CONSISTENT_WITH_LIMITS;
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
		enum ap_verdict v = ap_bundle_verdict(e);
		json_array_append(v == AP_INCONSISTENT ? bad : v == AP_UNVERIFIED ? unv : ok,
				  json_object_get(e, "name"));
	}
	enum ap_verdict overall = json_array_size(bad) ? AP_INCONSISTENT
				: json_array_size(ok) ? AP_CONSISTENT : AP_UNVERIFIED;
	return json_pack("{s:s, s:o, s:o, s:o}", "verdict", ap_verdict_name(overall),
			 ap_verdict_name(AP_CONSISTENT), ok, ap_verdict_name(AP_INCONSISTENT), bad, ap_verdict_name(AP_UNVERIFIED), unv);
}

/* The check named kind/name in environment e, or NULL. */
static const json_t *env_check(const json_t *e, const char *kind, const char *name)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(e, "checks"), i, c)
		if (!strcmp(ap_json_text(c, "kind"), kind) && !strcmp(ap_json_text(c, "name"), name))
			return c;
	return NULL;
}

/* The environments with the reference first, then the others in their order:
 * the order in which rows are first seen. */
static void envs_reference_first(const json_t *envs, const char *ref, json_t *out)
{
	size_t i;
	json_t *e;
	json_array_foreach(envs, i, e)
		if (ref && !strcmp(ap_json_text(e, "name"), ref))
			json_array_append(out, e);
	json_array_foreach(envs, i, e)
		if (!ref || strcmp(ap_json_text(e, "name"), ref))
			json_array_append(out, e);
}

/* Calls fn for each distinct check (kind, name) of any environment, whatever
 * its kind, the reference environment's first. */
static void each_check(const json_t *envs, const char *ref,
		       void (*fn)(void *ctx, const char *kind, const char *name), void *ctx)
{
	json_t *order = json_array(), *seen = json_object();
	size_t i, k;
	json_t *e, *c;
	envs_reference_first(envs, ref, order);
	json_array_foreach(order, i, e)
		json_array_foreach(json_object_get(e, "checks"), k, c) {
			struct ap_buf key = { 0 };
			ap_buf_addf(&key, "%s/%s", ap_json_text(c, "kind"), ap_json_text(c, "name"));
			if (!json_object_get(seen, ap_buf_str(&key))) {
				json_object_set_new(seen, ap_buf_str(&key), json_true());
				fn(ctx, ap_json_text(c, "kind"), ap_json_text(c, "name"));
			}
			ap_buf_free(&key);
		}
	json_decref(order);
	json_decref(seen);
}

struct rows {
	const json_t *envs;
	const char *ref;
	json_t *out;
};

/* A matrix row: the check's status in every environment, null where the
 * environment has no such check. */
static void matrix_row(void *ctx, const char *kind, const char *name)
{
	struct rows *r = ctx;
	json_t *cells = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(r->envs, i, e) {
		const json_t *c = env_check(e, kind, name);
		json_array_append_new(cells, json_pack("{s:s, s:O?, s:O?}", "env", ap_json_text(e, "name"),
			"status", c ? json_object_get(c, "status") : NULL,
			"reason", c ? json_object_get(c, "reason") : NULL));
	}
	json_array_append_new(r->out, json_pack("{s:s, s:s, s:o}", "kind", kind, "name", name,
						"cells", cells));
}

/* The overview: a column per environment (its verdict, whether it is the
 * reference), a row per check of any kind with a cell per environment. */
static json_t *model_matrix(const json_t *envs, const char *ref)
{
	json_t *cols = json_array();
	struct rows r = { envs, ref, json_array() };
	size_t i;
	json_t *e;
	json_array_foreach(envs, i, e)
		json_array_append_new(cols, json_pack("{s:s, s:O?, s:O?, s:b}", "env",
			ap_json_text(e, "name"), "label", json_object_get(e, "label"),
			"verdict", json_object_get(e, "verdict"),
			"reference", ref && !strcmp(ref, ap_json_text(e, "name"))));
	each_check(envs, ref, matrix_row, &r);
	return json_pack("{s:o, s:o}", "columns", cols, "rows", r.out);
}

/* Whether the judge named step of check among e's trace differences. */
static int judged_different(const json_t *e, const char *check, const char *step)
{
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(e, "differences"), i, d)
		if (!strcmp(ap_json_text(d, "check"), check) && !strcmp(ap_json_text(d, "step"), step))
			return 1;
	return 0;
}

/* Step i of a check's traces in every environment. The baseline is the
 * first environment of the reference-first order that ran the check; a step
 * differs where an environment that ran the check recorded another step or
 * value there (or none), or where the judge said so. */
static json_t *trace_step(const json_t *envs, const json_t *order, const char *kind,
			  const char *name, size_t i)
{
	const json_t *base = NULL;
	size_t k;
	json_t *e;
	json_array_foreach(order, k, e) {
		const json_t *c = env_check(e, kind, name);
		if (c && !base)
			base = json_array_get(json_object_get(c, "trace"), i);
	}
	const char *step = base ? ap_json_text(base, "step") : NULL;
	json_t *values = json_array();
	int differs = 0;
	json_array_foreach(envs, k, e) {
		const json_t *c = env_check(e, kind, name);
		const json_t *s = c ? json_array_get(json_object_get(c, "trace"), i) : NULL;
		const char *ss = s ? ap_json_text(s, "step") : NULL;
		if (!step)
			step = ss;
		if (c && (!s || !base || strcmp(ss, ap_json_text(base, "step")) ||
			  !json_equal(json_object_get(s, "value"), json_object_get(base, "value"))))
			differs = 1;
		differs |= step && judged_different(e, name, step);
		json_array_append_new(values, json_pack("{s:s, s:b, s:s?, s:O?}", "env",
			ap_json_text(e, "name"), "ran", c != NULL, "step", ss,
			"value", s ? json_object_get(s, "value") : NULL));
	}
	return json_pack("{s:s, s:b, s:o}", "step", step ? step : "-", "differs", differs,
			 "values", values);
}

static void trace_check(void *ctx, const char *kind, const char *name)
{
	struct rows *r = ctx;
	json_t *order = json_array(), *steps = json_array();
	size_t i, n = 0, differ = 0;
	json_t *e;
	envs_reference_first(r->envs, r->ref, order);
	json_array_foreach(r->envs, i, e) {
		const json_t *c = env_check(e, kind, name);
		size_t len = c ? json_array_size(json_object_get(c, "trace")) : 0;
		n = len > n ? len : n;
	}
	for (i = 0; i < n; i++) {
		json_t *st = trace_step(r->envs, order, kind, name, i);
		differ += json_is_true(json_object_get(st, "differs"));
		json_array_append_new(steps, st);
	}
	json_decref(order);
	if (!n) {
		json_decref(steps);
		return;
	}
	json_array_append_new(r->out, json_pack("{s:s, s:s, s:I, s:o}", "kind", kind, "check", name,
						"differing", (json_int_t)differ, "steps", steps));
}

/* The traces side by side: per check that recorded one, its steps with
 * every environment's value and whether the step differs. */
static json_t *model_traces(const json_t *envs, const char *ref)
{
	struct rows r = { envs, ref, json_array() };
	each_check(envs, ref, trace_check, &r);
	return r.out;
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
	/* The reference environment (as the first bundle that names one says)
	 * speaks for the implementation; failing that, the first where the
	 * target exists. */
	const char *ref = NULL;
	for (size_t i = 0; i < s->n && !ref; i++)
		ref = json_string_value(json_object_get(json_object_get(s->v[i].bundle, "comparison"),
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
	json_object_set_new(m, "reference", ref ? json_string(ref) : json_null());
	json_object_set_new(m, "matrix", model_matrix(envs, ref));
	json_object_set_new(m, "traces", model_traces(envs, ref));
	json_object_set_new(m, "environments", envs);
	json_object_set_new(m, "class", owner ? json_string(owner) : json_null());
	json_object_set_new(m, "signatures", model_signatures(s));
	return m;
}

/* ------------------------------------------------------------ words */

static const char *W(enum ap_lang l, enum ap_msg m)
{
	return ap_word(l, m);
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

/* The known backend limits applied, each with the samples it excused. */
static void md_env_limits(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *r;
	if (!json_array_size(json_object_get(e, "limits")))
		return;
	ap_buf_addf(out, "- %s:\n", W(l, M_LIMITS));
	json_array_foreach(json_object_get(e, "limits"), i, r) {
		ap_buf_addf(out, "  - %s (%s, %s): ", C(ap_json_text(r, "name")),
			    E(ap_json_text(r, "backend")), E(ap_json_text(r, "what")));
		ap_buf_addf(out, W(l, M_LIMIT_ROW), (long long)json_integer_value(
			json_object_get(r, "samples")));
		ap_buf_addf(out, "; %s (%s)\n", E(ap_json_text(r, "reason")), C(ap_json_text(r, "where")));
	}
}

static void md_env_checks(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(e, "checks"), i, c) {
		const char *kind = ap_json_text(c, "kind");
		if (!strcmp(kind, "official") || (!strcmp(kind, "numeric") &&
						   !ap_status_failed(ap_check_status(c))))
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
	md_env_limits(e, l, out);
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

static void md_conclusion(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *c = json_object_get(m, "conclusion");
	size_t i;
	json_t *e, *r;
	ap_buf_addf(out, "\n## %s\n\n- %s: **%s**\n- %s: ", W(l, M_CONCLUSION), W(l, M_VERDICT),
		    E(ap_json_text(c, "verdict")), W(l, M_PASSED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_CONSISTENT)), ap_escape_md, W(l, M_NONE), out);
	ap_buf_addf(out, "\n- %s: ", W(l, M_FAILED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_INCONSISTENT)), ap_escape_md, W(l, M_NONE), out);
	ap_buf_addf(out, "\n- %s: ", W(l, M_UNVERIFIED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_UNVERIFIED)), ap_escape_md, W(l, M_NONE), out);
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

/* ------------------------------------------------------------ JUnit */

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
	enum ap_status s = ap_status_parse(st);
	const char *tag = s == AP_FAIL ? "failure" : ap_status_failed(s) ? "error"
			: s == AP_PASS ? NULL : "skipped";
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
			enum ap_status st = ap_check_status(c);
			n++;
			fail += st == AP_FAIL;
			err += ap_status_failed(st) && st != AP_FAIL;
			skip += !ap_status_failed(st) && st != AP_PASS;
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
