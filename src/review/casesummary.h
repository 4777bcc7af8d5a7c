/* casesummary.h - a replay of a traced program's cases (`check --cases`),
 * per API: what the model called, how often, what was replayed and how each
 * environment did, and what could not be replayed and why.
 *
 * The replay's engine fills one struct ap_case_result per API from the
 * sealed run of that API (ap_case_result_take); this module writes them as
 * OUT/cases.md (Markdown, every string from a program escaped) and prints a
 * line per API. The evidence stays the bundles under OUT/<api>/<env>/: the
 * report and verify read them as they read any check's.
 */
#ifndef AP_CASESUMMARY_H
#define AP_CASESUMMARY_H

#include <stdio.h>

#include "base/outcome.h"
#include "check/run.h"
#include "evidence/cases.h"

struct ap_case_env {
	const char *env;
	enum ap_verdict verdict;       /* AP_VERDICT_UNKNOWN: no bundle */
	size_t status[AP_STATUS_COUNT]; /* of its case checks, device and across */
	char *why;                     /* the first case check not PASS: "name: reason" */
};

struct ap_case_result {
	const struct ap_trace_api *api;
	size_t replayed;               /* cases sent to be replayed */
	size_t skipped;                /* not replayable */
	char *skip_why;                /* the first reason one was not */
	size_t nenv;
	struct ap_case_env env[AP_RUN_MAX_ENVS];
};

/* Takes each session's verdict and case checks of run (sealed) into r. */
void ap_case_result_take(struct ap_case_result *r, const struct ap_run *run);

/* Writes the replay's page to path: the trace's program, then a row per
 * API. 0 or -errno. */
int ap_cases_write_md(const char *path, const struct ap_trace *t,
		      const struct ap_case_result *r, size_t n);

/* A line per API to out: "calls  api  env: verdict (N pass, ...)". */
void ap_cases_print(FILE *out, const struct ap_case_result *r, size_t n);

void ap_case_result_free(struct ap_case_result *r);

#endif
