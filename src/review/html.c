#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/outcome.h"
#include "check/verdict.h"
#include "review/escape.h"
#include "review/html.h"
#include "review/svg.h"
#include "review/words.h"

/* Every value from data is escaped into the page as it is written
 * (ap_escape_xml): put() a value as it is (NULL reads as ""), text() one
 * that reads as "-" when missing. */
static void put(struct ap_buf *out, const char *s)
{
	ap_escape_xml(s, out);
}

static void text(struct ap_buf *out, const char *s)
{
	ap_escape_xml(ap_report_text(s), out);
}

static const char *W(enum ap_lang l, enum ap_msg m)
{
	return ap_word(l, m);
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

static void html_head(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<!DOCTYPE html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\">"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "style-src 'unsafe-inline'; img-src data:\">"
		    "<meta name=\"viewport\" content=\"width=device-width\"><title>apiparity: ",
		    l == AP_LANG_EN ? "en" : "zh-CN");
	text(out, r->target);
	ap_buf_addf(out, "</title><style>%s", ap_html_style);
	html_palette_css(out);
	ap_buf_adds(out, "</style></head><body>\n");
}

/* The environments by verdict, as the banner and the conclusion list them. */
static void html_verdict_lists(const struct ap_report_conclusion *c, enum ap_lang l,
			       const char *sep, struct ap_buf *out)
{
	ap_buf_addf(out, "%s: ", W(l, M_PASSED_IN));
	ap_escape_list(c->consistent, c->nconsistent, ap_escape_xml, W(l, M_NONE), out);
	ap_buf_addf(out, "%s%s: ", sep, W(l, M_FAILED_IN));
	ap_escape_list(c->inconsistent, c->ninconsistent, ap_escape_xml, W(l, M_NONE), out);
	ap_buf_addf(out, "%s%s: ", sep, W(l, M_UNVERIFIED_IN));
	ap_escape_list(c->unverified, c->nunverified, ap_escape_xml, W(l, M_NONE), out);
}

/* The verdict first: what a reviewer must know before anything else. */
static void html_banner(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	const struct ap_report_conclusion *c = &r->conclusion;
	const char *verdict = ap_verdict_name(c->verdict);
	ap_buf_addf(out, "<header id=\"banner\" class=\"banner %s\" data-verdict=\"",
		    ap_verdict_style(c->verdict)->cls);
	put(out, verdict);
	ap_buf_adds(out, "\"><h1>");
	ap_escape_fill(W(l, M_TITLE), ap_report_text(r->target), ap_escape_xml, out);
	ap_buf_addf(out, "</h1>\n<p class=\"verdict\" id=\"verdict\">%s: <strong>", W(l, M_VERDICT));
	put(out, verdict);
	ap_buf_adds(out, "</strong></p>\n<p>");
	html_verdict_lists(c, l, " · ", out);
	ap_buf_adds(out, "</p></header>\n");
}

static void html_matrix_head(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<thead><tr><th>%s</th><th>%s</th>", W(l, M_CHECK), W(l, M_KIND));
	for (size_t i = 0; i < r->nenvs; i++) {
		const struct ap_report_column *c = &r->columns[i];
		ap_buf_adds(out, "<th data-env=\"");
		text(out, c->env);
		ap_buf_addf(out, "\"%s title=\"", c->reference ? " class=\"ref\"" : "");
		text(out, c->label);
		ap_buf_adds(out, "\">");
		text(out, c->env);
		if (c->reference)
			ap_buf_addf(out, " <small>(%s)</small>", W(l, M_REFERENCE));
		ap_buf_addf(out, "<br><small class=\"%s\">", ap_verdict_style(c->verdict)->cls);
		put(out, c->verdict_word);
		ap_buf_adds(out, "</small></th>");
	}
	ap_buf_adds(out, "</tr></thead>\n");
}

static void html_matrix_cell(const struct ap_report_cell *c, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<td class=\"cell %s\" data-env=\"", ap_cell_style(c)->cls);
	text(out, c->env);
	ap_buf_adds(out, "\" data-status=\"");
	put(out, c->status_word);
	ap_buf_adds(out, "\"");
	if (c->reason) {
		ap_buf_adds(out, " title=\"");
		put(out, c->reason);
		ap_buf_adds(out, "\"");
	} else if (!c->present)
		ap_buf_addf(out, " title=\"%s\"", W(l, M_NOT_IN_ENV));
	ap_buf_adds(out, ">");
	if (c->present)
		put(out, c->status_word);
	else
		ap_buf_adds(out, "\xE2\x80\x94");
	ap_buf_adds(out, "</td>");
}

static void html_matrix(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	size_t n;
	ap_buf_addf(out, "<section id=\"overview\"><h2>%s</h2>\n<figure class=\"matrix-frame\">"
		    "<table class=\"matrix\" id=\"matrix\">", W(l, M_MATRIX));
	html_matrix_head(r, l, out);
	ap_buf_adds(out, "<tbody>\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct ap_report_row *row = &r->rows[i];
		ap_buf_adds(out, "<tr data-kind=\"");
		text(out, row->kind);
		ap_buf_adds(out, "\" data-check=\"");
		text(out, row->name);
		ap_buf_adds(out, "\"><th class=\"check\">");
		text(out, row->name);
		ap_buf_adds(out, "</th><td class=\"kind\">");
		text(out, row->kind);
		ap_buf_adds(out, "</td>");
		for (size_t k = 0; k < r->nenvs; k++)
			html_matrix_cell(&row->cells[k], l, out);
		ap_buf_adds(out, "</tr>\n");
	}
	ap_buf_addf(out, "</tbody></table></figure>\n<p class=\"legend\">%s:", W(l, M_LEGEND));
	const struct ap_style *s = ap_palette(&n);
	for (size_t i = 0; i < n && i < AP_STATUS_COUNT; i++)
		ap_buf_addf(out, " <span class=\"%s\">%s</span>", s[i].cls,
			    ap_status_name((enum ap_status)i));
	ap_buf_adds(out, "</p></section>\n");
}

static void html_scope(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<section id=\"scope\"><h2>%s</h2>\n<ul><li>%s: <code>", W(l, M_SCOPE),
		    W(l, M_TARGET));
	text(out, r->target);
	ap_buf_addf(out, "</code></li><li>%s:<ul>", W(l, M_OFFICIAL_CASE));
	for (size_t i = 0; i < r->nnodes; i++) {
		ap_buf_adds(out, "<li><code>");
		text(out, r->nodes[i].node);
		ap_buf_adds(out, "</code> (PyTorch ");
		text(out, r->nodes[i].version);
		ap_buf_adds(out, ")</li>");
	}
	if (!r->nnodes)
		ap_buf_addf(out, "<li>%s</li>", W(l, M_NONE_FOUND));
	ap_buf_addf(out, "</ul></li><li>%s:<ul>", W(l, M_FOCUSED));
	for (size_t i = 0; i < r->nprobes; i++) {
		ap_buf_adds(out, "<li>");
		text(out, l == AP_LANG_EN ? r->probes[i].says_en : r->probes[i].says_zh);
		ap_buf_adds(out, " (");
		text(out, r->probes[i].name);
		ap_buf_adds(out, ")</li>");
	}
	ap_buf_adds(out, "</ul></li></ul></section>\n");
}

/* The checks of e as list items: of the kind official (official != 0; "not
 * run" when there is none), or of every other kind. */
static void html_checks(const struct ap_report_env *e, int official, enum ap_lang l,
			struct ap_buf *out)
{
	size_t n = 0;
	for (size_t i = 0; i < e->nchecks; i++) {
		const struct ap_fact_check *c = &e->checks[i];
		if ((c->kind == AP_KIND_OFFICIAL) != !!official)
			continue;
		/* numeric checks are summed per row (html_env_numeric) but failures */
		if (c->kind == AP_KIND_NUMERIC && !ap_status_failed(c->status))
			continue;
		ap_buf_addf(out, "<li><span class=\"%s\">", ap_status_style(c->status)->cls);
		text(out, c->status_word);
		ap_buf_adds(out, "</span> <code>");
		text(out, c->name);
		ap_buf_adds(out, "</code>");
		if (c->reason) {
			ap_buf_adds(out, ": ");
			put(out, c->reason);
		}
		ap_buf_adds(out, "</li>");
		n++;
	}
	if (official && !n)
		ap_buf_addf(out, "<li>%s</li>", W(l, M_NOT_RUN));
}

/* The numeric checks summed per operator, dtype and comparison, as
 * report.md has them. */
static void html_env_numeric(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	if (!e->nnumeric)
		return;
	ap_buf_addf(out, "<li>%s:<ul>", W(l, M_NUMERIC));
	for (size_t i = 0; i < e->nnumeric; i++) {
		const struct ap_report_numeric *r = &e->numeric[i];
		ap_buf_addf(out, "<li class=\"%s\"><code>", r->failed ? "diff" : "same");
		text(out, r->op);
		ap_buf_adds(out, "</code> ");
		text(out, r->dtype);
		ap_buf_adds(out, ", ");
		text(out, r->device);
		ap_buf_adds(out, " vs ");
		text(out, r->against);
		ap_buf_adds(out, ": ");
		ap_report_numeric_row(r, l, out);
		ap_buf_adds(out, "</li>");
	}
	ap_buf_adds(out, "</ul></li>");
}

/* The known backend limits applied, as report.md has them. */
static void html_env_limits(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	if (!e->nlimits)
		return;
	ap_buf_addf(out, "<li>%s:<ul>", W(l, M_LIMITS));
	for (size_t i = 0; i < e->nlimits; i++) {
		const struct ap_report_limit *r = &e->limits[i];
		ap_buf_adds(out, "<li class=\"limit\"><code>");
		text(out, r->name);
		ap_buf_adds(out, "</code> (");
		text(out, r->backend);
		ap_buf_adds(out, ", ");
		text(out, r->what);
		ap_buf_adds(out, "): ");
		ap_buf_addf(out, W(l, M_LIMIT_ROW), r->samples);
		ap_buf_adds(out, "; ");
		text(out, r->reason);
		ap_buf_adds(out, " (<code>");
		text(out, r->where);
		ap_buf_adds(out, "</code>)</li>");
	}
	ap_buf_adds(out, "</ul></li>");
}

/* The versions, plugins, devices and probes of e. */
static void html_env_platform(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	const struct ap_bundle_facts *b = e->b;
	if (b->error) {
		ap_buf_addf(out, "<li>%s: ", W(l, M_ENV_ERROR));
		text(out, b->error);
		ap_buf_adds(out, "</li>");
	}
	ap_buf_addf(out, "<li>%s: ", W(l, M_PYTHON));
	text(out, b->python);
	ap_buf_addf(out, "</li><li>%s: ", W(l, M_TORCH));
	text(out, b->torch);
	ap_buf_addf(out, "</li><li>%s: ", W(l, M_PLUGIN));
	for (size_t i = 0; i < b->nplugins; i++) {
		ap_buf_adds(out, i ? ", " : "");
		put(out, e->plugins[i]);
	}
	ap_buf_addf(out, "%s</li><li>%s: ", b->nplugins ? "" : W(l, M_NONE), W(l, M_DEVICES));
	ap_report_devices(b, l, ap_escape_xml, out);
	ap_buf_adds(out, "</li>");
	if (!b->found) {
		ap_buf_addf(out, "<li>%s: %s (%s:", W(l, M_PROBES), W(l, M_ABSENT), W(l, M_NEAREST));
		for (size_t i = 0; i < b->nnearest; i++) {
			ap_buf_adds(out, " <code>");
			put(out, b->nearest[i]);
			ap_buf_adds(out, "</code>");
		}
		ap_buf_adds(out, ")");
	} else {
		ap_buf_addf(out, "<li>%s: %d/%d PASS, %s ", W(l, M_PROBES), b->probes_passed,
			    b->probes_total, W(l, M_VERDICT));
		text(out, b->verdict_word);
	}
}

static void html_env_facts(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_adds(out, "<ul>");
	html_env_platform(e, l, out);
	ap_buf_adds(out, "<ul>");
	html_checks(e, 0, l, out);
	ap_buf_adds(out, "</ul></li>");
	html_env_numeric(e, l, out);
	html_env_limits(e, l, out);
	ap_buf_addf(out, "<li>%s: %lld</li><li>%s:<ul>", W(l, M_EXIT), e->b->exit_code,
		    W(l, M_EVIDENCE));
	for (size_t i = 0; i < e->nevidence; i++) {
		ap_buf_adds(out, "<li><code>");
		text(out, e->evidence[i].path);
		ap_buf_adds(out, "</code> sha256 <code>");
		text(out, e->evidence[i].sha256);
		ap_buf_adds(out, "</code></li>");
	}
	ap_buf_addf(out, "</ul></li><li>%s:<ul>", W(l, M_OFFICIAL));
	html_checks(e, 1, l, out);
	ap_buf_adds(out, "</ul></li></ul>\n");
}

static void html_env(const struct ap_report *r, const struct ap_report_env *e, enum ap_lang l,
		     struct ap_buf *out)
{
	ap_buf_adds(out, "<section class=\"env\" data-env=\"");
	text(out, e->name);
	ap_buf_adds(out, "\"><h3>");
	ap_escape_fill(W(l, M_RESULTS), e->name, ap_escape_xml, out);
	ap_buf_adds(out, " (");
	text(out, e->b->label);
	ap_buf_adds(out, ")</h3>\n");
	ap_svg_card(r, e, out);
	html_env_facts(e, l, out);
	ap_buf_adds(out, "</section>\n");
}

/* A signature's row: its environment, status, source, text, what it was
 * compared with and how, its differences. */
static void html_signature(const struct ap_report_signature *g, enum ap_lang l, struct ap_buf *out)
{
	const struct ap_fact_signature *d = g->sig;
	int differs = d->ndifferences > 0;
	enum ap_msg how = !differs ? M_SIG_AS : d->same_torch == 1 ? M_SIG_SAME : M_SIG_OTHER;
	ap_buf_adds(out, "<tr data-env=\"");
	text(out, g->env);
	ap_buf_addf(out, "\"%s><td>", differs ? " class=\"diff\"" : "");
	text(out, g->env);
	ap_buf_addf(out, "</td><td class=\"%s\">", ap_status_style(g->status)->cls);
	put(out, g->status_word);
	ap_buf_adds(out, "</td><td>");
	text(out, d->source);
	ap_buf_adds(out, "</td><td><code>");
	text(out, g->text);
	ap_buf_adds(out, "</code></td><td>");
	if (d->reference)
		ap_escape_fill(W(l, how), d->reference, ap_escape_xml, out);
	else
		ap_buf_adds(out, W(l, M_SIG_REF));
	ap_buf_adds(out, "</td><td><ul>");
	for (size_t k = 0; k < d->ndifferences; k++) {
		ap_buf_adds(out, "<li>");
		text(out, d->differences[k]);
		ap_buf_adds(out, "</li>");
	}
	ap_buf_adds(out, "</ul></td></tr>\n");
}

/* The signatures (from the signature checks): a row per environment with
 * its signature, where it came from, what it was compared with and how; a
 * row whose signature differs is highlighted, its differences listed. */
static void html_signatures(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<section id=\"signatures\"><h2>%s</h2>\n", W(l, M_SIGS));
	if (!r->nsignatures) {
		ap_buf_addf(out, "<p>%s</p></section>\n", W(l, M_SIG_NONE));
		return;
	}
	ap_buf_addf(out, "<table class=\"signatures\"><tr><th>%s</th><th>%s</th><th>%s</th><th>%s</th>"
		    "<th>%s</th><th>%s</th></tr>\n", W(l, M_SIG_ENV), W(l, M_SIG_STATUS),
		    W(l, M_SIG_SOURCE), W(l, M_SIG_TEXT), W(l, M_SIG_AGAINST), W(l, M_SIG_DIFFS));
	for (size_t i = 0; i < r->nsignatures; i++)
		html_signature(&r->signatures[i], l, out);
	ap_buf_adds(out, "</table></section>\n");
}

static void html_adaptation(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	static const struct ap_bundle_facts none;
	const struct ap_bundle_facts *b = r->impl ? r->impl : &none;
	ap_buf_addf(out, "<section id=\"adaptation\"><h2>%s</h2>\n<ul>", W(l, M_ADAPT));
	ap_buf_addf(out, "<li>%s: <code>", W(l, M_IMPL));
	text(out, b->impl_file);
	ap_buf_addf(out, ":%lld</code> (", b->impl_line);
	text(out, b->impl_kind);
	ap_buf_adds(out, ")</li><li>");
	text(out, l == AP_LANG_EN ? b->conclusion_en : b->conclusion_zh);
	ap_buf_addf(out, "</li><li>%s</li>", b->device_independent ? W(l, M_PATCH_NOT)
								   : W(l, M_PATCH_NEEDED));
	ap_buf_adds(out, "</ul></section>\n");
}

static void html_docs_entry(const struct ap_report_docs *d, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<li>%s: <code>", d->exact ? W(l, M_DOCS_ENTRY) : W(l, M_DOCS_CLASS));
	text(out, d->api);
	ap_buf_adds(out, "</code> (");
	text(out, d->file);
	ap_buf_addf(out, ":%lld)<ul>", d->line);
	for (size_t i = 0; i < d->nproducts; i++) {
		ap_buf_adds(out, "<li>");
		text(out, d->products[i].product);
		ap_buf_addf(out, ": %s</li>", d->products[i].supported ? W(l, M_SUPPORTED)
									: W(l, M_UNSUPPORTED));
	}
	ap_buf_adds(out, "</ul></li>");
	for (size_t i = 0; i < d->ncontradictions; i++) {
		const struct ap_report_contradiction *p = &d->contradictions[i];
		ap_buf_addf(out, "<li class=\"st-fail\">%s: ", W(l, M_DOCS_CONTRA));
		text(out, p->product);
		ap_buf_addf(out, " %s, ", p->claimed ? W(l, M_SUPPORTED) : W(l, M_UNSUPPORTED));
		text(out, p->env);
		ap_buf_adds(out, " ");
		text(out, p->verdict_word);
		ap_buf_adds(out, "</li>");
	}
	if (!d->compared)
		ap_buf_addf(out, "<li>%s</li>", W(l, M_DOCS_UNCOMPARED));
	else if (!d->ncontradictions)
		ap_buf_addf(out, "<li>%s</li>", W(l, M_DOCS_OK));
}

static void html_docs(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<section id=\"docs\"><h2>%s</h2>\n<ul>", W(l, M_DOCS));
	if (!r->docs.checked)
		ap_buf_addf(out, "<li>%s</li>", W(l, M_DOCS_NOT));
	else if (!r->docs.entry)
		ap_buf_addf(out, "<li>%s</li>", W(l, M_DOCS_NONE));
	else
		html_docs_entry(&r->docs, l, out);
	ap_buf_adds(out, "</ul></section>\n");
}

static void html_conclusion(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<section id=\"conclusion\"><h2>%s</h2>\n<ul><li>%s: <strong>",
		    W(l, M_CONCLUSION), W(l, M_VERDICT));
	put(out, ap_verdict_name(r->conclusion.verdict));
	ap_buf_adds(out, "</strong></li><li>");
	html_verdict_lists(&r->conclusion, l, "</li><li>", out);
	ap_buf_addf(out, "</li><li>%s:<ul>", W(l, M_REASONS));
	for (size_t i = 0; i < r->nenvs; i++) {
		const struct ap_bundle_facts *b = r->envs[i].b;
		for (size_t k = 0; k < b->nverdict_reasons; k++) {
			ap_buf_adds(out, "<li>");
			text(out, r->envs[i].name);
			ap_buf_adds(out, ": ");
			put(out, b->verdict_reasons[k]);
			ap_buf_adds(out, "</li>");
		}
	}
	ap_buf_adds(out, "</ul></li></ul></section>\n");
}

/* The numeric checks of every environment that ran some: a chart each of
 * their errors against their tolerances (svg.h). */
static void html_numeric(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	int any = 0;
	for (size_t i = 0; i < r->nenvs; i++)
		any |= r->envs[i].nnumeric > 0;
	if (!any)
		return;
	ap_buf_addf(out, "<section id=\"numeric\"><h2>%s</h2>\n", W(l, M_NUMERIC_CHART));
	for (size_t i = 0; i < r->nenvs; i++)
		ap_svg_numeric(&r->envs[i], out);
	ap_buf_adds(out, "</section>\n");
}

/* One environment's cell of a step's table. */
static void html_step_value(const struct ap_report_step *st, const struct ap_report_value *v,
			    enum ap_lang l, struct ap_buf *out)
{
	if (!v->ran) {
		ap_buf_addf(out, "<td class=\"none\" title=\"%s\">\xE2\x80\x94</td>", W(l, M_NOT_IN_ENV));
		return;
	}
	struct ap_buf t = { 0 };
	if (v->step && strcmp(v->step, st->step))
		ap_buf_addf(&t, "%s: ", v->step);
	ap_buf_adds(&t, v->text);
	ap_buf_addf(out, "<td%s><code>", v->odd ? " class=\"diff\"" : "");
	put(out, ap_buf_str(&t));
	ap_buf_adds(out, "</code></td>");
	ap_buf_free(&t);
}

/* One step: a <details>, open and highlighted when it differs. Its summary
 * shows the value where all agree; its table, every environment's. */
static void html_step(const struct ap_report_step *st, size_t nenvs, enum ap_lang l,
		      struct ap_buf *out)
{
	ap_buf_addf(out, "<details class=\"step %s\" data-step=\"", st->differs ? "diff" : "same");
	text(out, st->step);
	ap_buf_addf(out, "\"%s><summary>", st->differs ? " open" : "");
	text(out, st->step);
	if (!st->differs) {
		ap_buf_adds(out, " = <code>");
		put(out, st->base ? st->base->text : "");
		ap_buf_adds(out, "</code>");
	}
	ap_buf_adds(out, "</summary><table><tr>");
	for (size_t i = 0; i < nenvs; i++) {
		ap_buf_adds(out, "<th>");
		text(out, st->values[i].env);
		ap_buf_adds(out, "</th>");
	}
	ap_buf_adds(out, "</tr><tr>");
	for (size_t i = 0; i < nenvs; i++)
		html_step_value(st, &st->values[i], l, out);
	ap_buf_adds(out, "</tr></table></details>\n");
}

/* The traces, the differences first in sight: a check with a differing step
 * is open, and so is that step; steps that agree are folded. */
static void html_traces(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "<section id=\"traces\"><h2>%s</h2>\n", W(l, M_TRACES));
	for (size_t i = 0; i < r->ntraces; i++) {
		const struct ap_report_trace *t = &r->traces[i];
		ap_buf_adds(out, "<details class=\"trace\" data-kind=\"");
		text(out, t->kind);
		ap_buf_adds(out, "\" data-check=\"");
		text(out, t->check);
		ap_buf_addf(out, "\"%s><summary><code>", t->differing ? " open" : "");
		text(out, t->check);
		ap_buf_adds(out, "</code> (");
		text(out, t->kind);
		ap_buf_adds(out, ") ");
		if (t->differing)
			ap_buf_addf(out, W(l, M_STEPS_DIFFER), t->nsteps, t->differing);
		else
			ap_buf_addf(out, W(l, M_STEPS), t->nsteps);
		ap_buf_adds(out, "</summary>\n");
		for (size_t k = 0; k < t->nsteps; k++)
			html_step(&t->steps[k], r->nenvs, l, out);
		ap_buf_adds(out, "</details>\n");
	}
	if (!r->ntraces)
		ap_buf_addf(out, "<p>%s</p>\n", W(l, M_NO_TRACES));
	ap_buf_adds(out, "</section>\n");
}

void ap_report_html(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	html_head(r, l, out);
	html_banner(r, l, out);
	html_matrix(r, l, out);
	html_scope(r, l, out);
	ap_buf_addf(out, "<section id=\"environments\"><h2>%s</h2>\n", W(l, M_CARDS));
	for (size_t i = 0; i < r->nenvs; i++)
		html_env(r, &r->envs[i], l, out);
	ap_buf_adds(out, "</section>\n");
	html_signatures(r, l, out);
	html_numeric(r, l, out);
	html_adaptation(r, l, out);
	html_docs(r, l, out);
	html_conclusion(r, l, out);
	html_traces(r, l, out);
	ap_buf_adds(out, "</body></html>\n");
}
