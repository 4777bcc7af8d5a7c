/* checksummary.c - the table and notes check prints (see checksummary.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonutil.h"
#include "base/outcome.h"
#include "base/text.h"
#include "check/limits.h"
#include "evidence/facts.h"
#include "review/checksummary.h"
#include "review/report.h"

/* The ENV column is at least this wide (trixie-openreg's name), else as
 * wide as the longest name. */
#define ENV_COLUMN_MIN 10
/* The verdict's reasons shown under the table, at most; the bundle has all. */
#define NOTES_REASONS_MAX 5

/* The devices available, "TYPE xCOUNT" each; "cpu" when none, "-" with no
 * fingerprint. */
static void summary_devices(const struct ap_bundle_facts *b, struct ap_buf *out)
{
	for (size_t i = 0; i < b->ndevices; i++)
		if (b->devices[i].available)
			ap_buf_addf(out, "%s%s x%lld", out->len ? ", " : "", b->devices[i].type,
				    b->devices[i].count);
	if (!out->len)
		ap_buf_adds(out, b->fingerprint_json ? "cpu" : "-");
}

/* The plugins loaded, "NAME VERSION" each, or "-". */
static void summary_plugins(const struct ap_bundle_facts *b, struct ap_buf *out)
{
	for (size_t i = 0; i < b->nplugins; i++)
		ap_buf_addf(out, "%s%s %s", out->len ? ", " : "", b->plugins[i].name,
			    strcmp(b->plugins[i].version, "-") ? b->plugins[i].version : "?");
	if (!out->len)
		ap_buf_adds(out, "-");
}

/* One note under the table: "  ENV: TEXT", the text escaped (it is data). */
static void print_note(FILE *out, const char *env, const char *text)
{
	fprintf(out, "  %s: ", env);
	ap_text_fputs(text ? text : "", AP_TEXT_LINE, out);
	fputc('\n', out);
}

/* One line per known backend limit that excused samples of s, with their
 * number: the verdict stands on the others, and says so. */
static void print_limits(FILE *out, const char *env, const struct ap_bundle_facts *b)
{
	struct ap_limit_applied *rows = NULL;
	size_t n = 0;
	if (ap_limits_applied(b->checks, b->nchecks, &rows, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct ap_buf line = { 0 };
		ap_buf_addf(&line, "%lld sample%s not run on %s, known limit %s (%s): %s",
			    rows[i].samples, rows[i].samples == 1 ? "" : "s",
			    ap_report_text(rows[i].backend), rows[i].name,
			    ap_report_text(rows[i].what), ap_report_text(rows[i].reason));
		print_note(out, env, ap_buf_str(&line));
		ap_buf_free(&line);
	}
	free(rows);
}

/* What a user must see beside the table: why an environment is not
 * consistent, the known limits that excused samples, the nearest names of
 * an absent target, a claimed node id that does not exist. */
static void print_notes(FILE *out, const char *env, const struct ap_bundle_facts *b)
{
	struct ap_buf line = { 0 };
	size_t i;
	for (i = 0; b->verdict != AP_VERDICT_UNKNOWN && b->verdict != AP_CONSISTENT &&
		    i < b->nverdict_reasons && i < NOTES_REASONS_MAX; i++)
		print_note(out, env, b->verdict_reasons[i]);
	print_limits(out, env, b);
	if (b->resolution_json && !b->found && b->nnearest) {
		ap_buf_adds(&line, "did you mean");
		for (i = 0; i < b->nnearest; i++)
			ap_buf_addf(&line, "%s %s", i ? "," : "", ap_report_text(b->nearest[i]));
		ap_buf_adds(&line, "?");
		print_note(out, env, ap_buf_str(&line));
	}
	for (i = 0; i < b->nchecks; i++) {
		const struct ap_fact_check *c = &b->checks[i];
		if (c->kind != AP_KIND_CLAIM || c->status == AP_PASS)
			continue;
		ap_buf_reset(&line);
		ap_buf_addf(&line, "claimed node id %s: %s", ap_report_text(c->node),
			    c->reason ? c->reason : ap_report_text(c->status_word));
		print_note(out, env, ap_buf_str(&line));
	}
	ap_buf_free(&line);
}

/* The row of session s (its bundle read as b), as wide as env_width for its
 * name. */
static void print_row(FILE *out, const struct ap_run_session *s, const struct ap_bundle_facts *b,
		      int env_width)
{
	struct ap_buf dev = { 0 }, plug = { 0 }, probes = { 0 }, row = { 0 };
	summary_devices(b, &dev);
	summary_plugins(b, &plug);
	ap_buf_addf(&probes, "%d/%d", b->probes_passed, b->probes_total);
	/* A verdict without its evidence is not a result. */
	ap_buf_addf(&row, "%-*s %-8s %-16s %-16s %-14s %-7s %s", env_width, s->env->name,
		    ap_report_text(b->python), ap_report_text(b->torch), ap_buf_str(&plug),
		    ap_buf_str(&dev), ap_buf_str(&probes), s->io_err ? "no-evidence" :
		    b->verdict_word);
	ap_text_fputs(ap_buf_str(&row), AP_TEXT_LINE, out); /* versions, names: data */
	fputc('\n', out);
	ap_buf_free(&dev);
	ap_buf_free(&plug);
	ap_buf_free(&probes);
	ap_buf_free(&row);
}

void ap_checksummary_print(FILE *out, const struct ap_run *run)
{
	struct ap_buf unwritten = { 0 };
	int env_width = ENV_COLUMN_MIN;
	for (size_t i = 0; i < run->n; i++)
		if ((int)strlen(run->s[i].env->name) > env_width)
			env_width = (int)strlen(run->s[i].env->name);
	fprintf(out, "\n%-*s %-8s %-16s %-16s %-14s %-7s %s\n", env_width, "ENV", "PYTHON",
		"TORCH", "PLUGIN", "DEVICES", "PROBES", "VERDICT");
	struct ap_bundle_facts *facts = calloc(run->n ? run->n : 1, sizeof(*facts));
	for (size_t i = 0; facts && i < run->n; i++)
		ap_bundle_facts(run->s[i].bundle, &facts[i]); /* out of memory: reads as empty */
	for (size_t i = 0; facts && i < run->n; i++) {
		print_row(out, &run->s[i], &facts[i], env_width);
		if (run->s[i].io_err)
			ap_buf_addf(&unwritten, "%s%s", unwritten.len ? ", " : "",
				    run->s[i].env->name);
	}
	for (size_t i = 0; facts && i < run->n; i++)
		if (!run->s[i].io_err)
			print_notes(out, run->s[i].env->name, &facts[i]);
	for (size_t i = 0; facts && i < run->n; i++)
		ap_bundle_facts_free(&facts[i]);
	free(facts);
	if (unwritten.len) {
		fprintf(out, "\nno evidence could be written for %s (see below)\n",
			ap_buf_str(&unwritten));
	} else {
		fputs("\nevidence: ", out);
		ap_text_fputs(run->o->out, AP_TEXT_LINE, out);
		fputs("/<env>/ (bundle.json, run.log, journal.jsonl, MANIFEST.sha256)\n", out);
	}
	ap_buf_free(&unwritten);
}
