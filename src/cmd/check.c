/* apiparity check - verify one API in one or many environments, with probes,
 * traces and evidence: parses the options, runs the check engine
 * (check/run.h), prints its summary (review/checksummary.h) and reports the
 * failures the exit code stands for. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/statusline.h"
#include "base/text.h"
#include "check/limits.h"
#include "check/numeric.h"
#include "check/run.h"
#include "check/spec.h"
#include "check/tolerances.h"
#include "cmd/cmd.h"
#include "evidence/facts.h"
#include "evidence/sign.h"
#include "evidence/cases.h"
#include "review/casesummary.h"
#include "review/checksummary.h"

#define AP_MAX_ENVS AP_RUN_MAX_ENVS
#define AP_MAX_SCRIPTS 16

struct ap_check_opts {
	const char *envs, *root, *out, *reference, *specs, *torch_src, *claimed;
	const char *sign;     /* --sign KEY: the private key that signs each manifest */
	int no_official;
	const char *scripts[AP_MAX_SCRIPTS];
	size_t nscripts;
	const char *names[AP_MAX_ENVS];
	size_t nnames;
	int timeout_s;        /* per probe */
	int answer_s;         /* per worker answer (import, resolve) */
	int require_present;
	int verbose;          /* -v: the transcript, a line per step, on a terminal too */
	int samples;          /* --samples: per OpInfo entry, dtype and kind */
	const char *tolerances; /* --tolerances FILE; NULL: the built-in overrides */
	const char *limits;     /* --limits FILE; NULL: the built-in backend limits */
	const char *cases;      /* --cases FILE: a trace's cases, replayed */
};

/* The longest TARGET: far past torch's longest name (about 100 bytes), and
 * short enough to write into probe code, paths and messages. */
#define AP_TARGET_MAX 256

/* A dotted Python name: it is also written into probe code and paths. */
static int target_ok(const char *t)
{
	return ap_dotted_name_ok(t, AP_TARGET_MAX);
}


/* --env NAME, once per environment. */
static int check_add_env(void *opts, const struct ap_opt *opt, const char *arg,
			 struct ap_buf *err)
{
	struct ap_check_opts *o = opts;
	(void)opt;
	return ap_cli_push(o->names, &o->nnames, AP_MAX_ENVS, arg, "check", "environments", err);
}

/* --python [NAME=]PATH: an environment of its own, checked in. */
static int check_add_python(void *opts, const struct ap_opt *opt, const char *arg,
			    struct ap_buf *err)
{
	const char *name;
	int r = ap_cli_python(arg, &name, err);
	return r ? r : check_add_env(opts, opt, name, err);
}

/* --script FILE, once per script. */
static int check_add_script(void *opts, const struct ap_opt *opt, const char *arg,
			    struct ap_buf *err)
{
	struct ap_check_opts *o = opts;
	(void)opt;
	return ap_cli_push(o->scripts, &o->nscripts, AP_MAX_SCRIPTS, arg, "check", "scripts", err);
}

/* --samples N: 1 to AP_NUMERIC_SAMPLES_MAX, digits only. */
static int check_samples(void *opts, const struct ap_opt *opt, const char *arg,
			 struct ap_buf *err)
{
	return ap_cli_count(opts, opt, arg, AP_NUMERIC_SAMPLES_MAX, "check", err);
}

#define AT(field) offsetof(struct ap_check_opts, field)
static const struct ap_opt check_opts[] = {
	AP_CLI_OPT_ENVS(struct ap_check_opts),
	{ "env", "NAME", "an environment to check in (default: every one of the file but local)",
	  0, check_add_env, AP_OPT_REPEAT },
	AP_CLI_OPT_PYTHON(check_add_python),
	{ "reference", "NAME", "the environment the others are compared with (default: the "
	  "first where the target exists)", AT(reference), NULL, 0 },
	{ "out", "DIR", "where the evidence goes (default out/TARGET)", AT(out), NULL, 0 },
	AP_CLI_OPT_TIMEOUT(struct ap_check_opts, "seconds a probe may run (default 30)"),
	{ "script", "FILE", "Python run like a probe, with TARGET, trace() and check()", 0,
	  check_add_script, AP_OPT_REPEAT },
	{ "specs", "DIR", "the family specs (default: the built-in ones)", AT(specs), NULL, 0 },
	{ "require-present", NULL, "an environment where the target is absent fails the check",
	  AT(require_present), NULL, 0 },
	{ "torch-src", "DIR", "the torch source tree whose tests to run", AT(torch_src), NULL, 0 },
	{ "claimed", "NODEID", "the official test the submission claims covers the target",
	  AT(claimed), NULL, 0 },
	{ "no-official", NULL, "runs no official tests", AT(no_official), NULL, 0 },
	{ "sign", "KEY", "signs each manifest with this Ed25519 private key (PEM)", AT(sign),
	  NULL, 0 },
	{ "samples", "N", "at most N numeric samples per OpInfo entry, dtype and kind (default 4)",
	  AT(samples), check_samples, 0 },
	{ "tolerances", "FILE", "the numeric tolerance overrides (default: the built-in ones)",
	  AT(tolerances), NULL, 0 },
	{ "limits", "FILE", "the known backend limits (default: the built-in ones)", AT(limits),
	  NULL, 0 },
	{ "cases", "FILE", "replays a traced program's cases (apiparity trace), each API a check; "
	  "TARGET, if given, picks one API", AT(cases), NULL, 0 },
	AP_CLI_OPT_ROOT(struct ap_check_opts),
	{ "v", NULL, "the transcript, a line per step, instead of a live line per environment",
	  AT(verbose), NULL, 0 },
};
#undef AT

static const struct ap_optset check_set = { "check", "TARGET",
	"verify one API across environments", AP_OPTS(check_opts) };
const struct ap_optset *const ap_check_optsets[] = { &check_set, NULL };

static int check_parse(int argc, char **argv, struct ap_check_opts *o)
{
	int r = ap_cli_parse(&check_set, argc, argv, o);
	if (r)
		return r;
	if (o->cases && argc == optind)
		return 0;
	if (argc - optind != 1)
		return ap_usage("check: name exactly one TARGET, e.g. "
				"torch.autograd.grad_mode.set_multithreading_enabled.clone");
	if (strlen(argv[optind]) > AP_TARGET_MAX)
		return ap_usage("check: a TARGET is a dotted Python name of at most %d bytes, not "
				"one of %zu", AP_TARGET_MAX, strlen(argv[optind]));
	if (!target_ok(argv[optind]))
		return ap_usage("check: '%s' is not a dotted Python name", argv[optind]);
	return 0;
}

static int read_script(const char *path, struct ap_buf *out)
{
	int r = ap_read_all(path, out);
	if (!r)
		return 0;
	struct ap_buf d = { 0 };
	ap_buf_addf(&d, "%s: %s", path, ap_strerror(r));
	r = ap_fail(-AP_ECONFIG, "check --script", &d);
	ap_buf_free(&d);
	return r;
}

/* Loads the environments and specs, and picks the environments to check:
 * envs_out[0..o->nnames). */
static int check_setup(struct ap_check_opts *o, struct ap_envs *envs, struct ap_specs *specs,
		       const struct ap_env **envs_out)
{
	struct ap_buf err = { 0 };
	int r = ap_cli_load_envs(envs, o->envs, o->root);
	if (r)
		return r;
	if ((r = ap_specs_load(specs, o->specs, &err))) {
		r = ap_fail(r, "specs", &err);
		ap_buf_free(&err);
		ap_envs_free(envs);
		return r;
	}
	/* No --env: every environment of the file (local only when named). */
	int all = !o->nnames;
	for (size_t i = 0; all && i < envs->n && o->nnames < AP_MAX_ENVS; i++)
		if (strcmp(envs->v[i].name, "local"))
			o->names[o->nnames++] = envs->v[i].name;
	if (o->reference) {
		size_t k = 0;
		while (k < o->nnames && strcmp(o->names[k], o->reference))
			k++;
		if (k == o->nnames)
			r = ap_usage("check: --reference %s is not one of the environments checked",
				     o->reference);
	}
	for (size_t i = 0; !r && i < o->nnames; i++)
		if (!(envs_out[i] = ap_cli_find_env(envs, o->names[i], "check")))
			r = AP_EXIT_UNKNOWN_ENV;
	ap_buf_free(&err);
	return r;
}

/* Opens the run, and refuses before anything runs an --out where the
 * evidence could not be written. 0, or the exit code after printing why. */
static int check_open(struct ap_run *run, const struct ap_run_opts *ro,
		      const struct ap_env *const *envs, size_t n)
{
	struct ap_buf d = { 0 };
	int r = ap_run_open(run, ro, envs, n);
	if (r)
		return ap_fail(r, "check", NULL);
	if ((r = ap_run_out_ok(run, &d)))
		r = ap_fail(r, "check --out", &d);
	ap_buf_free(&d);
	return r;
}

/* --sign: the key is loaded before anything runs, so a bad one costs nothing. */
static int load_signer(const char *path, struct ap_signer **s)
{
	struct ap_buf err = { 0 };
	int r = path ? ap_signer_load(path, s, &err) : 0;
	if (r)
		r = ap_fail(r, "check --sign", &err);
	ap_buf_free(&err);
	return r;
}

/* The tolerance overrides and the backend limits: the files given, or the
 * built-in ones. */
static int load_numeric(const struct ap_check_opts *o, struct ap_tolerances *t,
			struct ap_limits *l)
{
	struct ap_buf err = { 0 };
	int r = ap_tolerances_load(t, o->tolerances, &err);
	if (r)
		r = ap_fail(r, "tolerances", &err);
	else if ((r = ap_limits_load(l, o->limits, &err)))
		r = ap_fail(r, "limits", &err);
	ap_buf_free(&err);
	return r;
}

/* The engine's options, from the command line's and what was loaded. */
static struct ap_run_opts run_opts(const struct ap_check_opts *o, const char *target,
				   const struct ap_buf *scripts, const struct ap_specs *specs,
				   const struct ap_tolerances *tols, const struct ap_limits *limits)
{
	struct ap_run_opts ro = {
		.target = target, .out = o->out, .reference = o->reference,
		.torch_src = o->torch_src, .claimed = o->claimed, .no_official = o->no_official,
		.script_paths = o->scripts, .scripts = scripts, .nscripts = o->nscripts,
		.timeout_s = o->timeout_s, .answer_s = o->answer_s, .samples = o->samples,
		.specs = specs, .numeric = { tols, limits, target },
	};
	return ro;
}

/* Each environment's last status line: its verdict, once sealed. */
static void status_verdicts(struct ap_statusline *st, const struct ap_run *run)
{
	for (size_t i = 0; i < run->n; i++) {
		struct ap_bundle_facts b;
		ap_bundle_facts(run->s[i].bundle, &b);
		ap_statusline_finish(st, i, "done: %s", run->s[i].io_err ? "no-evidence" :
				     b.verdict_word ? b.verdict_word : "?");
		ap_bundle_facts_free(&b);
	}
}

/* Measures run with a status line, seals it and prints its warnings. */
static void check_measure(struct ap_run *run, const struct ap_signer *signer, int verbose)
{
	const char *names[AP_MAX_ENVS];
	for (size_t i = 0; i < run->n; i++)
		names[i] = run->s[i].env->name;
	struct ap_statusline *st = ap_statusline_new(names, run->n, stderr,
						     verbose ? AP_STATUS_PLAIN : 0);
	ap_run_measure(run, st);
	ap_run_seal(run, signer);
	/* Live lines end on the verdict; below them, nothing more is redrawn. */
	if (ap_statusline_live(st))
		status_verdicts(st, run);
	ap_statusline_free(st);
	for (size_t i = 0; i < run->n; i++)
		ap_print_warnings(&run->s[i].warn);
}

/* Runs the check: measured with a status line, sealed, the warnings,
 * summed up; the exit code. */
static int check_run(struct ap_run *run, const struct ap_signer *signer, int require_present,
		     int verbose)
{
	check_measure(run, signer, verbose);
	ap_checksummary_print(stdout, run);
	fflush(stdout);
	return ap_run_exit_code(run, require_present, ap_fail);
}

/* --- check --cases: a traced program's APIs, each a check ---------------- */

/* The cases of api that can be replayed, as the worker makes them again
 * ({id, count, args, kwargs}); the others counted in r, the first's reason
 * kept. */
static json_t *replayable_cases(const struct ap_trace *t, const struct ap_trace_api *api,
				struct ap_case_result *r)
{
	json_t *out = json_array();
	double bytes = 0;
	for (size_t i = api->first; i < t->n; i++) {
		const struct ap_case *c = &t->v[i];
		struct ap_buf why = { 0 };
		if (strcmp(c->api, api->api))
			continue;
		int ok = ap_case_replayable(c, &why);
		if (ok && (bytes += ap_case_tensor_bytes(c)) > AP_CASES_REPLAY_BYTES) {
			ok = 0;
			bytes -= ap_case_tensor_bytes(c);
			ap_buf_addf(&why, "its tensors and those of the cases before it hold over "
				    "%.0f MiB, the most one API's replay sends",
				    AP_CASES_REPLAY_BYTES / (1024 * 1024));
		}
		if (ok)
			json_array_append_new(out, json_pack("{s:I, s:I, s:O, s:O}", "id",
							     (json_int_t)c->id, "count",
							     (json_int_t)c->count, "args", c->args,
							     "kwargs", c->kwargs));
		else if (r->skipped++ == 0)
			r->skip_why = strdup(ap_buf_str(&why));
		ap_buf_free(&why);
	}
	r->replayed = json_array_size(out);
	return out;
}

/* One API's check: its replayable cases, in place of OpInfo's samples,
 * the evidence under OUT/<api>. The exit code of its run. */
static int check_case_api(const struct ap_check_opts *o, struct ap_run_opts ro,
			  json_t *cases, const struct ap_signer *signer,
			  const struct ap_env *const *envs, struct ap_case_result *r)
{
	struct ap_buf dir = { 0 };
	struct ap_run run = { 0 };
	ap_buf_addf(&dir, "%s/%s", o->out, r->api->api);
	ro.out = ap_buf_str(&dir);
	ro.target = ro.numeric.op = r->api->api;
	ro.cases = cases;
	ro.no_official = 1;
	ro.nscripts = 0;
	int rc = check_open(&run, &ro, envs, o->nnames);
	if (!rc) {
		check_measure(&run, signer, o->verbose);
		ap_case_result_take(r, &run);
		rc = ap_run_exit_code(&run, 0, ap_fail);
	}
	ap_run_free(&run);
	ap_buf_free(&dir);
	return rc;
}

/* A worker per environment, kept across the APIs of a replay: one import of
 * torch (and one start of a backend's devices, one numeric runner kept)
 * per environment rather than per API. One that has died is opened again;
 * one that cannot be opened is left to the run, which says why. */
static void case_workers(const struct ap_check_opts *o, const struct ap_env *const *envs,
			 struct ap_worker *w, struct ap_worker **lent, json_t **fps)
{
	struct ap_worker_limits lim = { o->answer_s * 1000,
					(o->timeout_s + AP_RUN_WATCHDOG_MARGIN_S) * 1000 };
	if (lim.answer_ms < lim.start_ms)
		lim.answer_ms = lim.start_ms;
	for (size_t i = 0; i < o->nnames; i++) {
		if (lent[i] && ap_worker_alive(lent[i]))
			continue;
		if (lent[i])
			ap_worker_free(lent[i]);
		lent[i] = ap_worker_open(&w[i], envs[i], &lim) ? NULL : &w[i];
		json_decref(fps[i]); /* a new process: fingerprinted again */
		fps[i] = NULL;
	}
}

/* Replays every API of the trace at o->cases (or only the one named), then
 * writes OUT/cases.md and prints a line per API. The first failing API's
 * exit code, else 0. */
static int check_cases(const struct ap_check_opts *o, const char *only, struct ap_run_opts ro,
		       const struct ap_signer *signer, const struct ap_env *const *envs)
{
	struct ap_trace t;
	struct ap_trace_api *apis = NULL;
	struct ap_case_result *res = NULL;
	struct ap_buf err = { 0 }, md = { 0 };
	size_t n = 0, nres = 0;
	int rc = ap_trace_load(&t, o->cases, &err), worst = 0;
	if (rc) {
		rc = ap_fail(rc, "check --cases", &err);
		ap_buf_free(&err);
		return rc;
	}
	struct ap_worker workers[AP_MAX_ENVS], *lent[AP_MAX_ENVS] = { 0 };
	json_t *fps[AP_MAX_ENVS] = { 0 };
	if (ap_trace_apis(&t, &apis, &n) || !(res = calloc(n + 1, sizeof(*res))))
		rc = ap_fail(-ENOMEM, "check --cases", NULL);
	ro.workers = lent;
	ro.fingerprints = fps;
	for (size_t i = 0; !rc && i < n; i++) {
		if (only && strcmp(only, apis[i].api))
			continue;
		struct ap_case_result *r = &res[nres++];
		r->api = &apis[i];
		json_t *cases = replayable_cases(&t, &apis[i], r);
		if (r->replayed)
			case_workers(o, envs, workers, lent, fps);
		int code = r->replayed ? check_case_api(o, ro, cases, signer, envs, r) : 0;
		worst = worst ? worst : code;
		json_decref(cases);
	}
	if (!rc && only && !nres)
		rc = ap_usage("check: the trace %s has no call of %s", o->cases, only);
	ap_buf_addf(&md, "%s/cases.md", o->out);
	if (!rc && ((rc = ap_mkdirs(o->out)) ||
		    (rc = ap_cases_write_md(ap_buf_str(&md), &t, res, nres)))) {
		ap_buf_addf(&err, "%s: %s", ap_buf_str(&md), ap_strerror(rc));
		rc = ap_fail(rc, "check --cases", &err);
	}
	if (!rc) {
		ap_cases_print(stdout, res, nres);
		printf("the replay's page: %s\n", ap_buf_str(&md));
	}
	for (size_t i = 0; i < o->nnames; i++) {
		if (lent[i])
			ap_worker_free(lent[i]);
		json_decref(fps[i]);
	}
	for (size_t i = 0; i < nres; i++)
		ap_case_result_free(&res[i]);
	free(res);
	free(apis);
	ap_trace_free(&t);
	ap_buf_free(&err);
	ap_buf_free(&md);
	return rc ? rc : worst;
}

int ap_cmd_check(int argc, char **argv)
{
	struct ap_check_opts o = { .timeout_s = 30, .answer_s = 120, .samples = AP_NUMERIC_SAMPLES };
	struct ap_envs envs = { 0 };
	struct ap_specs specs = { 0 };
	struct ap_tolerances tols = { 0 };
	struct ap_limits limits = { 0 };
	struct ap_run run = { 0 };
	struct ap_buf scripts[AP_MAX_SCRIPTS] = { { 0 } }, outdir = { 0 };
	struct ap_signer *signer = NULL;
	const struct ap_env *checked[AP_MAX_ENVS];
	int rc = check_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? AP_EXIT_OK : rc;
	if ((rc = load_signer(o.sign, &signer)))
		return rc;
	const char *target = optind < argc ? argv[optind] : NULL;
	if (o.out && !*o.out)
		return ap_usage("check: --out wants a directory, not an empty string");
	if (!o.out) {
		ap_buf_addf(&outdir, "out/%s", o.cases ? "cases" : target);
		o.out = ap_buf_str(&outdir);
	}
	for (size_t k = 0; k < o.nscripts; k++)
		if ((rc = read_script(o.scripts[k], &scripts[k])))
			goto out;
	if ((rc = load_numeric(&o, &tols, &limits)) || (rc = check_setup(&o, &envs, &specs, checked)))
		goto out;
	struct ap_run_opts ro = run_opts(&o, target, scripts, &specs, &tols, &limits);
	if (o.cases)
		rc = check_cases(&o, target, ro, signer, checked);
	else if (!(rc = check_open(&run, &ro, checked, o.nnames)))
		rc = check_run(&run, signer, o.require_present, o.verbose);
	ap_run_free(&run);
out:
	ap_signer_free(signer);
	ap_specs_free(&specs);
	ap_tolerances_free(&tols);
	ap_limits_free(&limits);
	ap_envs_free(&envs);
	for (size_t k = 0; k < o.nscripts; k++)
		ap_buf_free(&scripts[k]);
	ap_buf_free(&outdir);
	return rc;
}
