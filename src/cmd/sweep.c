/* apiparity sweep - catalog the public API surface in each environment and
 * write the support matrix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/pool.h"
#include "base/statusline.h"
#include "base/text.h"
#include "base/version.h"
#include "check/autocheck.h"
#include "check/catalog.h"
#include "check/limits.h"
#include "check/numeric.h"
#include "check/spec.h"
#include "check/sweep.h"
#include "check/tolerances.h"
#include "cmd/cmd.h"
#include "evidence/manifest.h"
#include "evidence/matrix.h"
#include "evidence/sweepfile.h"
#include "review/sweepview.h"

#define AP_MAX_ENVS 64

struct sweep_opts {
	const char *envs, *root, *out, *depth, *shard, *shard_count, *catalog, *reference;
	const char *specs;    /* --specs DIR: the family specs; NULL: the built-in ones */
	const char *names[AP_MAX_ENVS];
	size_t nnames;
	int resume;
	int timeout_s;
	int samples;          /* --samples: per OpInfo entry, dtype and kind */
	int jobs;             /* --jobs: workers per environment for the checks;
			       * 0: this machine's CPUs shared among them */
};

static int depth_ok(const char *d)
{
	if (!strcmp(d, "resolve") || !strcmp(d, "signature") || !strcmp(d, "probe") ||
	    !strcmp(d, "numeric"))
		return 0;
	return ap_usage("sweep: --depth wants resolve, signature, probe or numeric, not '%s'", d);
}

/* Whether the depth runs each API's checks. */
static int deep(const char *d)
{
	return !strcmp(d, "probe") || !strcmp(d, "numeric");
}

/* --samples N: 1 to AP_NUMERIC_SAMPLES_MAX, digits only. */
static int sweep_samples(void *opts, const struct ap_opt *opt, const char *arg,
			 struct ap_buf *err)
{
	return ap_cli_count(opts, opt, arg, AP_NUMERIC_SAMPLES_MAX, "sweep", err);
}

/* --jobs N: 1 to AP_SWEEP_JOBS_MAX. */
static int sweep_jobs(void *opts, const struct ap_opt *opt, const char *arg,
		      struct ap_buf *err)
{
	return ap_cli_count(opts, opt, arg, AP_SWEEP_JOBS_MAX, "sweep", err);
}

/* The workers per environment that run checks: --jobs, else this machine's
 * online CPUs shared among the environments (at least one each). Each runs
 * its samples on CPU, and the device's side is mostly waiting (a daemon's
 * answer, a copy), so one worker leaves a CPU idle. An environment on
 * another host (ssh, Slurm) is measured there: --jobs is then the user's. */
static int sweep_lanes(const struct sweep_opts *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long per = o->nnames && cpus > 0 ? cpus / (long)o->nnames : 1;
	if (o->jobs)
		return o->jobs;
	return per < 1 ? 1 : per > AP_SWEEP_JOBS_MAX ? AP_SWEEP_JOBS_MAX : (int)per;
}

/* --env NAME, once per environment. */
static int sweep_add_env(void *opts, const struct ap_opt *opt, const char *arg,
			 struct ap_buf *err)
{
	struct sweep_opts *o = opts;
	(void)opt;
	return ap_cli_push(o->names, &o->nnames, AP_MAX_ENVS, arg, "sweep", "environments", err);
}

/* --python [NAME=]PATH: an environment of its own, swept. */
static int sweep_add_python(void *opts, const struct ap_opt *opt, const char *arg,
			    struct ap_buf *err)
{
	const char *name;
	int r = ap_cli_python(arg, &name, err);
	return r ? r : sweep_add_env(opts, opt, name, err);
}

#define AT(field) offsetof(struct sweep_opts, field)
static const struct ap_opt sweep_opt_table[] = {
	{ "env", "NAME", "an environment to sweep (default: every one of the file but local)", 0,
	  sweep_add_env, AP_OPT_REPEAT },
	AP_CLI_OPT_PYTHON(sweep_add_python),
	{ "out", "DIR", "where the matrix and the journals go", AT(out), NULL, AP_OPT_REQUIRED },
	{ "depth", "resolve|signature|probe|numeric", "how much to measure per API (default "
	  "signature): probe also runs the family probes, numeric the OpInfo samples too",
	  AT(depth), NULL, 0 },
	{ "resume", NULL, "continues a sweep that was killed, from its journals", AT(resume), NULL,
	  0 },
	{ "shard", "I/N", "walks catalog entries I, I+N, ... only", AT(shard), NULL, 0 },
	{ "shard-count", "N", "the number of shards, with the shard index from the job "
	  "($JOB_COMPLETION_INDEX)", AT(shard_count), NULL, 0 },
	{ "catalog", "FILE", "the catalog of entries to walk (default: the built-in one)",
	  AT(catalog), NULL, 0 },
	{ "reference", "NAME", "the environment each API is compared with (default: the first "
	  "that has it)", AT(reference), NULL, 0 },
	AP_CLI_OPT_TIMEOUT(struct sweep_opts, "seconds an entry (and each probe and sample) may "
			   "take (default 120)"),
	{ "samples", "N", "at most N numeric samples per OpInfo entry, dtype and kind (default 1)",
	  AT(samples), sweep_samples, 0 },
	{ "specs", "DIR", "the family specs (default: the built-in ones)", AT(specs), NULL, 0 },
	{ "jobs", "N", "at depth probe and numeric, N workers per environment run the checks "
	  "(default: the CPUs shared among the environments)", AT(jobs), sweep_jobs, 0 },
	AP_CLI_OPT_ENVS(struct sweep_opts),
	AP_CLI_OPT_ROOT(struct sweep_opts),
};
#undef AT

static const struct ap_optset sweep_set = { "sweep", "",
	"the support matrix of every public API", AP_OPTS(sweep_opt_table) };
const struct ap_optset *const ap_sweep_optsets[] = { &sweep_set, NULL };

static int sweep_parse(int argc, char **argv, struct sweep_opts *o)
{
	int r = ap_cli_parse(&sweep_set, argc, argv, o);
	if (r)
		return r;
	if (optind != argc)
		return ap_usage("sweep: unexpected argument '%s'", argv[optind]);
	if (!o->out || !*o->out)
		return ap_usage("sweep: --out DIR is required");
	return depth_ok(o->depth);
}

/* Whether dir may be (re)made for a sweep: absent, empty, or an earlier
 * sweep's (it has sweep.json). Anything else is left alone. */
static int sweep_dir_ok(const char *dir)
{
	struct ap_buf meta = { 0 };
	struct stat st;
	if (lstat(dir, &st))
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return 0;
	ap_buf_addf(&meta, "%s/%s", dir, AP_SWEEP_META_NAME);
	int ok = !lstat(ap_buf_str(&meta), &st) || !rmdir(dir);
	ap_buf_free(&meta);
	return ok;
}

/* Makes DIR (and DIR/journal) ready: emptied unless resuming. 0 or the exit
 * code after printing why. */
static int prepare_dir(const char *dir, int resume)
{
	struct ap_buf d = { 0 }, j = { 0 };
	int r = 0;
	if (!sweep_dir_ok(dir)) {
		r = -EEXIST;
		ap_buf_addf(&d, "%s is not the output of an earlier sweep, and sweep would replace "
			    "it (choose another --out)", dir);
	} else if (!resume)
		r = ap_rm_tree(dir);
	ap_buf_addf(&j, "%s/journal", dir);
	r = r ? r : ap_mkdirs(ap_buf_str(&j));
	r = r ? r : ap_dir_writable(dir);
	if (r && !d.len)
		ap_buf_addf(&d, "%s", dir);
	if (r)
		r = ap_fail(r, "sweep --out", &d);
	ap_buf_free(&d);
	ap_buf_free(&j);
	return r;
}

/* --- progress: one line per entry, with an ETA on a terminal ------------ */

/* Within an entry at depth probe and numeric (its checks can take an hour:
 * torch's): on a terminal each API journaled, with the entry's ETA; in a log
 * every AP_PROGRESS_EVERY-th and the last. */
#define AP_PROGRESS_EVERY 25

struct progress {
	struct ap_statusline *st;
	int tty;
};

static void on_progress(void *ctx, size_t env, const struct ap_sweep_progress *p)
{
	struct progress *g = ctx;
	double left = p->done ? p->elapsed / (double)p->done * (double)(p->total - p->done) : 0;
	if (p->api) {
		left = p->secs / (double)p->api_done * (double)(p->api_total - p->api_done);
		if (g->tty || p->api_done % AP_PROGRESS_EVERY == 0 || p->api_done == p->api_total)
			ap_statusline_set(g->st, env, "%s: %zu/%zu APIs done (%s), ETA %.0f s "
					  "[%zu/%zu]", p->entry, p->api_done, p->api_total, p->api,
					  left, p->done, p->total);
		return;
	}
	if (g->tty)
		ap_statusline_set(g->st, env, "%s: %zu APIs, %s [%zu/%zu] ETA %.0f s", p->entry, p->apis,
			      p->status, p->done, p->total, left);
	else
		ap_statusline_set(g->st, env, "%s: %zu APIs, %s, %.2f s [%zu/%zu]", p->entry, p->apis,
			      p->status, p->secs, p->done, p->total);
}

/* --- outputs ------------------------------------------------------------ */

/* Makes *m the sweep's sweep.json (zeroed before). 0 or -ENOMEM. */
static int sweep_meta(const struct sweep_opts *o, const struct ap_catalog *cat,
		      struct ap_shard shard, const struct ap_sweep_env *e, size_t n,
		      enum ap_sweep_state state, struct ap_sweep_meta *m)
{
	*m = (struct ap_sweep_meta){ .state = state, .sharded = shard.count != 0,
				     .index = shard.index, .count = shard.count,
				     .has_samples = !strcmp(o->depth, "numeric"),
				     .samples = o->samples };
	int r = ap_sweep_meta_set(&m->tool, "apiparity");
	r = r ? r : ap_sweep_meta_set(&m->version, ap_version);
	r = r ? r : ap_sweep_meta_set(&m->commit, ap_commit);
	r = r ? r : ap_sweep_meta_set(&m->depth, o->depth);
	r = r ? r : ap_sweep_meta_set(&m->catalog, cat->digest);
	for (size_t i = 0; !r && i < n; i++) {
		r = ap_sweep_meta_add_env(m, e[i].env->name, e[i].env->label, e[i].torch,
					  &e[i].plugins);
		/* what the numeric runner adapts there (ap_numeric_adapter) */
		r = r ? r : ap_sweep_meta_set(&m->envs[i].adapter,
					      m->has_samples ? ap_numeric_adapter_name(e[i].env->device)
							     : NULL);
	}
	return r;
}

static int write_meta(const char *dir, const struct ap_sweep_meta *meta, struct ap_buf *err)
{
	struct ap_buf b = { 0 }, path = { 0 };
	int r = ap_sweep_meta_render(meta, &b);
	ap_buf_addf(&path, "%s/%s", dir, AP_SWEEP_META_NAME);
	r = r ? r : ap_write_atomic(ap_buf_str(&path), ap_buf_str(&b), b.len);
	if (r)
		ap_buf_addf(err, "%s: %s", ap_buf_str(&path), strerror(-r));
	ap_buf_free(&b);
	ap_buf_free(&path);
	return r;
}

/* At depth probe and numeric, per environment: its APIs' check statuses. */
static void print_checks(const struct ap_sweep_env *e, size_t n, const struct ap_matrix *lines)
{
	static const enum ap_line_check st[] = { AP_LCHECK_CONSISTENT, AP_LCHECK_INCONSISTENT,
						 AP_LCHECK_NOTRUN, AP_LCHECK_CRASH,
						 AP_LCHECK_TIMEOUT };
	for (size_t i = 0; i < n; i++) {
		size_t c[5] = { 0 }, all = 0;
		for (size_t k = 0; k < lines->n; k++) {
			if (strcmp(lines->v[k].env, e[i].env->name))
				continue;
			for (size_t s = 0; s < 5; s++)
				c[s] += ap_matrix_check_is(&lines->v[k], st[s]);
		}
		for (size_t s = 0; s < 5; s++)
			all += c[s];
		if (all)
			printf("%s checks: %zu consistent, %zu inconsistent, %zu not run, %zu crash, "
			       "%zu timeout\n", e[i].env->name, c[0], c[1], c[2], c[3], c[4]);
	}
}

static void print_summary(const struct ap_sweep_env *e, size_t n, const struct ap_matrix *lines,
			  const char *dir)
{
	printf("\n%-10s %-16s %7s %7s %7s %7s %9s %8s\n", "ENV", "TORCH", "PRESENT", "ABSENT",
	       ap_status_name(AP_NOTRUN), "WALKED", "RESUMED", "RESTARTS");
	for (size_t i = 0; i < n; i++) {
		size_t c[3] = { 0 };
		for (size_t k = 0; k < lines->n; k++) {
			if (strcmp(lines->v[k].env, e[i].env->name))
				continue;
			enum ap_line_verdict v = lines->v[k].verdict;
			c[v == AP_LINE_ABSENT ? 1 : v == AP_LINE_NOTRUN ? 2 : 0]++;
		}
		struct ap_buf row = { 0 };
		const char *torch = e[i].torch;
		/* the version is the environment's word: data, shown escaped */
		ap_buf_addf(&row, "%-10s %-16s %7zu %7zu %7zu %7zu %9zu %8zu", e[i].env->name,
			    torch ? torch : "-", c[0], c[1], c[2], e[i].measured, e[i].resumed,
			    e[i].restarts);
		ap_text_fputs(ap_buf_str(&row), AP_TEXT_LINE, stdout);
		putchar('\n');
		ap_buf_free(&row);
	}
	print_checks(e, n, lines);
	printf("\nmatrix: %s/%s (and matrix.md, matrix.html, MANIFEST.sha256)\n", dir,
	       AP_MATRIX_NAME);
}

/* Environment failures first (their own codes), then I/O. */
static int sweep_exit(const struct ap_sweep_env *e, size_t n, int io, struct ap_buf *io_err)
{
	int rc = AP_EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		struct ap_buf what = { 0 };
		ap_buf_addf(&what, "env %s", e[i].env->name);
		if (e[i].err) {
			int code = ap_fail(e[i].err, ap_buf_str(&what), &e[i].detail);
			rc = rc ? rc : code;
		}
		if (e[i].io_err) {
			ap_fail(e[i].io_err, ap_buf_str(&what), &e[i].io_detail);
			rc = rc ? rc : AP_EXIT_IO;
		}
		ap_buf_free(&what);
	}
	if (io) {
		ap_fail(io, "sweep", io_err);
		rc = rc ? rc : AP_EXIT_IO;
	}
	return rc;
}

static int sweep_setup(struct sweep_opts *o, struct ap_envs *envs, struct ap_catalog *cat,
		       struct ap_shard *shard, struct ap_buf *dir)
{
	struct ap_buf err = { 0 };
	int r = ap_catalog_load(cat, o->catalog, &err);
	if (r) {
		r = ap_fail(r, "sweep --catalog", &err);
		goto out;
	}
	if (ap_shard_resolve(o->shard, o->shard_count, shard, &err)) {
		r = ap_usage("sweep: %s", ap_buf_str(&err));
		goto out;
	}
	if ((r = ap_cli_load_envs(envs, o->envs, o->root)))
		goto out;
	for (size_t i = 0; !o->nnames && i < envs->n && o->nnames < AP_MAX_ENVS; i++)
		if (strcmp(envs->v[i].name, "local"))
			o->names[o->nnames++] = envs->v[i].name;
	for (size_t i = 0; !r && i < o->nnames; i++)
		if (!ap_cli_find_env(envs, o->names[i], "sweep"))
			r = AP_EXIT_UNKNOWN_ENV;
	if (shard->count)
		ap_buf_addf(dir, "%s/shard-%u-of-%u", o->out, shard->index, shard->count);
	else
		ap_buf_adds(dir, o->out);
out:
	ap_buf_free(&err);
	return r;
}

static int sweep_run(struct sweep_opts *o, const struct ap_envs *envs,
		     const struct ap_catalog *cat, struct ap_shard shard, const char *dir,
		     const struct ap_autocheck *ac)
{
	struct ap_sweep_env e[AP_MAX_ENVS] = { 0 };
	struct ap_buf jpath[AP_MAX_ENVS] = { { 0 } }, err = { 0 };
	struct progress g = { .tty = isatty(2) };
	struct ap_sweep_opts so = { .cat = cat, .shard = shard, .depth = o->depth,
				    .check = deep(o->depth) ? ac : NULL,
				    .lanes = sweep_lanes(o),
				    .walk_ms = o->timeout_s * 1000, .start_ms = 300 * 1000,
				    .resume = o->resume, .progress = on_progress, .ctx = &g };
	for (size_t i = 0; i < o->nnames; i++) {
		e[i].env = ap_envs_find(envs, o->names[i]);
		e[i].idx = i;
		e[i].o = &so;
		ap_buf_addf(&jpath[i], "%s/journal/%s.jsonl", dir, o->names[i]);
		e[i].journal = ap_buf_str(&jpath[i]);
	}
	struct ap_sweep_meta meta;
	int io = sweep_meta(o, cat, shard, e, o->nnames, AP_SWEEP_RUNNING, &meta);
	io = io ? io : write_meta(dir, &meta, &err);
	ap_sweep_meta_free(&meta);
	g.st = ap_statusline_new(o->names, o->nnames, stderr, 0);
	if (!io)
		ap_pool_run(e, o->nnames, sizeof(e[0]), ap_sweep_env_run);
	ap_statusline_free(g.st);
	int failed = io;
	for (size_t i = 0; i < o->nnames; i++)
		failed |= e[i].err | e[i].io_err;
	struct ap_matrix lines = { 0 };
	if (!io && (io = ap_sweep_matrix(e, o->nnames, o->names, o->reference, &lines)))
		ap_buf_adds(&err, "the matrix");
	int r = sweep_meta(o, cat, shard, e, o->nnames, failed ? AP_SWEEP_FAILED :
			   AP_SWEEP_COMPLETE, &meta);
	io = io ? io : r;
	io = io ? io : ap_sweepview_write(dir, &meta, &lines, &err);
	if (!io)
		print_summary(e, o->nnames, &lines, dir);
	fflush(stdout);
	int rc = sweep_exit(e, o->nnames, io, &err);
	for (size_t i = 0; i < o->nnames; i++) {
		ap_sweep_env_free(&e[i]);
		ap_buf_free(&jpath[i]);
	}
	ap_sweep_meta_free(&meta);
	ap_matrix_free(&lines);
	ap_buf_free(&err);
	return rc;
}

/* What depth probe and numeric need: the family specs, the tolerance
 * overrides and the backend limits (the built-in ones), loaded before
 * anything runs. */
static int load_checks(const struct sweep_opts *o, struct ap_specs *specs,
		       struct ap_tolerances *tols, struct ap_limits *lims)
{
	struct ap_buf err = { 0 };
	int r = 0;
	if (!deep(o->depth))
		return 0;
	if ((r = ap_specs_load(specs, o->specs, &err)))
		r = ap_fail(r, "specs", &err);
	else if ((r = ap_tolerances_load(tols, NULL, &err)))
		r = ap_fail(r, "tolerances", &err);
	else if ((r = ap_limits_load(lims, NULL, &err)))
		r = ap_fail(r, "limits", &err);
	ap_buf_free(&err);
	return r;
}

int ap_cmd_sweep(int argc, char **argv)
{
	struct sweep_opts o = { .depth = "signature", .timeout_s = 120,
				.samples = AP_AUTOCHECK_SAMPLES };
	struct ap_envs envs = { 0 };
	struct ap_catalog cat = { 0 };
	struct ap_shard shard = { 0 };
	struct ap_buf dir = { 0 };
	struct ap_specs specs = { 0 };
	struct ap_tolerances tols = { 0 };
	struct ap_limits lims = { 0 };
	int rc = sweep_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? AP_EXIT_OK : rc;
	/* each probe, sample and answer of the checks within --timeout, as the walk */
	struct ap_autocheck ac = { .specs = &specs, .tolerances = &tols, .limits = &lims,
				   .numeric = !strcmp(o.depth, "numeric"),
				   .max_samples = o.samples, .limit_s = o.timeout_s,
				   .start_s = 300 };
	if (!(rc = load_checks(&o, &specs, &tols, &lims)) &&
	    !(rc = sweep_setup(&o, &envs, &cat, &shard, &dir)) &&
	    !(rc = prepare_dir(ap_buf_str(&dir), o.resume)))
		rc = sweep_run(&o, &envs, &cat, shard, ap_buf_str(&dir), &ac);
	ap_tolerances_free(&tols);
	ap_limits_free(&lims);
	ap_specs_free(&specs);
	ap_catalog_free(&cat);
	ap_envs_free(&envs);
	ap_buf_free(&dir);
	return rc;
}
