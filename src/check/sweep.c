/* sweep.c - one environment's walk of the catalog, journaled and resumable,
 * and the matrix of several (see sweep.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "check/autocheck.h"
#include "check/surface.h"
#include "check/sweep.h"
#include "env/fingerprint.h"
#include "env/protocol.h"
#include "env/worker.h"
#include "evidence/journal.h"
#include "evidence/matrix.h"

/* One environment's run in progress. */
struct run {
	struct ap_sweep_env *e;
	struct ap_worker w;
	int started;             /* w holds a worker (alive or not) to free */
	struct ap_journal *j;
	json_t *done;            /* entry -> {status, reason}: entries finished */
	json_t *partial;         /* entry -> [apis journaled]: for an entry cut short */
	double t0;
	struct ap_autocheck ac;  /* depth probe and numeric: the checks, with this
				  * environment's devices */
	int deep;
	json_t *surface;         /* what counts as API surface (check/surface.h),
				  * sent with every walk */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static json_t *start_record(const struct ap_sweep_env *e)
{
	const struct ap_sweep_opts *o = e->o;
	char shard[32];
	snprintf(shard, sizeof(shard), "%u/%u", o->shard.index, o->shard.count);
	json_t *rec = json_pack("{s:s, s:{s:s, s:s, s:s, s:s?}}", "type", "sweep-start", "data",
				"env", e->env->name, "catalog", o->cat->digest, "depth", o->depth,
				"shard", o->shard.count ? shard : NULL);
	/* samples of another count would not be this run's lines either */
	if (rec && o->check && o->check->numeric)
		json_object_set_new(json_object_get(rec, "data"), "samples",
				    json_integer(o->check->max_samples));
	return rec;
}

static void env_fail(struct ap_sweep_env *e, int err, const char *fmt, const char *arg)
{
	if (e->err)
		return;
	e->err = err;
	ap_buf_addf(&e->detail, fmt, arg);
}

static void io_fail(struct ap_sweep_env *e, int err, const char *what)
{
	if (e->io_err)
		return;
	e->io_err = err;
	ap_buf_addf(&e->io_detail, "cannot write %s: %s", what, strerror(-err));
}

/* Takes back what an earlier run journaled. A journal of another catalog,
 * depth or shard is refused: its lines would not be this run's. */
static int resume_read(struct run *u, const json_t *start)
{
	struct ap_sweep_env *e = u->e;
	struct ap_buf err = { 0 };
	json_t *recs = NULL, *rec;
	int torn = 0;
	size_t i;
	if (access(e->journal, F_OK))
		return 0;
	int r = ap_journal_read(e->journal, &recs, &torn, &err);
	if (r) {
		env_fail(e, -AP_ECONFIG, "cannot resume: %s", ap_buf_str(&err));
		ap_buf_free(&err);
		return r;
	}
	ap_buf_free(&err);
	if (json_array_size(recs) && !json_equal(json_array_get(recs, 0), start)) {
		env_fail(e, -AP_ECONFIG, "cannot resume: %s was written by a sweep of another "
			 "catalog, depth or shard; run without --resume to start again", e->journal);
		json_decref(recs);
		return -AP_ECONFIG;
	}
	json_array_foreach(recs, i, rec) {
		const char *type = json_string_value(json_object_get(rec, "type"));
		json_t *d = json_object_get(rec, "data");
		const char *entry = json_string_value(json_object_get(d, "entry"));
		const char *mod = json_string_value(json_object_get(d, "module"));
		if (type && !strcmp(type, "api") && mod) {
			json_array_append(e->lines, d);
			if (!json_object_get(u->partial, mod))
				json_object_set_new(u->partial, mod, json_array());
			json_array_append(json_object_get(u->partial, mod), json_object_get(d, "api"));
			e->resumed++;
		} else if (type && !strcmp(type, "entry") && entry)
			json_object_set(u->done, entry, d);
	}
	json_decref(recs);
	return 1;
}

static int open_journal(struct run *u)
{
	struct ap_sweep_env *e = u->e;
	json_t *start = start_record(e);
	int had = 0;
	if (e->o->resume && (had = resume_read(u, start)) < 0) {
		json_decref(start);
		return had;
	}
	if (!had)
		unlink(e->journal);
	u->j = ap_journal_open(e->journal);
	int r = u->j ? 0 : -errno;
	if (!r && !had)
		r = ap_journal_append(u->j, start);
	if (r)
		io_fail(e, r, e->journal);
	json_decref(start);
	return r;
}

/* Starts the worker when none is running, and readies it for walking. */
static int ensure_worker(struct run *u)
{
	struct ap_sweep_env *e = u->e;
	const struct ap_sweep_opts *o = e->o;
	if (u->started && ap_worker_alive(&u->w))
		return 0;
	if (u->started) {
		ap_worker_free(&u->w);
		e->restarts++;
	}
	u->started = 1;
	const struct ap_worker_limits lim = { o->start_ms, o->start_ms };
	int r = ap_worker_open(&u->w, e->env, &lim);
	json_t *entries = json_array(), *res = NULL;
	for (size_t k = 0; !r && k < o->cat->n; k++)
		if (ap_shard_has(o->shard, k))
			json_array_append_new(entries, ap_proto_sweep_entry(o->cat->v[k].name,
				o->cat->v[k].walk, ap_catalog_exclude(o->cat, k)));
	json_t *req = ap_proto_sweep_begin(ap_plugin_modules(e->env), entries, u->surface);
	r = r ? r : ap_worker_call_within(&u->w, req, &res, o->start_ms);
	json_decref(req);
	if (r)
		env_fail(e, r, "%s", ap_buf_str(&u->w.detail));
	else if (!e->info)
		e->info = json_incref(res);
	json_decref(res);
	return r;
}

static const char *const api_fields[] = {
	"key", "owner", "kind", "file", "line", "pure_python", "signature", "patched",
	"plugin_added", "reason",
};

/* The matrix line of one API the worker measured. */
static json_t *api_line(const struct ap_sweep_env *e, const char *entry, const json_t *a)
{
	const char *api = json_string_value(json_object_get(a, "api"));
	const char *st = json_string_value(json_object_get(a, "status"));
	if (!api || !st || (strcmp(st, "present") && strcmp(st, "error")))
		return NULL;
	json_t *l = ap_matrix_line(e->env->name, entry, api, st);
	for (size_t i = 0; l && i < sizeof(api_fields) / sizeof(api_fields[0]); i++) {
		json_t *v = json_object_get(a, api_fields[i]);
		if (v)
			json_object_set(l, api_fields[i], v);
	}
	return l;
}

/* Runs the checks of API line l (the worker's a) at depth probe and
 * numeric; a worker that died or hung on it is started again for the next.
 * Whether they cost enough to be journaled at once: a probe or a sample
 * ran, or the worker failed (a lookup alone waits for the next write). */
static int check_api(struct run *u, json_t *l, const json_t *a)
{
	json_t *sum = NULL;
	if (!u->deep || strcmp(json_string_value(json_object_get(l, "status")), "present") ||
	    !ap_autocheck_applies(json_string_value(json_object_get(l, "kind"))) || ensure_worker(u))
		return 0;
	int r = ap_autocheck_run(&u->w, &u->ac, json_string_value(json_object_get(l, "api")),
				 json_string_value(json_object_get(a, "canonical")), &sum);
	json_object_set_new(l, "check", sum);
	return r || json_is_string(json_object_get(sum, "family")) ||
	       json_integer_value(json_object_get(sum, "samples")) > 0;
}

/* Journals recs (emptied after) with one write and one fsync. */
static void flush(struct run *u, json_t *recs)
{
	struct ap_sweep_env *e = u->e;
	int r = e->io_err ? 0 : ap_journal_append_all(u->j, recs);
	if (r)
		io_fail(e, r, e->journal);
	json_array_clear(recs);
}

/* Journals the answer for entry k: its APIs, then the entry record. An API
 * whose checks ran probes or samples is journaled (with the APIs before it)
 * as soon as they end, so that a kill loses little work. */
static void record_entry(struct run *u, size_t k, const char *status, const char *reason,
			 const json_t *apis)
{
	struct ap_sweep_env *e = u->e;
	const char *entry = e->o->cat->v[k].name;
	json_t *recs = json_array(), *a;
	size_t i, n = 0;
	json_array_foreach(apis, i, a) {
		json_t *l = api_line(e, entry, a);
		if (!l)
			continue;
		int costly = check_api(u, l, a);
		json_array_append(e->lines, l);
		json_array_append_new(recs, json_pack("{s:s, s:o}", "type", "api", "data", l));
		n++;
		if (costly)
			flush(u, recs);
	}
	json_t *d = json_pack("{s:s, s:s, s:s?, s:I}", "entry", entry, "status", status,
			      "reason", reason, "apis", (json_int_t)n);
	json_array_append_new(recs, json_pack("{s:s, s:O}", "type", "entry", "data", d));
	json_object_set_new(u->done, entry, d);
	e->measured += n;
	flush(u, recs);
	json_decref(recs);
}

/* A status the worker sent, as one of ours (the answer is freed before
 * the progress line is printed); anything unknown is an error. */
static const char *known_status(const char *s)
{
	static const char *const known[] = { "ok", "import-error", "error" };
	for (size_t i = 0; s && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(s, known[i]))
			return known[i];
	return "error";
}

/* Walks entry k; 0, or -AP_E* when the environment cannot go on. */
static int walk_entry(struct run *u, size_t k, struct ap_sweep_progress *p)
{
	struct ap_sweep_env *e = u->e;
	const struct ap_catalog_entry *c = &e->o->cat->v[k];
	json_t *skip = json_object_get(u->partial, c->name), *res = NULL;
	int r = ensure_worker(u);
	if (r)
		return r;
	json_t *req = ap_proto_sweep_walk(c->name, c->walk, ap_catalog_exclude(e->o->cat, k), skip,
				       e->o->depth, u->surface);
	ap_buf_reset(&u->w.detail);
	r = ap_worker_call_within(&u->w, req, &res, e->o->walk_ms);
	json_decref(req);
	if (!r) {
		struct ap_proto_walked walked;
		ap_proto_sweep_walked(res, &walked);
		p->status = known_status(walked.status);
		record_entry(u, k, p->status, walked.reason, walked.apis);
	} else {
		/* A worker that answered "exception" is still fine; one that died
		 * or went silent is that entry's crash or timeout. */
		p->status = r == -AP_ETIMEOUT ? "timeout" : ap_worker_alive(&u->w) ? "error" : "crash";
		record_entry(u, k, p->status, ap_buf_str(&u->w.detail), NULL);
	}
	json_decref(res);
	return e->io_err;
}

/* The line the walk of entry measured for the entry itself (api = module =
 * the entry: a class entry's class), or NULL. */
static json_t *walked_line(const json_t *lines, const char *entry)
{
	size_t i;
	json_t *l;
	json_array_foreach(lines, i, l)
		if (!strcmp(json_string_value(json_object_get(l, "api")), entry) &&
		    !strcmp(json_string_value(json_object_get(l, "module")), entry))
			return l;
	return NULL;
}

void ap_sweep_env_run(void *item)
{
	struct ap_sweep_env *e = item;
	const struct ap_sweep_opts *o = e->o;
	struct run u = { .e = e, .done = json_object(), .partial = json_object(), .t0 = now_s(),
			 .deep = o->check != NULL, .surface = ap_surface_rules() };
	struct ap_sweep_progress p = { 0 };
	if (o->check) {
		u.ac = *o->check;
		u.ac.devices = e->env->device;
	}
	e->lines = json_array();
	for (size_t k = 0; k < o->cat->n; k++)
		p.total += ap_shard_has(o->shard, k);
	int r = open_journal(&u);
	for (size_t k = 0; !r && k < o->cat->n; k++) {
		if (!ap_shard_has(o->shard, k))
			continue;
		double t = now_s();
		p.entry = o->cat->v[k].name;
		const json_t *d = json_object_get(u.done, p.entry);
		if (d)
			p.status = "journal";
		else
			r = walk_entry(&u, k, &p);
		p.done++;
		p.apis = (size_t)json_integer_value(json_object_get(json_object_get(u.done, p.entry),
								    "apis"));
		p.secs = now_s() - t;
		p.elapsed = now_s() - u.t0;
		if (!r && o->progress)
			o->progress(o->ctx, e->idx, &p);
	}
	/* Each entry's own line: whether its walk worked here. A class entry's
	 * walk measured the class itself as its first API: that line is the
	 * entry's own, so that no API has two lines. */
	for (size_t k = 0; !e->err && k < o->cat->n; k++) {
		const char *name = o->cat->v[k].name;
		const json_t *d = json_object_get(u.done, name);
		const char *st = json_string_value(json_object_get(d, "status"));
		if (!d)
			continue;
		json_t *l = walked_line(e->lines, name);
		if (!l) {
			l = ap_matrix_line(e->env->name, name, name, "present");
			json_object_set_new(l, "kind", json_string(o->cat->v[k].walk));
			json_array_append_new(e->lines, l);
		}
		if (strcmp(st, "ok")) {
			json_object_set_new(l, "status", json_string(st));
			json_object_set(l, "reason", json_object_get(d, "reason"));
		}
	}
	if (u.started)
		ap_worker_free(&u.w);
	if (u.j)
		ap_journal_close(u.j);
	json_decref(u.done);
	json_decref(u.partial);
	json_decref(u.surface);
}

void ap_sweep_env_free(struct ap_sweep_env *e)
{
	json_decref(e->lines);
	json_decref(e->info);
	ap_buf_free(&e->detail);
	ap_buf_free(&e->io_detail);
}

/* The line an environment without a line for API l gets: error when the
 * environment failed, the failure of l's entry there, else absent. */
static json_t *filler(const struct ap_sweep_env *e, const json_t *l, const json_t *failed)
{
	const char *mod = json_string_value(json_object_get(l, "module"));
	const json_t *f = json_object_get(failed, mod);
	const char *st = e->err ? "error" : f ? json_string_value(json_object_get(f, "status")) :
			 "absent";
	json_t *x = ap_matrix_line(e->env->name, mod, json_string_value(json_object_get(l, "api")), st);
	json_object_set(x, "key", json_object_get(l, "key"));
	json_object_set(x, "owner", json_object_get(l, "owner"));
	if (e->err)
		json_object_set_new(x, "reason", json_string(ap_buf_str(&e->detail)));
	else if (f)
		json_object_set(x, "reason", json_object_get(f, "reason"));
	return x;
}

/* Entry -> its failing entry line, for environment e. */
static json_t *failures(const struct ap_sweep_env *e)
{
	json_t *out = json_object(), *l;
	size_t i;
	json_array_foreach(e->lines, i, l) {
		const char *api = json_string_value(json_object_get(l, "api"));
		const char *mod = json_string_value(json_object_get(l, "module"));
		const char *st = json_string_value(json_object_get(l, "status"));
		if (api && mod && !strcmp(api, mod) && strcmp(st, "present"))
			json_object_set(out, mod, l);
	}
	return out;
}

json_t *ap_sweep_matrix(const struct ap_sweep_env *e, size_t n, const char *const *envs,
			const char *reference)
{
	json_t *all = json_array(), *seen = json_object(), *l;
	size_t i;
	for (size_t k = 0; all && k < n; k++)
		json_array_extend(all, e[k].lines);
	/* (module, api) -> environments that have a line */
	json_array_foreach(all, i, l) {
		struct ap_buf id = { 0 };
		ap_buf_addf(&id, "%s %s", json_string_value(json_object_get(l, "module")),
			    json_string_value(json_object_get(l, "api")));
		json_t *s = json_object_get(seen, ap_buf_str(&id));
		if (!s) {
			s = json_object();
			json_object_set_new(s, "", json_incref(l));
			json_object_set_new(seen, ap_buf_str(&id), s);
		}
		json_object_set_new(s, json_string_value(json_object_get(l, "env")), json_true());
		ap_buf_free(&id);
	}
	const char *id;
	json_t *s;
	for (size_t k = 0; k < n; k++) {
		json_t *failed = failures(&e[k]);
		json_object_foreach(seen, id, s)
			if (!json_object_get(s, e[k].env->name))
				json_array_append_new(all, filler(&e[k], json_object_get(s, ""), failed));
		json_decref(failed);
	}
	json_decref(seen);
	ap_matrix_sort(all, envs, n);
	ap_matrix_judge(all, reference);
	return all;
}
