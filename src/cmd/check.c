/* apiparity check - verify one API in one or many environments, with probes,
 * traces and evidence. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/jsonutil.h"
#include "base/pool.h"
#include "base/statusline.h"
#include "check/limits.h"
#include "check/numeric.h"
#include "check/tolerances.h"
#include "check/official.h"
#include "check/spec.h"
#include "base/text.h"
#include "check/verdict.h"
#include "cmd/cmd.h"
#include "env/fingerprint.h"
#include "evidence/sign.h"
#include "base/version.h"
#include "env/worker.h"
#include "evidence/bundle.h"
#include "evidence/journal.h"

#define AP_MAX_ENVS 64
#define AP_MAX_SCRIPTS 16
#define AP_WATCHDOG_MARGIN_S 30

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

/* Where the environments' threads meet for the numeric checks: every one
 * has resolved (the reference is known, and makes the samples), and every
 * one has run them (the CPU results are compared across). A worker must
 * stay with the thread that started it (its parent-death signal follows
 * that thread), so the threads wait for each other rather than end. */
struct ap_numeric_sync {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ap_check_job *jobs;
	size_t n, arrived[2];
	int done[2];
	json_t *samples;      /* the reference's, prepared; NULL: none */
};

/* One environment's run: filled by a pool job, then judged by the caller. */
struct ap_check_job {
	const struct ap_env *env;
	const struct ap_check_opts *o;
	const struct ap_specs *specs;
	const char *target;
	const struct ap_buf *scripts; /* the --script sources, o->nscripts of them */
	struct ap_statusline *status;
	size_t idx;
	struct ap_buf dir;
	json_t *b;            /* the bundle */
	struct ap_journal *journal;
	int err;              /* the environment failed: -AP_E* */
	int io_err;           /* evidence could not be written: -errno */
	struct ap_buf io_detail;
	struct ap_env run_env; /* env with the test trees bound */
	struct ap_buf warn;   /* lines for the user, printed after the run */
	struct ap_worker w;   /* kept from the first pass for the numeric one */
	int live;             /* w answered everything so far */
	json_t *opinfo;       /* the OpInfo entries of the target here, or NULL */
	const json_t *samples; /* the reference's samples (numeric_plan's) */
	json_t *frames;       /* the frame of each sample here, by index */
	struct ap_numeric_sync *sync;
};

static void job_journal(struct ap_check_job *j, const char *type, json_t *data)
{
	json_t *rec = json_pack("{s:s, s:O}", "type", type, "data", data ? data : json_null());
	int r = j->journal ? ap_journal_append(j->journal, rec) : 0;
	if (r && !j->io_err) {
		j->io_err = r;
		ap_buf_addf(&j->io_detail, "cannot append to %s/journal.jsonl: %s",
			    ap_buf_str(&j->dir), strerror(-r));
	}
	json_decref(rec);
}

static void job_fail(struct ap_check_job *j, int err, const struct ap_buf *detail)
{
	struct ap_buf msg = { 0 };
	j->err = err;
	/* JSON holds only UTF-8: a detail that quotes raw bytes is escaped. */
	ap_text_term(&msg, ap_buf_str(detail), detail->len, AP_TEXT_BLOCK);
	job_journal(j, "error", (json_t *)ap_bundle_set_error(j->b, err, ap_buf_str(&msg)));
	ap_buf_free(&msg);
	ap_statusline_set(j->status, j->idx, "%s: %s", ap_strerror(err), ap_buf_str(detail));
}

/* Adds a check decided here, not measured (NOTRUN for a reason). */
static void job_add(struct ap_check_job *j, json_t *c)
{
	ap_bundle_add_check(j->b, c);
	json_decref(c);
}

/* Runs one probe (or script) in the worker and records it as a check. */
static int job_probe(struct ap_check_job *j, struct ap_worker *w, const char *name,
			const char *kind, const char *code, json_t *bind, const json_t *says)
{
	json_t *req = ap_probe_request(name, code, bind, j->o->timeout_s);
	json_t *res = NULL;
	ap_statusline_set(j->status, j->idx, "%s %s ...", kind, name);
	int r = req ? ap_worker_call(w, req, &res) : -ENOMEM;
	json_decref(req);
	if (r == -AP_EPROTO && ap_worker_alive(w)) {
		/* The framing held: this probe's answer is lost, not the session. */
		json_decref(res);
		res = ap_check_new(name, kind, AP_ERROR, "unreadable result frame");
		json_object_set_new(res, "detail", json_string(ap_buf_str(&w->detail)));
		ap_buf_reset(&w->detail);
		r = res ? 0 : -ENOMEM;
	}
	if (r) {
		json_decref(res);
		job_fail(j, r, &w->detail);
		return r;
	}
	json_object_set_new(res, "name", json_string(name));
	json_object_set_new(res, "kind", json_string(kind));
	if (says)
		json_object_set(res, "says", (json_t *)says);
	ap_bundle_add_check(j->b, res);
	job_journal(j, "check", res);
	ap_statusline_set(j->status, j->idx, "%s %s %s", kind, name,
		      json_string_value(json_object_get(res, "status")));
	json_decref(res);
	return 0;
}

static int job_family(struct ap_check_job *j, struct ap_worker *w, const json_t *res)
{
	const struct ap_member *m;
	const char *cls = ap_target_class(res);
	const struct ap_family *f = ap_specs_find(j->specs, cls, &m);
	if (!f) {
		struct ap_buf why = { 0 };
		ap_buf_addf(&why, "no-family: no spec has a member for %s", cls ? cls : "?");
		job_add(j, ap_check_new("family", "plan", AP_NOTRUN, ap_buf_str(&why)));
		ap_buf_free(&why);
		return 0;
	}
	ap_bundle_set_family(j->b, f->name, m->cls, f->summary_en, f->summary_zh);
	json_t *bind = ap_member_bind(f, m);
	int r = bind ? 0 : -ENOMEM;
	for (size_t i = 0; !r && i < f->nprobes; i++) {
		const struct ap_probe *p = &f->probes[i];
		json_t *says = json_pack("{s:s, s:s}", "en", p->says_en, "zh", p->says_zh);
		if (p->needs && !ap_member_has_trait(m, p->needs)) {
			struct ap_buf why = { 0 };
			ap_buf_addf(&why, "not-applicable: %s has no trait '%s'", m->cls, p->needs);
			json_t *c = ap_check_new(p->name, "probe", AP_NOTRUN, ap_buf_str(&why));
			json_object_set(c, "says", says);
			job_add(j, c);
			ap_buf_free(&why);
		} else
			r = job_probe(j, w, p->name, "probe", p->code, bind, says);
		json_decref(says);
	}
	json_decref(bind);
	return r;
}

static int job_script(struct ap_check_job *j, struct ap_worker *w, size_t k)
{
	struct ap_buf name = { 0 }, expr = { 0 };
	const char *base = strrchr(j->o->scripts[k], '/');
	/* A file name need not be UTF-8: as JSON holds it, and visible. */
	ap_buf_adds(&name, "script:");
	ap_text_line(&name, base ? base + 1 : j->o->scripts[k]);
	ap_buf_addf(&expr, "resolve(\"%s\")", j->target);
	json_t *bind = json_pack("[[s,s]]", "TARGET", ap_buf_str(&expr));
	json_t *says = json_pack("{s:s, s:s}", "en", "the user's focused assertions",
				 "zh", "用户提供的专项断言");
	int r = job_probe(j, w, ap_buf_str(&name), "script", ap_buf_str(&j->scripts[k]),
			     bind, says);
	json_decref(bind);
	json_decref(says);
	ap_buf_free(&name);
	ap_buf_free(&expr);
	return r;
}

/* The official upstream tests of the target, when a test tree exists for
 * this environment's torch: found, and the first test file's import started
 * (see ap_official_start), before the probes run, so that the worker imports
 * it meanwhile; job_official_end runs them. */
struct job_official {
	struct ap_buf root, tree, why;
	json_t *pkg;
	struct ap_official_opts o;
	struct ap_official_plan plan;
	int planned;
};

static int job_official_start(struct ap_check_job *j, struct ap_worker *w, const json_t *res,
			      struct job_official *jo)
{
	int r = ap_official_package(w, &jo->pkg);
	const char *ver = json_string_value(json_object_get(jo->pkg, "version"));
	if (!r && ap_official_root(j->env, j->o->torch_src, ver, &jo->root, &jo->tree, &jo->why)) {
		struct ap_official_opts oo = { ap_buf_str(&jo->root), ap_buf_str(&jo->tree), &j->warn,
					       ver ? ver : "?", j->o->claimed, j->env->device,
					       j->o->timeout_s, 1 };
		jo->o = oo;
		r = ap_official_start(w, res, &jo->o, &jo->plan);
		jo->planned = 1;
	}
	return r;
}

/* Runs the official tests that job_official_start found; their log goes to
 * official.log. */
static int job_official_end(struct ap_check_job *j, struct ap_worker *w, struct job_official *jo)
{
	json_t *checks = json_object_get(j->b, "checks"), *found = NULL;
	struct ap_buf log = { 0 }, path = { 0 };
	const char *ver = json_string_value(json_object_get(jo->pkg, "version"));
	if (!jo->planned) {
		job_add(j, ap_check_new("official", "official", AP_NOTRUN, ap_buf_str(&jo->why)));
		return 0;
	}
	ap_statusline_set(j->status, j->idx, "official tests");
	size_t before = json_array_size(checks);
	int r = ap_official_finish(w, &jo->o, &jo->plan, checks, &found, &log);
	for (size_t k = before; k < json_array_size(checks); k++)
		job_journal(j, "check", json_array_get(checks, k));
	ap_bundle_set_official(j->b, ap_buf_str(&jo->root), ver, AP_OFFICIAL_ISOLATION, found);
	ap_buf_addf(&path, "%s/official.log", ap_buf_str(&j->dir));
	int w2 = r || j->io_err ? 0 : ap_write_atomic(ap_buf_str(&path), log.data ? log.data : "",
						      log.len);
	if (w2 && !j->io_err) {
		j->io_err = w2;
		ap_buf_addf(&j->io_detail, "cannot write %s: %s", ap_buf_str(&path), strerror(-w2));
	}
	if (r)
		job_fail(j, r, &w->detail);
	ap_buf_free(&log);
	ap_buf_free(&path);
	return r;
}

/* Whether an OpInfo entry stands for the target here (asked only when no
 * family covers it: a spec overrides the automatic choice). */
static int job_opinfo(struct ap_check_job *j, struct ap_worker *w)
{
	json_t *req = ap_numeric_opinfo_request(j->target, j->env->device);
	ap_statusline_set(j->status, j->idx, "looking for %s in OpInfo", j->target);
	int r = req ? ap_worker_call(w, req, &j->opinfo) : -ENOMEM;
	json_decref(req);
	if (r)
		job_fail(j, r, &w->detail);
	return r;
}

static void job_official_free(struct job_official *jo)
{
	if (jo->planned)
		ap_official_plan_free(&jo->plan);
	json_decref(jo->pkg);
	ap_buf_free(&jo->root);
	ap_buf_free(&jo->tree);
	ap_buf_free(&jo->why);
}

/* resolve, then fingerprint: resolving first imports torch alone, so a
 * plugin's changes to the target can be seen. The first official test file
 * starts importing in between, so that it is imported while the fingerprint
 * is taken and the probes run. */
static int job_measure(struct ap_check_job *j, struct ap_worker *w)
{
	json_t *req = json_pack("{s:s, s:s, s:o}", "op", "resolve", "target", j->target,
				"plugins", ap_plugin_modules(j->env));
	json_t *res = NULL, *fp = NULL, *fpreq = ap_fingerprint_request(j->env);
	struct job_official jo = { 0 };
	ap_statusline_set(j->status, j->idx, "importing torch, resolving %s", j->target);
	int r = ap_worker_call(w, req, &res);
	json_decref(req);
	int found = !r && ap_resolved(res), official = found && !j->o->no_official;
	if (!r) {
		json_object_set(j->b, "resolution", res);
		job_journal(j, "resolution", res);
		r = official ? job_official_start(j, w, res, &jo) : 0;
	}
	r = r ? r : ap_worker_call(w, fpreq, &fp);
	json_decref(fpreq);
	if (!r) {
		json_object_set(j->b, "fingerprint", fp);
		job_journal(j, "fingerprint", fp);
	}
	json_decref(fp);
	if (r)
		job_fail(j, r, &w->detail);
	else if (!found)
		job_add(j, ap_check_new("resolve", "resolution", AP_NOTRUN, "absent-in-this-version"));
	else
		r = job_family(j, w, res);
	if (!r && found && !ap_bundle_family(j->b))
		r = job_opinfo(j, w);
	for (size_t k = 0; !r && found && k < j->o->nscripts; k++)
		r = job_script(j, w, k);
	if (!r && official)
		r = job_official_end(j, w, &jo);
	job_official_free(&jo);
	json_decref(res);
	return r;
}

static const char *fp_str(const json_t *b, const char *sect, const char *key);

/* Ends an environment's run: its worker, then its journal. */
static void job_end(struct ap_check_job *j)
{
	ap_worker_free(&j->w);
	j->live = 0;
	if (j->journal)
		ap_journal_close(j->journal);
	j->journal = NULL;
}

/* --- the numeric checks: samples made in the reference, run everywhere --- */

/* Records numeric check c (a new reference, taken) as measured. */
static void job_numeric_add(struct ap_check_job *j, json_t *c)
{
	if (!c)
		return;
	ap_bundle_add_check(j->b, c);
	job_journal(j, "check", c);
	json_decref(c);
}

/* Each sample's frame as it arrives: its checks, journaled at once. */
static void numeric_frame(void *ctx, json_t *frame)
{
	struct ap_check_job *j = ctx;
	long k = ap_numeric_frame_index(frame, j->samples);
	if (k < 0 || !json_is_null(json_array_get(j->frames, (size_t)k)))
		return; /* not one of ours, or twice: the first one counts */
	json_array_set(j->frames, (size_t)k, frame);
	json_t *checks = json_array(), *c;
	size_t i;
	ap_numeric_device_checks(json_array_get(j->samples, (size_t)k), frame, j->env->device,
				 AP_NUMERIC_SEED, checks);
	json_array_foreach(checks, i, c)
		job_numeric_add(j, json_incref(c));
	json_decref(checks);
	ap_statusline_set(j->status, j->idx, "numeric: %ld of %zu samples", k + 1,
		      json_array_size(j->samples));
}

static void numeric_job_run(void *item)
{
	struct ap_check_job *j = item;
	json_t *reply = NULL;
	if (!j->live || !j->samples || !ap_bundle_resolved(j->b))
		return;
	j->frames = json_array();
	for (size_t k = 0; k < json_array_size(j->samples); k++)
		json_array_append_new(j->frames, json_null());
	json_t *req = ap_numeric_run_request(j->target, j->samples, j->env->device,
					     j->o->timeout_s, j->o->answer_s);
	ap_statusline_set(j->status, j->idx, "numeric: running %zu samples",
		      json_array_size(j->samples));
	/* The first frame comes once the devices have started and a sample ran. */
	int saved = j->w.timeout_ms;
	j->w.timeout_ms = (j->o->answer_s + j->o->timeout_s + AP_WATCHDOG_MARGIN_S) * 1000;
	int r = req ? ap_worker_call_stream(&j->w, req, &reply, numeric_frame, j) : -ENOMEM;
	j->w.timeout_ms = saved;
	json_decref(req);
	json_decref(reply);
	/* A sample whose frame never came (unreadable, or the worker failed)
	 * is an ERROR of its own; the others keep their results. */
	for (size_t k = 0; k < json_array_size(j->samples); k++) {
		if (!json_is_null(json_array_get(j->frames, k)))
			continue;
		json_t *lost = json_pack("{s:i, s:{s:s, s:s}}", "i", (int)k, "lost", "status",
					 ap_status_name(AP_ERROR),
					 "reason", r ? "the worker failed before its result" :
					 "unreadable result frame");
		json_t *checks = json_array(), *c;
		size_t i;
		ap_numeric_device_checks(json_array_get(j->samples, k), lost, j->env->device,
					 AP_NUMERIC_SEED, checks);
		json_array_foreach(checks, i, c)
			job_numeric_add(j, json_incref(c));
		json_decref(checks);
		json_decref(lost);
	}
	if (r)
		job_fail(j, r, &j->w.detail);
	ap_statusline_set(j->status, j->idx, r ? "failed" : "done");
}

/* Where nothing stands for the target in OpInfo, says so in each
 * environment that asked. */
static void numeric_none(struct ap_check_job *jobs, size_t n, const char *why)
{
	for (size_t i = 0; i < n; i++)
		if (jobs[i].opinfo && !jobs[i].err)
			job_add(&jobs[i], ap_check_new("numeric", "plan", AP_NOTRUN, why));
}

/* The reference makes the samples (they are the same bytes everywhere);
 * NULL when there are none to run. */
static json_t *make_samples(struct ap_check_job *jobs, size_t n, const struct ap_check_opts *o)
{
	json_t *b[AP_MAX_ENVS] = { 0 }, *reply = NULL;
	struct ap_buf why = { 0 };
	for (size_t i = 0; i < n; i++)
		b[i] = jobs[i].b;
	int ref = ap_bundle_pick_reference(b, n, o->reference);
	struct ap_check_job *rj = ref >= 0 ? &jobs[ref] : NULL;
	if (!rj || !rj->live || !ap_numeric_covered(rj->opinfo)) {
		ap_buf_addf(&why, "no-opinfo: no OpInfo entry stands for %s%s%s", jobs->target,
			    rj ? " in the reference " : "", rj ? rj->env->name : "");
		numeric_none(jobs, n, ap_buf_str(&why));
		ap_buf_free(&why);
		return NULL;
	}
	json_t *req = ap_numeric_samples_request(rj->target, o->samples, AP_NUMERIC_SEED);
	ap_statusline_set(rj->status, rj->idx, "numeric: making the samples");
	int r = req ? ap_worker_call(&rj->w, req, &reply) : -ENOMEM;
	json_decref(req);
	json_t *samples = r ? NULL : ap_numeric_prepare(reply, &why);
	if (r == -AP_EPROTO && ap_worker_alive(&rj->w)) {
		/* The framing held: the samples are lost, not the environment. */
		ap_buf_addf(&why, "unreadable samples: %s", ap_buf_str(&rj->w.detail));
		ap_buf_reset(&rj->w.detail);
		r = 0;
	}
	if (r)
		job_fail(rj, r, &rj->w.detail);
	else if (!samples)
		job_numeric_add(rj, ap_check_new("numeric samples", "numeric", AP_ERROR,
						 ap_buf_str(&why)));
	for (size_t i = 0; samples && i < n; i++)
		ap_bundle_set_operators(jobs[i].b, rj->env->name, AP_NUMERIC_SEED, o->samples,
					json_array_size(samples), json_object_get(reply, "skipped"),
					jobs[i].opinfo);
	json_decref(reply);
	ap_buf_free(&why);
	return samples;
}

/* Each environment's CPU results against the reference's, sample by sample,
 * once every environment has run them. */
static void across(struct ap_check_job *jobs, size_t n, const json_t *samples,
		   const char *reference)
{
	json_t *b[AP_MAX_ENVS] = { 0 };
	for (size_t i = 0; i < n; i++)
		b[i] = jobs[i].b;
	int ref = ap_bundle_pick_reference(b, n, reference);
	if (ref < 0 || !jobs[ref].frames)
		return;
	const char *rv = fp_str(jobs[ref].b, "torch", "version");
	for (size_t i = 0; i < n; i++) {
		if ((int)i == ref || !jobs[i].frames || jobs[i].err)
			continue;
		int same = !strcmp(fp_str(jobs[i].b, "torch", "version"), rv);
		for (size_t k = 0; k < json_array_size(samples); k++) {
			const json_t *f = json_array_get(jobs[i].frames, k);
			if (json_is_null(f))
				continue;
			job_numeric_add(&jobs[i], ap_numeric_cross_check(
				json_array_get(samples, k), f, json_array_get(jobs[ref].frames, k),
				jobs[ref].env->name, same, AP_NUMERIC_SEED));
		}
	}
}

/* The last thread to arrive at the first meeting. */
static void numeric_plan(struct ap_numeric_sync *y)
{
	y->samples = make_samples(y->jobs, y->n, y->jobs->o);
	if (!json_array_size(y->samples)) {
		json_decref(y->samples);
		y->samples = NULL;
	}
}

/* The last thread to arrive at the second meeting. */
static void numeric_across(struct ap_numeric_sync *y)
{
	if (y->samples)
		across(y->jobs, y->n, y->samples, y->jobs->o->reference);
}

/* Meeting k of j's thread with the others: the last to arrive runs last(),
 * the others wait for it, at most as long as an answer may take (a thread
 * the pool could not start runs alone, and must not wait forever). */
static void meet(struct ap_check_job *j, int k, void (*last)(struct ap_numeric_sync *))
{
	struct ap_numeric_sync *y = j->sync;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += j->o->answer_s + j->o->timeout_s;
	pthread_mutex_lock(&y->mu);
	if (++y->arrived[k] == y->n) {
		last(y);
		y->done[k] = 1;
		pthread_cond_broadcast(&y->cv);
	}
	while (!y->done[k] && pthread_cond_timedwait(&y->cv, &y->mu, &until) == 0)
		;
	pthread_mutex_unlock(&y->mu);
}

static void check_job_run(void *item)
{
	struct ap_check_job *j = item;
	struct ap_worker *w = &j->w;
	struct ap_buf path = { 0 };
	int r = ap_rm_tree(ap_buf_str(&j->dir));
	r = r ? r : ap_mkdirs(ap_buf_str(&j->dir));
	ap_buf_addf(&path, "%s/journal.jsonl", ap_buf_str(&j->dir));
	if (r || !(j->journal = ap_journal_open(ap_buf_str(&path)))) {
		j->io_err = r ? r : -errno;
		ap_buf_addf(&j->io_detail, "cannot create %s: %s", ap_buf_str(&j->dir),
			    strerror(-j->io_err));
	}
	ap_buf_free(&path);
	job_journal(j, "start", json_object_get(j->b, "env"));
	ap_statusline_set(j->status, j->idx, "starting the worker");
	r = ap_official_env(j->env, j->o->torch_src, &j->run_env);
	r = r ? r : ap_worker_start(w, &j->run_env, j->o->answer_s * 1000);
	if (r)
		job_fail(j, r, &w->detail);
	else {
		w->timeout_ms = (j->o->timeout_s + AP_WATCHDOG_MARGIN_S) * 1000;
		if (w->timeout_ms < j->o->answer_s * 1000)
			w->timeout_ms = j->o->answer_s * 1000;
		j->live = !job_measure(j, w);
		ap_statusline_set(j->status, j->idx, j->live ? "done" : "failed");
	}
	meet(j, 0, numeric_plan);
	j->samples = j->sync->samples;
	numeric_job_run(j);
	meet(j, 1, numeric_across);
	job_end(j);
	if (j->live || !j->err)
		ap_statusline_set(j->status, j->idx, j->err ? "failed" : "done");
}

/* Judges the environments together, once every job has ended. */
static void judge(struct ap_check_job *jobs, size_t n, const char *reference)
{
	json_t *b[AP_MAX_ENVS] = { 0 };
	for (size_t i = 0; i < n; i++)
		b[i] = jobs[i].b;
	ap_verdict_judge(b, n, reference);
}

static void write_bundles(struct ap_check_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].io_err)
			continue;
		int r = ap_bundle_write(ap_buf_str(&jobs[i].dir), jobs[i].b, &jobs[i].io_detail);
		if (r)
			jobs[i].io_err = r;
	}
}

static const char *fp_str(const json_t *b, const char *sect, const char *key)
{
	return ap_json_text(json_object_get(json_object_get(b, "fingerprint"), sect), key);
}

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

/* What a user must see beside the table: why an environment is not
 * consistent, the nearest names of an absent target, a claimed node id that
 * does not exist. */
/* One note under the table: "  ENV: TEXT", the text escaped (it is data). */
static void print_note(const char *env, const char *text)
{
	printf("  %s: ", env);
	ap_text_fputs(text ? text : "", AP_TEXT_LINE, stdout);
	putchar('\n');
}

/* One line per known backend limit that excused samples of j, with their
 * number: the verdict stands on the others, and says so. */
static void print_limits(const struct ap_check_job *j)
{
	json_t *rows = ap_limits_applied(json_object_get(j->b, "checks")), *l;
	size_t i;
	json_array_foreach(rows, i, l) {
		struct ap_buf line = { 0 };
		long long n = (long long)json_integer_value(json_object_get(l, "samples"));
		ap_buf_addf(&line, "%lld sample%s not run on %s, known limit %s (%s): %s", n,
			    n == 1 ? "" : "s", ap_json_text(l, "backend"), ap_json_text(l, "name"),
			    ap_json_text(l, "what"), ap_json_text(l, "reason"));
		print_note(j->env->name, ap_buf_str(&line));
		ap_buf_free(&line);
	}
	json_decref(rows);
}

static void print_notes(const struct ap_check_job *j)
{
	const json_t *reasons = json_object_get(j->b, "verdict_reasons");
	const json_t *res = json_object_get(j->b, "resolution");
	enum ap_verdict v = ap_bundle_verdict(j->b);
	struct ap_buf line = { 0 };
	size_t i;
	json_t *x;
	for (i = 0; v != AP_VERDICT_UNKNOWN && v != AP_CONSISTENT && i < json_array_size(reasons) && i < 5; i++)
		print_note(j->env->name, json_string_value(json_array_get(reasons, i)));
	print_limits(j);
	if (res && !ap_bundle_resolved(j->b) && json_array_size(json_object_get(res, "nearest"))) {
		ap_buf_adds(&line, "did you mean");
		json_array_foreach(json_object_get(res, "nearest"), i, x)
			ap_buf_addf(&line, "%s %s", i ? "," : "", json_string_value(x) ? json_string_value(x) : "-");
		ap_buf_adds(&line, "?");
		print_note(j->env->name, ap_buf_str(&line));
	}
	json_array_foreach(json_object_get(j->b, "checks"), i, x) {
		const char *why = json_string_value(json_object_get(x, "reason"));
		if (strcmp(ap_json_text(x, "kind"), "claim") || ap_check_status(x) == AP_PASS)
			continue;
		ap_buf_reset(&line);
		ap_buf_addf(&line, "claimed node id %s: %s", ap_json_text(x, "node"),
			    why ? why : ap_json_text(x, "status"));
		print_note(j->env->name, ap_buf_str(&line));
	}
	ap_buf_free(&line);
}

static void print_summary(const struct ap_check_job *jobs, size_t n, const char *out)
{
	struct ap_buf unwritten = { 0 };
	int w = 10; /* the ENV column: as wide as the longest name (trixie-openreg) */
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(jobs[i].env->name) > w)
			w = (int)strlen(jobs[i].env->name);
	printf("\n%-*s %-8s %-16s %-16s %-14s %-7s %s\n", w, "ENV", "PYTHON", "TORCH", "PLUGIN",
	       "DEVICES", "PROBES", "VERDICT");
	for (size_t i = 0; i < n; i++) {
		const json_t *b = jobs[i].b;
		struct ap_buf dev = { 0 }, plug = { 0 }, probes = { 0 }, row = { 0 };
		int passed, total;
		summary_devices(b, &dev);
		summary_plugins(b, &plug);
		ap_bundle_probe_counts(b, &passed, &total);
		ap_buf_addf(&probes, "%d/%d", passed, total);
		/* A verdict without its evidence is not a result. */
		ap_buf_addf(&row, "%-*s %-8s %-16s %-16s %-14s %-7s %s", w, jobs[i].env->name,
			    fp_str(b, "python", "version"), fp_str(b, "torch", "version"),
			    ap_buf_str(&plug), ap_buf_str(&dev), ap_buf_str(&probes),
			    jobs[i].io_err ? "no-evidence" :
			    json_string_value(json_object_get(b, "verdict")));
		ap_text_fputs(ap_buf_str(&row), AP_TEXT_LINE, stdout); /* versions, names: data */
		putchar('\n');
		if (jobs[i].io_err)
			ap_buf_addf(&unwritten, "%s%s", unwritten.len ? ", " : "", jobs[i].env->name);
		ap_buf_free(&dev);
		ap_buf_free(&plug);
		ap_buf_free(&probes);
		ap_buf_free(&row);
	}
	for (size_t i = 0; i < n; i++)
		if (!jobs[i].io_err)
			print_notes(&jobs[i]);
	if (unwritten.len) {
		printf("\nno evidence could be written for %s (see below)\n", ap_buf_str(&unwritten));
	} else {
		fputs("\nevidence: ", stdout);
		ap_text_fputs(out, AP_TEXT_LINE, stdout);
		puts("/<env>/ (bundle.json, run.log, journal.jsonl, MANIFEST.sha256)");
	}
	ap_buf_free(&unwritten);
}

/* Environment failures first (their own codes), then I/O, then verdicts;
 * nothing verified anywhere is 13. */
static int check_exit(const struct ap_check_job *jobs, size_t n, int require_present,
			 const char *target)
{
	int rc = AP_EXIT_OK, verified = 0;
	for (size_t i = 0; i < n; i++) {
		struct ap_buf what = { 0 };
		ap_buf_addf(&what, "env %s", jobs[i].env->name);
		if (jobs[i].err) {
			const char *msg = json_string_value(json_object_get(
				json_object_get(jobs[i].b, "error"), "message"));
			struct ap_buf d = { 0 };
			ap_buf_adds(&d, msg ? msg : "");
			int code = ap_fail(jobs[i].err, ap_buf_str(&what), &d);
			rc = rc == AP_EXIT_OK || rc == AP_EXIT_FAILED ? code : rc;
			ap_buf_free(&d);
		}
		if (jobs[i].io_err) {
			int code = ap_fail(jobs[i].io_err, ap_buf_str(&what), &jobs[i].io_detail);
			(void)code;
			rc = rc == AP_EXIT_OK || rc == AP_EXIT_FAILED ? AP_EXIT_IO : rc;
		}
		ap_buf_free(&what);
		enum ap_verdict v = ap_bundle_verdict(jobs[i].b);
		int absent = !ap_bundle_resolved(jobs[i].b);
		if (rc == AP_EXIT_OK && v != AP_VERDICT_UNKNOWN &&
		    (v == AP_INCONSISTENT || (require_present && absent && !jobs[i].err)))
			rc = AP_EXIT_FAILED;
		verified |= v != AP_VERDICT_UNKNOWN && v != AP_UNVERIFIED;
	}
	/* 0 means verified and consistent: where nothing could be checked (a
	 * misspelled target, a target no family covers), say so. */
	if (rc == AP_EXIT_OK && !verified) {
		struct ap_buf d = { 0 };
		ap_buf_addf(&d, "%s could be checked in no environment (see the reasons above)",
			    target);
		rc = ap_fail(-AP_EUNVERIFIED, "check", &d);
		ap_buf_free(&d);
	}
	return rc;
}

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

/* --env NAME, once per environment. */
static int check_add_env(void *opts, const struct ap_opt *opt, const char *arg,
			 struct ap_buf *err)
{
	struct ap_check_opts *o = opts;
	(void)opt;
	if (o->nnames == AP_MAX_ENVS) {
		ap_buf_addf(err, "check: at most %d environments", AP_MAX_ENVS);
		return -EINVAL;
	}
	o->names[o->nnames++] = arg;
	return 0;
}

/* --script FILE, once per script. */
static int check_add_script(void *opts, const struct ap_opt *opt, const char *arg,
			    struct ap_buf *err)
{
	struct ap_check_opts *o = opts;
	(void)opt;
	if (o->nscripts == AP_MAX_SCRIPTS) {
		ap_buf_addf(err, "check: at most %d scripts", AP_MAX_SCRIPTS);
		return -EINVAL;
	}
	o->scripts[o->nscripts++] = arg;
	return 0;
}

static int check_samples(void *opts, const struct ap_opt *opt, const char *arg,
			 struct ap_buf *err)
{
	(void)opt;
	if (!samples_count(arg, &((struct ap_check_opts *)opts)->samples))
		return 0;
	ap_buf_addf(err, "check: --samples wants a number from 1 to %d", AP_NUMERIC_SAMPLES_MAX);
	return -EINVAL;
}

#define AT(field) offsetof(struct ap_check_opts, field)
static const struct ap_opt check_opts[] = {
	AP_CLI_OPT_ENVS(struct ap_check_opts),
	{ "env", "NAME", "an environment to check in (default: every one of the file but local)",
	  0, check_add_env, AP_OPT_REPEAT },
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
	  0, check_samples, 0 },
	{ "tolerances", "FILE", "the numeric tolerance overrides (default: the built-in ones)",
	  AT(tolerances), NULL, 0 },
	{ "limits", "FILE", "the known backend limits (default: the built-in ones)", AT(limits),
	  NULL, 0 },
	AP_CLI_OPT_ROOT(struct ap_check_opts),
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

/* Loads the environments and specs, and makes a job per environment. */
static int check_setup(struct ap_check_opts *o, const char *target, struct ap_envs *envs,
			  struct ap_specs *specs, struct ap_check_job **jobs)
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
	*jobs = r ? NULL : calloc(o->nnames ? o->nnames : 1, sizeof(**jobs));
	for (size_t i = 0; *jobs && i < o->nnames; i++) {
		const struct ap_env *env = ap_cli_find_env(envs, o->names[i], "check");
		if (!env) {
			r = AP_EXIT_UNKNOWN_ENV;
			break;
		}
		struct ap_check_job *j = &(*jobs)[i];
		j->env = env;
		j->o = o;
		j->specs = specs;
		j->target = target;
		j->idx = i;
		j->b = ap_bundle_new(env, target, i);
		ap_buf_addf(&j->dir, "%s/%s", o->out, env->name);
	}
	ap_buf_free(&err);
	if (!r && !*jobs)
		r = ap_fail(-ENOMEM, "check", NULL);
	return r;
}

/* Whether DIR/<env> may be replaced: absent, empty (then removed here, to be
 * made again), or a previous run's evidence (it has a journal). check
 * replaces it whole, so anything else there (--out / and an environment
 * called usr) is left alone. */
static int replaceable(const char *dir)
{
	struct ap_buf journal = { 0 };
	struct stat st;
	if (lstat(dir, &st))
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return 0;
	ap_buf_addf(&journal, "%s/journal.jsonl", dir);
	int ok = !lstat(ap_buf_str(&journal), &st) || !rmdir(dir);
	ap_buf_free(&journal);
	return ok;
}

/* Refuses, before anything runs, an --out where the evidence could not be
 * written. 0, or the exit code after printing why. */
static int check_out(const char *out, const struct ap_check_job *jobs, size_t n)
{
	struct ap_buf d = { 0 };
	int r = ap_dir_writable(out);
	if (r)
		ap_buf_addf(&d, "%s", out);
	for (size_t i = 0; !r && i < n; i++)
		if (!replaceable(ap_buf_str(&jobs[i].dir))) {
			r = -EEXIST;
			ap_buf_addf(&d, "%s is not the evidence of an earlier check, and check "
				    "would replace it (choose another --out)", ap_buf_str(&jobs[i].dir));
		}
	if (r)
		r = ap_fail(r, "check --out", &d);
	ap_buf_free(&d);
	return r;
}

static void check_free(struct ap_check_job *jobs, size_t n)
{
	for (size_t i = 0; jobs && i < n; i++) {
		json_decref(jobs[i].b);
		json_decref(jobs[i].opinfo);
		json_decref(jobs[i].frames);
		ap_env_extra_free(&jobs[i].run_env);
		ap_buf_free(&jobs[i].dir);
		ap_buf_free(&jobs[i].io_detail);
		ap_buf_free(&jobs[i].warn);
	}
	free(jobs);
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

/* The signer's key goes into each bundle before its manifest is written,
 * so that the signature covers it. */
static void name_signer(struct ap_check_job *jobs, size_t n, const struct ap_signer *s)
{
	for (size_t i = 0; s && i < n; i++)
		json_object_set_new(jobs[i].b, "signer", json_pack("{s:s, s:s}", "algorithm",
				    "ed25519", "key", ap_signer_fpr(s)));
}

static void sign_bundles(struct ap_check_job *jobs, size_t n, const struct ap_signer *s)
{
	for (size_t i = 0; s && i < n; i++) {
		int r = jobs[i].io_err ? 0 : ap_sign_manifest(s, ap_buf_str(&jobs[i].dir),
							      &jobs[i].io_detail);
		if (r)
			jobs[i].io_err = r;
	}
}

/* The backend limits: the file given, or the built-in one. */
static int load_limits(const char *path, struct ap_limits *l)
{
	struct ap_buf err = { 0 };
	int r = ap_limits_load(l, path, &err);
	if (r)
		r = ap_fail(r, "limits", &err);
	ap_buf_free(&err);
	return r;
}

/* The tolerance overrides: the file given, or the built-in one. */
static int load_tolerances(const char *path, struct ap_tolerances *t)
{
	struct ap_buf err = { 0 };
	int r = ap_tolerances_load(t, path, &err);
	if (r)
		r = ap_fail(r, "tolerances", &err);
	ap_buf_free(&err);
	return r;
}

int ap_cmd_check(int argc, char **argv)
{
	struct ap_check_opts o = { .timeout_s = 30, .answer_s = 120, .samples = AP_NUMERIC_SAMPLES };
	struct ap_envs envs = { 0 };
	struct ap_specs specs = { 0 };
	struct ap_tolerances tols = { 0 };
	struct ap_limits limits = { 0 };
	struct ap_check_job *jobs = NULL;
	struct ap_buf scripts[AP_MAX_SCRIPTS] = { { 0 } }, outdir = { 0 };
	struct ap_signer *signer = NULL;
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
	if ((rc = load_tolerances(o.tolerances, &tols)))
		goto out;
	ap_numeric_use_tolerances(&tols, target);
	if ((rc = load_limits(o.limits, &limits)))
		goto out;
	ap_numeric_use_limits(&limits);
	if ((rc = check_setup(&o, target, &envs, &specs, &jobs)) ||
	    (rc = check_out(o.out, jobs, o.nnames)))
		goto out;
	const char *names[AP_MAX_ENVS];
	for (size_t i = 0; i < o.nnames; i++) {
		names[i] = jobs[i].env->name;
		jobs[i].scripts = scripts;
	}
	struct ap_statusline *st = ap_statusline_new(names, o.nnames, stderr);
	for (size_t i = 0; i < o.nnames; i++)
		jobs[i].status = st;
	struct ap_numeric_sync sync = { .mu = PTHREAD_MUTEX_INITIALIZER,
					.cv = PTHREAD_COND_INITIALIZER, .jobs = jobs, .n = o.nnames };
	for (size_t i = 0; i < o.nnames; i++)
		jobs[i].sync = &sync;
	ap_pool_run(jobs, o.nnames, sizeof(*jobs), check_job_run);
	json_decref(sync.samples);
	ap_statusline_free(st);
	for (size_t i = 0; i < o.nnames; i++)
		ap_print_warnings(&jobs[i].warn);
	judge(jobs, o.nnames, o.reference);
	name_signer(jobs, o.nnames, signer);
	write_bundles(jobs, o.nnames);
	sign_bundles(jobs, o.nnames, signer);
	print_summary(jobs, o.nnames, o.out);
	fflush(stdout);
	rc = check_exit(jobs, o.nnames, o.require_present, target);
out:
	ap_signer_free(signer);
	check_free(jobs, o.nnames);
	ap_specs_free(&specs);
	ap_numeric_use_tolerances(NULL, NULL);
	ap_numeric_use_limits(NULL);
	ap_tolerances_free(&tols);
	ap_limits_free(&limits);
	ap_envs_free(&envs);
	for (size_t k = 0; k < o.nscripts; k++)
		ap_buf_free(&scripts[k]);
	ap_buf_free(&outdir);
	return rc;
}
