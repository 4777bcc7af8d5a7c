#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonutil.h"
#include "check/signature.h"
#include "check/verdict.h"
#include "evidence/bundle.h"

static const json_t *find_check(const json_t *checks, const char *name)
{
	size_t i;
	json_t *c;
	json_array_foreach(checks, i, c)
	{
		const char *n = json_string_value(json_object_get(c, "name"));
		if (n && !strcmp(n, name))
			return c;
	}
	return NULL;
}

static void diff_add(json_t *out, const char *check, const char *step,
			const json_t *expected, const json_t *seen)
{
	json_array_append_new(out, json_pack("{s:s, s:s, s:O, s:O}", "check", check,
					     "step", step, "expected",
					     expected ? expected : json_null(),
					     "seen", seen ? seen : json_null()));
}

/* outcome_differs: the check already differs in outcome, so a trace that
 * merely stops early (the probe failed there) adds nothing. */
static void diff_steps(json_t *out, const char *name, const json_t *rt, const json_t *t,
			  int outcome_differs)
{
	size_t n = json_array_size(rt) > json_array_size(t) ? json_array_size(rt)
							    : json_array_size(t);
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(rt, i), *s = json_array_get(t, i);
		const char *rs = json_string_value(json_object_get(r, "step"));
		const char *ss = json_string_value(json_object_get(s, "step"));
		if (rs && ss && !strcmp(rs, ss)) {
			if (!json_equal(json_object_get(r, "value"), json_object_get(s, "value")))
				diff_add(out, name, rs, json_object_get(r, "value"),
					    json_object_get(s, "value"));
			continue;
		}
		if (!s && outcome_differs)
			return;
		/* The traces went out of step: report the first divergence only,
		 * since every later step would differ too. */
		struct ap_buf other = { 0 };
		ap_buf_addf(&other, ss ? "(step '%s' instead)" : "(no such step)", ss);
		json_t *seen = json_string(ap_buf_str(&other));
		json_t *absent = json_string("(no such step)");
		diff_add(out, name, rs ? rs : ss, r ? json_object_get(r, "value") : absent, seen);
		json_decref(seen);
		json_decref(absent);
		ap_buf_free(&other);
		return;
	}
}

json_t *ap_trace_diff(const json_t *ref_checks, const json_t *checks)
{
	json_t *out = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(checks, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const json_t *r = name ? find_check(ref_checks, name) : NULL;
		/* Probes and scripts are the same code everywhere; an official
		 * test exists, or can start, only where its version has it. */
		if (!r || !kind || (strcmp(kind, "probe") && strcmp(kind, "script")))
			continue;
		const json_t *rs = json_object_get(r, "status"), *cs = json_object_get(c, "status");
		int differs = !json_equal(rs, cs);
		if (differs)
			diff_add(out, name, "(outcome)", rs, cs);
		diff_steps(out, name, json_object_get(r, "trace"), json_object_get(c, "trace"),
			      differs);
	}
	return out;
}

void ap_reason_add(json_t *reasons, const char *fmt, ...)
{
	struct ap_buf r = { 0 };
	va_list ap;
	va_start(ap, fmt);
	ap_buf_vaddf(&r, fmt, ap);
	va_end(ap);
	json_array_append_new(reasons, json_string(ap_buf_str(&r)));
	ap_buf_free(&r);
}

/* A short text for a JSON value in a reason line. */
static char *show(const json_t *v)
{
	return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

/* An official test that fails here but passed in the reference is an
 * inconsistency; one that fails in the reference too (or was not run there)
 * says more about the environment than the API, and is a limit. */
static int official_limit(const json_t *c)
{
	const char *kind = json_string_value(json_object_get(c, "kind"));
	const char *ref = json_string_value(json_object_get(c, "reference_status"));
	return kind && !strcmp(kind, "official") && !ap_status_is(ref, AP_PASS);
}

/* A signature that differs from a reference at another torch release: the
 * change is stated as a limit, and the signature was still verified (see
 * check/signature.h). */
static int signature_limit(const json_t *c, json_t *reasons)
{
	if (!ap_is_signature_check(c) || ap_check_status(c) != AP_WARN)
		return 0;
	ap_reason_add(reasons, "signature: %s (a limit: another torch release)",
		      ap_json_text(c, "reason"));
	return 1;
}

/* A numeric check that compared this environment's CPU with the reference's
 * under another torch version: a difference there is a change between
 * versions, a limit, not an inconsistency of the API. */
static int numeric_limit(const json_t *c)
{
	const char *kind = json_string_value(json_object_get(c, "kind"));
	return kind && !strcmp(kind, "numeric") && ap_check_status(c) == AP_FAIL &&
	       json_is_string(json_object_get(c, "across")) &&
	       json_is_false(json_object_get(c, "same_torch"));
}

/* Whether check c, passed, counts as behaviour verified. */
static int verifies(const json_t *c)
{
	const char *kind = json_string_value(json_object_get(c, "kind"));
	return kind && (!strcmp(kind, "probe") || !strcmp(kind, "script") ||
			!strcmp(kind, "numeric"));
}

/* Whether c verified the target: a probe, script or numeric check that
 * passed, or a signature compared with another environment's. */
static int verified(const json_t *c)
{
	enum ap_status st = ap_check_status(c);
	if (ap_is_signature_check(c))
		return st == AP_PASS || st == AP_WARN;
	return st == AP_PASS && verifies(c);
}

/* A numeric check of a device against its CPU: its status, or
 * AP_STATUS_UNKNOWN for any other check. */
static enum ap_status device_numeric(const json_t *c)
{
	const char *kind = json_string_value(json_object_get(c, "kind"));
	const char *against = json_string_value(json_object_get(c, "against"));
	return kind && !strcmp(kind, "numeric") && against && !strcmp(against, "cpu") &&
	       !json_is_string(json_object_get(c, "across")) ?
	       ap_check_status(c) : AP_STATUS_UNKNOWN;
}

/* Whether b's devices ran samples that a known limit of the backend excused
 * (check/limits.h) and none that was compared and agreed: then nothing
 * verified the target there, whatever the rest passed. */
static int only_limits_on_the_device(const json_t *b)
{
	size_t i;
	json_t *c;
	int excused = 0, passed = 0;
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		enum ap_status st = device_numeric(c);
		excused += st == AP_NOTRUN && json_object_get(c, "limit");
		passed += st == AP_PASS;
	}
	return excused && !passed;
}

static int failed_checks(const json_t *b, json_t *reasons, int *passed, int *limits)
{
	size_t i;
	json_t *c;
	int failed = 0;
	*passed = 0;
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		enum ap_status st = ap_check_status(c);
		const char *why = json_string_value(json_object_get(c, "reason"));
		const char *ref = json_string_value(json_object_get(c, "reference_status"));
		*passed += verified(c);
		if (signature_limit(c, reasons)) {
			(*limits)++;
			continue;
		}
		if (!ap_status_failed(st))
			continue;
		if (numeric_limit(c)) {
			(*limits)++;
			ap_reason_add(reasons, "check %s: %s (torch %s here, so a change between "
				      "versions, not counted against the API)", json_string_value(
				      json_object_get(c, "name")), why ? why : "-",
				      ap_json_text(json_object_get(b, "fingerprint") ?
				      json_object_get(json_object_get(b, "fingerprint"), "torch") : NULL,
				      "version"));
			continue;
		}
		if (official_limit(c)) {
			(*limits)++;
			ap_reason_add(reasons, "official test %s: %s: %s (%s in the reference, so not "
				  "counted against the API)", json_string_value(json_object_get(c, "name")),
				  ap_status_name(st), why ? why : "-", ref ? ref : "not run");
			continue;
		}
		failed++;
		ap_reason_add(reasons, "check %s: %s: %s",
			  json_string_value(json_object_get(c, "name")), ap_status_name(st),
			  why ? why : "-");
	}
	return failed;
}

void ap_official_compare(const json_t *ref_checks, json_t *checks)
{
	size_t i;
	json_t *c;
	json_array_foreach(checks, i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const char *name = json_string_value(json_object_get(c, "name"));
		if (!kind || strcmp(kind, "official") || !name)
			continue;
		const json_t *r = find_check(ref_checks, name);
		json_object_set(c, "reference_status", r ? json_object_get(r, "status") : json_null());
	}
}

static int verdict_differences(const json_t *b, json_t *reasons)
{
	const json_t *cmp = json_object_get(b, "comparison");
	const char *ref = json_string_value(json_object_get(cmp, "reference"));
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(cmp, "differences"), i, d) {
		char *want = show(json_object_get(d, "expected"));
		char *seen = show(json_object_get(d, "seen"));
		struct ap_buf step = { 0 };
		ap_buf_addf(&step, "%s, step '%s'", json_string_value(json_object_get(d, "check")),
			    json_string_value(json_object_get(d, "step")));
		struct ap_buf vs = { 0 };
		ap_buf_addf(&vs, "%s (as in %s)", want ? want : "?", ref ? ref : "the reference");
		ap_reason_add(reasons, "trace differs: %s: expected %s, seen %s", ap_buf_str(&step),
			  ap_buf_str(&vs), seen ? seen : "?");
		free(want);
		free(seen);
		ap_buf_free(&step);
		ap_buf_free(&vs);
	}
	return (int)json_array_size(json_object_get(cmp, "differences"));
}

void ap_verdict_decide(json_t *b)
{
	json_t *reasons = json_array();
	const json_t *err = json_object_get(b, "error");
	const json_t *res = json_object_get(b, "resolution");
	enum ap_verdict v;
	int passed = 0, limits = 0;

	if (ap_bundle_failed(b)) {
		v = AP_UNVERIFIED;
		ap_reason_add(reasons, "environment could not be used: %s",
			  json_string_value(json_object_get(err, "message")));
	} else if (!ap_resolved(res)) {
		v = AP_UNVERIFIED;
		ap_reason_add(reasons, "%s is absent in this version",
			  json_string_value(json_object_get(b, "target")));
	} else {
		int bad = failed_checks(b, reasons, &passed, &limits);
		bad += verdict_differences(b, reasons);
		const json_t *patch = json_object_get(res, "patch");
		int patched = json_is_true(json_object_get(patch, "patched"));
		if (patched)
			ap_reason_add(reasons, "the target is changed by a plugin after torch is "
				  "imported alone");
		if (bad)
			v = AP_INCONSISTENT;
		else if (!passed) {
			v = AP_UNVERIFIED;
			ap_reason_add(reasons, "no probe or numeric check applies to this target");
		} else if (only_limits_on_the_device(b)) {
			v = AP_UNVERIFIED;
			ap_reason_add(reasons, "no sample was compared on the device: each one that "
				      "ran there is a known limit of its backend");
		} else
			v = patched || limits ? AP_CONSISTENT_WITH_LIMITS : AP_CONSISTENT;
	}
	json_object_set_new(b, "verdict", json_string(ap_verdict_name(v)));
	json_object_set_new(b, "verdict_reasons", reasons);
}

static void count_into(json_t *into, const json_t *from)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)from, k, v) {
		json_int_t n = json_integer_value(json_object_get(into, k));
		json_object_set_new(into, k, json_integer(n + json_integer_value(v)));
	}
}

/* The union of every probe's device trace. */
static json_t *merge_device_traces(const json_t *checks)
{
	json_t *ops = json_object(), *devs = json_object();
	const char *why = NULL;
	int any = 0;
	size_t i;
	json_t *c;
	json_array_foreach(checks, i, c) {
		const json_t *dt = json_object_get(c, "device_trace");
		if (!dt)
			continue;
		if (!json_is_true(json_object_get(dt, "available"))) {
			why = json_string_value(json_object_get(dt, "why"));
			continue;
		}
		any = 1;
		count_into(ops, json_object_get(dt, "ops"));
		count_into(devs, json_object_get(dt, "tensor_devices"));
	}
	if (!any && !why)
		why = "no probe ran";
	return json_pack("{s:b, s:s?, s:o, s:o}", "available", any, "why", any ? NULL : why,
			 "ops", ops, "tensor_devices", devs);
}

static void keys(const json_t *o, struct ap_buf *out)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v)
		ap_buf_addf(out, "%s%s x%lld", out->len ? ", " : "", k,
			    (long long)json_integer_value(v));
}

void ap_adaptation_decide(json_t *b)
{
	const json_t *res = json_object_get(b, "resolution");
	json_t *dt = merge_device_traces(json_object_get(b, "checks"));
	json_object_set_new(b, "device_trace", dt);
	if (!ap_resolved(res))
		return;
	const json_t *ops = json_object_get(dt, "ops"), *devs = json_object_get(dt, "tensor_devices");
	int traced = json_is_true(json_object_get(dt, "available"));
	int patched = json_is_true(json_object_get(json_object_get(res, "patch"), "patched"));
	int indep = traced && !json_object_size(ops) && !json_object_size(devs) && !patched;
	struct ap_buf en = { 0 }, zh = { 0 }, seen = { 0 };
	if (indep) {
		ap_buf_adds(&en, "device-independent: no tensors, no operators, not patched "
			    "- no backend-specific patch needed");
		ap_buf_adds(&zh, "与设备无关：未创建张量，未调用算子，未被插件修改——无需后端专门适配");
	} else if (!traced) {
		ap_buf_addf(&en, "not determined: operators could not be traced (%s)",
			    json_string_value(json_object_get(dt, "why")));
		ap_buf_addf(&zh, "无法判定：该版本无法追踪算子（%s）",
			    json_string_value(json_object_get(dt, "why")));
	} else {
		ap_buf_adds(&en, "not device-independent:");
		keys(ops, &seen);
		if (seen.len)
			ap_buf_addf(&en, " operators %s;", ap_buf_str(&seen));
		ap_buf_reset(&seen);
		keys(devs, &seen);
		if (seen.len)
			ap_buf_addf(&en, " tensors on %s;", ap_buf_str(&seen));
		if (patched)
			ap_buf_addf(&en, " patched by a plugin (now %s);",
				    json_string_value(json_object_get(res, "canonical")));
		ap_buf_adds(&en, " review whether a backend-specific patch is needed");
		ap_buf_addf(&zh, "涉及后端：%s%s，需评估是否需要后端适配",
			    json_object_size(ops) || json_object_size(devs) ? "调用算子或创建张量" : "",
			    patched ? "；已被插件修改" : "");
	}
	json_object_set_new(b, "adaptation", json_pack(
		"{s:b, s:b, s:b, s:s, s:s}", "device_independent", indep, "patched", patched,
		"traced", traced, "conclusion_en", ap_buf_str(&en), "conclusion_zh", ap_buf_str(&zh)));
	ap_buf_free(&en);
	ap_buf_free(&zh);
	ap_buf_free(&seen);
}

void ap_verdict_judge(json_t *const *b, size_t n, const char *reference)
{
	int ref = ap_bundle_pick_reference(b, n, reference);
	for (size_t i = 0; i < n; i++) {
		json_t *sig = ap_signature_check(b, n, i, ref);
		if (sig)
			ap_bundle_add_check(b[i], sig);
		json_decref(sig);
	}
	const json_t *ref_checks = ref >= 0 ? json_object_get(b[ref], "checks") : NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *checks = json_object_get(b[i], "checks");
		if (ref >= 0 && ap_bundle_resolved(b[i])) {
			ap_bundle_set_comparison(b[i], ap_json_text(json_object_get(b[ref], "env"), "name"),
						 ap_trace_diff(ref_checks, checks));
			ap_official_compare(ref_checks, checks);
		} else
			ap_bundle_set_comparison(b[i], NULL, NULL);
		ap_adaptation_decide(b[i]);
		ap_verdict_decide(b[i]);
		ap_bundle_finish(b[i]);
	}
}
