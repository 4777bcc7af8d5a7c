#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonutil.h"
#include "base/outcome.h"
#include "check/verdict.h"
#include "review/escape.h"
#include "review/html.h"
#include "review/svg.h"
#include "review/words.h"

/* Every value from data goes through X() before it meets a template: the
 * escaped copy lives in one of a few slots reused in turn, enough for the
 * values of any one element; slots_free() releases them when a page ends. */
#define AP_HTML_SLOTS 8
static _Thread_local struct ap_buf ap_html_slot[AP_HTML_SLOTS];
static _Thread_local unsigned ap_html_next;

static const char *X(const char *s)
{
	struct ap_buf *b = &ap_html_slot[ap_html_next++ % AP_HTML_SLOTS];
	ap_buf_reset(b);
	ap_escape_xml(s, b);
	return ap_buf_str(b);
}

static void slots_free(void)
{
	for (size_t i = 0; i < AP_HTML_SLOTS; i++)
		ap_buf_free(&ap_html_slot[i]);
}

static const char *W(enum ap_lang l, enum ap_msg m)
{
	return ap_word(l, m);
}

static const char *T(const json_t *o, const char *key)
{
	return X(ap_json_text(o, key));
}

/* The matrix's frame is drawn in a colour nothing else on the page uses, so
 * that a screenshot shows where the matrix lies (t-report-html.sh). The frame
 * is at most 60% of the window high and scrolls, its header row kept in
 * sight, so however many checks there are the overview stays on the first
 * screen. */
#define AP_MATRIX_FRAME "#0b57d0"

static const char ap_html_style[] =
	"body{font-family:sans-serif;max-width:1200px;margin:0 auto;padding:8px 16px;color:#1f2328}"
	"h1{font-size:1.25em;margin:0 0 4px}h2{font-size:1.1em;margin:1.2em 0 .4em}"
	"h3{font-size:1em}code{font-size:12px;word-break:break-all}"
	".banner{padding:8px 12px;border-radius:6px;margin:0 0 8px}"
	".banner p{margin:2px 0}.banner strong{font-size:1.2em}"
	"table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #d0d7de;padding:2px 6px}"
	".matrix-frame{outline:3px solid " AP_MATRIX_FRAME ";margin:4px 3px;padding:0;display:inline-block;"
	"max-width:calc(100% - 6px);max-height:60vh;overflow:auto}"
	"table.matrix thead th{position:sticky;top:0;background:#f6f8fa}"
	"table.matrix th.check{text-align:left;font-weight:normal;font-family:monospace;"
	"max-width:560px;word-break:break-all}"
	"table.matrix td.cell{text-align:center;font-weight:bold;min-width:80px}"
	"th.ref{box-shadow:inset 0 -3px 0 #1f2328}.kind{color:#57606a}"
	".legend span{display:inline-block;padding:0 6px;margin:2px;border-radius:3px;font-size:12px}"
	".card{display:block;margin:8px 0;max-width:100%}"
	"details.trace{margin:4px 0}details.step{margin:0 0 0 1.5em}"
	"details.step.diff>summary{background:#ffebe9;font-weight:bold}"
	"td.diff,tr.diff td{background:#ffd7d5;font-weight:bold}td.none{color:#6e7781}";

/* The palette (svg.h) as CSS: each status and verdict class its colours. */
static void html_palette_css(struct ap_buf *out)
{
	size_t n;
	const struct ap_style *s = ap_palette(&n);
	for (size_t i = 0; i < n; i++)
		ap_buf_addf(out, ".%s{background:%s;color:%s}", s[i].cls, s[i].fill, s[i].ink);
}

static void html_head(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<!DOCTYPE html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\">"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "style-src 'unsafe-inline'; img-src data:\">"
		    "<meta name=\"viewport\" content=\"width=device-width\"><title>apiparity: %s</title>"
		    "<style>%s", l == AP_LANG_EN ? "en" : "zh-CN", T(m, "target"), ap_html_style);
	html_palette_css(out);
	ap_buf_adds(out, "</style></head><body>\n");
}

/* The verdict first: what a reviewer must know before anything else. */
static void html_banner(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *c = json_object_get(m, "conclusion");
	const char *verdict = json_string_value(json_object_get(c, "verdict"));
	const struct ap_style *v = ap_verdict_style(verdict);
	ap_buf_addf(out, "<header id=\"banner\" class=\"banner %s\" data-verdict=\"%s\"><h1>", v->cls,
		    X(verdict));
	ap_buf_addf(out, W(l, M_TITLE), T(m, "target"));
	ap_buf_addf(out, "</h1>\n<p class=\"verdict\" id=\"verdict\">%s: <strong>%s</strong></p>\n<p>",
		    W(l, M_VERDICT), X(verdict));
	ap_buf_addf(out, "%s: ", W(l, M_PASSED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_CONSISTENT)), ap_escape_xml, W(l, M_NONE), out);
	ap_buf_addf(out, " · %s: ", W(l, M_FAILED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_INCONSISTENT)), ap_escape_xml, W(l, M_NONE), out);
	ap_buf_addf(out, " · %s: ", W(l, M_UNVERIFIED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_UNVERIFIED)), ap_escape_xml, W(l, M_NONE), out);
	ap_buf_adds(out, "</p></header>\n");
}

static void html_matrix_head(const json_t *cols, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *c;
	ap_buf_addf(out, "<thead><tr><th>%s</th><th>%s</th>", W(l, M_CHECK), W(l, M_KIND));
	json_array_foreach(cols, i, c) {
		int ref = json_is_true(json_object_get(c, "reference"));
		const char *verdict = json_string_value(json_object_get(c, "verdict"));
		ap_buf_addf(out, "<th data-env=\"%s\"%s title=\"%s\">%s", T(c, "env"),
			    ref ? " class=\"ref\"" : "", T(c, "label"), T(c, "env"));
		if (ref)
			ap_buf_addf(out, " <small>(%s)</small>", W(l, M_REFERENCE));
		ap_buf_addf(out, "<br><small class=\"%s\">%s</small></th>",
			    ap_verdict_style(verdict)->cls, X(verdict));
	}
	ap_buf_adds(out, "</tr></thead>\n");
}

static void html_matrix(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *mx = json_object_get(m, "matrix");
	size_t i, k, n;
	json_t *r, *c;
	ap_buf_addf(out, "<section id=\"overview\"><h2>%s</h2>\n<figure class=\"matrix-frame\">"
		    "<table class=\"matrix\" id=\"matrix\">", W(l, M_MATRIX));
	html_matrix_head(json_object_get(mx, "columns"), l, out);
	ap_buf_adds(out, "<tbody>\n");
	json_array_foreach(json_object_get(mx, "rows"), i, r) {
		ap_buf_addf(out, "<tr data-kind=\"%s\" data-check=\"%s\"><th class=\"check\">%s</th>"
			    "<td class=\"kind\">%s</td>", T(r, "kind"), T(r, "name"), T(r, "name"),
			    T(r, "kind"));
		json_array_foreach(json_object_get(r, "cells"), k, c) {
			const char *st = json_string_value(json_object_get(c, "status"));
			const char *reason = json_string_value(json_object_get(c, "reason"));
			ap_buf_addf(out, "<td class=\"cell %s\" data-env=\"%s\" data-status=\"%s\"",
				    ap_status_style(st)->cls, T(c, "env"), st ? X(st) : "");
			if (reason || !st)
				ap_buf_addf(out, " title=\"%s\"", reason ? X(reason) : W(l, M_NOT_IN_ENV));
			ap_buf_addf(out, ">%s</td>", st ? X(st) : "\xE2\x80\x94");
		}
		ap_buf_adds(out, "</tr>\n");
	}
	ap_buf_addf(out, "</tbody></table></figure>\n<p class=\"legend\">%s:", W(l, M_LEGEND));
	const struct ap_style *s = ap_palette(&n);
	for (i = 0; i < n && i < AP_STATUS_COUNT; i++)
		ap_buf_addf(out, " <span class=\"%s\">%s</span>", s[i].cls,
			    ap_status_name((enum ap_status)i));
	ap_buf_adds(out, "</p></section>\n");
}

static void html_scope(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *scope = json_object_get(m, "scope");
	size_t i;
	json_t *v;
	ap_buf_addf(out, "<section id=\"scope\"><h2>%s</h2>\n<ul><li>%s: <code>%s</code></li>"
		    "<li>%s:<ul>", W(l, M_SCOPE), W(l, M_TARGET), T(m, "target"), W(l, M_OFFICIAL_CASE));
	json_array_foreach(json_object_get(scope, "official_nodes"), i, v)
		ap_buf_addf(out, "<li><code>%s</code> (PyTorch %s)</li>", T(v, "node"), T(v, "version"));
	if (!json_array_size(json_object_get(scope, "official_nodes")))
		ap_buf_addf(out, "<li>%s</li>", W(l, M_NONE_FOUND));
	ap_buf_addf(out, "</ul></li><li>%s:<ul>", W(l, M_FOCUSED));
	json_array_foreach(json_object_get(scope, "probes"), i, v)
		ap_buf_addf(out, "<li>%s (%s)</li>", T(v, l == AP_LANG_EN ? "says_en" : "says_zh"),
			    T(v, "name"));
	ap_buf_adds(out, "</ul></li></ul></section>\n");
}

static void html_devices(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *d;
	int any = 0;
	json_array_foreach(json_object_get(e, "devices"), i, d) {
		if (!json_is_true(json_object_get(d, "available")))
			continue;
		const char *name = json_string_value(json_array_get(json_object_get(d, "names"), 0));
		ap_buf_addf(out, "%s%s: %lld x %s", any++ ? "; " : "", T(d, "type"),
			    (long long)json_integer_value(json_object_get(d, "count")), name ? X(name) : "?");
	}
	json_array_foreach(json_object_get(e, "devices"), i, d)
		if (!json_is_true(json_object_get(d, "available")))
			ap_buf_addf(out, "%s%s: %s (%s)", any++ ? "; " : "", T(d, "type"),
				    l == AP_LANG_EN ? "unavailable" : "不可用", T(d, "reason"));
	if (!any)
		ap_buf_adds(out, "cpu");
}

/* The checks of e as list items: of the kind official (official != 0; "not
 * run" when there is none), or of every other kind. */
static void html_checks(const json_t *e, int official, enum ap_lang l, struct ap_buf *out)
{
	size_t i, n = 0;
	json_t *c;
	json_array_foreach(json_object_get(e, "checks"), i, c) {
		const char *st = json_string_value(json_object_get(c, "status"));
		const char *reason = json_string_value(json_object_get(c, "reason"));
		if (!strcmp(ap_json_text(c, "kind"), "official") != !!official)
			continue;
		/* numeric checks are summed per row (html_env_numeric) but failures */
		if (!strcmp(ap_json_text(c, "kind"), "numeric") && !ap_status_failed(ap_status_parse(st)))
			continue;
		ap_buf_addf(out, "<li><span class=\"%s\">%s</span> <code>%s</code>%s%s</li>",
			    ap_status_style(st)->cls, X(st), T(c, "name"), reason ? ": " : "",
			    reason ? X(reason) : "");
		n++;
	}
	if (official && !n)
		ap_buf_addf(out, "<li>%s</li>", W(l, M_NOT_RUN));
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

/* The numeric checks summed per operator, dtype and comparison, as
 * report.md has them. */
static void html_env_numeric(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	static const char *const keys[] = { "samples", "passed", "failed", "notrun", "max_abs",
					    "max_rel", "worst_ratio", "rtol", "atol" };
	size_t i;
	json_t *r;
	char b[9][32];
	if (!json_array_size(json_object_get(e, "numeric")))
		return;
	ap_buf_addf(out, "<li>%s:<ul>", W(l, M_NUMERIC));
	json_array_foreach(json_object_get(e, "numeric"), i, r) {
		for (size_t k = 0; k < 9; k++)
			fmt_num(json_object_get(r, keys[k]), b[k]);
		ap_buf_addf(out, "<li class=\"%s\"><code>%s</code> %s, %s vs %s: ",
			    json_integer_value(json_object_get(r, "failed")) ? "diff" : "same", T(r, "op"),
			    T(r, "dtype"), T(r, "device"), T(r, "against"));
		ap_buf_addf(out, W(l, M_NUMERIC_ROW), b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]);
		ap_buf_adds(out, "</li>");
	}
	ap_buf_adds(out, "</ul></li>");
}

/* The known backend limits applied, as report.md has them. */
static void html_env_limits(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *r;
	if (!json_array_size(json_object_get(e, "limits")))
		return;
	ap_buf_addf(out, "<li>%s:<ul>", W(l, M_LIMITS));
	json_array_foreach(json_object_get(e, "limits"), i, r) {
		ap_buf_addf(out, "<li class=\"limit\"><code>%s</code> (%s, %s): ", T(r, "name"),
			    T(r, "backend"), T(r, "what"));
		ap_buf_addf(out, W(l, M_LIMIT_ROW), (long long)json_integer_value(
			json_object_get(r, "samples")));
		ap_buf_addf(out, "; %s (<code>%s</code>)</li>", T(r, "reason"), T(r, "where"));
	}
	ap_buf_adds(out, "</ul></li>");
}

static void html_env_facts(const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	const json_t *p = json_object_get(e, "probes");
	size_t i;
	json_t *v;
	ap_buf_adds(out, "<ul>");
	if (json_is_string(json_object_get(e, "error")))
		ap_buf_addf(out, "<li>%s: %s</li>", W(l, M_ENV_ERROR), T(e, "error"));
	ap_buf_addf(out, "<li>%s: %s</li><li>%s: %s</li><li>%s: ", W(l, M_PYTHON), T(e, "python"),
		    W(l, M_TORCH), T(e, "torch"), W(l, M_PLUGIN));
	json_array_foreach(json_object_get(e, "plugins"), i, v)
		ap_buf_addf(out, "%s%s", i ? ", " : "", X(json_string_value(v)));
	ap_buf_addf(out, "%s</li><li>%s: ", json_array_size(json_object_get(e, "plugins")) ? "" :
		    W(l, M_NONE), W(l, M_DEVICES));
	html_devices(e, l, out);
	ap_buf_adds(out, "</li>");
	if (!json_is_true(json_object_get(e, "found"))) {
		ap_buf_addf(out, "<li>%s: %s (%s:", W(l, M_PROBES), W(l, M_ABSENT), W(l, M_NEAREST));
		json_array_foreach(json_object_get(e, "nearest"), i, v)
			ap_buf_addf(out, " <code>%s</code>", X(json_string_value(v)));
		ap_buf_adds(out, ")");
	} else
		ap_buf_addf(out, "<li>%s: %lld/%lld PASS, %s %s", W(l, M_PROBES),
			    (long long)json_integer_value(json_object_get(p, "passed")),
			    (long long)json_integer_value(json_object_get(p, "total")), W(l, M_VERDICT),
			    T(e, "verdict"));
	ap_buf_adds(out, "<ul>");
	html_checks(e, 0, l, out);
	ap_buf_adds(out, "</ul></li>");
	html_env_numeric(e, l, out);
	html_env_limits(e, l, out);
	ap_buf_addf(out, "<li>%s: %lld</li><li>%s:<ul>", W(l, M_EXIT),
		    (long long)json_integer_value(json_object_get(e, "exit_code")), W(l, M_EVIDENCE));
	json_array_foreach(json_object_get(e, "evidence"), i, v)
		ap_buf_addf(out, "<li><code>%s</code> sha256 <code>%s</code></li>", T(v, "path"),
			    T(v, "sha256"));
	ap_buf_addf(out, "</ul></li><li>%s:<ul>", W(l, M_OFFICIAL));
	html_checks(e, 1, l, out);
	ap_buf_adds(out, "</ul></li></ul>\n");
}

static void html_env(const json_t *m, const json_t *e, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<section class=\"env\" data-env=\"%s\"><h3>", T(e, "name"));
	ap_buf_addf(out, W(l, M_RESULTS), T(e, "name"));
	ap_buf_addf(out, " (%s)</h3>\n", T(e, "label"));
	ap_svg_card(m, e, out);
	html_env_facts(e, l, out);
	ap_buf_adds(out, "</section>\n");
}

/* The signatures (from the signature checks): a row per environment with
 * its signature, where it came from, what it was compared with and how; a
 * row whose signature differs is highlighted, its differences listed. */
static void html_signatures(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *sigs = json_object_get(m, "signatures");
	size_t i, k;
	json_t *g, *d;
	ap_buf_addf(out, "<section id=\"signatures\"><h2>%s</h2>\n", W(l, M_SIGS));
	if (!json_array_size(sigs)) {
		ap_buf_addf(out, "<p>%s</p></section>\n", W(l, M_SIG_NONE));
		return;
	}
	ap_buf_addf(out, "<table class=\"signatures\"><tr><th>%s</th><th>%s</th><th>%s</th><th>%s</th>"
		    "<th>%s</th><th>%s</th></tr>\n", W(l, M_SIG_ENV), W(l, M_SIG_STATUS),
		    W(l, M_SIG_SOURCE), W(l, M_SIG_TEXT), W(l, M_SIG_AGAINST), W(l, M_SIG_DIFFS));
	json_array_foreach(sigs, i, g) {
		const char *ref = json_string_value(json_object_get(g, "reference"));
		const char *st = json_string_value(json_object_get(g, "status"));
		int differs = json_array_size(json_object_get(g, "differences")) > 0;
		enum ap_msg how = !differs ? M_SIG_AS : json_is_true(json_object_get(g, "same_torch"))
			? M_SIG_SAME : M_SIG_OTHER;
		ap_buf_addf(out, "<tr data-env=\"%s\"%s><td>%s</td><td class=\"%s\">%s</td><td>%s</td>"
			    "<td><code>%s</code></td><td>", T(g, "env"), differs ? " class=\"diff\"" : "",
			    T(g, "env"), ap_status_style(st)->cls, X(st), T(g, "source"), T(g, "text"));
		if (ref)
			ap_buf_addf(out, W(l, how), X(ref));
		else
			ap_buf_adds(out, W(l, M_SIG_REF));
		ap_buf_adds(out, "</td><td><ul>");
		json_array_foreach(json_object_get(g, "differences"), k, d)
			ap_buf_addf(out, "<li>%s</li>", T(d, "text"));
		ap_buf_adds(out, "</ul></td></tr>\n");
	}
	ap_buf_adds(out, "</table></section>\n");
}

static void html_adaptation(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *r = json_object_get(m, "resolution"), *a = json_object_get(m, "adaptation");
	ap_buf_addf(out, "<section id=\"adaptation\"><h2>%s</h2>\n<ul>", W(l, M_ADAPT));
	if (!r)
		ap_buf_addf(out, "<li>%s</li>", W(l, M_ABSENT));
	else
		ap_buf_addf(out, "<li>%s: <code>%s:%lld</code> (%s)</li><li>%s</li><li>%s</li>",
			    W(l, M_IMPL), T(r, "file"), (long long)json_integer_value(json_object_get(r, "line")),
			    T(r, "kind"), T(a, l == AP_LANG_EN ? "conclusion_en" : "conclusion_zh"),
			    json_is_true(json_object_get(a, "device_independent")) ? W(l, M_PATCH_NOT)
										    : W(l, M_PATCH_NEEDED));
	ap_buf_adds(out, "</ul></section>\n");
}

static void html_docs_entry(const json_t *d, enum ap_lang l, struct ap_buf *out)
{
	const json_t *e = json_object_get(d, "entry");
	size_t i;
	json_t *p;
	ap_buf_addf(out, "<li>%s: <code>%s</code> (%s:%lld)<ul>", json_is_true(json_object_get(d, "exact")) ?
		    W(l, M_DOCS_ENTRY) : W(l, M_DOCS_CLASS), T(e, "api"), T(e, "file"),
		    (long long)json_integer_value(json_object_get(e, "line")));
	json_array_foreach(json_object_get(e, "products"), i, p)
		ap_buf_addf(out, "<li>%s: %s</li>", T(p, "product"),
			    json_is_true(json_object_get(p, "supported")) ? W(l, M_SUPPORTED) : W(l, M_UNSUPPORTED));
	ap_buf_adds(out, "</ul></li>");
	json_array_foreach(json_object_get(d, "contradictions"), i, p)
		ap_buf_addf(out, "<li class=\"st-fail\">%s: %s %s, %s %s</li>", W(l, M_DOCS_CONTRA),
			    T(p, "product"), json_is_true(json_object_get(p, "claimed")) ? W(l, M_SUPPORTED)
										  : W(l, M_UNSUPPORTED),
			    T(p, "env"), T(p, "verdict"));
	if (!json_integer_value(json_object_get(d, "compared")))
		ap_buf_addf(out, "<li>%s</li>", W(l, M_DOCS_UNCOMPARED));
	else if (!json_array_size(json_object_get(d, "contradictions")))
		ap_buf_addf(out, "<li>%s</li>", W(l, M_DOCS_OK));
}

static void html_docs(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *d = json_object_get(m, "docs"), *e = json_object_get(d, "entry");
	ap_buf_addf(out, "<section id=\"docs\"><h2>%s</h2>\n<ul>", W(l, M_DOCS));
	if (!json_is_true(json_object_get(d, "checked")))
		ap_buf_addf(out, "<li>%s</li>", W(l, M_DOCS_NOT));
	else if (!e || json_is_null(e))
		ap_buf_addf(out, "<li>%s</li>", W(l, M_DOCS_NONE));
	else
		html_docs_entry(d, l, out);
	ap_buf_adds(out, "</ul></section>\n");
}

static void html_conclusion(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	const json_t *c = json_object_get(m, "conclusion");
	size_t i, k;
	json_t *e, *r;
	ap_buf_addf(out, "<section id=\"conclusion\"><h2>%s</h2>\n<ul><li>%s: <strong>%s</strong></li>"
		    "<li>%s: ", W(l, M_CONCLUSION), W(l, M_VERDICT), T(c, "verdict"), W(l, M_PASSED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_CONSISTENT)), ap_escape_xml, W(l, M_NONE), out);
	ap_buf_addf(out, "</li><li>%s: ", W(l, M_FAILED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_INCONSISTENT)), ap_escape_xml, W(l, M_NONE), out);
	ap_buf_addf(out, "</li><li>%s: ", W(l, M_UNVERIFIED_IN));
	ap_escape_list(json_object_get(c, ap_verdict_name(AP_UNVERIFIED)), ap_escape_xml, W(l, M_NONE), out);
	ap_buf_addf(out, "</li><li>%s:<ul>", W(l, M_REASONS));
	json_array_foreach(json_object_get(m, "environments"), i, e)
		json_array_foreach(json_object_get(e, "verdict_reasons"), k, r)
			ap_buf_addf(out, "<li>%s: %s</li>", T(e, "name"), X(json_string_value(r)));
	ap_buf_adds(out, "</ul></li></ul></section>\n");
}

/* The numeric checks of every environment that ran some: a chart each of
 * their errors against their tolerances (svg.h). */
static void html_numeric(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *e;
	int any = 0;
	json_array_foreach(json_object_get(m, "environments"), i, e)
		any |= json_array_size(json_object_get(e, "numeric")) > 0;
	if (!any)
		return;
	ap_buf_addf(out, "<section id=\"numeric\"><h2>%s</h2>\n", W(l, M_NUMERIC_CHART));
	json_array_foreach(json_object_get(m, "environments"), i, e)
		ap_svg_numeric(e, out);
	ap_buf_adds(out, "</section>\n");
}

/* A trace value as compact JSON text (escaped by the caller). */
static void value_text(const json_t *v, struct ap_buf *out)
{
	char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	ap_buf_adds(out, s ? s : "");
	free(s);
}

/* One step: a <details>, open and highlighted when it differs. Its summary
 * shows the value where all agree; its table, every environment's. */
static void html_step(const json_t *st, enum ap_lang l, struct ap_buf *out)
{
	int differs = json_is_true(json_object_get(st, "differs"));
	const json_t *base = NULL;
	struct ap_buf v = { 0 };
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(st, "values"), i, c)
		if (!base && json_is_true(json_object_get(c, "ran")))
			base = c;
	ap_buf_addf(out, "<details class=\"step %s\" data-step=\"%s\"%s><summary>%s", differs ? "diff" : "same",
		    T(st, "step"), differs ? " open" : "", T(st, "step"));
	if (!differs) {
		value_text(json_object_get(base, "value"), &v);
		ap_buf_addf(out, " = <code>%s</code>", X(ap_buf_str(&v)));
	}
	ap_buf_adds(out, "</summary><table><tr>");
	json_array_foreach(json_object_get(st, "values"), i, c)
		ap_buf_addf(out, "<th>%s</th>", T(c, "env"));
	ap_buf_adds(out, "</tr><tr>");
	json_array_foreach(json_object_get(st, "values"), i, c) {
		const json_t *val = json_object_get(c, "value");
		if (!json_is_true(json_object_get(c, "ran"))) {
			ap_buf_addf(out, "<td class=\"none\" title=\"%s\">\xE2\x80\x94</td>", W(l, M_NOT_IN_ENV));
			continue;
		}
		const char *step = json_string_value(json_object_get(c, "step"));
		int odd = !step || strcmp(step, ap_json_text(st, "step")) ||
			  !json_equal(val, json_object_get(base, "value"));
		ap_buf_reset(&v);
		if (step && strcmp(step, ap_json_text(st, "step")))
			ap_buf_addf(&v, "%s: ", step);
		value_text(val, &v);
		ap_buf_addf(out, "<td%s><code>%s</code></td>", odd ? " class=\"diff\"" : "", X(ap_buf_str(&v)));
	}
	ap_buf_adds(out, "</tr></table></details>\n");
	ap_buf_free(&v);
}

/* The traces, the differences first in sight: a check with a differing step
 * is open, and so is that step; steps that agree are folded. */
static void html_traces(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	size_t i, k;
	json_t *t, *st;
	ap_buf_addf(out, "<section id=\"traces\"><h2>%s</h2>\n", W(l, M_TRACES));
	json_array_foreach(json_object_get(m, "traces"), i, t) {
		size_t n = json_array_size(json_object_get(t, "steps"));
		size_t differ = (size_t)json_integer_value(json_object_get(t, "differing"));
		ap_buf_addf(out, "<details class=\"trace\" data-kind=\"%s\" data-check=\"%s\"%s><summary>"
			    "<code>%s</code> (%s) ", T(t, "kind"), T(t, "check"), differ ? " open" : "",
			    T(t, "check"), T(t, "kind"));
		if (differ)
			ap_buf_addf(out, W(l, M_STEPS_DIFFER), n, differ);
		else
			ap_buf_addf(out, W(l, M_STEPS), n);
		ap_buf_adds(out, "</summary>\n");
		json_array_foreach(json_object_get(t, "steps"), k, st)
			html_step(st, l, out);
		ap_buf_adds(out, "</details>\n");
	}
	if (!json_array_size(json_object_get(m, "traces")))
		ap_buf_addf(out, "<p>%s</p>\n", W(l, M_NO_TRACES));
	ap_buf_adds(out, "</section>\n");
}

void ap_report_html(const json_t *m, enum ap_lang l, struct ap_buf *out)
{
	size_t i;
	json_t *e;
	html_head(m, l, out);
	html_banner(m, l, out);
	html_matrix(m, l, out);
	html_scope(m, l, out);
	ap_buf_addf(out, "<section id=\"environments\"><h2>%s</h2>\n", W(l, M_CARDS));
	json_array_foreach(json_object_get(m, "environments"), i, e)
		html_env(m, e, l, out);
	ap_buf_adds(out, "</section>\n");
	html_signatures(m, l, out);
	html_numeric(m, l, out);
	html_adaptation(m, l, out);
	html_docs(m, l, out);
	html_conclusion(m, l, out);
	html_traces(m, l, out);
	ap_buf_adds(out, "</body></html>\n");
	slots_free();
}
