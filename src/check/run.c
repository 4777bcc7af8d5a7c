/* run.c - the check engine: a session per environment, judged together
 * (see run.h). */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/jsonutil.h"
#include "base/pool.h"
#include "base/text.h"
#include "check/numeric.h"
#include "check/official.h"
#include "check/probe.h"
#include "check/run.h"
#include "check/verdict.h"
#include "env/fingerprint.h"
#include "env/protocol.h"
#include "evidence/bundle.h"

/* --- one environment's session -------------------------------------------- */

/* Journals one record {type, data} (data not consumed); a journal that
 * cannot be written is the session's io_err, once. */
static void session_journal(struct ap_run_session *s, const char *type, const json_t *data)
{
	/* the record takes a reference; data itself is not changed */
	json_t *rec = json_pack("{s:s, s:O}", "type", type, "data",
				data ? (json_t *)data : json_null());
	int r = s->journal ? ap_journal_append(s->journal, rec) : 0;
	if (r && !s->io_err) {
		s->io_err = r;
		ap_buf_addf(&s->io_detail, "cannot append to %s/journal.jsonl: %s",
			    ap_buf_str(&s->dir), strerror(-r));
	}
	json_decref(rec);
}

/* The environment failed with err (-AP_E*): the bundle's error, journaled,
 * and the status line says why. */
static void session_fail(struct ap_run_session *s, int err, const struct ap_buf *detail)
{
	struct ap_buf msg = { 0 };
	s->err = err;
	/* JSON holds only UTF-8: a detail that quotes raw bytes is escaped. */
	ap_text_term(&msg, ap_buf_str(detail), detail->len, AP_TEXT_BLOCK);
	session_journal(s, "error", (json_t *)ap_bundle_set_error(s->bundle, err, ap_buf_str(&msg)));
	ap_buf_free(&msg);
	ap_statusline_set(s->run->status, s->idx, "%s: %s", ap_strerror(err), ap_buf_str(detail));
}

/* Adds a check decided here, not measured (NOTRUN for a reason). */
static void session_add(struct ap_run_session *s, json_t *c)
{
	ap_bundle_add_check(s->bundle, c);
	json_decref(c);
}

/* Runs one probe (or script) in the worker and records it as a check. */
static int session_probe(struct ap_run_session *s, struct ap_worker *worker, const char *name,
			 const char *kind, size_t k, size_t n, const char *code, json_t *bind,
			 const json_t *says)
{
	json_t *req = ap_probe_request(name, code, bind, s->run->o->timeout_s);
	json_t *res = NULL;
	ap_statusline_set(s->run->status, s->idx, "%s %zu/%zu %s ...", kind, k + 1, n, name);
	int r = req ? ap_worker_call(worker, req, &res) : -ENOMEM;
	json_t *c = NULL;
	json_decref(req);
	if (r == -AP_EPROTO && ap_worker_alive(worker)) {
		/* The framing held: this probe's answer is lost, not the session. */
		c = ap_check_new(name, kind, AP_ERROR, "unreadable result frame");
		json_object_set_new(c, "detail", json_string(ap_buf_str(&worker->detail)));
		ap_buf_reset(&worker->detail);
		r = c ? 0 : -ENOMEM;
	} else if (!r && !(c = ap_probe_check(res))) /* the worker's facts, judged */
		r = -ENOMEM;
	json_decref(res);
	res = c;
	if (r) {
		json_decref(res);
		session_fail(s, r, &worker->detail);
		return r;
	}
	json_object_set_new(res, "name", json_string(name));
	json_object_set_new(res, "kind", json_string(kind));
	if (says)
		json_object_set(res, "says", (json_t *)says);
	ap_bundle_add_check(s->bundle, res);
	session_journal(s, "check", res);
	ap_statusline_set(s->run->status, s->idx, "%s %zu/%zu %s %s", kind, k + 1, n, name,
		      ap_status_name(ap_check_status(res)));
	json_decref(res);
	return 0;
}

static int session_family(struct ap_run_session *s, struct ap_worker *worker,
			  const struct ap_proto_resolution *res)
{
	const struct ap_member *m;
	const char *cls = res->cls;
	const struct ap_family *f = ap_specs_find(s->run->o->specs, cls, &m);
	if (!f) {
		struct ap_buf why = { 0 };
		ap_buf_addf(&why, "no-family: no spec has a member for %s", cls ? cls : "?");
		session_add(s, ap_check_new("family", "plan", AP_NOTRUN, ap_buf_str(&why)));
		ap_buf_free(&why);
		return 0;
	}
	ap_bundle_set_family(s->bundle, f->name, m->cls, f->summary_en, f->summary_zh);
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
			session_add(s, c);
			ap_buf_free(&why);
		} else
			r = session_probe(s, worker, p->name, "probe", i, f->nprobes, p->code, bind,
					  says);
		json_decref(says);
	}
	json_decref(bind);
	return r;
}

static int session_script(struct ap_run_session *s, struct ap_worker *worker, size_t k)
{
	struct ap_buf name = { 0 }, expr = { 0 };
	const char *base = strrchr(s->run->o->script_paths[k], '/');
	/* A file name need not be UTF-8: as JSON holds it, and visible. */
	ap_buf_adds(&name, "script:");
	ap_text_line(&name, base ? base + 1 : s->run->o->script_paths[k]);
	ap_buf_addf(&expr, "resolve(\"%s\")", s->run->o->target);
	json_t *bind = json_pack("[[s,s]]", "TARGET", ap_buf_str(&expr));
	json_t *says = json_pack("{s:s, s:s}", "en", "the user's focused assertions",
				 "zh", "用户提供的专项断言");
	int r = session_probe(s, worker, ap_buf_str(&name), "script", k, s->run->o->nscripts,
			      ap_buf_str(&s->run->o->scripts[k]), bind, says);
	json_decref(bind);
	json_decref(says);
	ap_buf_free(&name);
	ap_buf_free(&expr);
	return r;
}

/* The official upstream tests of the target, when a test tree exists for
 * this environment's torch: found, and the first test file's import started
 * (see ap_official_start), before the probes run, so that the worker imports
 * it meanwhile; official_end runs them. */
struct official_run {
	struct ap_buf root, tree, why;
	json_t *pkg;
	struct ap_official_opts o;
	struct ap_official_plan plan;
	int planned;
};

static int official_start(struct ap_run_session *s, struct ap_worker *worker, const json_t *res,
			  struct official_run *official)
{
	const struct ap_run_opts *o = s->run->o;
	int r = ap_official_package(worker, &official->pkg);
	const char *ver = ap_proto_package_version(official->pkg);
	if (!r && ap_official_root(s->env, o->torch_src, ver, &official->root, &official->tree,
				   &official->why)) {
		struct ap_official_opts opts = {
			.root = ap_buf_str(&official->root), .tree = ap_buf_str(&official->tree),
			.warn = &s->warn, .version = ver ? ver : "?", .claimed = o->claimed,
			.device = s->env->device, .timeout_s = o->timeout_s, .run = 1,
		};
		official->o = opts;
		r = ap_official_start(worker, res, &official->o, &official->plan);
		official->planned = 1;
	}
	return r;
}

/* Writes an evidence file of the session's bundle (the manifest, written
 * last, covers it); the first failure is the session's I/O error. */
static void session_write(struct ap_run_session *s, const char *name, const char *data,
			  size_t len)
{
	struct ap_buf path = { 0 };
	if (s->io_err)
		return;
	ap_buf_addf(&path, "%s/%s", ap_buf_str(&s->dir), name);
	int r = ap_write_atomic(ap_buf_str(&path), data, len);
	if (r) {
		s->io_err = r;
		ap_buf_addf(&s->io_detail, "cannot write %s: %s", ap_buf_str(&path), strerror(-r));
	}
	ap_buf_free(&path);
}

/* Runs the official tests that official_start found; their log goes to
 * official.log. */
static int official_end(struct ap_run_session *s, struct ap_worker *worker,
			struct official_run *official)
{
	json_t *checks = ap_bundle_checks(s->bundle), *found = NULL;
	struct ap_buf log = { 0 };
	const char *ver = ap_proto_package_version(official->pkg);
	if (!official->planned) {
		session_add(s, ap_check_new("official", "official", AP_NOTRUN,
					    ap_buf_str(&official->why)));
		return 0;
	}
	ap_statusline_set(s->run->status, s->idx, "official tests");
	size_t before = json_array_size(checks);
	int r = ap_official_finish(worker, &official->o, &official->plan, checks, &found, &log);
	for (size_t k = before; k < json_array_size(checks); k++)
		session_journal(s, "check", json_array_get(checks, k));
	ap_bundle_set_official(s->bundle, ap_buf_str(&official->root), ver, AP_OFFICIAL_ISOLATION,
			       found, ap_official_adapter(&official->o));
	if (!r)
		session_write(s, "official.log", log.data ? log.data : "", log.len);
	if (r)
		session_fail(s, r, &worker->detail);
	ap_buf_free(&log);
	return r;
}

/* Whether an OpInfo entry stands for the target here (asked only when no
 * family covers it: a spec overrides the automatic choice). */
static int session_opinfo(struct ap_run_session *s, struct ap_worker *worker)
{
	json_t *req = ap_numeric_opinfo_request(s->run->o->target, s->env->device);
	ap_statusline_set(s->run->status, s->idx, "looking for %s in OpInfo", s->run->o->target);
	int r = req ? ap_worker_call(worker, req, &s->opinfo) : -ENOMEM;
	json_decref(req);
	if (r)
		session_fail(s, r, &worker->detail);
	return r;
}

static void official_free(struct official_run *official)
{
	if (official->planned)
		ap_official_plan_free(&official->plan);
	json_decref(official->pkg);
	ap_buf_free(&official->root);
	ap_buf_free(&official->tree);
	ap_buf_free(&official->why);
}

/* resolve, then fingerprint: resolving first imports torch alone, so a
 * plugin's changes to the target can be seen. The first official test file
 * starts importing in between, so that it is imported while the fingerprint
 * is taken and the probes run. */
static int session_measure(struct ap_run_session *s, struct ap_worker *worker)
{
	json_t *req = ap_proto_resolve(s->run->o->target, ap_plugin_modules(s->env));
	json_t *res = NULL, *fp = NULL, *fpreq = ap_fingerprint_request(s->env);
	struct official_run official = { 0 };
	struct ap_proto_resolution resolution;
	ap_statusline_set(s->run->status, s->idx, "importing torch, resolving %s",
			  s->run->o->target);
	int r = ap_worker_call(worker, req, &res);
	json_decref(req);
	ap_proto_resolution_read(r ? NULL : res, &resolution);
	int found = resolution.found, run_official = found && !s->run->o->no_official;
	if (!r) {
		json_object_set(s->bundle, "resolution", res);
		session_journal(s, "resolution", res);
		r = run_official ? official_start(s, worker, res, &official) : 0;
	}
	/* A worker kept across runs was fingerprinted by the first of them:
	 * the same process, the same environment (a backend's device probe
	 * costs seconds each time). */
	json_t **kept = s->run->o->fingerprints ? &s->run->o->fingerprints[s->idx] : NULL;
	if (!r && kept && *kept)
		fp = json_incref(*kept);
	else
		r = r ? r : ap_worker_call(worker, fpreq, &fp);
	if (!r && kept && !*kept)
		*kept = json_incref(fp);
	json_decref(fpreq);
	if (!r) {
		json_object_set(s->bundle, "fingerprint", fp);
		session_journal(s, "fingerprint", fp);
	}
	json_decref(fp);
	if (r)
		session_fail(s, r, &worker->detail);
	else if (!found)
		session_add(s, ap_check_new("resolve", "resolution", AP_NOTRUN, "absent-in-this-version"));
	else
		r = session_family(s, worker, &resolution);
	if (!r && found && s->run->o->cases) /* said, so that a review knows why */
		session_add(s, ap_check_new("official tests", "official", AP_NOTRUN,
					    "not-run: a replay of a traced program's cases runs its "
					    "cases alone; `apiparity check` of the API runs its "
					    "official tests"));
	if (!r && found && !ap_bundle_family(s->bundle))
		r = session_opinfo(s, worker);
	for (size_t k = 0; !r && found && k < s->run->o->nscripts; k++)
		r = session_script(s, worker, k);
	if (!r && run_official)
		r = official_end(s, worker, &official);
	official_free(&official);
	json_decref(res);
	return r;
}

/* Ends an environment's session: its worker, then its journal. */
static void session_end(struct ap_run_session *s)
{
	if (s->worker == &s->own)
		ap_worker_free(&s->own);
	s->live = 0;
	if (s->journal)
		ap_journal_close(s->journal);
	s->journal = NULL;
}

/* --- the numeric checks: samples made in the reference, run everywhere --- */

/* Records numeric check c (a new reference, taken) as measured. */
static void session_add_measured(struct ap_run_session *s, json_t *c)
{
	if (!c)
		return;
	ap_bundle_add_check(s->bundle, c);
	session_journal(s, "check", c);
	json_decref(c);
}

/* The checks of sample k's frame here (one that came, or one that says
 * how it was lost), measured. */
static void session_judge_frame(struct ap_run_session *s, size_t k, const json_t *frame)
{
	json_t *checks = json_array(), *c;
	size_t i;
	ap_numeric_device_checks(&s->run->o->numeric, json_array_get(s->samples, k), frame,
				 s->env->device, AP_NUMERIC_SEED, checks);
	json_array_foreach(checks, i, c)
		session_add_measured(s, json_incref(c));
	json_decref(checks);
}

/* Each sample's frame as it arrives: its checks, journaled at once. */
static void on_numeric_frame(void *ctx, json_t *frame)
{
	struct ap_run_session *s = ctx;
	long k = ap_numeric_frame_index(frame, s->samples);
	if (k < 0 || !json_is_null(json_array_get(s->frames, (size_t)k)))
		return; /* not one of ours, or twice: the first one counts */
	ap_numeric_frame_judge(frame);
	json_array_set(s->frames, (size_t)k, frame);
	session_judge_frame(s, (size_t)k, frame);
	ap_statusline_set(s->run->status, s->idx, "numeric: sample %ld/%zu", k + 1,
			  json_array_size(s->samples));
}

/* How long the first frame of a numeric run may take: the devices start,
 * then a sample runs within the worker's own limit. */
static int numeric_frame_ms(const struct ap_run_opts *o)
{
	return (o->answer_s + o->timeout_s + AP_RUN_WATCHDOG_MARGIN_S) * 1000;
}

static void session_numeric_run(struct ap_run_session *s)
{
	const struct ap_run_opts *o = s->run->o;
	json_t *reply = NULL;
	if (!s->live || !s->samples || !ap_bundle_resolved(s->bundle))
		return;
	s->frames = json_array();
	for (size_t k = 0; k < json_array_size(s->samples); k++)
		json_array_append_new(s->frames, json_null());
	json_t *req = ap_numeric_run_request(o->target, s->samples, s->opinfo, s->env->device,
					     o->timeout_s, o->answer_s);
	ap_statusline_set(s->run->status, s->idx, "numeric: running %zu samples",
			  json_array_size(s->samples));
	int r = req ? ap_worker_call_stream_within(s->worker, req, &reply, on_numeric_frame, s,
						   numeric_frame_ms(o))
		    : -ENOMEM;
	json_decref(req);
	/* What the runners wrote to stderr is kept whole when they wrote
	 * anything: a backend that aborts says why only there. */
	struct ap_proto_numeric_ran ran;
	ap_proto_numeric_ran_read(reply, &ran);
	if (!r && ran.log && *ran.log)
		session_write(s, "numeric.log", ran.log, strlen(ran.log));
	json_decref(reply);
	/* A sample whose frame never came (unreadable, or the worker failed)
	 * is an ERROR of its own; the others keep their results. */
	for (size_t k = 0; k < json_array_size(s->samples); k++) {
		if (!json_is_null(json_array_get(s->frames, k)))
			continue;
		json_t *lost = ap_numeric_lost_frame(k, AP_ERROR,
						     r ? "the worker failed before its result"
						       : "unreadable result frame");
		session_judge_frame(s, k, lost);
		json_decref(lost);
	}
	if (r)
		session_fail(s, r, &s->worker->detail);
	ap_statusline_set(s->run->status, s->idx, r ? "numeric failed" : "numeric done");
}

/* The index of the reference session (ap_bundle_pick_reference), or -1. */
static int reference_index(const struct ap_run *run)
{
	json_t *bundles[AP_RUN_MAX_ENVS] = { 0 };
	for (size_t i = 0; i < run->n; i++)
		bundles[i] = run->s[i].bundle;
	return ap_bundle_pick_reference(bundles, run->n, run->o->reference);
}

/* Where nothing stands for the target in OpInfo, says so in each
 * environment that asked. */
static void numeric_none(struct ap_run *run, const char *why)
{
	for (size_t i = 0; i < run->n; i++)
		if (run->s[i].opinfo && !run->s[i].err)
			session_add(&run->s[i], ap_check_new("numeric", "plan", AP_NOTRUN, why));
}

/* The reference makes the samples (they are the same bytes everywhere);
 * NULL when there are none to run. */
static json_t *make_samples(struct ap_run *run)
{
	const struct ap_run_opts *o = run->o;
	json_t *reply = NULL;
	struct ap_buf why = { 0 };
	int ref_index = reference_index(run);
	struct ap_run_session *ref = ref_index >= 0 ? &run->s[ref_index] : NULL;
	if (!ref || !ref->live || (!o->cases && !ap_numeric_covered(ref->opinfo))) {
		ap_buf_addf(&why, "no-opinfo: no OpInfo entry stands for %s%s%s", o->target,
			    ref ? " in the reference " : "", ref ? ref->env->name : "");
		numeric_none(run, ap_buf_str(&why));
		ap_buf_free(&why);
		return NULL;
	}
	/* A traced program's cases are made from their descriptions, not
	 * from OpInfo (check --cases). */
	json_t *req = o->cases ? ap_proto_case_samples(o->target, json_incref((json_t *)o->cases),
						       AP_NUMERIC_SEED)
			       : ap_numeric_samples_request(o->target, o->samples, AP_NUMERIC_SEED);
	ap_statusline_set(run->status, ref->idx, "numeric: making the samples");
	int r = req ? ap_worker_call(ref->worker, req, &reply) : -ENOMEM;
	json_decref(req);
	json_t *samples = r ? NULL : ap_numeric_prepare(reply, &why);
	struct ap_proto_samples made;
	ap_proto_samples_read(reply, &made);
	if (r == -AP_EPROTO && ap_worker_alive(ref->worker)) {
		/* The framing held: the samples are lost, not the environment. */
		ap_buf_addf(&why, "unreadable samples: %s", ap_buf_str(&ref->worker->detail));
		ap_buf_reset(&ref->worker->detail);
		r = 0;
	}
	if (r)
		session_fail(ref, r, &ref->worker->detail);
	else if (!samples)
		session_add_measured(ref, ap_check_new("numeric samples", "numeric", AP_ERROR,
						       ap_buf_str(&why)));
	for (size_t i = 0; samples && i < run->n; i++)
		ap_bundle_set_operators(run->s[i].bundle, ref->env->name, AP_NUMERIC_SEED,
					o->samples, json_array_size(samples),
					made.skipped, run->s[i].opinfo,
					ap_numeric_adapter(run->s[i].env->device));
	json_decref(reply);
	ap_buf_free(&why);
	return samples;
}

/* The torch version of bundle b's fingerprint, or "-". */
static const char *torch_of(const json_t *b)
{
	const char *v = ap_bundle_torch_version(b);
	return v ? v : "-";
}

/* Each environment's CPU results against the reference's, sample by sample,
 * once every environment has run them. */
static void compare_across(struct ap_run *run, const json_t *samples)
{
	int ref_index = reference_index(run);
	if (ref_index < 0 || !run->s[ref_index].frames)
		return;
	const struct ap_run_session *ref = &run->s[ref_index];
	const char *ref_torch = torch_of(ref->bundle);
	for (size_t i = 0; i < run->n; i++) {
		struct ap_run_session *s = &run->s[i];
		if ((int)i == ref_index || !s->frames || s->err)
			continue;
		int same = !strcmp(torch_of(s->bundle), ref_torch);
		for (size_t k = 0; k < json_array_size(samples); k++) {
			const json_t *f = json_array_get(s->frames, k);
			if (json_is_null(f))
				continue;
			session_add_measured(s, ap_numeric_cross_check(
				&run->o->numeric, json_array_get(samples, k), f,
				json_array_get(ref->frames, k), ref->env->name, same, AP_NUMERIC_SEED));
		}
	}
}

/* The last thread to arrive at the first meeting. */
static void numeric_plan(struct ap_run *run)
{
	json_t *samples = make_samples(run);
	if (!json_array_size(samples)) {
		json_decref(samples);
		samples = NULL;
	}
	run->meeting.samples = samples;
}

/* The last thread to arrive at the second meeting. */
static void numeric_across(struct ap_run *run)
{
	if (run->meeting.samples)
		compare_across(run, run->meeting.samples);
}

enum { AP_MEET_SAMPLES, AP_MEET_RESULTS };

/* Meeting which of s's thread with the others: the last to arrive runs
 * last(), the others wait for it, at most as long as an answer may take (a
 * thread the pool could not start runs alone, and must not wait forever). */
static void meet_the_others(struct ap_run_session *s, int which, void (*last)(struct ap_run *))
{
	struct ap_run *run = s->run;
	struct ap_run_meeting *meeting = &run->meeting;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += run->o->answer_s + run->o->timeout_s;
	pthread_mutex_lock(&meeting->mu);
	if (++meeting->arrived[which] == run->n) {
		last(run);
		meeting->done[which] = 1;
		pthread_cond_broadcast(&meeting->cv);
	}
	while (!meeting->done[which] &&
	       pthread_cond_timedwait(&meeting->cv, &meeting->mu, &until) == 0)
		;
	pthread_mutex_unlock(&meeting->mu);
}

/* Creates OUT/<env> afresh and its journal, which records the start. */
static void session_open_journal(struct ap_run_session *s)
{
	struct ap_buf path = { 0 };
	int r = ap_rm_tree(ap_buf_str(&s->dir));
	r = r ? r : ap_mkdirs(ap_buf_str(&s->dir));
	ap_buf_addf(&path, "%s/journal.jsonl", ap_buf_str(&s->dir));
	if (r || !(s->journal = ap_journal_open(ap_buf_str(&path)))) {
		s->io_err = r ? r : -errno;
		ap_buf_addf(&s->io_detail, "cannot create %s: %s", ap_buf_str(&s->dir),
			    strerror(-s->io_err));
	}
	ap_buf_free(&path);
	session_journal(s, "start", ap_bundle_env(s->bundle));
}

/* The session's worker limits: it starts within answer_s; each answer
 * after that within a probe's limit and the margin, or answer_s when that
 * is longer. */
static struct ap_worker_limits session_limits(const struct ap_run_opts *o)
{
	struct ap_worker_limits lim = { o->answer_s * 1000,
					(o->timeout_s + AP_RUN_WATCHDOG_MARGIN_S) * 1000 };
	if (lim.answer_ms < o->answer_s * 1000)
		lim.answer_ms = o->answer_s * 1000;
	return lim;
}

/* A pool job: one environment's whole session. */
static void session_run(void *item)
{
	struct ap_run_session *s = item;
	const struct ap_run_opts *o = s->run->o;
	session_open_journal(s);
	ap_statusline_set(s->run->status, s->idx, "starting the worker");
	struct ap_worker_limits lim = session_limits(o);
	int r = ap_official_env(s->env, o->torch_src, &s->run_env);
	/* A worker the caller keeps across runs (check --cases) is used as it
	 * is; else the session opens its own. */
	s->worker = o->workers && o->workers[s->idx] ? o->workers[s->idx] : &s->own;
	if (!r && s->worker == &s->own)
		r = ap_worker_open(&s->own, &s->run_env, &lim);
	if (r)
		session_fail(s, r, &s->worker->detail);
	else {
		s->live = !session_measure(s, s->worker);
		ap_statusline_set(s->run->status, s->idx, s->live ? "measured" : "failed");
	}
	meet_the_others(s, AP_MEET_SAMPLES, numeric_plan);
	s->samples = s->run->meeting.samples;
	session_numeric_run(s);
	meet_the_others(s, AP_MEET_RESULTS, numeric_across);
	session_end(s);
	if (s->live || !s->err)
		ap_statusline_set(s->run->status, s->idx, s->err ? "failed" : "done");
}

/* --- the run ------------------------------------------------------------ */

int ap_run_open(struct ap_run *run, const struct ap_run_opts *o,
		const struct ap_env *const *envs, size_t n)
{
	memset(run, 0, sizeof(*run));
	run->o = o;
	if (n > AP_RUN_MAX_ENVS)
		return -E2BIG;
	run->s = calloc(n ? n : 1, sizeof(*run->s));
	if (!run->s)
		return -ENOMEM;
	run->n = n;
	pthread_mutex_init(&run->meeting.mu, NULL);
	pthread_cond_init(&run->meeting.cv, NULL);
	for (size_t i = 0; i < n; i++) {
		struct ap_run_session *s = &run->s[i];
		s->env = envs[i];
		s->run = run;
		s->idx = i;
		s->bundle = ap_bundle_new(envs[i], o->target, i);
		ap_buf_addf(&s->dir, "%s/%s", o->out, envs[i]->name);
	}
	return 0;
}

/* Whether OUT/<env> may be replaced: absent, empty (then removed here, to be
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

int ap_run_out_ok(const struct ap_run *run, struct ap_buf *why)
{
	int r = ap_dir_writable(run->o->out);
	if (r)
		ap_buf_addf(why, "%s", run->o->out);
	for (size_t i = 0; !r && i < run->n; i++)
		if (!replaceable(ap_buf_str(&run->s[i].dir))) {
			r = -EEXIST;
			ap_buf_addf(why, "%s is not the evidence of an earlier check, and check "
				    "would replace it (choose another --out)",
				    ap_buf_str(&run->s[i].dir));
		}
	return r;
}

void ap_run_measure(struct ap_run *run, struct ap_statusline *status)
{
	json_t *bundles[AP_RUN_MAX_ENVS] = { 0 };
	run->status = status;
	ap_pool_run(run->s, run->n, sizeof(*run->s), session_run);
	json_decref(run->meeting.samples);
	run->meeting.samples = NULL;
	for (size_t i = 0; i < run->n; i++)
		bundles[i] = run->s[i].bundle;
	ap_verdict_judge(bundles, run->n, run->o->reference);
	run->status = NULL;
}

void ap_run_seal(struct ap_run *run, const struct ap_signer *signer)
{
	/* The signer's key goes into each bundle before its manifest is
	 * written, so that the signature covers it. */
	for (size_t i = 0; signer && i < run->n; i++)
		json_object_set_new(run->s[i].bundle, "signer",
				    json_pack("{s:s, s:s}", "algorithm", "ed25519", "key",
					      ap_signer_fpr(signer)));
	for (size_t i = 0; i < run->n; i++) {
		struct ap_run_session *s = &run->s[i];
		int r = s->io_err ? 0 : ap_bundle_write(ap_buf_str(&s->dir), s->bundle,
							&s->io_detail);
		if (r)
			s->io_err = r;
	}
	for (size_t i = 0; signer && i < run->n; i++) {
		struct ap_run_session *s = &run->s[i];
		int r = s->io_err ? 0 : ap_sign_manifest(signer, ap_buf_str(&s->dir),
							 &s->io_detail);
		if (r)
			s->io_err = r;
	}
}

int ap_run_exit_code(const struct ap_run *run, int require_present,
		     int (*report)(int err, const char *what, const struct ap_buf *detail))
{
	int rc = AP_EXIT_OK, verified = 0;
	for (size_t i = 0; i < run->n; i++) {
		const struct ap_run_session *s = &run->s[i];
		struct ap_buf what = { 0 };
		ap_buf_addf(&what, "env %s", s->env->name);
		if (s->err) {
			const char *msg = ap_bundle_error_message(s->bundle);
			struct ap_buf d = { 0 };
			ap_buf_adds(&d, msg ? msg : "");
			int code = report(s->err, ap_buf_str(&what), &d);
			rc = rc == AP_EXIT_OK || rc == AP_EXIT_FAILED ? code : rc;
			ap_buf_free(&d);
		}
		if (s->io_err) {
			report(s->io_err, ap_buf_str(&what), &s->io_detail);
			rc = rc == AP_EXIT_OK || rc == AP_EXIT_FAILED ? AP_EXIT_IO : rc;
		}
		ap_buf_free(&what);
		enum ap_verdict v = ap_bundle_verdict(s->bundle);
		int absent = !ap_bundle_resolved(s->bundle);
		if (rc == AP_EXIT_OK && v != AP_VERDICT_UNKNOWN &&
		    (v == AP_INCONSISTENT || (require_present && absent && !s->err)))
			rc = AP_EXIT_FAILED;
		verified |= v != AP_VERDICT_UNKNOWN && v != AP_UNVERIFIED;
	}
	/* 0 means verified and consistent: where nothing could be checked (a
	 * misspelled target, a target no family covers), say so. */
	if (rc == AP_EXIT_OK && !verified) {
		struct ap_buf d = { 0 };
		ap_buf_addf(&d, "%s could be checked in no environment (see the reasons above)",
			    run->o->target);
		rc = report(-AP_EUNVERIFIED, "check", &d);
		ap_buf_free(&d);
	}
	return rc;
}


void ap_run_free(struct ap_run *run)
{
	for (size_t i = 0; run->s && i < run->n; i++) {
		struct ap_run_session *s = &run->s[i];
		json_decref(s->bundle);
		json_decref(s->opinfo);
		json_decref(s->frames);
		ap_env_extra_free(&s->run_env);
		ap_buf_free(&s->dir);
		ap_buf_free(&s->io_detail);
		ap_buf_free(&s->warn);
	}
	if (run->s) {
		pthread_mutex_destroy(&run->meeting.mu);
		pthread_cond_destroy(&run->meeting.cv);
	}
	free(run->s);
	memset(run, 0, sizeof(*run));
}
