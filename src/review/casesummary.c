#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/text.h"
#include "evidence/bundle.h"
#include "review/casesummary.h"
#include "review/escape.h"

/* Whether check c is one of a replayed case's: a numeric check whose name
 * holds " case#". */
static int is_case_check(const json_t *c)
{
	const char *name = json_string_value(json_object_get(c, "name"));
	return ap_check_kind(c) == AP_KIND_NUMERIC && name && strstr(name, " case#");
}

void ap_case_result_take(struct ap_case_result *r, const struct ap_run *run)
{
	for (size_t i = 0; i < run->n && r->nenv < AP_RUN_MAX_ENVS; i++) {
		struct ap_case_env *e = &r->env[r->nenv++];
		json_t *checks = ap_bundle_checks(run->s[i].bundle), *c;
		size_t k;
		e->env = run->s[i].env->name;
		e->verdict = ap_bundle_verdict(run->s[i].bundle);
		json_array_foreach(checks, k, c) {
			enum ap_status st = ap_check_status(c);
			if (!is_case_check(c) || st < 0 || st >= AP_STATUS_COUNT)
				continue;
			e->status[st]++;
			if (st != AP_PASS && !e->why) {
				struct ap_buf w = { 0 };
				const char *reason = ap_check_reason(c);
				ap_buf_addf(&w, "%s: %s", json_string_value(json_object_get(c, "name")),
					    reason ? reason : ap_status_name(st));
				e->why = strdup(ap_buf_str(&w));
				ap_buf_free(&w);
			}
		}
		if (!json_array_size(checks) && ap_bundle_error_message(run->s[i].bundle) && !e->why)
			e->why = strdup(ap_bundle_error_message(run->s[i].bundle));
	}
}

/* "consistent: 4 PASS, 1 NOTRUN" */
static void env_cell(const struct ap_case_env *e, struct ap_buf *out)
{
	int first = 1;
	ap_buf_addf(out, "%s", e->verdict >= 0 ? ap_verdict_name(e->verdict) : "no verdict");
	for (int s = 0; s < AP_STATUS_COUNT; s++)
		if (e->status[s]) {
			ap_buf_addf(out, "%s%zu %s", first ? ": " : ", ", e->status[s],
				    ap_status_name((enum ap_status)s));
			first = 0;
		}
}

void ap_cases_print(FILE *out, const struct ap_case_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ap_buf line = { 0 };
		ap_buf_addf(&line, "%7ld  %-40s", r[i].api->calls, r[i].api->api);
		if (!r[i].replayed)
			ap_buf_addf(&line, "  not replayed: %s", r[i].skip_why ? r[i].skip_why : "-");
		for (size_t k = 0; k < r[i].nenv; k++) {
			ap_buf_addf(&line, "%s%s ", k ? "; " : "  ", r[i].env[k].env);
			env_cell(&r[i].env[k], &line);
		}
		if (r[i].replayed && r[i].skipped)
			ap_buf_addf(&line, "; %zu more not replayed: %s", r[i].skipped,
				    r[i].skip_why ? r[i].skip_why : "-");
		ap_text_fputs(ap_buf_str(&line), 0, out);
		fputc('\n', out);
		ap_buf_free(&line);
	}
}

/* One row: the API, its calls, cases and those replayed, then one cell of
 * every environment's result (or why it was not replayed). */
static void md_row(struct ap_buf *md, const struct ap_case_result *r)
{
	struct ap_buf cell = { 0 };
	ap_buf_adds(md, "| ");
	ap_escape_md_code(r->api->api, md);
	ap_buf_addf(md, " | %ld | %zu | %zu | ", r->api->calls, r->api->ncases, r->replayed);
	if (!r->replayed)
		ap_buf_addf(&cell, "not replayed: %s", r->skip_why ? r->skip_why : "-");
	for (size_t k = 0; k < r->nenv; k++) {
		ap_buf_addf(&cell, "%s%s: ", k ? "; " : "", r->env[k].env);
		env_cell(&r->env[k], &cell);
		if (r->env[k].why)
			ap_buf_addf(&cell, " (first: %s)", r->env[k].why);
	}
	if (r->replayed && r->skipped)
		ap_buf_addf(&cell, "; %zu more not replayed: %s", r->skipped,
			    r->skip_why ? r->skip_why : "-");
	ap_escape_md(ap_buf_str(&cell), md);
	ap_buf_adds(md, " |\n");
	ap_buf_free(&cell);
}

int ap_cases_write_md(const char *path, const struct ap_trace *t,
		      const struct ap_case_result *r, size_t n)
{
	struct ap_buf md = { 0 }, cmd = { 0 };
	for (size_t i = 0; i < t->command.n; i++)
		ap_buf_addf(&cmd, "%s%s", i ? " " : "", t->command.v[i]);
	ap_buf_adds(&md, "# The APIs a program called, replayed\n\nProgram: ");
	ap_escape_md_code(ap_buf_str(&cmd), &md);
	ap_buf_adds(&md, ", traced in ");
	ap_escape_md(t->env ? t->env : "?", &md);
	ap_buf_addf(&md, ": %zu APIs, %ld calls, %zu cases.\n\n", n, ap_trace_calls(t), t->n);
	ap_buf_adds(&md, "Each replayed API's evidence is under its own directory, one bundle "
		    "per environment (`apiparity report DIR/API`).\n\n");
	ap_buf_adds(&md, "| API | calls | cases | replayed | environments |\n|---|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++)
		md_row(&md, &r[i]);
	int rc = ap_write_atomic(path, md.data, md.len);
	ap_buf_free(&md);
	ap_buf_free(&cmd);
	return rc;
}

void ap_case_result_free(struct ap_case_result *r)
{
	for (size_t k = 0; k < r->nenv; k++)
		free(r->env[k].why);
	free(r->skip_why);
	memset(r, 0, sizeof(*r));
}
