/* report.c - report.md and junit.xml, from the report model (report.h). */
#include <stdio.h>
#include <string.h>

#include "review/escape.h"
#include "review/report.h"
#include "review/words.h"

const char *ap_report_number(struct ap_number n, char buf[32])
{
	if (n.kind == AP_NUM_INT)
		snprintf(buf, 32, "%lld", n.i);
	else if (n.kind == AP_NUM_REAL)
		snprintf(buf, 32, "%.3g", n.d);
	else
		snprintf(buf, 32, "-");
	return buf;
}

static struct ap_number real(double d)
{
	return (struct ap_number){ AP_NUM_REAL, 0, d };
}

static struct ap_number integer(long long i)
{
	return (struct ap_number){ AP_NUM_INT, i, 0 };
}

/* ------------------------------------------------------------ words */

static const char *W(enum ap_lang l, enum ap_msg m)
{
	return ap_word(l, m);
}

/* ------------------------------------------------------------ Markdown */

/* Every value from data is escaped into the report as it is written: as
 * inline text (md_text) or as a code span (md_code). A missing value reads
 * as "-". */
static void md_text(struct ap_buf *out, const char *s)
{
	ap_escape_md(ap_report_text(s), out);
}

static void md_code(struct ap_buf *out, const char *s)
{
	ap_escape_md_code(ap_report_text(s), out);
}

void ap_report_devices(const struct ap_bundle_facts *b, enum ap_lang l,
		       void (*esc)(const char *s, struct ap_buf *out), struct ap_buf *out)
{
	int any = 0;
	for (size_t i = 0; i < b->ndevices; i++) {
		const struct ap_fact_device *d = &b->devices[i];
		if (!d->available)
			continue;
		ap_buf_adds(out, any++ ? "; " : "");
		esc(ap_report_text(d->type), out);
		ap_buf_addf(out, ": %lld x ", d->count);
		esc(d->first_name ? d->first_name : "?", out);
	}
	for (size_t i = 0; i < b->ndevices; i++) {
		const struct ap_fact_device *d = &b->devices[i];
		if (d->available)
			continue;
		ap_buf_adds(out, any++ ? "; " : "");
		esc(ap_report_text(d->type), out);
		ap_buf_addf(out, ": %s (", l == AP_LANG_EN ? "unavailable" : "不可用");
		esc(ap_report_text(d->reason), out);
		ap_buf_adds(out, ")");
	}
	if (!any)
		ap_buf_adds(out, "cpu");
}

void ap_report_numeric_row(const struct ap_report_numeric *r, enum ap_lang l, struct ap_buf *out)
{
	char b[9][32];
	ap_buf_addf(out, W(l, M_NUMERIC_ROW), ap_report_number(integer(r->samples), b[0]),
		    ap_report_number(integer(r->passed), b[1]),
		    ap_report_number(integer(r->failed), b[2]),
		    ap_report_number(integer(r->notrun), b[3]),
		    ap_report_number(real(r->max_abs), b[4]), ap_report_number(real(r->max_rel), b[5]),
		    ap_report_number(real(r->worst_ratio), b[6]), ap_report_number(r->rtol, b[7]),
		    ap_report_number(r->atol, b[8]));
}

/* The numeric checks summed per operator, dtype and comparison (the checks
 * themselves are in bundle.json and the run log). */
static void md_env_numeric(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	if (!e->nnumeric)
		return;
	ap_buf_addf(out, "- %s:\n", W(l, M_NUMERIC));
	for (size_t i = 0; i < e->nnumeric; i++) {
		const struct ap_report_numeric *r = &e->numeric[i];
		ap_buf_adds(out, "  - ");
		md_code(out, r->op);
		ap_buf_adds(out, " ");
		md_text(out, r->dtype);
		ap_buf_adds(out, ", ");
		md_text(out, r->device);
		ap_buf_adds(out, " vs ");
		md_text(out, r->against);
		ap_buf_adds(out, ": ");
		ap_report_numeric_row(r, l, out);
		ap_buf_adds(out, "\n");
	}
}

/* The known backend limits applied, each with the samples it excused. */
static void md_env_limits(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	if (!e->nlimits)
		return;
	ap_buf_addf(out, "- %s:\n", W(l, M_LIMITS));
	for (size_t i = 0; i < e->nlimits; i++) {
		const struct ap_report_limit *r = &e->limits[i];
		ap_buf_adds(out, "  - ");
		md_code(out, r->name);
		ap_buf_adds(out, " (");
		md_text(out, r->backend);
		ap_buf_adds(out, ", ");
		md_text(out, r->what);
		ap_buf_adds(out, "): ");
		ap_buf_addf(out, W(l, M_LIMIT_ROW), r->samples);
		ap_buf_adds(out, "; ");
		md_text(out, r->reason);
		ap_buf_adds(out, " (");
		md_code(out, r->where);
		ap_buf_adds(out, ")\n");
	}
}

/* A check as a list item: its status, its name, its reason when it has one. */
static void md_check(const struct ap_fact_check *c, struct ap_buf *out)
{
	ap_buf_adds(out, "  - ");
	md_text(out, c->status_word);
	ap_buf_adds(out, " ");
	md_code(out, c->name);
	if (c->reason) {
		ap_buf_adds(out, ": ");
		md_text(out, c->reason);
	}
	ap_buf_adds(out, "\n");
}

static int is_kind(const struct ap_fact_check *c, const char *kind)
{
	return !strcmp(ap_report_text(c->kind_word), kind);
}

static void md_env_checks(const struct ap_report_env *e, struct ap_buf *out)
{
	for (size_t i = 0; i < e->nchecks; i++) {
		const struct ap_fact_check *c = &e->checks[i];
		if (is_kind(c, "official") || (is_kind(c, "numeric") && !ap_status_failed(c->status)))
			continue;
		md_check(c, out);
	}
}

static void md_env_official(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	int any = 0;
	ap_buf_addf(out, "- %s:\n", W(l, M_OFFICIAL));
	for (size_t i = 0; i < e->nchecks; i++) {
		if (!is_kind(&e->checks[i], "official"))
			continue;
		md_check(&e->checks[i], out);
		any = 1;
	}
	if (!any)
		ap_buf_addf(out, "  - %s\n", W(l, M_NOT_RUN));
}

static void md_env_facts(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	const struct ap_bundle_facts *b = e->b;
	if (b->error) {
		ap_buf_addf(out, "- %s: ", W(l, M_ENV_ERROR));
		md_text(out, b->error);
		ap_buf_adds(out, "\n");
	}
	ap_buf_addf(out, "- %s: ", W(l, M_PYTHON));
	md_text(out, b->python);
	ap_buf_addf(out, "\n- %s: ", W(l, M_TORCH));
	md_text(out, b->torch);
	ap_buf_addf(out, "\n- %s: ", W(l, M_PLUGIN));
	for (size_t i = 0; i < b->nplugins; i++) {
		ap_buf_adds(out, i ? ", " : "");
		ap_escape_md(e->plugins[i], out);
	}
	ap_buf_addf(out, "%s\n- %s: ", b->nplugins ? "" : W(l, M_NONE), W(l, M_DEVICES));
	ap_report_devices(b, l, ap_escape_md, out);
	ap_buf_adds(out, "\n");
	if (!b->found) {
		ap_buf_addf(out, "- %s: %s (%s:", W(l, M_PROBES), W(l, M_ABSENT), W(l, M_NEAREST));
		for (size_t i = 0; i < b->nnearest; i++) {
			ap_buf_adds(out, " ");
			ap_escape_md(b->nearest[i], out);
		}
		ap_buf_adds(out, ")\n");
	} else {
		ap_buf_addf(out, "- %s: %d/%d PASS, %s ", W(l, M_PROBES), b->probes_passed,
			    b->probes_total, W(l, M_VERDICT));
		md_text(out, b->verdict_word);
		ap_buf_adds(out, "\n");
	}
}

static void md_env(const struct ap_report_env *e, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_adds(out, "\n### ");
	ap_escape_fill(W(l, M_RESULTS), e->name, ap_escape_md, out);
	ap_buf_adds(out, " (");
	md_text(out, e->b->label);
	ap_buf_adds(out, ")\n\n");
	md_env_facts(e, l, out);
	md_env_checks(e, out);
	md_env_numeric(e, l, out);
	md_env_limits(e, l, out);
	ap_buf_addf(out, "- %s: %lld\n- %s:\n", W(l, M_EXIT), e->b->exit_code, W(l, M_EVIDENCE));
	for (size_t i = 0; i < e->nevidence; i++) {
		ap_buf_adds(out, "  - ");
		md_code(out, e->evidence[i].path);
		ap_buf_adds(out, " sha256 ");
		md_code(out, e->evidence[i].sha256);
		ap_buf_adds(out, "\n");
	}
	md_env_official(e, l, out);
}

static void md_scope(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "\n## %s\n\n- %s: ", W(l, M_SCOPE), W(l, M_TARGET));
	md_code(out, r->target);
	ap_buf_addf(out, "\n- %s:\n", W(l, M_OFFICIAL_CASE));
	for (size_t i = 0; i < r->nnodes; i++) {
		ap_buf_adds(out, "  - ");
		md_code(out, r->nodes[i].node);
		ap_buf_adds(out, " (PyTorch ");
		md_text(out, r->nodes[i].version);
		ap_buf_adds(out, ")\n");
	}
	if (!r->nnodes)
		ap_buf_addf(out, "  - %s\n", W(l, M_NONE_FOUND));
	ap_buf_addf(out, "- %s:\n", W(l, M_FOCUSED));
	for (size_t i = 0; i < r->nprobes; i++) {
		const struct ap_report_probe *p = &r->probes[i];
		ap_buf_adds(out, "  - ");
		md_text(out, l == AP_LANG_EN ? p->says_en : p->says_zh);
		ap_buf_adds(out, " (");
		md_text(out, p->name);
		ap_buf_adds(out, ")\n");
	}
}

/* How signature g compares with the reference's: the word for it. */
static enum ap_msg sig_how(const struct ap_report_signature *g)
{
	if (!g->sig->ndifferences)
		return M_SIG_AS;
	return g->sig->same_torch == 1 ? M_SIG_SAME : M_SIG_OTHER;
}

/* One line per environment: its signature, where it came from, the status
 * of its comparison; each difference under it. */
static void md_signatures(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "\n## %s\n\n", W(l, M_SIGS));
	if (!r->nsignatures)
		ap_buf_addf(out, "- %s\n", W(l, M_SIG_NONE));
	for (size_t i = 0; i < r->nsignatures; i++) {
		const struct ap_report_signature *g = &r->signatures[i];
		int differs = g->sig->ndifferences > 0;
		ap_buf_adds(out, "- ");
		md_text(out, g->env);
		ap_buf_adds(out, " (");
		md_text(out, g->sig->source);
		ap_buf_adds(out, "): ");
		md_code(out, g->text);
		ap_buf_adds(out, ": ");
		md_text(out, g->status_word);
		if (!g->sig->reference)
			ap_buf_addf(out, ", %s", W(l, M_SIG_REF));
		else {
			ap_buf_adds(out, ", ");
			ap_escape_fill(W(l, sig_how(g)), g->sig->reference, ap_escape_md, out);
		}
		if (g->reason && !differs) {
			ap_buf_adds(out, " (");
			md_text(out, g->reason);
			ap_buf_adds(out, ")");
		}
		ap_buf_adds(out, "\n");
		for (size_t k = 0; k < g->sig->ndifferences; k++) {
			ap_buf_adds(out, "  - ");
			md_text(out, g->sig->differences[k]);
			ap_buf_adds(out, "\n");
		}
	}
}

static void md_adaptation(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	static const struct ap_bundle_facts none;
	const struct ap_bundle_facts *b = r->impl ? r->impl : &none;
	struct ap_buf where = { 0 };
	ap_buf_addf(out, "\n## %s\n\n", W(l, M_ADAPT));
	ap_buf_addf(&where, "%s:%lld", ap_report_text(b->impl_file), b->impl_line);
	ap_buf_addf(out, "- %s: ", W(l, M_IMPL));
	md_code(out, ap_buf_str(&where));
	ap_buf_adds(out, " (");
	md_text(out, b->impl_kind);
	ap_buf_adds(out, ")\n- ");
	md_text(out, l == AP_LANG_EN ? b->conclusion_en : b->conclusion_zh);
	ap_buf_addf(out, "\n- %s\n", b->device_independent ? W(l, M_PATCH_NOT) : W(l, M_PATCH_NEEDED));
	ap_buf_free(&where);
}

static void md_docs_entry(const struct ap_report_docs *d, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "- %s: ", d->exact ? W(l, M_DOCS_ENTRY) : W(l, M_DOCS_CLASS));
	md_code(out, d->api);
	ap_buf_adds(out, " (");
	md_text(out, d->file);
	ap_buf_addf(out, ":%lld)\n", d->line);
	for (size_t i = 0; i < d->nproducts; i++) {
		ap_buf_adds(out, "  - ");
		md_text(out, d->products[i].product);
		ap_buf_addf(out, ": %s\n", d->products[i].supported ? W(l, M_SUPPORTED) : W(l, M_UNSUPPORTED));
	}
	for (size_t i = 0; i < d->ncontradictions; i++) {
		const struct ap_report_contradiction *p = &d->contradictions[i];
		ap_buf_addf(out, "- %s: ", W(l, M_DOCS_CONTRA));
		md_text(out, p->product);
		ap_buf_addf(out, " %s, ", p->claimed ? W(l, M_SUPPORTED) : W(l, M_UNSUPPORTED));
		md_text(out, p->env);
		ap_buf_adds(out, " ");
		md_text(out, p->verdict_word);
		ap_buf_adds(out, "\n");
	}
	if (!d->compared)
		ap_buf_addf(out, "- %s\n", W(l, M_DOCS_UNCOMPARED));
	else if (!d->ncontradictions)
		ap_buf_addf(out, "- %s\n", W(l, M_DOCS_OK));
}

static void md_docs(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_addf(out, "\n## %s\n\n", W(l, M_DOCS));
	if (!r->docs.checked)
		ap_buf_addf(out, "- %s\n", W(l, M_DOCS_NOT));
	else if (!r->docs.entry)
		ap_buf_addf(out, "- %s\n", W(l, M_DOCS_NONE));
	else
		md_docs_entry(&r->docs, l, out);
}

static void md_conclusion(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	const struct ap_report_conclusion *c = &r->conclusion;
	ap_buf_addf(out, "\n## %s\n\n- %s: **", W(l, M_CONCLUSION), W(l, M_VERDICT));
	ap_escape_md(ap_verdict_name(c->verdict), out);
	ap_buf_addf(out, "**\n- %s: ", W(l, M_PASSED_IN));
	ap_escape_list(c->consistent, c->nconsistent, ap_escape_md, W(l, M_NONE), out);
	ap_buf_addf(out, "\n- %s: ", W(l, M_FAILED_IN));
	ap_escape_list(c->inconsistent, c->ninconsistent, ap_escape_md, W(l, M_NONE), out);
	ap_buf_addf(out, "\n- %s: ", W(l, M_UNVERIFIED_IN));
	ap_escape_list(c->unverified, c->nunverified, ap_escape_md, W(l, M_NONE), out);
	ap_buf_addf(out, "\n- %s:\n", W(l, M_REASONS));
	for (size_t i = 0; i < r->nenvs; i++) {
		const struct ap_bundle_facts *b = r->envs[i].b;
		for (size_t k = 0; k < b->nverdict_reasons; k++) {
			ap_buf_adds(out, "  - ");
			md_text(out, r->envs[i].name);
			ap_buf_adds(out, ": ");
			ap_escape_md(b->verdict_reasons[k], out);
			ap_buf_adds(out, "\n");
		}
	}
}

void ap_report_markdown(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	ap_buf_adds(out, "# ");
	ap_escape_fill(W(l, M_TITLE), r->target, ap_escape_md, out);
	ap_buf_addf(out, "\n\n%s", W(l, M_COVERS));
	for (size_t i = 0; i < r->nenvs; i++) {
		ap_buf_adds(out, i ? ", " : "");
		md_text(out, r->envs[i].name);
		ap_buf_adds(out, " (");
		md_text(out, r->envs[i].b->label);
		ap_buf_adds(out, ")");
	}
	ap_buf_adds(out, "\n");
	md_scope(r, l, out);
	for (size_t i = 0; i < r->nenvs; i++)
		md_env(&r->envs[i], l, out);
	md_signatures(r, l, out);
	md_adaptation(r, l, out);
	md_docs(r, l, out);
	md_conclusion(r, l, out);
}

/* ------------------------------------------------------------ JUnit */

static void junit_case(const char *env, const struct ap_fact_check *c, struct ap_buf *out)
{
	const char *st = ap_report_text(c->status_word);
	ap_buf_adds(out, "    <testcase classname=\"");
	ap_escape_xml(env, out);
	ap_buf_adds(out, ".");
	ap_escape_xml(ap_report_text(c->kind_word), out);
	ap_buf_adds(out, "\" name=\"");
	ap_escape_xml(ap_report_text(c->name), out);
	ap_buf_addf(out, "\" time=\"%.3f\">",
		    (c->duration_ms.kind == AP_NUM_INT ? c->duration_ms.i : 0) / 1000.0);
	enum ap_status s = c->status;
	const char *tag = s == AP_FAIL ? "failure" : ap_status_failed(s) ? "error"
			: s == AP_PASS ? NULL : "skipped";
	if (tag) {
		ap_buf_addf(out, "<%s message=\"", tag);
		ap_escape_xml(st, out);
		if (c->reason) {
			ap_buf_adds(out, ": ");
			ap_escape_xml(c->reason, out);
		}
		ap_buf_addf(out, "\"/>");
	}
	ap_buf_adds(out, "</testcase>\n");
}

void ap_report_junit(const struct ap_report *r, struct ap_buf *out)
{
	ap_buf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"apiparity ");
	ap_escape_xml(r->target, out);
	ap_buf_adds(out, "\">\n");
	for (size_t i = 0; i < r->nenvs; i++) {
		const struct ap_report_env *e = &r->envs[i];
		int n = 0, fail = 0, err = 0, skip = 0;
		for (size_t k = 0; k < e->nchecks; k++) {
			enum ap_status st = e->checks[k].status;
			n++;
			fail += st == AP_FAIL;
			err += ap_status_failed(st) && st != AP_FAIL;
			skip += !ap_status_failed(st) && st != AP_PASS;
		}
		ap_buf_adds(out, "  <testsuite name=\"");
		ap_escape_xml(e->name, out);
		ap_buf_addf(out, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n",
			    n, fail, err, skip);
		for (size_t k = 0; k < e->nchecks; k++)
			junit_case(e->name, &e->checks[k], out);
		ap_buf_adds(out, "  </testsuite>\n");
	}
	ap_buf_adds(out, "</testsuites>\n");
}
