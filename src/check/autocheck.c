/* autocheck.c - one API's automatic checks in a sweep (see autocheck.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonutil.h"
#include "base/sha256.h"
#include "base/text.h"
#include "check/autocheck.h"
#include "check/numeric.h"
#include "check/probe.h"
#include "env/protocol.h"
#include "evidence/bundle.h"
#include "evidence/matrix.h"

/* Added to a limit the worker keeps itself, so that its own answer
 * (TIMEOUT of a probe, a sample lost) comes before ours. */
#define MARGIN_S 30

/* The statuses of a summary (enum ap_line_check), best first; a check's
 * outcome moves the summary to the worse of the two. */

struct tally {
	enum ap_line_check worst;
	struct ap_buf reason;   /* the first check of the worst status */
	size_t n[5];            /* checks, passed, failed, notrun, samples */
	const char *family;
	json_t *operators;
	struct ap_sha256 *digest; /* of the samples' CPU results, or NULL */
};

static enum ap_line_check rank(enum ap_status status)
{
	switch (status) {
	case AP_PASS: return AP_LCHECK_CONSISTENT;
	case AP_NOTRUN: return AP_LCHECK_NOTRUN;
	case AP_CRASH: return AP_LCHECK_CRASH;
	case AP_TIMEOUT: return AP_LCHECK_TIMEOUT;
	default: return AP_LCHECK_INCONSISTENT; /* FAIL, ERROR, anything else */
	}
}

/* Counts one check's outcome. */
static void count(struct tally *t, const char *name, enum ap_status status, const char *why)
{
	enum ap_line_check s = rank(status);
	t->n[0]++;
	t->n[1] += s == AP_LCHECK_CONSISTENT;
	t->n[2] += s >= AP_LCHECK_INCONSISTENT;
	t->n[3] += s == AP_LCHECK_NOTRUN;
	if (s > t->worst || (s == t->worst && !t->reason.len && s != AP_LCHECK_CONSISTENT)) {
		t->worst = s;
		ap_buf_reset(&t->reason);
		if (s != AP_LCHECK_CONSISTENT)
			ap_buf_addf(&t->reason, "%s: %s", name,
				    why && *why ? why : ap_status_name(status));
	}
}

static void count_check(struct tally *t, const json_t *c)
{
	count(t, ap_json_text(c, "name"), ap_check_status(c),
	      ap_check_reason(c));
}

int ap_autocheck_applies(const char *kind)
{
	static const char *const no[] = { "module", "value", "property" };
	for (size_t i = 0; kind && i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcmp(kind, no[i]))
			return 0;
	return kind != NULL;
}

/* A call within limit_s seconds (req is taken). */
static int call(struct ap_worker *w, json_t *req, json_t **reply, int limit_s)
{
	int r = req ? ap_worker_call_within(w, req, reply, limit_s * 1000) : -ENOMEM;
	json_decref(req);
	return r;
}

/* After a call: r when the worker died or hung (the API's crash or
 * timeout); else 0, a failed answer (an exception in the worker, an
 * unreadable frame) counted as check name's status. */
static int harness(struct ap_worker *w, int r, const char *name, enum ap_status status,
		   struct tally *t)
{
	if (!r || !ap_worker_alive(w))
		return r;
	struct ap_buf why = { 0 };
	ap_text_line(&why, ap_buf_str(&w->detail));
	count(t, name, status, ap_buf_str(&why));
	ap_buf_free(&why);
	ap_buf_reset(&w->detail);
	return 0;
}

/* --- family probes -------------------------------------------------------- */

static int run_probe(struct ap_worker *w, const struct ap_autocheck *o, const struct ap_probe *p,
		     const json_t *bind, struct tally *t)
{
	json_t *res = NULL;
	int r = call(w, ap_probe_request(p->name, p->code, bind, o->limit_s), &res,
		     o->limit_s + MARGIN_S);
	if (!r) {
		struct ap_proto_probe_reply facts;
		struct ap_buf why = { 0 };
		ap_proto_probe_read(res, &facts);
		enum ap_status st = ap_probe_status(&facts, &why);
		count(t, p->name, st, st == AP_PASS ? NULL : ap_buf_str(&why));
		ap_buf_free(&why);
	}
	json_decref(res);
	return harness(w, r, p->name, AP_ERROR, t);
}

static int run_family(struct ap_worker *w, const struct ap_autocheck *o, const char *cls,
		      struct tally *t)
{
	const struct ap_member *m = NULL;
	const struct ap_family *f = cls && o->specs ? ap_specs_find(o->specs, cls, &m) : NULL;
	if (!f)
		return 0;
	t->family = f->name;
	json_t *bind = ap_member_bind(f, m);
	int r = bind ? 0 : -ENOMEM;
	for (size_t i = 0; !r && i < f->nprobes; i++) {
		const struct ap_probe *p = &f->probes[i];
		if (p->needs && !ap_member_has_trait(m, p->needs))
			count(t, p->name, AP_NOTRUN, "not-applicable");
		else
			r = run_probe(w, o, p, bind, t);
	}
	json_decref(bind);
	return r;
}

/* --- the OpInfo / ModuleInfo samples ------------------------------------ */

/* Each sample's frame as the run streams it (the first one counts). */
struct frames {
	const json_t *samples;
	json_t *v;
};

static void on_frame(void *ctx, json_t *frame)
{
	struct frames *f = ctx;
	long k = ap_numeric_frame_index(frame, f->samples);
	if (k >= 0 && json_is_null(json_array_get(f->v, (size_t)k))) {
		ap_numeric_frame_judge(frame);
		json_array_set(f->v, (size_t)k, frame);
	}
}

/* Adds sample s's CPU result (or its loss) to the digest. */
static void digest_sample(struct ap_sha256 *d, const json_t *s, const json_t *frame)
{
	struct ap_proto_sample x;
	json_t *keep = ap_proto_frame_result(frame, "cpu");
	char *text = keep ? json_dumps(keep, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	ap_proto_sample_read(s, &x);
	const char *parts[3] = { x.id ? x.id : "-", x.input_digest ? x.input_digest : "-",
				 text ? text : "" };
	for (int i = 0; i < 3; i++)
		ap_sha256_update(d, parts[i], strlen(parts[i]) + 1);
	free(text);
	json_decref(keep);
}

/* The checks of each sample's frame (a sample whose frame never came is an
 * ERROR of its own, as in check), counted in sample order. */
static void judge_frames(const struct ap_autocheck *o, const struct ap_numeric_ctx *ctx,
			 const json_t *samples, const json_t *frames, int failed, struct tally *t)
{
	for (size_t k = 0; k < json_array_size(samples); k++) {
		const json_t *s = json_array_get(samples, k);
		json_t *f = json_incref(json_array_get(frames, k)), *checks = json_array(), *c;
		size_t i;
		if (json_is_null(f)) {
			json_decref(f);
			f = ap_numeric_lost_frame(k, AP_ERROR, failed ? "the worker failed before its result"
								    : "unreadable result frame");
		}
		ap_numeric_device_checks(ctx, s, f, o->devices, AP_NUMERIC_SEED, checks);
		json_array_foreach(checks, i, c)
			count_check(t, c);
		digest_sample(t->digest, s, f);
		json_decref(checks);
		json_decref(f);
	}
}

/* Runs samples (prepared) on CPU and on the devices, except where the
 * opinfo answer info says not, and counts them. */
static int run_samples(struct ap_worker *w, const struct ap_autocheck *o, const char *api,
		       const json_t *samples, const json_t *info, struct tally *t)
{
	struct frames f = { samples, json_array() };
	/* the overrides and limits are looked up for the API checked here */
	const struct ap_numeric_ctx ctx = { o->tolerances, o->limits, api };
	json_t *reply = NULL;
	for (size_t k = 0; k < json_array_size(samples); k++)
		json_array_append_new(f.v, json_null());
	json_t *req = ap_numeric_run_request(api, samples, info, o->devices, o->limit_s,
					     o->start_s);
	/* the first frame comes once the devices have started and a sample ran */
	int r = req ? ap_worker_call_stream_within(w, req, &reply, on_frame, &f,
						   (o->start_s + o->limit_s + MARGIN_S) * 1000)
		    : -ENOMEM;
	json_decref(req);
	json_decref(reply);
	t->n[4] = json_array_size(samples);
	t->digest = ap_sha256_begin();
	judge_frames(o, &ctx, samples, f.v, r != 0, t);
	json_decref(f.v);
	return ap_worker_alive(w) ? 0 : r;
}

/* The samples of api, made here: at most AP_AUTOCHECK_SAMPLES_MAX, or NULL
 * (the why counted as an ERROR). */
static json_t *make_samples(struct ap_worker *w, const struct ap_autocheck *o, const char *api,
			    struct tally *t, int *r)
{
	json_t *reply = NULL, *samples = NULL;
	struct ap_buf why = { 0 };
	*r = call(w, ap_numeric_samples_request(api, o->max_samples, AP_NUMERIC_SEED), &reply,
		  o->limit_s);
	if (!*r && !(samples = ap_numeric_prepare(reply, &why)))
		count(t, "numeric samples", AP_ERROR, ap_buf_str(&why));
	*r = harness(w, *r, "numeric samples", AP_ERROR, t);
	while (json_array_size(samples) > AP_AUTOCHECK_SAMPLES_MAX)
		json_array_remove(samples, json_array_size(samples) - 1);
	json_decref(reply);
	ap_buf_free(&why);
	return samples;
}

/* The entries that stand for api here (names, "name.variant"), or NULL. */
static json_t *operators(const json_t *opinfo)
{
	json_t *names = json_array();
	for (size_t i = 0; i < ap_proto_opinfo_count(opinfo); i++) {
		struct ap_proto_opinfo_op op;
		struct ap_buf n = { 0 };
		ap_proto_opinfo_op(opinfo, i, &op);
		ap_buf_addf(&n, "%s%s%s", op.name ? op.name : "", *op.variant ? "." : "", op.variant);
		json_array_append_new(names, json_string(ap_buf_str(&n)));
		ap_buf_free(&n);
	}
	return names;
}

static int run_numeric(struct ap_worker *w, const struct ap_autocheck *o, const char *api,
		       struct tally *t)
{
	json_t *info = NULL;
	int r = call(w, ap_numeric_opinfo_request(api, o->devices), &info, o->limit_s);
	if (r || !ap_numeric_covered(info)) {
		json_decref(info);
		return harness(w, r, "opinfo", AP_NOTRUN, t);
	}
	t->operators = operators(info);
	if (!o->numeric) {
		count(t, "numeric", AP_NOTRUN, "the OpInfo samples run at --depth numeric");
		json_decref(info);
		return 0;
	}
	json_t *samples = make_samples(w, o, api, t, &r);
	if (json_array_size(samples))
		r = run_samples(w, o, api, samples, info, t);
	else if (samples)
		count(t, "numeric", AP_NOTRUN, "no sample of this dtype set runs on CPU here");
	json_decref(samples);
	json_decref(info);
	return r;
}

/* --- the summary ---------------------------------------------------------- */

/* The summary of t; r: the worker itself died or hung on this API (detail
 * says how). */
static json_t *summary(struct tally *t, int r, const struct ap_buf *detail)
{
	char hex[65];
	if (r) {
		t->worst = r == -AP_ETIMEOUT ? AP_LCHECK_TIMEOUT : AP_LCHECK_CRASH;
		ap_buf_reset(&t->reason);
		ap_buf_addf(&t->reason, "the worker %s during its checks: ",
			    r == -AP_ETIMEOUT ? "stopped answering" : "died");
		/* its stderr's tail: any bytes, made one line of text */
		ap_text_line(&t->reason, ap_buf_str(detail));
	}
	if (t->digest)
		ap_sha256_end(t->digest, hex);
	if (!t->n[0] && !r)
		ap_buf_adds(&t->reason, "no check applies: no family has it, and no OpInfo or "
			    "ModuleInfo entry stands for it");
	return ap_matrix_check(t->worst, t->reason.len ? ap_buf_str(&t->reason) : NULL,
			       t->family, json_incref(t->operators), t->n,
			       t->digest ? hex : NULL);
}

int ap_autocheck_run(struct ap_worker *w, const struct ap_autocheck *o, const char *api,
		     const char *cls, json_t **out)
{
	struct tally t = { 0 };
	int r = run_family(w, o, cls, &t);
	/* a spec overrides the automatic choice, as in check */
	if (!r && !t.family)
		r = run_numeric(w, o, api, &t);
	*out = summary(&t, r, &w->detail);
	json_decref(t.operators);
	ap_buf_free(&t.reason);
	return r;
}
