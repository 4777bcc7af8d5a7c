/* sweep.c - one environment's walk of the catalog, journaled and resumable,
 * and the matrix of several (see sweep.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/crew.h"
#include "base/err.h"
#include "check/autocheck.h"
#include "check/surface.h"
#include "check/sweep.h"
#include "env/fingerprint.h"
#include "env/protocol.h"
#include "env/worker.h"
#include "evidence/journal.h"
#include "evidence/matrix.h"
#include "evidence/sweepfile.h"

/* A worker of the environment's: lane 0's walks the catalog and runs
 * checks, the others (depth probe and numeric) run checks only. */
struct lane {
	struct ap_worker w;
	int started;             /* w holds a worker (alive or not) to free */
};

/* An API of the entry being recorded, as its checks run in the lanes. */
struct pending {
	struct ap_proto_swept a;
	struct ap_matrix_line l;
	int costly;              /* its checks ran probes or samples (check_api) */
	int done;                /* its checks are over */
};

/* The APIs of the entry being recorded: the lanes take them in order, and
 * they are journaled in order as each one before them is done. */
struct entry_work {
	struct pending *v;
	size_t n;
	size_t next;             /* the next to be taken by a lane */
	size_t journaled;        /* those before it are in the journal */
	json_t *recs;            /* not yet written */
	const struct ap_sweep_progress *p;  /* the entry's, for each API's */
	double t0;               /* the entry's start */
};

/* One environment's run in progress. */
struct run {
	struct ap_sweep_env *e;
	struct lane *lanes;      /* o->lanes of them (fewer: no thread) */
	struct ap_crew *crew;    /* lane m's checks run in member m */
	pthread_mutex_t mu;      /* e's results and ew, while lanes run */
	struct entry_work *ew;
	struct ap_journal *j;
	struct ap_sweep_entry *done;    /* per catalog entry: its record once
					 * finished (entry NULL: not yet) */
	struct ap_matrix_strs *partial; /* per catalog entry: the APIs journaled,
					 * for an entry cut short */
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

/* What the journal of e is of (shard: room for "I/N"). */
static struct ap_sweep_start start_of(const struct ap_sweep_env *e, char shard[32])
{
	const struct ap_sweep_opts *o = e->o;
	snprintf(shard, 32, "%u/%u", o->shard.index, o->shard.count);
	return (struct ap_sweep_start){ .env = e->env->name, .catalog = o->cat->digest,
		.depth = o->depth, .shard = o->shard.count ? shard : NULL,
		.has_samples = o->check && o->check->numeric,
		.samples = o->check ? o->check->max_samples : 0 };
}

static int entry_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ap_catalog_entry *)elem)->name);
}

/* The position of entry name in the catalog (sorted by name), or -1. */
static long entry_index(const struct ap_catalog *cat, const char *name)
{
	const struct ap_catalog_entry *c = bsearch(name, cat->v, cat->n, sizeof(*cat->v), entry_cmp);
	return c ? (long)(c - cat->v) : -1;
}

/* Appends a copy of s to list. 0 or -ENOMEM. */
static int strs_push(struct ap_matrix_strs *list, const char *s)
{
	char **v = realloc(list->v, (list->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	list->v = v;
	list->set = 1;
	return (v[list->n] = strdup(s)) ? (list->n++, 0) : -ENOMEM;
}

static void strs_clear(struct ap_matrix_strs *list)
{
	for (size_t i = 0; i < list->n; i++)
		free(list->v[i]);
	free(list->v);
	*list = (struct ap_matrix_strs){ 0 };
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

/* Takes back one API line an earlier run journaled (taken: *l is zeroed),
 * noting it as walked in its entry. 0 or -ENOMEM. */
static int resume_line(struct run *u, struct ap_matrix_line *l)
{
	long k = entry_index(u->e->o->cat, l->module);
	int r = k < 0 ? 0 : strs_push(&u->partial[k], l->api);
	r = r ? r : ap_matrix_add(&u->e->lines, l);
	if (r)
		env_fail(u->e, r, "cannot resume: %s", "out of memory");
	return r;
}

/* Takes back an entry an earlier run finished (taken: *d is zeroed). */
static void resume_entry(struct run *u, struct ap_sweep_entry *d)
{
	long k = entry_index(u->e->o->cat, d->entry);
	if (k < 0)
		return;
	ap_sweep_entry_free(&u->done[k]);
	u->done[k] = *d;
	*d = (struct ap_sweep_entry){ 0 };
}

/* Takes back what an earlier run journaled. A journal of another catalog,
 * depth or shard is refused: its lines would not be this run's. */
static int resume_read(struct run *u, const struct ap_sweep_start *start)
{
	struct ap_sweep_env *e = u->e;
	struct ap_buf err = { 0 };
	struct ap_sweep_records recs;
	int same = 1;
	if (access(e->journal, F_OK))
		return 0;
	int r = ap_sweep_journal_read(e->journal, start, &recs, &same, &err);
	if (r) {
		env_fail(e, -AP_ECONFIG, "cannot resume: %s", r == -ENOMEM ? "out of memory" :
			 ap_buf_str(&err));
		ap_buf_free(&err);
		return r;
	}
	ap_buf_free(&err);
	if (!same) {
		env_fail(e, -AP_ECONFIG, "cannot resume: %s was written by a sweep of another "
			 "catalog, depth or shard; run without --resume to start again", e->journal);
		return -AP_ECONFIG;
	}
	for (size_t i = 0; i < recs.n; i++) {
		struct ap_sweep_record *x = &recs.v[i];
		if (x->type == AP_SWEEP_REC_API && !resume_line(u, &x->line))
			e->resumed++;
		else if (x->type == AP_SWEEP_REC_ENTRY)
			resume_entry(u, &x->entry);
	}
	ap_sweep_records_free(&recs);
	return e->err ? e->err : 1;
}

static int open_journal(struct run *u)
{
	struct ap_sweep_env *e = u->e;
	char shard[32];
	const struct ap_sweep_start want = start_of(e, shard);
	json_t *start = ap_sweep_start_json(&want);
	int had = 0;
	if (!start) {
		io_fail(e, -ENOMEM, e->journal);
		return -ENOMEM;
	}
	if (e->o->resume && (had = resume_read(u, &want)) < 0) {
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

/* Keeps what the worker's first sweep_begin reply says of the environment. */
static void began(struct ap_sweep_env *e, const json_t *res)
{
	struct ap_proto_begun b;
	size_t i;
	json_t *p;
	ap_proto_sweep_begun(res, &b);
	e->began = 1;
	e->torch = b.torch ? strdup(b.torch) : NULL;
	e->plugins.set = json_is_array(b.plugins);
	json_array_foreach(b.plugins, i, p)
		if (json_is_string(p) && strs_push(&e->plugins, json_string_value(p)))
			io_fail(e, -ENOMEM, "the matrix");
}

/* Starts lane ln's worker when none is running, and readies it for walking
 * (a check of a plugin's API needs the plugins loaded, as a walk does). */
static int ensure_worker(struct run *u, struct lane *ln)
{
	struct ap_sweep_env *e = u->e;
	const struct ap_sweep_opts *o = e->o;
	if (ln->started && ap_worker_alive(&ln->w))
		return 0;
	int restart = ln->started;
	if (restart)
		ap_worker_free(&ln->w);
	ln->started = 1;
	const struct ap_worker_limits lim = { o->start_ms, o->start_ms };
	int r = ap_worker_open(&ln->w, e->env, &lim);
	json_t *entries = json_array(), *res = NULL;
	for (size_t k = 0; !r && k < o->cat->n; k++)
		if (ap_shard_has(o->shard, k))
			json_array_append_new(entries, ap_proto_sweep_entry(o->cat->v[k].name,
				o->cat->v[k].walk, ap_catalog_exclude(o->cat, k)));
	json_t *req = ap_proto_sweep_begin(ap_plugin_modules(e->env), entries, u->surface);
	r = r ? r : ap_worker_call_within(&ln->w, req, &res, o->start_ms);
	json_decref(req);
	pthread_mutex_lock(&u->mu);
	e->restarts += restart;
	if (r)
		env_fail(e, r, "%s", ap_buf_str(&ln->w.detail));
	else if (!e->began)
		began(e, res);
	pthread_mutex_unlock(&u->mu);
	json_decref(res);
	return r;
}

/* Makes *l the matrix line of one API the worker measured (a): 0; 1 when
 * it is none (neither present nor an error); -ENOMEM. */
static int api_line(const struct ap_sweep_env *e, const char *entry,
		    const struct ap_proto_swept *a, struct ap_matrix_line *l)
{
	enum ap_line_status st = ap_line_status_parse(a->status);
	if (!a->api || (st != AP_LSTATUS_PRESENT && st != AP_LSTATUS_ERROR))
		return 1;
	int r = ap_matrix_line_init(l, e->env->name, entry, a->api, st);
	r = r ? r : ap_matrix_line_measured(l, a->fields);
	if (r)
		ap_matrix_line_free(l);
	return r;
}

/* Runs the checks of API line l (the worker's a) at depth probe and
 * numeric; a worker that died or hung on it is started again for the next.
 * Whether they cost enough to be journaled at once: a probe or a sample
 * ran, or the worker failed (a lookup alone waits for the next write). */
static int check_api(struct run *u, struct lane *ln, struct ap_matrix_line *l,
		     const struct ap_proto_swept *a)
{
	json_t *sum = NULL;
	if (!u->deep || l->status != AP_LSTATUS_PRESENT || !ap_autocheck_applies(l->kind) ||
	    ensure_worker(u, ln))
		return 0;
	int r = ap_autocheck_run(&ln->w, &u->ac, l->api, a->canonical, &sum);
	int err = ap_matrix_check_read(sum, &l->check);
	json_decref(sum);
	return r || err || l->check.family || l->check.counts[AP_MCOUNT_SAMPLES] > 0;
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

/* Journals, in order, the APIs of ew whose checks are over and all before
 * them done (u->mu held). One whose checks ran probes or samples is written
 * (with the APIs before it) at once, so that a kill loses little work. */
static void journal_done(struct run *u, struct entry_work *ew)
{
	struct ap_sweep_env *e = u->e;
	for (; ew->journaled < ew->n && ew->v[ew->journaled].done; ew->journaled++) {
		struct pending *p = &ew->v[ew->journaled];
		json_array_append_new(ew->recs, ap_sweep_api_json(&p->l));
		if (ap_matrix_add(&e->lines, &p->l))
			io_fail(e, -ENOMEM, "the matrix");
		if (p->costly)
			flush(u, ew->recs);
		if (u->deep && e->o->progress) {
			struct ap_sweep_progress q = *ew->p;
			q.api = e->lines.v[e->lines.n - 1].api;
			q.api_done = ew->journaled + 1;
			q.api_total = ew->n;
			q.secs = now_s() - ew->t0;
			q.elapsed = now_s() - u->t0;
			e->o->progress(e->o->ctx, e->idx, &q);
		}
	}
}

/* Lane m's part of a round: the checks of the entry's next API not taken,
 * until none is left. */
static void lane_run(void *ctx, size_t m)
{
	struct run *u = ctx;
	struct entry_work *ew = u->ew;
	for (;;) {
		pthread_mutex_lock(&u->mu);
		size_t i = ew->next < ew->n ? ew->next++ : ew->n;
		pthread_mutex_unlock(&u->mu);
		if (i == ew->n)
			return;
		int costly = check_api(u, &u->lanes[m], &ew->v[i].l, &ew->v[i].a);
		pthread_mutex_lock(&u->mu);
		ew->v[i].costly = costly;
		ew->v[i].done = 1;
		journal_done(u, ew);
		pthread_mutex_unlock(&u->mu);
	}
}

/* A lane's end, in the thread that started its worker. */
static void lane_end(void *ctx, size_t m)
{
	struct run *u = ctx;
	if (u->lanes[m].started)
		ap_worker_free(&u->lanes[m].w);
}

/* The entry's lines, with their checks run (in every lane at once at depth
 * probe and numeric), each journaled in order. 0 or -ENOMEM. */
static int entry_apis(struct run *u, const char *entry, const json_t *apis, json_t *recs,
		      const struct ap_sweep_progress *p)
{
	struct ap_sweep_env *e = u->e;
	struct entry_work ew = { .v = calloc(json_array_size(apis) + 1, sizeof(*ew.v)),
				 .recs = recs, .p = p, .t0 = now_s() };
	size_t i;
	json_t *aj;
	if (!ew.v)
		return -ENOMEM;
	json_array_foreach(apis, i, aj) {
		ap_proto_sweep_api(aj, &ew.v[ew.n].a);
		if (!api_line(e, entry, &ew.v[ew.n].a, &ew.v[ew.n].l))
			ew.n++;
	}
	u->ew = &ew;
	if (u->deep && ew.n)
		ap_crew_round(u->crew);
	else
		lane_run(u, 0);
	u->ew = NULL;
	free(ew.v);
	return 0;
}

/* Journals the answer for entry k: its APIs (entry_apis), then the entry
 * record. */
static void record_entry(struct run *u, size_t k, enum ap_line_status status,
			 const char *reason, const json_t *apis, const struct ap_sweep_progress *p)
{
	struct ap_sweep_env *e = u->e;
	const char *entry = e->o->cat->v[k].name;
	json_t *recs = json_array();
	size_t n = e->lines.n;
	if (entry_apis(u, entry, apis, recs, p))
		io_fail(e, -ENOMEM, "the matrix");
	n = e->lines.n - n;
	struct ap_sweep_entry d = { .entry = strdup(entry), .status = status,
				    .reason = reason ? strdup(reason) : NULL, .apis = n };
	if (!d.entry || (reason && !d.reason))
		io_fail(e, -ENOMEM, "the matrix");
	else
		json_array_append_new(recs, ap_sweep_entry_json(&d));
	ap_sweep_entry_free(&u->done[k]);
	u->done[k] = d;
	e->measured += n;
	flush(u, recs);
	json_decref(recs);
}

/* A status the worker sent, as one of ours; anything unknown is an error. */
static enum ap_line_status known_status(const char *s)
{
	static const enum ap_line_status known[] = { AP_LSTATUS_PRESENT, AP_LSTATUS_IMPORT_ERROR,
						     AP_LSTATUS_ABSENT, AP_LSTATUS_ERROR };
	for (size_t i = 0; s && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(s, ap_sweep_entry_status_name(known[i])))
			return known[i];
	return AP_LSTATUS_ERROR;
}

/* The JSON list of names (NULL when there are none). */
static json_t *names_json(const struct ap_matrix_strs *names)
{
	json_t *a = names->n ? json_array() : NULL;
	for (size_t i = 0; a && i < names->n; i++)
		json_array_append_new(a, json_string(names->v[i]));
	return a;
}

/* Walks entry k; 0, or -AP_E* when the environment cannot go on. */
static int walk_entry(struct run *u, size_t k, struct ap_sweep_progress *p)
{
	struct ap_sweep_env *e = u->e;
	const struct ap_catalog_entry *c = &e->o->cat->v[k];
	enum ap_line_status st;
	const struct ap_matrix_strs *skip = &u->partial[k];
	json_t *res = NULL, *skipped;
	int r = ensure_worker(u, &u->lanes[0]);
	if (r)
		return r;
	skipped = names_json(skip);
	json_t *req = ap_proto_sweep_walk(c->name, c->walk, ap_catalog_exclude(e->o->cat, k),
					  skipped, e->o->depth, u->surface);
	json_decref(skipped);
	ap_buf_reset(&u->lanes[0].w.detail);
	r = ap_worker_call_within(&u->lanes[0].w, req, &res, e->o->walk_ms);
	json_decref(req);
	if (!r) {
		struct ap_proto_walked walked;
		ap_proto_sweep_walked(res, &walked);
		st = known_status(walked.status);
		record_entry(u, k, st, walked.reason, walked.apis, p);
	} else {
		/* A worker that answered "exception" is still fine; one that died
		 * or went silent is that entry's crash or timeout. */
		st = r == -AP_ETIMEOUT ? AP_LSTATUS_TIMEOUT : ap_worker_alive(&u->lanes[0].w) ?
			AP_LSTATUS_ERROR : AP_LSTATUS_CRASH;
		record_entry(u, k, st, ap_buf_str(&u->lanes[0].w.detail), NULL, p);
	}
	p->status = ap_sweep_entry_status_name(st);
	json_decref(res);
	return e->io_err;
}

/* The line the walk of entry measured for the entry itself (api = module =
 * the entry: a class entry's class), or NULL. */
static struct ap_matrix_line *walked_line(struct ap_matrix *lines, const char *entry)
{
	for (size_t i = 0; i < lines->n; i++)
		if (!strcmp(lines->v[i].api, entry) && !strcmp(lines->v[i].module, entry))
			return &lines->v[i];
	return NULL;
}

/* Gives entry k of the catalog its own line in e (see ap_sweep_env_run),
 * with the status of its walk (d: its entry record). */
static void entry_line(struct ap_sweep_env *e, size_t k, const struct ap_sweep_entry *d)
{
	const struct ap_catalog_entry *c = &e->o->cat->v[k];
	struct ap_matrix_line *l = walked_line(&e->lines, c->name), fresh;
	if (!l) {
		if (ap_matrix_line_init(&fresh, e->env->name, c->name, c->name, AP_LSTATUS_PRESENT) ||
		    !(fresh.kind = strdup(c->walk)) || ap_matrix_add(&e->lines, &fresh)) {
			ap_matrix_line_free(&fresh);
			io_fail(e, -ENOMEM, "the matrix");
			return;
		}
		l = &e->lines.v[e->lines.n - 1];
	}
	if (d->status != AP_LSTATUS_PRESENT) {
		l->status = d->status;
		free(l->reason);
		l->reason = d->reason ? strdup(d->reason) : NULL;
	}
}

void ap_sweep_env_run(void *item)
{
	struct ap_sweep_env *e = item;
	const struct ap_sweep_opts *o = e->o;
	size_t nl = o->check && o->lanes > 1 ? (size_t)o->lanes : 1;
	struct run u = { .e = e, .done = calloc(o->cat->n + 1, sizeof(*u.done)),
			 .partial = calloc(o->cat->n + 1, sizeof(*u.partial)), .t0 = now_s(),
			 .deep = o->check != NULL, .surface = ap_surface_rules(),
			 .lanes = calloc(nl, sizeof(*u.lanes)) };
	struct ap_sweep_progress p = { 0 };
	if (o->check) {
		u.ac = *o->check;
		u.ac.devices = e->env->device;
	}
	pthread_mutex_init(&u.mu, NULL);
	/* Lane m's worker is started, and freed, by crew member m's thread. */
	u.crew = u.lanes ? ap_crew_new(nl, lane_run, lane_end, &u) : NULL;
	e->lines = (struct ap_matrix){ 0 };
	for (size_t k = 0; k < o->cat->n; k++)
		p.total += ap_shard_has(o->shard, k);
	int ok = u.done && u.partial && u.crew;
	int r = ok ? open_journal(&u) : -ENOMEM;
	if (!ok)
		env_fail(e, r, "cannot start: %s", "out of memory");
	for (size_t k = 0; !r && k < o->cat->n; k++) {
		if (!ap_shard_has(o->shard, k))
			continue;
		double t = now_s();
		p.entry = o->cat->v[k].name;
		if (u.done[k].entry)
			p.status = "journal";
		else
			r = walk_entry(&u, k, &p);
		p.done++;
		p.apis = u.done[k].apis;
		p.secs = now_s() - t;
		p.elapsed = now_s() - u.t0;
		if (!r && o->progress)
			o->progress(o->ctx, e->idx, &p);
	}
	/* Each entry's own line: whether its walk worked here. A class entry's
	 * walk measured the class itself as its first API: that line is the
	 * entry's own, so that no API has two lines. */
	for (size_t k = 0; !e->err && k < o->cat->n; k++)
		if (u.done[k].entry)
			entry_line(e, k, &u.done[k]);
	ap_crew_free(u.crew);
	free(u.lanes);
	pthread_mutex_destroy(&u.mu);
	if (u.j)
		ap_journal_close(u.j);
	for (size_t k = 0; u.done && u.partial && k < o->cat->n; k++) {
		ap_sweep_entry_free(&u.done[k]);
		strs_clear(&u.partial[k]);
	}
	free(u.done);
	free(u.partial);
	json_decref(u.surface);
}

void ap_sweep_env_free(struct ap_sweep_env *e)
{
	ap_matrix_free(&e->lines);
	free(e->torch);
	strs_clear(&e->plugins);
	ap_buf_free(&e->detail);
	ap_buf_free(&e->io_detail);
}

/* The failing entry line of module in environment e (api = module, not
 * present; the last such), or NULL. */
static const struct ap_matrix_line *failure(const struct ap_sweep_env *e, const char *module)
{
	for (size_t i = e->lines.n; i-- > 0;) {
		const struct ap_matrix_line *l = &e->lines.v[i];
		if (!strcmp(l->api, l->module) && !strcmp(l->module, module) &&
		    l->status != AP_LSTATUS_PRESENT)
			return l;
	}
	return NULL;
}

/* The line an environment without a line for API l gets, into *x: error
 * when the environment failed, the failure of l's entry there, else absent.
 * 0 or -ENOMEM. */
static int filler(const struct ap_sweep_env *e, const struct ap_matrix_line *l,
		  struct ap_matrix_line *x)
{
	const struct ap_matrix_line *f = e->err ? NULL : failure(e, l->module);
	enum ap_line_status st = e->err ? AP_LSTATUS_ERROR : f ? f->status : AP_LSTATUS_ABSENT;
	int r = ap_matrix_line_init(x, e->env->name, l->module, l->api, st);
	if (r)
		return r;
	free(x->key);
	x->key = l->key ? strdup(l->key) : NULL;
	x->owner = l->owner ? strdup(l->owner) : NULL;
	const char *why = e->err ? ap_buf_str(&e->detail) : f ? f->reason : NULL;
	x->reason = why ? strdup(why) : NULL;
	if ((l->key && !x->key) || (l->owner && !x->owner) || (why && !x->reason)) {
		ap_matrix_line_free(x);
		return -ENOMEM;
	}
	return 0;
}

/* Whether lines [from, to) hold one of env. */
static int has_env(const struct ap_matrix *m, size_t from, size_t to, const char *env)
{
	for (size_t i = from; i < to; i++)
		if (!strcmp(m->v[i].env, env))
			return 1;
	return 0;
}

/* Adds to fill the lines every environment lacks for the APIs of all
 * (sorted): each made from the API's first line. */
static int fill_absent(const struct ap_sweep_env *e, size_t n, const struct ap_matrix *all,
		       struct ap_matrix *fill)
{
	size_t from = 0;
	int r = 0;
	for (size_t i = 1; !r && i <= all->n; i++) {
		if (i < all->n && ap_matrix_same_api(&all->v[from], &all->v[i]))
			continue;
		for (size_t k = 0; !r && k < n; k++) {
			struct ap_matrix_line x;
			if (!has_env(all, from, i, e[k].env->name))
				r = filler(&e[k], &all->v[from], &x) ? -ENOMEM : ap_matrix_add(fill, &x);
		}
		from = i;
	}
	return r;
}

int ap_sweep_matrix(const struct ap_sweep_env *e, size_t n, const char *const *envs,
		    const char *reference, struct ap_matrix *out)
{
	struct ap_matrix fill = { 0 };
	int r = 0;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; !r && i < e[k].lines.n; i++) {
			struct ap_matrix_line l;
			r = ap_matrix_line_copy(&l, &e[k].lines.v[i]);
			r = r ? r : ap_matrix_add(out, &l);
		}
	if (!r) {
		ap_matrix_sort(out, envs, n);
		r = fill_absent(e, n, out, &fill);
	}
	for (size_t i = 0; !r && i < fill.n; i++) {
		r = ap_matrix_add(out, &fill.v[i]);
		fill.v[i] = (struct ap_matrix_line){ 0 };
	}
	ap_matrix_free(&fill);
	if (r) {
		ap_matrix_free(out);
		return r;
	}
	ap_matrix_sort(out, envs, n);
	ap_matrix_judge(out, reference);
	return 0;
}
