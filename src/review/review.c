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
#include "base/jsonutil.h"
#include "base/yamldoc.h"
#include "check/signature.h"
#include "check/verdict.h"
#include "evidence/bundle.h"
#include "evidence/journal.h"
#include "evidence/manifest.h"
#include "evidence/sign.h"
#include "review/escape.h"
#include "review/outputs.h"
#include "review/review.h"

#define OFFICIAL_LOG_MAX (64u << 20)  /* bytes of official.log read back */

/* One environment under review: its bundle, and what its journal says was
 * measured. */
struct env_review {
	const struct ap_sub_env *e;
	json_t *records;   /* the journal's valid records */
	json_t *measured;  /* its checks as measured: the journaled ones, and the
			    * NOTRUN decisions check makes without measuring */
	json_t *early;     /* reasons found while reading the journal, told after
			    * the manifest's */
};

json_t *ap_policy_load(const char *path, struct ap_buf *err)
{
	json_t *p = path ? ap_yaml_load(path, err)
			 : ap_yaml_parse(ap_default_policy, ap_default_policy_len,
					 "(built-in) policies/default.yaml", err);
	if (p && (!json_is_object(p) || !json_is_object(json_object_get(p, "statuses")))) {
		ap_buf_addf(err, "%s:%d: a policy maps 'statuses' (kind: [STATUS...])",
			    path ? path : "(built-in)", ap_yaml_line(p));
		json_decref(p);
		return NULL;
	}
	return p;
}

static int review_yes(const json_t *policy, const char *key)
{
	const char *v = json_string_value(json_object_get(policy, key));
	return v && (!strcmp(v, "yes") || !strcmp(v, "true"));
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
 * (outputs.h), and the report's manifest, checked when it is there. */
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
	ap_output_verify(dir, s, reasons);
}

/* The data of the first journal record of type, or NULL. */
static const json_t *journaled(const struct env_review *v, const char *type)
{
	size_t i;
	json_t *r;
	json_array_foreach(v->records, i, r)
		if (!strcmp(ap_json_text(r, "type"), type))
			return json_object_get(r, "data");
	return NULL;
}

static void review_devices(const struct ap_sub_env *e, const json_t *fp, json_t *reasons)
{
	const char *claimed = json_string_value(json_object_get(json_object_get(e->bundle, "env"),
								 "device"));
	int found = !claimed || !strcmp(claimed, "cpu");
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(fp, "devices"), i, d) {
		int avail = json_is_true(json_object_get(d, "available"));
		json_int_t n = json_integer_value(json_object_get(d, "count"));
		if (avail != (n > 0) || (json_int_t)json_array_size(json_object_get(d, "names")) != n)
			ap_reason_add(reasons, "%s: fingerprint is not consistent with itself: device %s is "
			       "%savailable with count %lld and %zu names", e->name, ap_json_text(d, "type"),
			       avail ? "" : "not ", (long long)n, json_array_size(json_object_get(d, "names")));
		if (claimed && !strcmp(ap_json_text(d, "type"), claimed) && avail)
			found = 1;
	}
	if (!found)
		ap_reason_add(reasons, "%s: the environment claims device %s, but its fingerprint shows "
		       "none available", e->name, claimed);
}

static void review_fingerprint(const struct env_review *v, json_t *reasons)
{
	const struct ap_sub_env *e = v->e;
	const json_t *fp = json_object_get(e->bundle, "fingerprint");
	const json_t *measured = journaled(v, "fingerprint");
	if (!fp || json_is_null(fp))
		ap_reason_add(reasons, "%s: no fingerprint", e->name);
	else if (!measured)
		ap_reason_add(reasons, "%s: no fingerprint in journal.jsonl to check bundle.json against",
		       e->name);
	else if (!json_equal(fp, measured))
		ap_reason_add(reasons, "%s: the fingerprint in bundle.json differs from the one journaled "
		       "as measured", e->name);
	if (fp && !json_is_null(fp))
		review_devices(e, fp, reasons);
	const char *label = json_string_value(json_object_get(json_object_get(e->bundle, "env"),
							       "label"));
	const char *torch = json_string_value(json_object_get(json_object_get(fp, "torch"),
							       "version"));
	const char *tl = label ? strstr(label, "torch ") : NULL;
	if (tl && torch) {
		size_t n = strspn(tl + 6, "0123456789.");
		if (n && strncmp(torch, tl + 6, n))
			ap_reason_add(reasons, "%s: the label says torch %.*s but the fingerprint shows %s",
			       e->name, (int)n, tl + 6, torch);
	}
}

static int status_allowed(const json_t *policy, const char *kind, const char *status)
{
	const json_t *allowed = json_object_get(json_object_get(policy, "statuses"), kind);
	size_t i;
	json_t *s;
	json_array_foreach(allowed, i, s)
		if (!strcmp(json_string_value(s) ? json_string_value(s) : "", status))
			return 1;
	return 0;
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

static void review_checks(const struct ap_sub_env *e, const json_t *policy, json_t *reasons)
{
	const json_t *b = e->bundle;
	int found = ap_bundle_resolved(b);
	int official = 0;
	size_t i, k;
	json_t *c, *kind;
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		const char *kd = ap_json_text(c, "kind"), *st = ap_json_text(c, "status");
		const char *why = json_string_value(json_object_get(c, "reason"));
		official += !strcmp(kd, "official");
		if (!strcmp(kd, "claim") && !ap_status_is(st, AP_PASS))
			ap_reason_add(reasons, "%s: claimed node id %s: %s", e->name,
			       ap_json_text(c, "node"), why ? why : "not valid");
		else if (!strcmp(kd, "official") && ap_status_is(st, AP_NOTRUN) && !why)
			ap_reason_add(reasons, "%s: official test %s was not run and no reason is given",
			       e->name, ap_json_text(c, "name"));
		else if (!status_allowed(policy, kd, st))
			ap_reason_add(reasons, "%s: check %s (%s) is %s%s%s, which the policy does not "
			       "allow", e->name, ap_json_text(c, "name"), kd, st, why ? ": " : "", why ? why : "");
	}
	json_array_foreach(found ? json_object_get(policy, "require_kinds") : NULL, k, kind) {
		int has = 0;
		json_array_foreach(json_object_get(b, "checks"), i, c)
			has |= kind_in(ap_json_text(c, "kind"), json_string_value(kind));
		if (!has)
			ap_reason_add(reasons, "%s: no %s check, which the policy requires", e->name,
			       json_string_value(kind));
	}
	if (found && review_yes(policy, "require_official") && !official)
		ap_reason_add(reasons, "%s: no official test result and no reason why none ran", e->name);
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
}

/* A run journals its start, resolution, fingerprint and error once each;
 * bundle.json must hold the same. */
static void review_records(const struct env_review *v, json_t *reasons)
{
	static const struct { const char *type, *key, *what; } once[] = {
		{ "start", "env", "the environment (name, label, device)" },
		{ "resolution", "resolution", "the resolution of the target" },
		{ "error", "error", "the error" },
	};
	const char *name = v->e->name;
	for (size_t k = 0; k < sizeof(once) / sizeof(*once); k++) {
		size_t i, n = 0;
		json_t *r;
		json_array_foreach(v->records, i, r)
			n += !strcmp(ap_json_text(r, "type"), once[k].type);
		if (n > 1)
			ap_reason_add(reasons, "%s/journal.jsonl: %zu %s records, where a run writes one",
				      name, n, once[k].type);
		const json_t *m = journaled(v, once[k].type);
		const json_t *b = json_object_get(v->e->bundle, once[k].key);
		int b_null = !b || json_is_null(b), m_null = !m || json_is_null(m);
		if (b_null != m_null || (!b_null && !json_equal(b, m)))
			ap_reason_add(reasons, "%s: %s in bundle.json differs from journal.jsonl, "
				      "as measured", name, once[k].what);
	}
	const json_t *res = journaled(v, "resolution");
	if (res && strcmp(ap_json_text(res, "target"), ap_json_text(v->e->bundle, "target")))
		ap_reason_add(reasons, "%s: bundle.json is about %s, but the journal resolved %s", name,
			      ap_json_text(v->e->bundle, "target"), ap_json_text(res, "target"));
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
static int unmeasured_decision(const json_t *c)
{
	static const char *const kinds[] = { "plan", "probe", "resolution", "official", NULL };
	if (ap_check_status(c) != AP_NOTRUN)
		return 0;
	for (size_t i = 0; kinds[i]; i++)
		if (!strcmp(ap_json_text(c, "kind"), kinds[i]))
			return 1;
	return 0;
}

/* The key of a check in an index of checks: its kind and name. */
static const char *check_key(const json_t *c, struct ap_buf *key)
{
	ap_buf_reset(key);
	ap_buf_addf(key, "%s\n%s", ap_json_text(c, "kind"), ap_json_text(c, "name"));
	return ap_buf_str(key);
}

/* The journaled checks by key, each key's positions last first, so that
 * taking the last one matches them in the order they were measured. Linear,
 * however many checks a hostile journal holds. */
static json_t *index_journaled(const json_t *jchecks)
{
	json_t *idx = json_object(), *pos;
	struct ap_buf key = { 0 };
	for (size_t i = json_array_size(jchecks); idx && i-- > 0;) {
		const char *k = check_key(json_array_get(jchecks, i), &key);
		if (!(pos = json_object_get(idx, k)))
			json_object_set_new(idx, k, pos = json_array());
		json_array_append_new(pos, json_integer((json_int_t)i));
	}
	ap_buf_free(&key);
	return idx;
}

/* The position of the first journaled check of c's kind and name not
 * matched yet, taken from idx; -1 when there is none. */
static long match_journaled(json_t *idx, const json_t *c)
{
	struct ap_buf key = { 0 };
	json_t *pos = json_object_get(idx, check_key(c, &key));
	size_t n = json_array_size(pos);
	long k = n ? (long)json_integer_value(json_array_get(pos, n - 1)) : -1;
	if (n)
		json_array_remove(pos, n - 1);
	ap_buf_free(&key);
	return k;
}

/* Matches every check of bundle.json with the journal's, and builds
 * v->measured from what was journaled. */
static void review_measured_checks(struct env_review *v, json_t *reasons)
{
	const char *name = v->e->name;
	json_t *jchecks = json_array(), *r, *c;
	size_t i;
	json_array_foreach(v->records, i, r)
		if (!strcmp(ap_json_text(r, "type"), "check"))
			json_array_append(jchecks, json_object_get(r, "data"));
	json_t *idx = index_journaled(jchecks);
	char *used = calloc(json_array_size(jchecks) + 1, 1);
	v->measured = json_array();
	json_array_foreach(used && idx ? json_object_get(v->e->bundle, "checks") : NULL, i, c) {
		/* Judged from the resolutions after the run: judge_again makes it again. */
		if (ap_is_signature_check(c))
			continue;
		long k = match_journaled(idx, c);
		if (k < 0 && unmeasured_decision(c)) {
			json_t *copy = json_deep_copy(c);
			json_object_del(copy, "reference_status");
			json_array_append_new(v->measured, copy);
			continue;
		}
		if (k < 0) {
			ap_reason_add(reasons, "%s: check %s (%s) is %s in bundle.json, but journal.jsonl "
				      "has no record of it: it was never measured", name,
				      ap_json_text(c, "name"), ap_json_text(c, "kind"), ap_json_text(c, "status"));
			continue;
		}
		used[k] = 1;
		const json_t *m = json_array_get(jchecks, (size_t)k);
		json_array_append_new(v->measured, json_deep_copy(m));
		struct ap_buf d = { 0 };
		field_diffs(c, m, &d);
		if (d.len)
			ap_reason_add(reasons, "%s: check %s (%s) in bundle.json is not as journal.jsonl "
				      "recorded it when measured: %s", name, ap_json_text(c, "name"),
				      ap_json_text(c, "kind"), ap_buf_str(&d));
		ap_buf_free(&d);
	}
	json_array_foreach(used && idx ? jchecks : NULL, i, c) {
		if (used[i])
			continue;
		ap_reason_add(reasons, "%s: check %s (%s) was measured %s (journal.jsonl) but is "
			      "missing from bundle.json", name, ap_json_text(c, "name"), ap_json_text(c, "kind"),
			      ap_json_text(c, "status"));
		json_array_append_new(v->measured, json_deep_copy(c));
	}
	free(used);
	json_decref(idx);
	json_decref(jchecks);
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
static void review_official_log(const struct ap_sub_env *e, json_t *reasons)
{
	struct ap_buf path = { 0 }, log = { 0 }, line = { 0 };
	int r = 1;  /* not read yet */
	size_t i;
	json_t *c;
	ap_buf_addf(&path, "%s/official.log", e->dir);
	json_array_foreach(json_object_get(e->bundle, "checks"), i, c) {
		if (strcmp(ap_json_text(c, "kind"), "official") || ap_check_status(c) == AP_NOTRUN)
			continue;
		if (r == 1)
			r = ap_read_bounded(ap_buf_str(&path), OFFICIAL_LOG_MAX, O_NOFOLLOW, &log);
		ap_buf_reset(&line);
		ap_buf_addf(&line, "=== end %s: %s\n", ap_json_text(c, "name"), ap_json_text(c, "status"));
		if (r)
			ap_reason_add(reasons, "%s: official test %s is %s, but there is no readable "
				      "official.log to show that it ran", e->name, ap_json_text(c, "name"),
				      ap_json_text(c, "status"));
		else if (!has_line(&log, ap_buf_str(&line)))
			ap_reason_add(reasons, "%s: official test %s is %s in bundle.json, but "
				      "official.log does not record it ending so", e->name,
				      ap_json_text(c, "name"), ap_json_text(c, "status"));
	}
	ap_buf_free(&path);
	ap_buf_free(&log);
	ap_buf_free(&line);
}

/* --- the verdict, judged again ------------------------------------------- */

/* check sets each official check's reference_status after the run; it must be
 * what the reference's measured checks give. */
static void compare_reference_status(const struct ap_sub_env *e, const json_t *j,
				     json_t *reasons)
{
	json_t *first = json_object(), *c;
	struct ap_buf key = { 0 };
	size_t i;
	json_array_foreach(first ? json_object_get(j, "checks") : NULL, i, c)
		if (!json_object_get(first, check_key(c, &key)))
			json_object_set(first, ap_buf_str(&key), c);
	json_array_foreach(first ? json_object_get(e->bundle, "checks") : NULL, i, c) {
		const json_t *m = json_object_get(first, check_key(c, &key));
		const json_t *rs = json_object_get(c, "reference_status");
		const json_t *mrs = json_object_get(m, "reference_status");
		if (m && !strcmp(ap_json_text(c, "kind"), "official") && (rs ? !mrs || !json_equal(rs, mrs) : !!mrs))
			ap_reason_add(reasons, "%s: official test %s: its outcome in the reference is "
				      "not the one bundle.json gives", e->name, ap_json_text(c, "name"));
	}
	ap_buf_free(&key);
	json_decref(first);
}

/* The signature checks of b, as an array. */
static json_t *signature_checks(const json_t *b)
{
	json_t *out = json_array(), *c;
	size_t i;
	json_array_foreach(json_object_get(b, "checks"), i, c)
		if (ap_is_signature_check(c))
			json_array_append(out, c);
	return out;
}

static void compare_judged(const struct ap_sub_env *e, const json_t *j, json_t *reasons)
{
	json_t *bs = signature_checks(e->bundle), *js = signature_checks(j);
	if (!json_equal(bs, js))
		ap_reason_add(reasons, "%s: the signature check in bundle.json is not the one the "
			      "measured resolutions give", e->name);
	json_decref(bs);
	json_decref(js);
	const json_t *b = e->bundle;
	const char *was = ap_json_text(b, "verdict"), *is = ap_json_text(j, "verdict");
	if (strcmp(was, is))
		ap_reason_add(reasons, "%s: the verdict in bundle.json is %s, but its measured checks "
			      "make it %s", e->name, was, is);
	else if (!json_equal(json_object_get(b, "verdict_reasons"),
			     json_object_get(j, "verdict_reasons")))
		ap_reason_add(reasons, "%s: the reasons of the verdict in bundle.json are not those "
			      "its measured checks give", e->name);
	if (!json_equal(json_object_get(b, "comparison"), json_object_get(j, "comparison")))
		ap_reason_add(reasons, "%s: the trace comparison in bundle.json is not the one its "
			      "measured checks give against %s", e->name,
			      ap_json_text(json_object_get(j, "comparison"), "reference"));
	const json_t *ba = json_object_get(b, "adaptation"), *ja = json_object_get(j, "adaptation");
	if (!json_equal(json_object_get(b, "device_trace"), json_object_get(j, "device_trace")) ||
	    (ba || ja ? !ba || !ja || !json_equal(ba, ja) : 0))
		ap_reason_add(reasons, "%s: the backend adaptation in bundle.json is not the one its "
			      "measured checks give", e->name);
	compare_reference_status(e, j, reasons);
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
	json_t *cmp = json_object();
	json_object_set_new(j, "checks", json_deep_copy(v->measured));
	json_t *sig = signature_again(all, n, i, ref);
	if (sig)
		ap_bundle_add_check(j, sig);
	json_decref(sig);
	if (ref && json_is_true(json_object_get(json_object_get(j, "resolution"), "found"))) {
		json_object_set_new(cmp, "reference", json_string(ref->e->name));
		json_object_set_new(cmp, "differences", ap_trace_diff(ref->measured,
								      json_object_get(j, "checks")));
		ap_official_compare(ref->measured, json_object_get(j, "checks"));
	}
	json_object_set_new(j, "comparison", cmp);
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
		const char *r = json_string_value(json_object_get(json_object_get(v[i].e->bundle,
									   "comparison"), "reference"));
		mixed |= r && ref && strcmp(r, ref);
		ref = ref ? ref : r;
	}
	if (mixed)
		ap_reason_add(reasons, "the environments were compared with different references: "
			      "check compares every one with the same");
	const struct env_review *r = find_review(v, n, ref);
	const json_t *rerr = r ? json_object_get(r->e->bundle, "error") : NULL;
	if (ref && !r)
		ap_reason_add(reasons, "the reference environment %s is not in the submission: "
			      "the traces cannot be checked", ref);
	else if (r && ((rerr && !json_is_null(rerr)) || !json_is_true(json_object_get(
			       json_object_get(r->e->bundle, "resolution"), "found"))))
		ap_reason_add(reasons, "the reference environment %s could not be a reference: "
			      "the target was not resolved there, or it failed", ref);
	return ref;
}

static void review_traces(const struct ap_sub_env *e, const json_t *judged,
			  const json_t *policy, json_t *reasons)
{
	const json_t *cmp = json_object_get(judged, "comparison");
	size_t i;
	json_t *d;
	if (!review_yes(policy, "traces_agree"))
		return;
	if (json_is_true(json_object_get(json_object_get(e->bundle, "resolution"), "found")) &&
	    !json_object_get(cmp, "reference"))
		ap_reason_add(reasons, "%s: its traces were not compared with any reference",
			      e->name);
	json_array_foreach(json_object_get(cmp, "differences"), i, d) {
		struct ap_buf x = { 0 }, y = { 0 };
		show(json_object_get(d, "expected"), &x);
		show(json_object_get(d, "seen"), &y);
		ap_reason_add(reasons, "%s: trace of %s differs at '%s': %s in the reference, %s here",
			      e->name, ap_json_text(d, "check"), ap_json_text(d, "step"), ap_buf_str(&x),
			      ap_buf_str(&y));
		ap_buf_free(&x);
		ap_buf_free(&y);
	}
}

/* --- signatures ---------------------------------------------------------- */

static void review_signature(const struct ap_sub_env *e, const struct ap_trust *trust,
			     json_t *reasons)
{
	char fpr[AP_KEY_FPR_LEN + 1] = "";
	const char *named = json_string_value(json_object_get(json_object_get(e->bundle, "signer"),
							       "key"));
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

static void review_env(const struct env_review *all, size_t n, size_t i,
		       const struct env_review *ref, const struct ap_review_opts *o,
		       json_t *reasons)
{
	const struct env_review *v = &all[i];
	const struct ap_sub_env *e = v->e;
	const json_t *err = json_object_get(e->bundle, "error");
	review_manifest(e, reasons);
	review_signature(e, o->trust, reasons);
	json_array_extend(reasons, v->early);
	if (err && !json_is_null(err))
		ap_reason_add(reasons, "%s: the environment could not be used: %s", e->name,
		       ap_json_text(err, "message"));
	review_fingerprint(v, reasons);
	review_records(v, reasons);
	review_checks(e, o->policy, reasons);
	review_official_log(e, reasons);
	json_t *judged = judge_again(all, n, i, ref);
	compare_judged(e, judged, reasons);
	review_traces(e, judged, o->policy, reasons);
	json_decref(judged);
}

static int env_matches(const struct ap_sub_env *e, const char *want)
{
	const char *label = json_string_value(json_object_get(json_object_get(e->bundle, "env"),
							       "label"));
	size_t n = strlen(want);
	if (!n)
		return 0; /* and strstr(p + 1, "") below would walk past the label */
	if (!strcmp(e->name, want))
		return 1;
	for (const char *p = label ? strstr(label, want) : NULL; p; p = strstr(p + 1, want))
		if ((p == label || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
			return 1;
	return 0;
}

static void review_required_envs(const struct ap_submission *s, const json_t *policy,
				 json_t *reasons)
{
	size_t i, k;
	json_t *want;
	json_array_foreach(json_object_get(policy, "require_envs"), k, want) {
		int present = 0;
		for (i = 0; i < s->n; i++)
			present |= env_matches(&s->v[i], json_string_value(want) ? json_string_value(want) : "");
		if (!present)
			ap_reason_add(reasons, "environment %s is required by the policy and missing",
			       json_string_value(want));
	}
}

/* The policy asks for signatures, and no keys to check them were given. */
static void review_trust(const struct ap_review_opts *o, json_t *reasons)
{
	if (review_yes(o->policy, "require_signature") && !o->trust)
		ap_reason_add(reasons, "the policy requires evidence signed by a trusted key: give "
			      "the trusted public keys with --trust FILE");
}

json_t *ap_review(const char *dir, const struct ap_review_opts *o, struct ap_buf *err)
{
	struct ap_submission s;
	if (ap_submission_load_all(&s, dir, err))
		return NULL;
	json_t *reasons = json_array();
	struct env_review *v = calloc(s.n ? s.n : 1, sizeof(*v));
	size_t i;
	if (!v || !reasons) {
		ap_buf_addf(err, "%s: out of memory", dir);
		json_decref(reasons);
		ap_submission_free(&s);
		free(v);
		return NULL;
	}
	const char *name;
	json_t *why;
	/* A bundle that cannot be read is the submission's fault, not the
	 * reviewer's: a reason like any other, and the rest is still reviewed. */
	json_object_foreach(s.broken, name, why)
		ap_reason_add(reasons, "%s: the bundle cannot be read, so nothing of this "
			      "environment can be checked: %s", name, json_string_value(why));
	review_required_envs(&s, o->policy, reasons);
	review_top(dir, &s, reasons);
	review_trust(o, reasons);
	for (i = 0; i < s.n; i++) {
		v[i].e = &s.v[i];
		v[i].early = json_array();
		load_journal(&v[i], v[i].early);
		review_measured_checks(&v[i], v[i].early);
	}
	const struct env_review *ref = find_review(v, s.n, common_reference(v, s.n, reasons));
	for (i = 0; i < s.n; i++)
		review_env(v, s.n, i, ref, o, reasons);
	for (i = 0; i < s.n; i++) {
		json_decref(v[i].records);
		json_decref(v[i].measured);
		json_decref(v[i].early);
	}
	free(v);
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
	ap_escape_md_code(ap_json_text(o->policy, "policy"), out);
	ap_buf_adds(out, ".\n\n");
	if (ok)
		ap_buf_adds(out, "Every file matches its manifest, bundle.json agrees with what "
			    "the journal recorded as measured and with the verdict its checks give, "
			    "the fingerprints match what was measured, every required check is present "
			    "in an allowed status, and the traces agree.\n");
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
			 "submission", dir, "policy", json_string_value(json_object_get(o->policy, "policy")),
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
	ap_escape_xml(ap_json_text(o->policy, "policy"), out);
	ap_buf_addf(out, ", %s</system-out></testcase>\n  </testsuite>\n</testsuites>\n",
		    o->trust ? "signatures checked against the trust list" : "unsigned: no signature checked");
}
