/* apiparity trace - runs a user's program in an environment under the tracer
 * (check/tracer.h) and writes the torch APIs it called as cases
 * (evidence/cases.h), for `check --cases` to replay; or, with --summary,
 * prints a trace's surface (review/tracesummary.h). */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "check/tracer.h"
#include "cmd/cmd.h"
#include "evidence/cases.h"
#include "review/tracesummary.h"

#define AP_TRACE_MAX_CASES 8
#define AP_TRACE_MAX_CASES_MAX 1000

struct ap_trace_opts {
	const char *envs, *root, *env, *out, *summary;
	int max_cases;
	int keep_values;
	int limit_s;
	int timeout_s;           /* the fingerprint's worker */
};

/* --max-cases N: 1 to AP_TRACE_MAX_CASES_MAX, digits only. */
static int trace_max_cases(void *opts, const struct ap_opt *opt, const char *arg,
			   struct ap_buf *err)
{
	return ap_cli_count(opts, opt, arg, AP_TRACE_MAX_CASES_MAX, "trace", err);
}

#define AT(field) offsetof(struct ap_trace_opts, field)
static const struct ap_opt trace_opts[] = {
	AP_CLI_OPT_ENVS(struct ap_trace_opts),
	{ "env", "NAME", "the environment the program runs in", AT(env), NULL, 0 },
	{ "out", "DIR", "where cases.jsonl and its journal go (default out/trace)", AT(out),
	  NULL, 0 },
	{ "max-cases", "N", "at most N cases per API, by shapes and dtypes (default 8)",
	  AT(max_cases), trace_max_cases, 0 },
	{ "keep-values", NULL, "keeps the values of small tensors (indices, masks)",
	  AT(keep_values), NULL, 0 },
	{ "limit-seconds", "S", "stops the program after S seconds, keeping its cases",
	  AT(limit_s), ap_opt_seconds, 0 },
	{ "summary", "FILE", "prints the surface of a trace (cases.jsonl) and runs nothing",
	  AT(summary), NULL, 0 },
	AP_CLI_OPT_TIMEOUT(struct ap_trace_opts, "seconds the fingerprint may take (default 120)"),
	AP_CLI_OPT_ROOT(struct ap_trace_opts),
};
#undef AT

static const struct ap_optset trace_set = { "trace", "-- PROGRAM [ARG...]",
	"trace the torch APIs a program calls, as cases", AP_OPTS(trace_opts) };
const struct ap_optset *const ap_trace_optsets[] = { &trace_set, NULL };

/* --summary FILE */
static int trace_summary(const char *path)
{
	struct ap_trace t;
	struct ap_buf err = { 0 };
	int r = ap_trace_load(&t, path, &err);
	if (r)
		r = ap_fail(r, "trace --summary", &err);
	else
		ap_trace_summary_print(stdout, &t, 0);
	ap_trace_free(&t);
	ap_buf_free(&err);
	return r;
}

/* The exit code of a trace that ran, after saying how the program ended. */
static int trace_ended(const struct ap_trace *t, const char *file)
{
	struct ap_buf d = { 0 };
	int rc = AP_EXIT_OK;
	if (!t->torch)
		fprintf(stderr, "apiparity: trace: the program never imported torch: the trace "
			"is empty\n");
	if (t->limited) {
		ap_buf_addf(&d, "stopped at --limit-seconds; its %zu cases are kept in %s", t->n,
			    file);
		rc = ap_fail(-AP_ETIMEOUT, "trace", &d);
	} else if (t->returncode) {
		ap_buf_addf(&d, "the program %s %d; its %zu cases are kept in %s",
			    t->returncode > 0 ? "exited with status" : "was killed by signal",
			    t->returncode > 0 ? t->returncode : -t->returncode, t->n, file);
		fprintf(stderr, "apiparity: trace: %s\n", ap_buf_str(&d));
		rc = AP_EXIT_FAILED;
	}
	ap_buf_free(&d);
	return rc;
}

/* Runs the program under the tracer and writes OUT/cases.jsonl. */
static int trace_run(const struct ap_trace_opts *o, const struct ap_env *env, char **argv,
		     size_t argc)
{
	struct ap_buf journal = { 0 }, file = { 0 }, err = { 0 }, fp_err = { 0 };
	struct ap_trace t;
	int r = ap_mkdirs(o->out);
	if (r) {
		ap_buf_addf(&err, "%s: %s", o->out, ap_strerror(r));
		r = ap_fail(r, "trace --out", &err);
		ap_buf_free(&err);
		return r;
	}
	ap_buf_addf(&journal, "%s/journal.jsonl", o->out);
	ap_buf_addf(&file, "%s/cases.jsonl", o->out);
	struct ap_tracer_opts to = { env, argv, argc, ap_buf_str(&journal), o->max_cases,
				     o->keep_values, o->limit_s, o->timeout_s };
	int ran = ap_tracer_run(&to, &t, &fp_err, &err);
	if (fp_err.len)
		fprintf(stderr, "apiparity: trace: no fingerprint of %s: %s\n", env->name,
			ap_buf_str(&fp_err));
	if ((r = ap_trace_write(&t, ap_buf_str(&file)))) {
		ap_buf_reset(&err);
		ap_buf_addf(&err, "%s: %s (the journal %s keeps the cases)", ap_buf_str(&file),
			    ap_strerror(r), ap_buf_str(&journal));
		r = ap_fail(r, "trace", &err);
	} else if (ran) {
		r = ap_fail(ran, "trace", &err);
	} else {
		ap_trace_summary_print(stderr, &t, 12);
		if (t.bad_lines)
			fprintf(stderr, "apiparity: trace: %ld lines of the tracer's journal were not "
				"cases, or past %d, and were left out\n", t.bad_lines, AP_CASES_MAX);
		fprintf(stderr, "apiparity: trace: %zu cases in %s\n", t.n, ap_buf_str(&file));
		r = trace_ended(&t, ap_buf_str(&file));
	}
	ap_trace_free(&t);
	ap_buf_free(&journal);
	ap_buf_free(&file);
	ap_buf_free(&err);
	ap_buf_free(&fp_err);
	return r;
}

int ap_cmd_trace(int argc, char **argv)
{
	struct ap_trace_opts o = { .max_cases = AP_TRACE_MAX_CASES, .timeout_s = 120 };
	struct ap_envs envs = { 0 };
	int dash = 1;
	while (dash < argc && strcmp(argv[dash], "--"))
		dash++;
	int rc = ap_cli_parse(&trace_set, dash, argv, &o);
	if (rc)
		return rc < 0 ? AP_EXIT_OK : rc;
	if (optind < dash)
		return ap_usage("trace: the program goes after --: apiparity trace --env ENV -- "
				"PROGRAM [ARG...]");
	if (o.summary)
		return dash < argc ? ap_usage("trace: --summary reads a trace and runs nothing")
				   : trace_summary(o.summary);
	if (dash + 1 >= argc)
		return ap_usage("trace: name the program after --: apiparity trace --env ENV -- "
				"python3 model.py");
	if (!o.env)
		return ap_usage("trace: name the environment the program runs in: --env NAME");
	if (o.out && !*o.out)
		return ap_usage("trace: --out wants a directory, not an empty string");
	o.out = o.out ? o.out : "out/trace";
	if ((rc = ap_cli_load_envs(&envs, o.envs, o.root)))
		return rc;
	const struct ap_env *env = ap_cli_find_env(&envs, o.env, "trace");
	rc = env ? trace_run(&o, env, argv + dash + 1, (size_t)(argc - dash - 1))
		 : AP_EXIT_UNKNOWN_ENV;
	ap_envs_free(&envs);
	return rc;
}
