#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "evidence/journal.h"
#include "evidence/manifest.h"
#include "review/escape.h"
#include "review/review.h"
#include "check/verdict.h"
#include "base/yamldoc.h"

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

static const char *ap_s(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "-";
}

static int ap_yes(const json_t *policy, const char *key)
{
	const char *v = json_string_value(json_object_get(policy, key));
	return v && (!strcmp(v, "yes") || !strcmp(v, "true"));
}

static void ap_review_manifest(const struct ap_sub_env *e, json_t *reasons)
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

/* The top level holds environment directories and report outputs only. */
static void ap_review_top(const char *dir, const struct ap_submission *s, json_t *reasons)
{
	static const char *const reports[] = { "report.md", "report.en.md", "report.html",
					       "report.json", "junit.xml", NULL };
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int known = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    ap_submission_find(s, e->d_name);
		for (int i = 0; !known && reports[i]; i++)
			known = !strcmp(e->d_name, reports[i]);
		if (!known)
			ap_reason_add(reasons, "%s: unknown file or directory in the submission", e->d_name);
	}
	if (d)
		closedir(d);
}

static const json_t *ap_journaled_fingerprint(const struct ap_sub_env *e, json_t **recs)
{
	struct ap_buf path = { 0 }, err = { 0 };
	int torn = 0;
	size_t i;
	json_t *r;
	ap_buf_addf(&path, "%s/journal.jsonl", e->dir);
	*recs = NULL;
	ap_journal_read(ap_buf_str(&path), recs, &torn, &err);
	ap_buf_free(&path);
	ap_buf_free(&err);
	json_array_foreach(*recs, i, r)
		if (!strcmp(ap_s(r, "type"), "fingerprint"))
			return json_object_get(r, "data");
	return NULL;
}

static void ap_review_devices(const struct ap_sub_env *e, const json_t *fp, json_t *reasons)
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
			       "%savailable with count %lld and %zu names", e->name, ap_s(d, "type"),
			       avail ? "" : "not ", (long long)n, json_array_size(json_object_get(d, "names")));
		if (claimed && !strcmp(ap_s(d, "type"), claimed) && avail)
			found = 1;
	}
	if (!found)
		ap_reason_add(reasons, "%s: the environment claims device %s, but its fingerprint shows "
		       "none available", e->name, claimed);
}

static void ap_review_fingerprint(const struct ap_sub_env *e, json_t *reasons)
{
	const json_t *fp = json_object_get(e->bundle, "fingerprint");
	json_t *recs;
	const json_t *measured = ap_journaled_fingerprint(e, &recs);
	if (!fp || json_is_null(fp))
		ap_reason_add(reasons, "%s: no fingerprint", e->name);
	else if (!measured)
		ap_reason_add(reasons, "%s: no fingerprint in journal.jsonl to check bundle.json against",
		       e->name);
	else if (!json_equal(fp, measured))
		ap_reason_add(reasons, "%s: the fingerprint in bundle.json differs from the one journaled "
		       "as measured", e->name);
	if (fp && !json_is_null(fp))
		ap_review_devices(e, fp, reasons);
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
	json_decref(recs);
}

static int ap_status_allowed(const json_t *policy, const char *kind, const char *status)
{
	const json_t *allowed = json_object_get(json_object_get(policy, "statuses"), kind);
	size_t i;
	json_t *s;
	json_array_foreach(allowed, i, s)
		if (!strcmp(json_string_value(s) ? json_string_value(s) : "", status))
			return 1;
	return 0;
}

static void ap_review_checks(const struct ap_sub_env *e, const json_t *policy, json_t *reasons)
{
	const json_t *b = e->bundle;
	int found = json_is_true(json_object_get(json_object_get(b, "resolution"), "found"));
	int official = 0;
	size_t i, k;
	json_t *c, *kind;
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		const char *kd = ap_s(c, "kind"), *st = ap_s(c, "status");
		const char *why = json_string_value(json_object_get(c, "reason"));
		official += !strcmp(kd, "official");
		if (!strcmp(kd, "claim") && strcmp(st, "PASS"))
			ap_reason_add(reasons, "%s: claimed node id %s: %s", e->name,
			       ap_s(c, "node"), why ? why : "not valid");
		else if (!strcmp(kd, "official") && !strcmp(st, "NOTRUN") && !why)
			ap_reason_add(reasons, "%s: official test %s was not run and no reason is given",
			       e->name, ap_s(c, "name"));
		else if (!ap_status_allowed(policy, kd, st))
			ap_reason_add(reasons, "%s: check %s (%s) is %s%s%s, which the policy does not "
			       "allow", e->name, ap_s(c, "name"), kd, st, why ? ": " : "", why ? why : "");
	}
	json_array_foreach(found ? json_object_get(policy, "require_kinds") : NULL, k, kind) {
		int has = 0;
		json_array_foreach(json_object_get(b, "checks"), i, c)
			has |= !strcmp(ap_s(c, "kind"), json_string_value(kind) ? json_string_value(kind) : "");
		if (!has)
			ap_reason_add(reasons, "%s: no %s check, which the policy requires", e->name,
			       json_string_value(kind));
	}
	if (found && ap_yes(policy, "require_official") && !official)
		ap_reason_add(reasons, "%s: no official test result and no reason why none ran", e->name);
}

static void ap_review_env(const struct ap_sub_env *e, const json_t *policy, json_t *reasons)
{
	const json_t *err = json_object_get(e->bundle, "error");
	ap_review_manifest(e, reasons);
	if (err && !json_is_null(err))
		ap_reason_add(reasons, "%s: the environment could not be used: %s", e->name,
		       ap_s(err, "message"));
	ap_review_fingerprint(e, reasons);
	ap_review_checks(e, policy, reasons);
	size_t i;
	json_t *d;
	json_array_foreach(ap_yes(policy, "traces_agree") ? json_object_get(json_object_get(
		e->bundle, "comparison"), "differences") : NULL, i, d) {
		char *x = json_dumps(json_object_get(d, "expected"), JSON_ENCODE_ANY | JSON_COMPACT);
		char *y = json_dumps(json_object_get(d, "seen"), JSON_ENCODE_ANY | JSON_COMPACT);
		ap_reason_add(reasons, "%s: trace of %s differs at '%s': %s in the reference, %s here",
		       e->name, ap_s(d, "check"), ap_s(d, "step"), x ? x : "?", y ? y : "?");
		free(x);
		free(y);
	}
}

static int ap_env_matches(const struct ap_sub_env *e, const char *want)
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

json_t *ap_review(const char *dir, const json_t *policy, struct ap_buf *err)
{
	struct ap_submission s;
	if (ap_submission_load(&s, dir, err))
		return NULL;
	json_t *reasons = json_array();
	size_t i, k;
	json_t *want;
	json_array_foreach(json_object_get(policy, "require_envs"), k, want) {
		int present = 0;
		for (i = 0; i < s.n; i++)
			present |= ap_env_matches(&s.v[i], json_string_value(want) ? json_string_value(want) : "");
		if (!present)
			ap_reason_add(reasons, "environment %s is required by the policy and missing",
			       json_string_value(want));
	}
	ap_review_top(dir, &s, reasons);
	for (i = 0; i < s.n; i++)
		ap_review_env(&s.v[i], policy, reasons);
	ap_submission_free(&s);
	return reasons;
}

void ap_review_markdown(const char *dir, const json_t *reasons, const json_t *policy,
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
	ap_escape_md_code(ap_s(policy, "policy"), out);
	ap_buf_adds(out, ".\n\n");
	if (ok)
		ap_buf_adds(out, "Every file matches its manifest, the fingerprints match what was "
			    "measured, every required check is present in an allowed status, and "
			    "the traces agree.\n");
	json_array_foreach(reasons, i, r) {
		ap_buf_adds(out, "- ");
		ap_escape_md(json_string_value(r), out);
		ap_buf_adds(out, "\n");
	}
}
