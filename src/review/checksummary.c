/* checksummary.c - the table and notes check prints (see checksummary.h). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonutil.h"
#include "base/outcome.h"
#include "base/text.h"
#include "check/limits.h"
#include "evidence/bundle.h"
#include "review/checksummary.h"

/* The ENV column is at least this wide (trixie-openreg's name), else as
 * wide as the longest name. */
#define ENV_COLUMN_MIN 10
/* The verdict's reasons shown under the table, at most; the bundle has all. */
#define NOTES_REASONS_MAX 5

/* The devices available, "TYPE xCOUNT" each; "cpu" when none, "-" with no
 * fingerprint. */
static void summary_devices(const json_t *b, struct ap_buf *out)
{
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(json_object_get(b, "fingerprint"), "devices"), i, d)
		if (json_is_true(json_object_get(d, "available")))
			ap_buf_addf(out, "%s%s x%lld", out->len ? ", " : "",
				    json_string_value(json_object_get(d, "type")),
				    (long long)json_integer_value(json_object_get(d, "count")));
	if (!out->len)
		ap_buf_adds(out, json_object_get(b, "fingerprint") ? "cpu" : "-");
}

/* The plugins loaded, "NAME VERSION" each, or "-". */
static void summary_plugins(const json_t *b, struct ap_buf *out)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(json_object_get(b, "fingerprint"), "plugins"), i, p)
		ap_buf_addf(out, "%s%s %s", out->len ? ", " : "",
			    json_string_value(json_object_get(p, "name")),
			    json_string_value(json_object_get(p, "version")) ?
			    json_string_value(json_object_get(p, "version")) : "?");
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
static void print_limits(FILE *out, const struct ap_run_session *s)
{
	json_t *rows = ap_limits_applied(json_object_get(s->bundle, "checks")), *l;
	size_t i;
	json_array_foreach(rows, i, l) {
		struct ap_buf line = { 0 };
		long long n = (long long)json_integer_value(json_object_get(l, "samples"));
		ap_buf_addf(&line, "%lld sample%s not run on %s, known limit %s (%s): %s", n,
			    n == 1 ? "" : "s", ap_json_text(l, "backend"), ap_json_text(l, "name"),
			    ap_json_text(l, "what"), ap_json_text(l, "reason"));
		print_note(out, s->env->name, ap_buf_str(&line));
		ap_buf_free(&line);
	}
	json_decref(rows);
}

/* What a user must see beside the table: why an environment is not
 * consistent, the known limits that excused samples, the nearest names of
 * an absent target, a claimed node id that does not exist. */
static void print_notes(FILE *out, const struct ap_run_session *s)
{
	const json_t *reasons = json_object_get(s->bundle, "verdict_reasons");
	const json_t *res = json_object_get(s->bundle, "resolution");
	enum ap_verdict v = ap_bundle_verdict(s->bundle);
	struct ap_buf line = { 0 };
	size_t i;
	json_t *x;
	for (i = 0; v != AP_VERDICT_UNKNOWN && v != AP_CONSISTENT && i < json_array_size(reasons) &&
		    i < NOTES_REASONS_MAX; i++)
		print_note(out, s->env->name, json_string_value(json_array_get(reasons, i)));
	print_limits(out, s);
	if (res && !ap_bundle_resolved(s->bundle) &&
	    json_array_size(json_object_get(res, "nearest"))) {
		ap_buf_adds(&line, "did you mean");
		json_array_foreach(json_object_get(res, "nearest"), i, x)
			ap_buf_addf(&line, "%s %s", i ? "," : "",
				    json_string_value(x) ? json_string_value(x) : "-");
		ap_buf_adds(&line, "?");
		print_note(out, s->env->name, ap_buf_str(&line));
	}
	json_array_foreach(json_object_get(s->bundle, "checks"), i, x) {
		const char *why = json_string_value(json_object_get(x, "reason"));
		if (strcmp(ap_json_text(x, "kind"), "claim") || ap_check_status(x) == AP_PASS)
			continue;
		ap_buf_reset(&line);
		ap_buf_addf(&line, "claimed node id %s: %s", ap_json_text(x, "node"),
			    why ? why : ap_json_text(x, "status"));
		print_note(out, s->env->name, ap_buf_str(&line));
	}
	ap_buf_free(&line);
}

/* The row of session s, as wide as env_width for its name. */
static void print_row(FILE *out, const struct ap_run_session *s, int env_width)
{
	const json_t *b = s->bundle;
	struct ap_buf dev = { 0 }, plug = { 0 }, probes = { 0 }, row = { 0 };
	int passed, total;
	summary_devices(b, &dev);
	summary_plugins(b, &plug);
	ap_bundle_probe_counts(b, &passed, &total);
	ap_buf_addf(&probes, "%d/%d", passed, total);
	/* A verdict without its evidence is not a result. */
	ap_buf_addf(&row, "%-*s %-8s %-16s %-16s %-14s %-7s %s", env_width, s->env->name,
		    ap_run_fingerprint(b, "python", "version"),
		    ap_run_fingerprint(b, "torch", "version"), ap_buf_str(&plug), ap_buf_str(&dev),
		    ap_buf_str(&probes), s->io_err ? "no-evidence" :
		    json_string_value(json_object_get(b, "verdict")));
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
	for (size_t i = 0; i < run->n; i++) {
		print_row(out, &run->s[i], env_width);
		if (run->s[i].io_err)
			ap_buf_addf(&unwritten, "%s%s", unwritten.len ? ", " : "",
				    run->s[i].env->name);
	}
	for (size_t i = 0; i < run->n; i++)
		if (!run->s[i].io_err)
			print_notes(out, &run->s[i]);
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
