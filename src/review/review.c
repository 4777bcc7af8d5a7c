#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/pool.h"
#include "base/jsonutil.h"
#include "check/signature.h"
#include "check/limits.h"
#include "check/tolerances.h"
#include "check/verdict.h"
#include "evidence/bundle.h"
#include "evidence/facts.h"
#include "evidence/journal.h"
#include "evidence/manifest.h"
#include "evidence/sign.h"
#include "review/escape.h"
#include "review/outputs.h"
#include "review/policy.h"
#include "review/review.h"

#define OFFICIAL_LOG_MAX (64u << 20)  /* bytes of official.log read back */

/* One environment under review: its bundle, and what its journal says was
 * measured. */
struct env_review {
	const struct ap_sub_env *e;
	struct ap_bundle_facts f;   /* its bundle.json */
	json_t *records;   /* the journal's valid records */
	struct ap_journal_facts j;  /* ... read */
	json_t *measured;  /* its checks as measured: the journaled ones, and the
			    * NOTRUN decisions check makes without measuring */
	json_t *early;     /* reasons found while reading the journal, told after
			    * the manifest's */
};

/* A text of the bundle for a reason line: "-" when it has none. */
static const char *text(const char *s)
{
	return s ? s : "-";
}

static void review_manifest(const struct ap_sub_env *e, json_t *reasons)
{
	struct ap_manifest_issue is[32];
	int n = ap_manifest_verify(e->dir, is, 32);
	if (n < 0) {
		ap_reason_add(reasons, "%s: no readable %s: the evidence cannot be checked", e->name,
		       AP_MANIFEST_NAME);
		return;
	}
	for (int i = 0; i < n && i < 32; i++) {
		switch (is[i].kind) {
		case AP_MF_MISMATCH:
			ap_reason_add(reasons, "%s/%s: sha256 does not match %s (changed after the run)",
			       e->name, is[i].path, AP_MANIFEST_NAME);
			break;
		case AP_MF_MISSING:
			ap_reason_add(reasons, "%s/%s: listed in %s but missing", e->name, is[i].path,
			       AP_MANIFEST_NAME);
			break;
		case AP_MF_UNLISTED:
			ap_reason_add(reasons, "%s/%s: unknown file, not listed in %s", e->name, is[i].path,
			       AP_MANIFEST_NAME);
			break;
		case AP_MF_DUPLICATE:
			ap_reason_add(reasons, "%s/%s:%d: %s is listed a second time", e->name,
			       AP_MANIFEST_NAME, is[i].line, is[i].path);
			break;
		case AP_MF_BADPATH:
			ap_reason_add(reasons, "%s/%s:%d: path '%s' would leave the bundle", e->name,
			       AP_MANIFEST_NAME, is[i].line, is[i].path);
			break;
		default:
			ap_reason_add(reasons, "%s/%s:%d: malformed line", e->name, AP_MANIFEST_NAME, is[i].line);
		}
	}
	if (n > 32)
		ap_reason_add(reasons, "%s: %d more evidence problems", e->name, n - 32);
}

/* The top level holds environment directories and report outputs only
 * (outputs.h), and the report's manifest (the outputs are checked apart:
 * review_concurrently()). */
static void review_top(const char *dir, const struct ap_submission *s, json_t *reasons)
{
	char **names;
	size_t n;
	if (!ap_dir_list(dir, 0, &names, &n)) {
		for (size_t i = 0; i < n; i++) {
			const char *name = names[i];
			int known = ap_submission_find(s, name) || json_object_get(s->broken, name) ||
				    !strcmp(name, AP_MANIFEST_NAME) || ap_output_known(name, s);
			if (!known)
				ap_reason_add(reasons, "%s: unknown file or directory in the submission",
					      name);
		}
		ap_dir_free(names, n);
	}
}

static void review_devices(const struct env_review *v, json_t *reasons)
{
	const struct ap_bundle_facts *f = &v->f;
	const char *claimed = f->device;
	int found = !claimed || !strcmp(claimed, "cpu");
	for (size_t i = 0; i < f->ndevices; i++) {
		const struct ap_fact_device *d = &f->devices[i];
		if (d->available != (d->count > 0) || (long long)d->nnames != d->count)
			ap_reason_add(reasons, "%s: fingerprint is not consistent with itself: device %s is "
			       "%savailable with count %lld and %zu names", v->e->name, d->type,
			       d->available ? "" : "not ", d->count, d->nnames);
		if (claimed && !strcmp(d->type, claimed) && d->available)
			found = 1;
	}
	if (!found)
		ap_reason_add(reasons, "%s: the environment claims device %s, but its fingerprint shows "
		       "none available", v->e->name, claimed);
}

static void review_fingerprint(const struct env_review *v, json_t *reasons)
{
	const struct ap_sub_env *e = v->e;
	const json_t *fp = v->f.fingerprint_json;
	const json_t *measured = v->j.first[AP_RECORD_FINGERPRINT];
	if (!fp || json_is_null(fp))
		ap_reason_add(reasons, "%s: no fingerprint", e->name);
	else if (!measured)
		ap_reason_add(reasons, "%s: no fingerprint in journal.jsonl to check bundle.json against",
		       e->name);
	else if (!json_equal(fp, measured))
		ap_reason_add(reasons, "%s: the fingerprint in bundle.json differs from the one journaled "
		       "as measured", e->name);
	if (fp && !json_is_null(fp))
		review_devices(v, reasons);
	const char *label = v->f.label, *torch = v->f.torch;
	const char *tl = label ? strstr(label, "torch ") : NULL;
	if (tl && torch) {
		size_t n = strspn(tl + 6, "0123456789.");
		if (n && strncmp(torch, tl + 6, n))
			ap_reason_add(reasons, "%s: the label says torch %.*s but the fingerprint shows %s",
			       e->name, (int)n, tl + 6, torch);
	}
}

/* Whether kind is one of alternatives ("probe", or "probe|numeric"). */
static int kind_in(const char *kind, const char *alternatives)
{
	size_t n = strlen(kind);
	for (const char *p = alternatives ? alternatives : ""; *p;) {
		size_t k = strcspn(p, "|");
		if (k == n && !strncmp(p, kind, n))
			return 1;
		p += k + (p[k] == '|');
	}
	return 0;
}

static void review_checks(const struct env_review *v, const struct ap_policy *policy,
			  json_t *reasons)
{
	const struct ap_bundle_facts *f = &v->f;
	const char *name = v->e->name;
	int official = 0;
	for (size_t i = 0; i < f->nchecks; i++) {
		const struct ap_fact_check *c = &f->checks[i];
		const char *kd = text(c->kind_word), *st = text(c->status_word), *why = c->reason;
		official += c->kind == AP_KIND_OFFICIAL;
		if (c->kind == AP_KIND_CLAIM && c->status != AP_PASS)
			ap_reason_add(reasons, "%s: claimed node id %s: %s", name, text(c->node),
				      why ? why : "not valid");
		else if (c->kind == AP_KIND_OFFICIAL && c->status == AP_NOTRUN && !why)
			ap_reason_add(reasons, "%s: official test %s was not run and no reason is given",
			       name, text(c->name));
		else if (!ap_policy_allows(policy, kd, st))
			ap_reason_add(reasons, "%s: check %s (%s) is %s%s%s, which the policy does not "
			       "allow", name, text(c->name), kd, st, why ? ": " : "", why ? why : "");
	}
	for (size_t k = 0; f->found && k < policy->nrequire_kinds; k++) {
		const char *kind = policy->require_kinds[k];
		int has = 0;
		for (size_t i = 0; i < f->nchecks; i++)
			has |= kind_in(text(f->checks[i].kind_word), kind);
		if (!has)
			ap_reason_add(reasons, "%s: no %s check, which the policy requires", name, kind);
	}
	if (f->found && policy->require_official && !official)
		ap_reason_add(reasons, "%s: no official test result and no reason why none ran", name);
}

/* --- what may be relaxed: tolerances and limits ---------------------------- */

/* The built-in tolerance overrides and backend limits, which the policy
 * accepts without saying so. */
struct builtins {
	struct ap_tolerances tol;
	struct ap_limits lim;
};

/* Whether tol is no looser than allowed. */
static int within(double rtol, double atol, const struct ap_tolerance *allowed)
{
	return rtol <= allowed->rtol && atol <= allowed->atol;
}

/* The measurements of one environment judged by one tolerance the policy
 * does not accept (its source and values), summed for one reason. */
struct relaxed {
	const char *source;
	double rtol, atol;
	size_t measures, failing, unknown;
	struct ap_buf names;   /* the first checks that fail under the default */
};

/* Whether measurement m of check c was judged by a looser tolerance than
 * the built-in one and every one the policy accepts; its values then. */
static int too_loose(const char *op, const struct ap_fact_check *c,
		     const struct ap_fact_measure *m, const struct ap_policy *policy,
		     const struct builtins *b, double *rtol, double *atol)
{
	enum ap_dtype dt;
	if (!c->dtype || ap_dtype_parse(c->dtype, &dt) || m->rtol.kind == AP_NUM_NONE ||
	    m->atol.kind == AP_NUM_NONE)
		return 0;
	*rtol = m->rtol.kind == AP_NUM_INT ? (double)m->rtol.i : m->rtol.d;
	*atol = m->atol.kind == AP_NUM_INT ? (double)m->atol.i : m->atol.d;
	struct ap_tolerance bt = ap_tolerance_for(&b->tol, op, dt, c->device, NULL);
	struct ap_tolerance pt = ap_tolerance_for(&policy->accept_tolerances, op, dt, c->device, NULL);
	return !within(*rtol, *atol, &bt) && !within(*rtol, *atol, &pt);
}

/* Adds measurement m of c to the sums of its tolerance in rs (n of them,
 * room for cap). */
static void relaxed_add(struct relaxed *rs, size_t *n, size_t cap, const struct ap_fact_check *c,
			const struct ap_fact_measure *m, double rtol, double atol)
{
	size_t k = 0;
	while (k < *n && !(rs[k].rtol == rtol && rs[k].atol == atol &&
			   !strcmp(rs[k].source, text(m->tol_source))))
		k++;
	if (k == *n && *n == cap)
		k = cap - 1;  /* past the room: summed with the last */
	else if (k == *n)
		rs[(*n)++] = (struct relaxed){ text(m->tol_source), rtol, atol, 0, 0, 0, { 0 } };
	struct relaxed *r = &rs[k];
	long long bad = m->default_mismatches.kind == AP_NUM_INT ? m->default_mismatches.i : -1;
	r->measures++;
	r->unknown += !m->has_default;
	if (m->has_default && bad != 0 && r->failing++ < 3)
		ap_buf_addf(&r->names, "%s%s %s (%lld elements, %.3gx the allowance)",
			    r->names.len ? "; " : "", text(c->name), text(m->output), bad,
			    m->default_worst_ratio);
}

/* A check excused as NOTRUN by a limit that neither the built-in limits nor
 * the policy's describe: a reason, with what the device did. */
static void review_limit(const struct env_review *v, const struct ap_fact_check *c,
			 const struct ap_policy *policy, const struct builtins *b, json_t *reasons)
{
	const struct ap_fact_limit *l = &c->limit;
	const char *op = v->f.target;
	if (ap_limit_match(&b->lim, c->device, op, l->raised, l->message) ||
	    ap_limit_match(&policy->accept_limits, c->device, op, l->raised, l->message))
		return;
	struct ap_buf seen = { 0 };
	if (l->raised)
		ap_buf_addf(&seen, "%s raised %s (%s) where the CPU raised nothing", text(c->device),
			    l->raised, text(l->message));
	else
		ap_buf_adds(&seen, "the bundle does not say what the device raised");
	ap_reason_add(reasons, "%s: check %s: excused as NOTRUN by limit %s (%s), which neither the "
		      "built-in limits nor the policy accept; without it the check FAILs: %s",
		      v->e->name, text(c->name), text(l->name), text(l->where), ap_buf_str(&seen));
	ap_buf_free(&seen);
}

/* What the submitter chose to relax, each numeric check's tolerance and
 * each limit that excused one, against what the policy accepts: a reason
 * per tolerance not accepted, with what the dtype's default gives (the
 * bundle keeps that comparison for this), and one per limit. */
static void review_relaxed(const struct env_review *v, const struct ap_policy *policy,
			   const struct builtins *b, json_t *reasons)
{
	struct relaxed rs[8];
	size_t n = 0;
	double rtol, atol;
	for (size_t i = 0; i < v->f.nchecks; i++) {
		const struct ap_fact_check *c = &v->f.checks[i];
		for (size_t k = 0; c->numeric && k < c->nmeasures; k++)
			if (too_loose(v->f.target, c, &c->measures[k], policy, b, &rtol, &atol))
				relaxed_add(rs, &n, 8, c, &c->measures[k], rtol, atol);
		if (c->has_limit && c->status == AP_NOTRUN)
			review_limit(v, c, policy, b, reasons);
	}
	for (size_t k = 0; k < n; k++) {
		struct relaxed *r = &rs[k];
		ap_reason_add(reasons, "%s: %zu measurement%s judged with rtol %.3g atol %.3g (%s), "
			      "looser than the built-in tolerance and than any the policy accepts; "
			      "under the dtype's default, %zu FAIL%s%s%s%s", v->e->name, r->measures,
			      r->measures == 1 ? "" : "s", r->rtol, r->atol, r->source, r->failing,
			      r->failing ? ": " : "", ap_buf_str(&r->names),
			      r->failing > 3 ? ", ..." : "",
			      r->unknown ? " (and the bundle keeps no comparison under the default "
			      "for some)" : "");
		ap_buf_free(&r->names);
	}
}

/* --- against the journal: what was measured ------------------------------ */

static void load_journal(struct env_review *v, json_t *reasons)
{
	struct ap_buf path = { 0 };
	json_t *problems = NULL;
	size_t i;
	json_t *p;
	ap_buf_addf(&path, "%s/journal.jsonl", v->e->dir);
	int r = ap_journal_validate(ap_buf_str(&path), &v->records, &problems);
	if (r)
		ap_reason_add(reasons, "%s/journal.jsonl: %s: nothing in bundle.json can be checked "
			      "against what was measured", v->e->name,
			      r == -EISDIR || r == -AP_ENOTREG || r == -ELOOP ? "not a regular file" : r == -EFBIG ?
			      "over the size limit of a journal" : strerror(-r));
	json_array_foreach(problems, i, p)
		ap_reason_add(reasons, "%s/journal.jsonl: %s", v->e->name, json_string_value(p));
	json_decref(problems);
	ap_buf_free(&path);
	if (!v->records)
		v->records = json_array();
	if (ap_journal_facts(v->records, &v->j))
		ap_reason_add(reasons, "%s/journal.jsonl: out of memory", v->e->name);
}

/* What bundle.json says of what a record of type journals, as written. */
static const json_t *bundle_side(const struct ap_bundle_facts *f, enum ap_record_type type)
{
	switch (type) {
	case AP_RECORD_START:
		return f->env_json;
	case AP_RECORD_RESOLUTION:
		return f->resolution_json;
	case AP_RECORD_ERROR:
		return f->error_json;
	default:
		return NULL;
	}
}

/* A run journals its start, resolution, fingerprint and error once each;
 * bundle.json must hold the same. */
static void review_records(const struct env_review *v, json_t *reasons)
{
	static const struct { enum ap_record_type type; const char *what; } once[] = {
		{ AP_RECORD_START, "the environment (name, label, device)" },
		{ AP_RECORD_RESOLUTION, "the resolution of the target" },
		{ AP_RECORD_ERROR, "the error" },
	};
	const char *name = v->e->name;
	for (size_t k = 0; k < sizeof(once) / sizeof(*once); k++) {
		size_t n = v->j.count[once[k].type];
		if (n > 1)
			ap_reason_add(reasons, "%s/journal.jsonl: %zu %s records, where a run writes one",
				      name, n, ap_record_type_name(once[k].type));
		const json_t *m = v->j.first[once[k].type];
		const json_t *b = bundle_side(&v->f, once[k].type);
		int b_null = !b || json_is_null(b), m_null = !m || json_is_null(m);
		if (b_null != m_null || (!b_null && !json_equal(b, m)))
			ap_reason_add(reasons, "%s: %s in bundle.json differs from journal.jsonl, "
				      "as measured", name, once[k].what);
	}
	if (v->j.first[AP_RECORD_RESOLUTION] && strcmp(text(v->j.resolved_target), text(v->f.target)))
		ap_reason_add(reasons, "%s: bundle.json is about %s, but the journal resolved %s", name,
			      text(v->f.target), text(v->j.resolved_target));
}

/* A short text of a JSON value for a reason line. */
static void show(const json_t *x, struct ap_buf *out)
{
	char *t = x ? json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	if (t && strlen(t) > 80)
		ap_buf_addf(out, "%.77s...", t);
	else
		ap_buf_adds(out, t ? t : "(none)");
	free(t);
}

/* Names each field in which bundle check c differs from journaled check m
 * (reference_status is the judge's, added after the run). */
static void field_diffs(const json_t *c, const json_t *m, struct ap_buf *out)
{
	const json_t *pair[2] = { c, m };
	const char *k;
	json_t *x;
	for (int side = 0; side < 2; side++)
		json_object_foreach((json_t *)pair[side], k, x) {
			const json_t *bx = json_object_get(c, k), *mx = json_object_get(m, k);
			if (!strcmp(k, "reference_status") || (side && bx) ||
			    (bx && mx && json_equal(bx, mx)))
				continue;
			ap_buf_addf(out, "%s%s ", out->len ? "; " : "", k);
			if (json_is_array(bx) || json_is_object(bx) || json_is_array(mx) ||
			    json_is_object(mx)) {
				ap_buf_adds(out, "differs");
				continue;
			}
			show(bx, out);
			ap_buf_adds(out, " here, measured ");
			show(mx, out);
		}
}

/* check makes these without measuring anything, so they are not journaled:
 * no family for the target, a probe that does not apply, an absent target,
 * no official test source. */
static int unmeasured_decision(const struct ap_fact_check *c)
{
	return c->status == AP_NOTRUN &&
	       (c->kind == AP_KIND_PLAN || c->kind == AP_KIND_PROBE ||
		c->kind == AP_KIND_RESOLUTION || c->kind == AP_KIND_OFFICIAL);
}

/* The key of a check in an index of checks: its kind and name. */
static const char *check_key(const struct ap_fact_check *c, struct ap_buf *key)
{
	ap_buf_reset(key);
	ap_buf_addf(key, "%s\n%s", text(c->kind_word), text(c->name));
	return ap_buf_str(key);
}

/* An index of checks by key, each key's checks in their order: sorted, so
 * that finding one costs a logarithm however many checks a hostile journal
 * holds. */
struct index_slot {
	char *key;
	size_t pos;   /* the check's position */
};

struct check_index {
	struct index_slot *v;
	size_t n;
	size_t *next; /* at a key's first slot: its first slot not taken yet */
};

static int slot_cmp(const void *a, const void *b)
{
	const struct index_slot *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static void index_free(struct check_index *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		free(ix->v[i].key);
	free(ix->v);
	free(ix->next);
	memset(ix, 0, sizeof(*ix));
}

/* Indexes the n checks of v. 0, or -ENOMEM with ix empty. */
static int index_build(struct check_index *ix, const struct ap_fact_check *v, size_t n)
{
	struct ap_buf key = { 0 };
	memset(ix, 0, sizeof(*ix));
	ix->v = calloc(n ? n : 1, sizeof(*ix->v));
	ix->next = calloc(n ? n : 1, sizeof(*ix->next));
	for (size_t i = 0; ix->v && ix->next && i < n; i++) {
		if (!(ix->v[i].key = strdup(check_key(&v[i], &key))))
			break;
		ix->v[i].pos = i;
		ix->n = i + 1;
	}
	ap_buf_free(&key);
	if (!ix->v || !ix->next || ix->n != n) {
		index_free(ix);
		return -ENOMEM;
	}
	qsort(ix->v, ix->n, sizeof(*ix->v), slot_cmp);
	for (size_t i = 0; i < ix->n; i++)
		ix->next[i] = i;
	return 0;
}

/* The first slot of key, ix->n when there is none. */
static size_t index_find(const struct check_index *ix, const char *key)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ix->v[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && !strcmp(ix->v[lo].key, key) ? lo : ix->n;
}

/* The position of the first check of c's kind and name, -1 when none. */
static long index_first(const struct check_index *ix, const struct ap_fact_check *c,
			struct ap_buf *key)
{
	size_t s = index_find(ix, check_key(c, key));
	return s < ix->n ? (long)ix->v[s].pos : -1;
}

/* The position of the first check of c's kind and name not taken yet, now
 * taken; -1 when there is none. */
static long index_take(struct check_index *ix, const struct ap_fact_check *c,
		       struct ap_buf *key)
{
	size_t s = index_find(ix, check_key(c, key)), t = s < ix->n ? ix->next[s] : ix->n;
	if (t == ix->n || strcmp(ix->v[t].key, ap_buf_str(key)))
		return -1;
	ix->next[s]++;
	return (long)ix->v[t].pos;
}

/* Matches bundle check c, not journaled, with the decisions check makes
 * without measuring; adds it to v->measured or says it was never measured. */
static void unjournaled(struct env_review *v, const struct ap_fact_check *c, json_t *reasons)
{
	if (!unmeasured_decision(c)) {
		ap_reason_add(reasons, "%s: check %s (%s) is %s in bundle.json, but journal.jsonl "
			      "has no record of it: it was never measured", v->e->name,
			      text(c->name), text(c->kind_word), text(c->status_word));
		return;
	}
	json_t *copy = json_deep_copy(c->json);
	json_object_del(copy, "reference_status");
	json_array_append_new(v->measured, copy);
}

/* Matches every check of bundle.json with the journal's, and builds
 * v->measured from what was journaled. */
static void review_measured_checks(struct env_review *v, json_t *reasons)
{
	const char *name = v->e->name;
	const struct ap_journal_facts *jf = &v->j;
	struct check_index idx;
	struct ap_buf key = { 0 };
	char *used = calloc(jf->nchecks + 1, 1);
	int ok = used && !index_build(&idx, jf->checks, jf->nchecks);
	v->measured = json_array();
	for (size_t i = 0; ok && i < v->f.nchecks; i++) {
		const struct ap_fact_check *c = &v->f.checks[i];
		/* Judged from the resolutions after the run: judge_again makes it again. */
		if (c->kind == AP_KIND_SIGNATURE)
			continue;
		long k = index_take(&idx, c, &key);
		if (k < 0) {
			unjournaled(v, c, reasons);
			continue;
		}
		used[k] = 1;
		const struct ap_fact_check *m = &jf->checks[k];
		json_array_append_new(v->measured, json_deep_copy(m->json));
		struct ap_buf d = { 0 };
		field_diffs(c->json, m->json, &d);
		if (d.len)
			ap_reason_add(reasons, "%s: check %s (%s) in bundle.json is not as journal.jsonl "
				      "recorded it when measured: %s", name, text(c->name),
				      text(c->kind_word), ap_buf_str(&d));
		ap_buf_free(&d);
	}
	for (size_t i = 0; ok && i < jf->nchecks; i++) {
		const struct ap_fact_check *m = &jf->checks[i];
		if (used[i])
			continue;
		ap_reason_add(reasons, "%s: check %s (%s) was measured %s (journal.jsonl) but is "
			      "missing from bundle.json", name, text(m->name), text(m->kind_word),
			      text(m->status_word));
		json_array_append_new(v->measured, json_deep_copy(m->json));
	}
	if (ok)
		index_free(&idx);
	free(used);
	ap_buf_free(&key);
}

/* Whether text holds line (with its newline) at the start of a line. */
static int has_line(const struct ap_buf *text, const char *line)
{
	size_t n = strlen(line);
	if (!text->len)
		return 0;
	for (const char *p = ap_buf_str(text); (p = memmem(p, text->len - (size_t)(p - text->data),
							   line, n)); p++)
		if (p == text->data || p[-1] == '\n')
			return 1;
	return 0;
}

/* An official test that ran left its output in official.log, ending with
 * "=== end NAME: STATUS". */
static void review_official_log(const struct env_review *v, json_t *reasons)
{
	const struct ap_sub_env *e = v->e;
	struct ap_buf path = { 0 }, log = { 0 }, line = { 0 };
	int r = 1;  /* not read yet */
	ap_buf_addf(&path, "%s/official.log", e->dir);
	for (size_t i = 0; i < v->f.nchecks; i++) {
		const struct ap_fact_check *c = &v->f.checks[i];
		if (c->kind != AP_KIND_OFFICIAL || c->status == AP_NOTRUN)
			continue;
		if (r == 1)
			r = ap_read_bounded(ap_buf_str(&path), OFFICIAL_LOG_MAX, O_NOFOLLOW, &log);
		ap_buf_reset(&line);
		ap_buf_addf(&line, "=== end %s: %s\n", text(c->name), text(c->status_word));
		if (r)
			ap_reason_add(reasons, "%s: official test %s is %s, but there is no readable "
				      "official.log to show that it ran", e->name, text(c->name),
				      text(c->status_word));
		else if (!has_line(&log, ap_buf_str(&line)))
			ap_reason_add(reasons, "%s: official test %s is %s in bundle.json, but "
				      "official.log does not record it ending so", e->name,
				      text(c->name), text(c->status_word));
	}
	ap_buf_free(&path);
	ap_buf_free(&log);
	ap_buf_free(&line);
}

/* --- the verdict, judged again ------------------------------------------- */

/* check sets each official check's reference_status after the run; it must be
 * what the reference's measured checks give (j: the bundle judged again). */
static void compare_reference_status(const struct env_review *v, const struct ap_bundle_facts *j,
				     json_t *reasons)
{
	struct check_index first;
	struct ap_buf key = { 0 };
	if (index_build(&first, j->checks, j->nchecks))
		return;
	for (size_t i = 0; i < v->f.nchecks; i++) {
		const struct ap_fact_check *c = &v->f.checks[i];
		long k = index_first(&first, c, &key);
		const json_t *rs = c->reference_status_json;
		const json_t *mrs = k < 0 ? NULL : j->checks[k].reference_status_json;
		if (k >= 0 && c->kind == AP_KIND_OFFICIAL && (rs ? !mrs || !json_equal(rs, mrs) : !!mrs))
			ap_reason_add(reasons, "%s: official test %s: its outcome in the reference is "
				      "not the one bundle.json gives", v->e->name, text(c->name));
	}
	ap_buf_free(&key);
	index_free(&first);
}

/* The signature checks of f, as an array. */
static json_t *signature_checks(const struct ap_bundle_facts *f)
{
	json_t *out = json_array();
	for (size_t i = 0; i < f->nchecks; i++)
		if (f->checks[i].kind == AP_KIND_SIGNATURE)
			json_array_append(out, (json_t *)f->checks[i].json);
	return out;
}

static void compare_judged(const struct env_review *v, const struct ap_bundle_facts *j,
			   json_t *reasons)
{
	const struct ap_bundle_facts *b = &v->f;
	const char *name = v->e->name;
	json_t *bs = signature_checks(b), *js = signature_checks(j);
	if (!json_equal(bs, js))
		ap_reason_add(reasons, "%s: the signature check in bundle.json is not the one the "
			      "measured resolutions give", name);
	json_decref(bs);
	json_decref(js);
	const char *was = text(b->verdict_word), *is = text(j->verdict_word);
	if (strcmp(was, is))
		ap_reason_add(reasons, "%s: the verdict in bundle.json is %s, but its measured checks "
			      "make it %s", name, was, is);
	else if (!json_equal(b->verdict_reasons_json, j->verdict_reasons_json))
		ap_reason_add(reasons, "%s: the reasons of the verdict in bundle.json are not those "
			      "its measured checks give", name);
	if (!json_equal(b->comparison_json, j->comparison_json))
		ap_reason_add(reasons, "%s: the trace comparison in bundle.json is not the one its "
			      "measured checks give against %s", name, text(j->reference));
	const json_t *ba = b->adaptation_json, *ja = j->adaptation_json;
	if (!json_equal(b->device_trace_json, j->device_trace_json) ||
	    (ba || ja ? !ba || !ja || !json_equal(ba, ja) : 0))
		ap_reason_add(reasons, "%s: the backend adaptation in bundle.json is not the one its "
			      "measured checks give", name);
	compare_reference_status(v, j, reasons);
}

/* The signature check of all[i] against ref (NULL: none), made from the
 * bundles' resolutions as check makes it; NULL where none applies. */
static json_t *signature_again(const struct env_review *all, size_t n, size_t i,
			       const struct env_review *ref)
{
	json_t **b = calloc(n, sizeof(*b));
	for (size_t k = 0; b && k < n; k++)
		b[k] = all[k].e->bundle;
	json_t *c = b ? ap_signature_check(b, n, i, ref ? (int)(ref - all) : -1) : NULL;
	free(b);
	return c;
}

/* Judges all[i] again from its measured checks, with the same judge check
 * uses, against the measured checks of ref (NULL: none); returns the judged
 * bundle. */
static json_t *judge_again(const struct env_review *all, size_t n, size_t i,
			   const struct env_review *ref)
{
	const struct env_review *v = &all[i];
	json_t *j = json_deep_copy(v->e->bundle);
	json_t *checks = json_deep_copy(v->measured);
	json_object_set_new(j, "checks", checks);
	json_t *sig = signature_again(all, n, i, ref);
	if (sig)
		ap_bundle_add_check(j, sig);
	json_decref(sig);
	if (ref && v->f.found) {
		json_t *differences = ap_trace_diff(ref->measured, checks);
		ap_official_compare(ref->measured, checks);
		ap_bundle_set_comparison(j, ref->e->name, differences);
	} else
		ap_bundle_set_comparison(j, NULL, NULL);
	ap_adaptation_decide(j);
	ap_verdict_decide(j);
	return j;
}

static const struct env_review *find_review(const struct env_review *v, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(v[i].e->name, name))
			return &v[i];
	return NULL;
}

/* The reference every environment was compared with. check compares all
 * with one; one named by some and not others would let an environment pick
 * itself and hide its differences. */
static const char *common_reference(const struct env_review *v, size_t n, json_t *reasons)
{
	const char *ref = NULL;
	int mixed = 0;
	for (size_t i = 0; i < n; i++) {
		const char *r = v[i].f.reference;
		mixed |= r && ref && strcmp(r, ref);
		ref = ref ? ref : r;
	}
	if (mixed)
		ap_reason_add(reasons, "the environments were compared with different references: "
			      "check compares every one with the same");
	const struct env_review *r = find_review(v, n, ref);
	if (ref && !r)
		ap_reason_add(reasons, "the reference environment %s is not in the submission: "
			      "the traces cannot be checked", ref);
	else if (r && (r->f.failed || !r->f.found))
		ap_reason_add(reasons, "the reference environment %s could not be a reference: "
			      "the target was not resolved there, or it failed", ref);
	return ref;
}

static void review_traces(const struct env_review *v, const struct ap_bundle_facts *judged,
			  const struct ap_policy *policy, json_t *reasons)
{
	const char *name = v->e->name;
	if (!policy->traces_agree)
		return;
	if (v->f.found && !judged->reference)
		ap_reason_add(reasons, "%s: its traces were not compared with any reference", name);
	for (size_t i = 0; i < judged->ndifferences; i++) {
		const struct ap_fact_difference *d = &judged->differences[i];
		struct ap_buf x = { 0 }, y = { 0 };
		show(d->expected, &x);
		show(d->seen, &y);
		ap_reason_add(reasons, "%s: trace of %s differs at '%s': %s in the reference, %s here",
			      name, d->check, d->step, ap_buf_str(&x), ap_buf_str(&y));
		ap_buf_free(&x);
		ap_buf_free(&y);
	}
}

/* --- signatures ---------------------------------------------------------- */

static void review_signature(const struct env_review *v, const struct ap_trust *trust,
			     json_t *reasons)
{
	const struct ap_sub_env *e = v->e;
	char fpr[AP_KEY_FPR_LEN + 1] = "";
	const char *named = v->f.signer_key;
	if (!trust)
		return;
	int st = ap_sign_verify(trust, e->dir, fpr);
	if (st < 0)
		ap_reason_add(reasons, "%s/%s: %s: the signature cannot be checked", e->name,
			      AP_MANIFEST_NAME, strerror(-st));
	else if (st == AP_SIG_ABSENT)
		ap_reason_add(reasons, "%s: not signed (no %s): only evidence signed by a trusted "
			      "key is accepted", e->name, AP_SIG_NAME);
	else if (st == AP_SIG_MALFORMED)
		ap_reason_add(reasons, "%s/%s: not a signature (one line of base64 of 64 bytes)",
			      e->name, AP_SIG_NAME);
	else if (st == AP_SIG_INVALID && ap_trust_has(trust, named))
		ap_reason_add(reasons, "%s: %s is not a valid signature of %s by trusted key %s: "
			      "the evidence changed after it was signed", e->name, AP_SIG_NAME,
			      AP_MANIFEST_NAME, named);
	else if (st == AP_SIG_INVALID)
		ap_reason_add(reasons, "%s: %s was not made by a trusted key (bundle.json names the "
			      "signer %s)", e->name, AP_SIG_NAME, named ? named : "(none)");
	else if (!named || strcmp(named, fpr))
		ap_reason_add(reasons, "%s: signed by trusted key %s, but bundle.json names the "
			      "signer %s", e->name, fpr, named ? named : "(none)");
}

/* --- one environment ------------------------------------------------------ */

/* A folder whose name is not its bundle's environment: the evidence names
 * the environment, and a renamed folder would pass for another. */
static void review_folder_name(const struct env_review *v, json_t *reasons)
{
	if (!v->f.failed && strcmp(v->e->name, v->f.env_name))
		ap_reason_add(reasons, "%s: the folder is named %s, but its bundle is of environment "
			      "%s: an environment is what its evidence says, not its folder's name",
			      v->e->name, v->e->name, v->f.env_name);
}


static void review_env(const struct env_review *all, size_t n, size_t i,
		       const struct env_review *ref, const struct ap_review_opts *o,
		       const struct builtins *b, json_t *reasons)
{
	const struct env_review *v = &all[i];
	const struct ap_sub_env *e = v->e;
	struct ap_bundle_facts judged;
	review_manifest(e, reasons);
	review_signature(v, o->trust, reasons);
	review_folder_name(v, reasons);
	json_array_extend(reasons, v->early);
	if (v->f.failed)
		ap_reason_add(reasons, "%s: the environment could not be used: %s", e->name,
		       text(v->f.error));
	review_fingerprint(v, reasons);
	review_records(v, reasons);
	review_checks(v, o->policy, reasons);
	review_relaxed(v, o->policy, b, reasons);
	review_official_log(v, reasons);
	json_t *j = judge_again(all, n, i, ref);
	if (ap_bundle_facts(j, &judged))
		ap_reason_add(reasons, "%s: out of memory judging it again", e->name);
	else {
		compare_judged(v, &judged, reasons);
		review_traces(v, &judged, o->policy, reasons);
		ap_bundle_facts_free(&judged);
	}
	json_decref(j);
}

/* Whether v's evidence names it want: its bundle's environment name (never
 * the folder's), or a word of its label. */
static int env_matches(const struct env_review *v, const char *want)
{
	const char *label = v->f.label;
	size_t n = strlen(want);
	if (!n)
		return 0; /* and strstr(p + 1, "") below would walk past the label */
	if (!strcmp(v->f.env_name, want))
		return 1;
	for (const char *p = label ? strstr(label, want) : NULL; p; p = strstr(p + 1, want))
		if ((p == label || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
			return 1;
	return 0;
}

static void review_required_envs(const struct env_review *v, size_t n,
				 const struct ap_policy *policy, json_t *reasons)
{
	for (size_t k = 0; k < policy->nrequire_envs; k++) {
		const char *want = policy->require_envs[k];
		int present = 0;
		for (size_t i = 0; i < n; i++)
			present |= env_matches(&v[i], want ? want : "");
		if (!present)
			ap_reason_add(reasons, "environment %s is required by the policy and missing",
			       want);
	}
}

/* Whether the version v starts with want at a component's end ("2.6" is
 * 2.6.0+debian, not 2.60). */
static int version_at(const char *v, const char *want)
{
	size_t n = strlen(want);
	return v && !strncmp(v, want, n) && (!v[n] || v[n] == '.' || v[n] == '+' || v[n] == 'a' ||
					     v[n] == 'b' || v[n] == 'r' || v[n] == 'd');
}

/* Whether v has every fact of q; the first it lacks, or the evidence of
 * each it has, appended to why. */
static int facts_met(const struct env_review *v, const struct ap_policy_fact *q, struct ap_buf *why)
{
	const struct ap_bundle_facts *f = &v->f;
	if (q->env && !env_matches(v, q->env))
		return ap_buf_addf(why, "its bundle names it %s, label '%s'", f->env_name,
				   text(f->label)), 0;
	if (q->env)
		ap_buf_addf(why, "bundle env %s, label '%s'", f->env_name, text(f->label));
	if (q->device || q->devices) {
		const struct ap_fact_device *d = NULL;
		for (size_t i = 0; i < f->ndevices && !d; i++)
			if (f->devices[i].available && f->devices[i].count >= (q->devices ? q->devices : 1) &&
			    (!q->device || !strcmp(f->devices[i].type, q->device)))
				d = &f->devices[i];
		if (!d)
			return ap_buf_addf(why, "%sits fingerprint shows no %ld %s device%s available",
					   why->len ? "; but " : "", q->devices ? q->devices : 1,
					   q->device ? q->device : "accelerator", q->devices > 1 ? "s" : ""), 0;
		ap_buf_addf(why, "%sfingerprint devices: %lld %s available", why->len ? ", " : "",
			    d->count, d->type);
	}
	if (q->torch && !version_at(f->torch, q->torch))
		return ap_buf_addf(why, "%sits fingerprint shows torch %s", why->len ? "; but " : "",
				   text(f->torch)), 0;
	if (q->torch)
		ap_buf_addf(why, "%sfingerprint torch %s", why->len ? ", " : "", f->torch);
	size_t k = 0;
	while (q->plugin && k < f->nplugins && strcmp(f->plugins[k].name, q->plugin))
		k++;
	if (q->plugin && k == f->nplugins)
		return ap_buf_addf(why, "%sits fingerprint shows no plugin %s loaded",
				   why->len ? "; but " : "", q->plugin), 0;
	if (q->plugin)
		ap_buf_addf(why, "%sfingerprint plugin %s", why->len ? ", " : "", q->plugin);
	return 1;
}

/* The facts q names, for a message: "env A2, device npu, devices 8". */
static void facts_text(const struct ap_policy_fact *q, struct ap_buf *out)
{
	if (q->env)
		ap_buf_addf(out, "env %s", q->env);
	if (q->device)
		ap_buf_addf(out, "%sdevice %s", out->len ? ", " : "", q->device);
	if (q->devices)
		ap_buf_addf(out, "%sdevices %ld", out->len ? ", " : "", q->devices);
	if (q->torch)
		ap_buf_addf(out, "%storch %s", out->len ? ", " : "", q->torch);
	if (q->plugin)
		ap_buf_addf(out, "%splugin %s", out->len ? ", " : "", q->plugin);
}

/* Each requirement of the policy's require_facts is met by an environment
 * of the submission, by its own evidence: the one that meets it, with the
 * fields that do, goes to met (when not NULL); none is a reason that says
 * what each environment lacks. */
static void review_required_facts(const struct env_review *v, size_t n,
				  const struct ap_policy *policy, json_t *met, json_t *reasons)
{
	for (size_t k = 0; k < policy->nrequire_facts; k++) {
		const struct ap_policy_fact *q = &policy->require_facts[k];
		struct ap_buf facts = { 0 }, lacks = { 0 }, why = { 0 };
		size_t i = 0;
		facts_text(q, &facts);
		for (; i < n; i++) {
			ap_buf_reset(&why);
			if (facts_met(&v[i], q, &why))
				break;
			if (i < 8)
				ap_buf_addf(&lacks, "%s%s: %s", lacks.len ? "; " : "", v[i].e->name,
					    ap_buf_str(&why));
		}
		if (i < n && met)
			ap_reason_add(met, "requirement {%s} (policy line %d): met by %s (%s)",
				      ap_buf_str(&facts), q->line, v[i].e->name, ap_buf_str(&why));
		else if (i == n)
			ap_reason_add(reasons, "the policy requires an environment with {%s} (line %d), "
				      "and none has it: %s", ap_buf_str(&facts), q->line,
				      lacks.len ? ap_buf_str(&lacks) : "no environment");
		ap_buf_free(&facts);
		ap_buf_free(&lacks);
		ap_buf_free(&why);
	}
}

/* The policy asks for signatures, and no keys to check them were given. */
static void review_trust(const struct ap_review_opts *o, json_t *reasons)
{
	if (o->policy->require_signature && !o->trust)
		ap_reason_add(reasons, "the policy requires evidence signed by a trusted key: give "
			      "the trusted public keys with --trust FILE");
}

static void reviews_free(struct env_review *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ap_bundle_facts_free(&v[i].f);
		ap_journal_facts_free(&v[i].j);
		json_decref(v[i].records);
		json_decref(v[i].measured);
		json_decref(v[i].early);
	}
	free(v);
}

/* Reads every bundle of s into v (s->n of them). 0 or -ENOMEM. */
static int reviews_read(const struct ap_submission *s, struct env_review *v)
{
	for (size_t i = 0; i < s->n; i++) {
		v[i].e = &s->v[i];
		if (ap_bundle_facts(s->v[i].bundle, &v[i].f))
			return -ENOMEM;
	}
	return 0;
}

/* The two halves of a review that take time, run at once: the report's
 * outputs drawn again (outputs.h), and every environment's evidence. Each
 * has reasons of its own, told in that order. */
struct half {
	int outputs;                      /* this half: the outputs, else the environments */
	const char *dir;
	const struct ap_submission *s;
	struct env_review *v;
	const struct ap_review_opts *o;
	const struct builtins *b;
	json_t *reasons;
};

static void review_half(void *item)
{
	struct half *h = item;
	size_t n = h->s->n;
	if (h->outputs) {
		ap_output_verify(h->dir, h->s, h->reasons);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		h->v[i].early = json_array();
		load_journal(&h->v[i], h->v[i].early);
		review_measured_checks(&h->v[i], h->v[i].early);
	}
	const struct env_review *ref = find_review(h->v, n, common_reference(h->v, n, h->reasons));
	for (size_t i = 0; i < n; i++)
		review_env(h->v, n, i, ref, h->o, h->b, h->reasons);
}

json_t *ap_review(const char *dir, const struct ap_review_opts *o, struct ap_buf *err)
{
	struct ap_submission s;
	if (ap_submission_load_all(&s, dir, err))
		return NULL;
	json_t *reasons = json_array();
	struct env_review *v = calloc(s.n ? s.n : 1, sizeof(*v));
	if (!v || !reasons || reviews_read(&s, v)) {
		ap_buf_addf(err, "%s: out of memory", dir);
		json_decref(reasons);
		if (v)
			reviews_free(v, s.n);
		ap_submission_free(&s);
		return NULL;
	}
	const char *name;
	json_t *why;
	/* A bundle that cannot be read is the submission's fault, not the
	 * reviewer's: a reason like any other, and the rest is still reviewed. */
	json_object_foreach(s.broken, name, why)
		ap_reason_add(reasons, "%s: the bundle cannot be read, so nothing of this "
			      "environment can be checked: %s", name, json_string_value(why));
	review_required_envs(v, s.n, o->policy, reasons);
	review_required_facts(v, s.n, o->policy, o->met, reasons);
	review_top(dir, &s, reasons);
	struct builtins b = { { 0 }, { 0 } };
	struct ap_buf berr = { 0 };
	if (ap_tolerances_load(&b.tol, NULL, &berr) || ap_limits_load(&b.lim, NULL, &berr))
		ap_reason_add(reasons, "the built-in tolerances or limits do not load: %s",
			      ap_buf_str(&berr));
	ap_buf_free(&berr);
	struct half halves[2] = { { 1, dir, &s, v, o, &b, json_array() },
				  { 0, dir, &s, v, o, &b, json_array() } };
	ap_pool_run(halves, 2, sizeof(*halves), review_half);
	ap_tolerances_free(&b.tol);
	ap_limits_free(&b.lim);
	json_array_extend(reasons, halves[0].reasons);
	review_trust(o, reasons);
	json_array_extend(reasons, halves[1].reasons);
	json_decref(halves[0].reasons);
	json_decref(halves[1].reasons);
	reviews_free(v, s.n);
	ap_submission_free(&s);
	return reasons;
}

void ap_review_markdown(const char *dir, const json_t *reasons, const struct ap_review_opts *o,
			struct ap_buf *out)
{
	size_t i;
	json_t *r;
	int ok = !json_array_size(reasons);
	ap_buf_addf(out, "## apiparity review: %s\n\n", ok ? "ACCEPT" : "CHANGES-NEEDED");
	/* Reasons quote names from the submission: escaped, none can add a
	 * line (a forged "ACCEPT" heading) to the review. */
	ap_buf_adds(out, "Submission ");
	ap_escape_md_code(dir, out);
	ap_buf_adds(out, ", policy ");
	ap_escape_md_code(text(o->policy->name), out);
	ap_buf_adds(out, ".\n\n");
	if (ok)
		ap_buf_adds(out, "Every file matches its manifest, bundle.json agrees with what "
			    "the journal recorded as measured and with the verdict its checks give, "
			    "the fingerprints match what was measured, every required check is present "
			    "in an allowed status, the traces agree, and every report output at the top "
			    "is what the bundles give.\n");
	if (ok) {
		const struct ap_policy *p = o->policy;
		ap_buf_addf(out, "\nPolicy: %zu environment%s required by name or label and %zu by facts "
			    "of their evidence; signatures %s; %zu tolerance override%s and %zu backend "
			    "limit%s accepted beyond the built-in ones (any other the submitter chose is "
			    "a reason).\n", p->nrequire_envs, p->nrequire_envs == 1 ? "" : "s",
			    p->nrequire_facts, p->require_signature ? "required" : "not required",
			    p->accept_tolerances.n, p->accept_tolerances.n == 1 ? "" : "s",
			    p->accept_limits.n, p->accept_limits.n == 1 ? "" : "s");
	}
	if (ok && json_array_size(o->met)) {
		ap_buf_adds(out, "\nThe policy's requirements, each met by an environment's own "
			    "evidence:\n\n");
		json_array_foreach(o->met, i, r) {
			ap_buf_adds(out, "- ");
			ap_escape_md(json_string_value(r), out);
			ap_buf_adds(out, "\n");
		}
	}
	if (ok && o->trust)
		ap_buf_addf(out, "\nEvery environment's manifest is signed by a trusted key (%zu in "
			    "the trust list).\n", ap_trust_count(o->trust));
	else if (ok)
		ap_buf_adds(out, "\nUnsigned: no signature was checked. This shows that the evidence "
			    "agrees with itself, which catches a bundle edited alone; it cannot show "
			    "that the bundle, the journal and the logs were not edited together and "
			    "resealed. For that, sign with `check --sign KEY` and review with "
			    "`verify --trust FILE`.\n");
	json_array_foreach(reasons, i, r) {
		ap_buf_adds(out, "- ");
		ap_escape_md(json_string_value(r), out);
		ap_buf_adds(out, "\n");
	}
}

json_t *ap_review_json(const char *dir, const json_t *reasons, const struct ap_review_opts *o)
{
	json_t *findings = json_array();
	size_t i;
	json_t *r;
	json_array_foreach(reasons, i, r)
		json_array_append_new(findings, json_pack("{s:O}", "message", r));
	return json_pack("{s:s, s:s?, s:s?, s:s, s:b, s:o}", "schema", "apiparity.review/1",
			 "submission", dir, "policy", o->policy->name,
			 "decision", json_array_size(reasons) ? "CHANGES-NEEDED" : "ACCEPT",
			 "signed", o->trust != NULL, "findings", findings);
}

void ap_review_junit(const char *dir, const json_t *reasons, const struct ap_review_opts *o,
		     struct ap_buf *out)
{
	size_t n = json_array_size(reasons), i;
	json_t *r;
	ap_buf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"apiparity verify\">\n"
		    "  <testsuite name=\"");
	ap_escape_xml(dir, out);
	ap_buf_addf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n", n + 1,
		    n + (n > 0));
	json_array_foreach(reasons, i, r) {
		ap_buf_addf(out, "    <testcase classname=\"apiparity.verify.finding\" name=\"finding %zu\">"
			    "<failure message=\"", i + 1);
		ap_escape_xml(json_string_value(r), out);
		ap_buf_adds(out, "\"/></testcase>\n");
	}
	ap_buf_adds(out, "    <testcase classname=\"apiparity.verify\" name=\"decision\">");
	if (n)
		ap_buf_addf(out, "<failure message=\"CHANGES-NEEDED: %zu finding%s\"/>", n, n == 1 ? "" : "s");
	ap_buf_adds(out, "<system-out>policy ");
	ap_escape_xml(text(o->policy->name), out);
	ap_buf_addf(out, ", %s</system-out></testcase>\n  </testsuite>\n</testsuites>\n",
		    o->trust ? "signatures checked against the trust list" : "unsigned: no signature checked");
}
