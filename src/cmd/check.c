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
#include "evidence/sign.h"
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
	int samples;          /* --samples: per OpInfo entry, dtype and kind */
	const char *tolerances; /* --tolerances FILE; NULL: the built-in overrides */
	const char *limits;     /* --limits FILE; NULL: the built-in backend limits */
};


static const char ap_check_usage[] =
	"usage: apiparity check TARGET [--envs FILE] [--env NAME]... [--reference NAME]\n"
	"                       [--out DIR] [--timeout S] [--script FILE]... [--specs DIR]\n"
	"                       [--require-present] [--torch-src DIR] [--claimed NODEID]\n"
	"                       [--no-official] [--sign KEY] [--samples N]\n"
	"                       [--tolerances FILE] [--limits FILE]\n";

/* A dotted Python name: it is also written into probe code and paths. */
static int target_ok(const char *t)
{
	return ap_dotted_name_ok(t, 256);
}

/* --samples N: 1 to AP_NUMERIC_SAMPLES_MAX, digits only. */
static int samples_count(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || *s < '0' || *s > '9' || v < 1 || v > AP_NUMERIC_SAMPLES_MAX)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int check_parse(int argc, char **argv, struct ap_check_opts *o)
{
	static const struct option longopts[] = {
		{ "envs", required_argument, NULL, 'E' }, { "env", required_argument, NULL, 'e' },
		{ "root", required_argument, NULL, 'r' }, { "out", required_argument, NULL, 'o' },
		{ "reference", required_argument, NULL, 'R' },
		{ "timeout", required_argument, NULL, 't' },
		{ "script", required_argument, NULL, 's' }, { "specs", required_argument, NULL, 'S' },
		{ "require-present", no_argument, NULL, 'p' }, { "help", no_argument, NULL, 'h' },
		{ "torch-src", required_argument, NULL, 'T' },
		{ "claimed", required_argument, NULL, 'C' },
		{ "no-official", no_argument, NULL, 'N' },
		{ "sign", required_argument, NULL, 'K' },
		{ "samples", required_argument, NULL, 'n' },
		{ "tolerances", required_argument, NULL, 'L' },
		{ "limits", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'E': o->envs = optarg; break;
		case 'r': o->root = optarg; break;
		case 'o': o->out = optarg; break;
		case 'R': o->reference = optarg; break;
		case 's':
			if (o->nscripts == AP_MAX_SCRIPTS)
				return ap_usage("check: at most %d scripts", AP_MAX_SCRIPTS);
			o->scripts[o->nscripts++] = optarg;
			break;
		case 'S': o->specs = optarg; break;
		case 'p': o->require_present = 1; break;
		case 'T': o->torch_src = optarg; break;
		case 'C': o->claimed = optarg; break;
		case 'N': o->no_official = 1; break;
		case 'K': o->sign = optarg; break;
		case 'L': o->tolerances = optarg; break;
		case 'l': o->limits = optarg; break;
		case 'n':
			if (samples_count(optarg, &o->samples))
				return ap_usage("check: --samples wants a number from 1 to %d",
						AP_NUMERIC_SAMPLES_MAX);
			break;
		case 'h': fputs(ap_check_usage, stdout); return -1;
		case 'e':
			if (o->nnames == AP_MAX_ENVS)
				return ap_usage("check: at most %d environments", AP_MAX_ENVS);
			o->names[o->nnames++] = optarg;
			break;
		case 't':
			if (ap_opt_timeout(optarg, &o->timeout_s))
				return AP_EXIT_USAGE;
			break;
		default:
			return ap_opt_bad("check", c, argv);
		}
	}
	if (argc - optind != 1)
		return ap_usage("check: name exactly one TARGET, e.g. "
				"torch.autograd.grad_mode.set_multithreading_enabled.clone");
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

/* Runs the check: measured with a status line, the warnings, sealed,
 * summed up; the exit code. */
static int check_run(struct ap_run *run, const struct ap_signer *signer, int require_present)
{
	const char *names[AP_MAX_ENVS];
	for (size_t i = 0; i < run->n; i++)
		names[i] = run->s[i].env->name;
	struct ap_statusline *st = ap_statusline_new(names, run->n, stderr);
	ap_run_measure(run, st);
	ap_statusline_free(st);
	for (size_t i = 0; i < run->n; i++)
		ap_print_warnings(&run->s[i].warn);
	ap_run_seal(run, signer);
	ap_checksummary_print(stdout, run);
	fflush(stdout);
	return ap_run_exit_code(run, require_present, ap_fail);
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
	const char *target = argv[optind];
	if (o.out && !*o.out)
		return ap_usage("check: --out wants a directory, not an empty string");
	if (!o.out) {
		ap_buf_addf(&outdir, "out/%s", target);
		o.out = ap_buf_str(&outdir);
	}
	for (size_t k = 0; k < o.nscripts; k++)
		if ((rc = read_script(o.scripts[k], &scripts[k])))
			goto out;
	if ((rc = load_numeric(&o, &tols, &limits)) || (rc = check_setup(&o, &envs, &specs, checked)))
		goto out;
	struct ap_run_opts ro = run_opts(&o, target, scripts, &specs, &tols, &limits);
	if (!(rc = check_open(&run, &ro, checked, o.nnames)))
		rc = check_run(&run, signer, o.require_present);
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
