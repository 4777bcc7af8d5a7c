#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonutil.h"
#include "check/signature.h"
#include "check/verdict.h"
#include "evidence/bundle.h"
#include "evidence/facts.h"

/* outcome_differs: the check already differs in outcome, so a trace that
 * merely stops early (the probe failed there) adds nothing. */
static void diff_steps(json_t *out, const char *name, const struct ap_fact_check *r,
		       const struct ap_fact_check *c, int outcome_differs)
{
	size_t n = r->nsteps > c->nsteps ? r->nsteps : c->nsteps;
	for (size_t i = 0; i < n; i++) {
		const struct ap_fact_step *rs = i < r->nsteps ? &r->steps[i] : NULL;
		const struct ap_fact_step *ss = i < c->nsteps ? &c->steps[i] : NULL;
		const char *rn = rs ? rs->step : NULL, *sn = ss ? ss->step : NULL;
		if (rn && sn && !strcmp(rn, sn)) {
			if (!json_equal(rs->value, ss->value))
				ap_difference_add(out, name, rn, rs->value, ss->value);
			continue;
		}
		if (!ss && outcome_differs)
			return;
		/* The traces went out of step: report the first divergence only,
		 * since every later step would differ too. */
		struct ap_buf other = { 0 };
		ap_buf_addf(&other, sn ? "(step '%s' instead)" : "(no such step)", sn);
		json_t *seen = json_string(ap_buf_str(&other));
		json_t *absent = json_string("(no such step)");
		ap_difference_add(out, name, rn ? rn : sn, rs ? rs->value : absent, seen);
		json_decref(seen);
		json_decref(absent);
		ap_buf_free(&other);
		return;
	}
}

/* The differences of checks c against the reference's r (their facts). */
static void trace_diff(json_t *out, const struct ap_fact_check *r, size_t nr,
		       const struct ap_fact_check *c, size_t nc)
{
	for (size_t i = 0; i < nc; i++) {
		const struct ap_fact_check *ref = c[i].name ? ap_facts_find_check(r, nr, c[i].name) : NULL;
		/* Probes and scripts are the same code everywhere; an official
		 * test exists, or can start, only where its version has it. */
		if (!ref || (c[i].kind != AP_KIND_PROBE && c[i].kind != AP_KIND_SCRIPT))
			continue;
		int differs = !json_equal(ref->status_json, c[i].status_json);
		if (differs)
			ap_difference_add(out, c[i].name, "(outcome)", ref->status_json,
					  c[i].status_json);
		diff_steps(out, c[i].name, ref, &c[i], differs);
	}
}

json_t *ap_trace_diff(const json_t *ref_checks, const json_t *checks)
{
	struct ap_fact_check *r = NULL, *c = NULL;
	size_t nr = 0, nc = 0;
	json_t *out = json_array();
	if (!ap_checks_facts(ref_checks, &r, &nr) && !ap_checks_facts(checks, &c, &nc))
		trace_diff(out, r, nr, c, nc);
	ap_checks_facts_free(r, nr);
	ap_checks_facts_free(c, nc);
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
static int official_limit(const struct ap_fact_check *c)
{
	return c->kind == AP_KIND_OFFICIAL && !ap_status_is(c->reference_status, AP_PASS);
}

/* A signature that differs from a reference at another torch release: the
 * change is stated as a limit, and the signature was still verified (see
 * check/signature.h). */
static int signature_limit(const struct ap_fact_check *c, json_t *reasons)
{
	if (c->kind != AP_KIND_SIGNATURE || c->status != AP_WARN)
		return 0;
	ap_reason_add(reasons, "signature: %s (a limit: another torch release)",
		      c->reason ? c->reason : "");
	return 1;
}

/* A numeric check that compared this environment's CPU with the reference's
 * under another torch version: a difference there is a change between
 * versions, a limit, not an inconsistency of the API. */
static int numeric_limit(const struct ap_fact_check *c)
{
	return c->kind == AP_KIND_NUMERIC && c->status == AP_FAIL && c->across &&
	       c->across_torch_differs;
}

/* Whether c verified the target: a probe, script or numeric check that
 * passed, or a signature compared with another environment's. */
static int verified(const struct ap_fact_check *c)
{
	if (c->kind == AP_KIND_SIGNATURE)
		return c->status == AP_PASS || c->status == AP_WARN;
	return c->status == AP_PASS && ap_kind_verifies(c->kind);
}

/* A numeric check of a device against its CPU: its status, or
 * AP_STATUS_UNKNOWN for any other check. */
static enum ap_status device_numeric(const struct ap_fact_check *c)
{
	return c->kind == AP_KIND_NUMERIC && c->device_vs_cpu ? c->status : AP_STATUS_UNKNOWN;
}

/* Whether b's devices ran samples that a known limit of the backend excused
 * (check/limits.h) and none that was compared and agreed: then nothing
 * verified the target there, whatever the rest passed. */
static int only_limits_on_the_device(const struct ap_bundle_facts *b)
{
	int excused = 0, passed = 0;
	for (size_t i = 0; i < b->nchecks; i++) {
		enum ap_status st = device_numeric(&b->checks[i]);
		excused += st == AP_NOTRUN && b->checks[i].has_limit;
		passed += st == AP_PASS;
	}
	return excused && !passed;
}

static int failed_checks(const struct ap_bundle_facts *b, json_t *reasons, int *passed,
			 int *limits)
{
	int failed = 0;
	*passed = 0;
	for (size_t i = 0; i < b->nchecks; i++) {
		const struct ap_fact_check *c = &b->checks[i];
		const char *why = c->reason, *ref = c->reference_status;
		*passed += verified(c);
		if (signature_limit(c, reasons)) {
			(*limits)++;
			continue;
		}
		if (!ap_status_failed(c->status))
			continue;
		if (numeric_limit(c)) {
			(*limits)++;
			ap_reason_add(reasons, "check %s: %s (torch %s here, so a change between "
				      "versions, not counted against the API)", c->name,
				      why ? why : "-", b->torch ? b->torch : "");
			continue;
		}
		if (official_limit(c)) {
			(*limits)++;
			ap_reason_add(reasons, "official test %s: %s: %s (%s in the reference, so not "
				  "counted against the API)", c->name, ap_status_name(c->status),
				  why ? why : "-", ref ? ref : "not run");
			continue;
		}
		failed++;
		ap_reason_add(reasons, "check %s: %s: %s", c->name, ap_status_name(c->status),
			      why ? why : "-");
	}
	return failed;
}

void ap_official_compare(const json_t *ref_checks, json_t *checks)
{
	struct ap_fact_check *r = NULL, *c = NULL;
	size_t nr = 0, nc = 0;
	if (!ap_checks_facts(ref_checks, &r, &nr) && !ap_checks_facts(checks, &c, &nc))
		for (size_t i = 0; i < nc; i++) {
			if (c[i].kind != AP_KIND_OFFICIAL || !c[i].name)
				continue;
			const struct ap_fact_check *ref = ap_facts_find_check(r, nr, c[i].name);
			ap_check_set_reference_status(json_array_get(checks, i),
						      ref ? ref->status_json : json_null());
		}
	ap_checks_facts_free(r, nr);
	ap_checks_facts_free(c, nc);
}

static int verdict_differences(const struct ap_bundle_facts *b, json_t *reasons)
{
	for (size_t i = 0; i < b->ndifferences; i++) {
		const struct ap_fact_difference *d = &b->differences[i];
		char *want = show(d->expected);
		char *seen = show(d->seen);
		struct ap_buf step = { 0 };
		ap_buf_addf(&step, "%s, step '%s'", d->check, d->step);
		struct ap_buf vs = { 0 };
		ap_buf_addf(&vs, "%s (as in %s)", want ? want : "?",
			    b->reference ? b->reference : "the reference");
		ap_reason_add(reasons, "trace differs: %s: expected %s, seen %s", ap_buf_str(&step),
			  ap_buf_str(&vs), seen ? seen : "?");
		free(want);
		free(seen);
		ap_buf_free(&step);
		ap_buf_free(&vs);
	}
	return (int)b->ndifferences;
}

/* The verdict of the resolved target in b, its reasons added. */
static enum ap_verdict judged(const struct ap_bundle_facts *b, json_t *reasons)
{
	int passed = 0, limits = 0;
	int bad = failed_checks(b, reasons, &passed, &limits);
	bad += verdict_differences(b, reasons);
	if (b->patched)
		ap_reason_add(reasons, "the target is changed by a plugin after torch is "
			  "imported alone");
	if (bad)
		return AP_INCONSISTENT;
	if (!passed) {
		ap_reason_add(reasons, "no probe or numeric check applies to this target");
		return AP_UNVERIFIED;
	}
	if (only_limits_on_the_device(b)) {
		ap_reason_add(reasons, "no sample was compared on the device: each one that "
			      "ran there is a known limit of its backend");
		return AP_UNVERIFIED;
	}
	return b->patched || limits ? AP_CONSISTENT_WITH_LIMITS : AP_CONSISTENT;
}

void ap_verdict_decide(json_t *b)
{
	json_t *reasons = json_array();
	struct ap_bundle_facts v;
	enum ap_verdict verdict = AP_UNVERIFIED;
	if (ap_bundle_facts(b, &v))
		ap_reason_add(reasons, "out of memory while judging");
	else if (v.failed)
		ap_reason_add(reasons, "environment could not be used: %s", v.error);
	else if (!v.found)
		ap_reason_add(reasons, "%s is absent in this version", v.target);
	else
		verdict = judged(&v, reasons);
	ap_bundle_set_verdict(b, verdict, reasons);
	ap_bundle_facts_free(&v);
}

/* Counts by name, in the order first seen (a device trace's ops, devices). */
struct tally {
	size_t n;
	struct ap_count_view *v;
};

static int tally_add(struct tally *t, const struct ap_count_view *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < t->n && strcmp(t->v[k].name, c[i].name))
			k++;
		if (k == t->n) {
			struct ap_count_view *g = realloc(t->v, (t->n + 1) * sizeof(*g));
			if (!g)
				return -ENOMEM;
			t->v = g;
			t->v[t->n++] = (struct ap_count_view){ c[i].name, 0 };
		}
		t->v[k].n += c[i].n;
	}
	return 0;
}

/* The union of every probe's device trace, set on b. */
static void merge_device_traces(json_t *b, const struct ap_bundle_facts *v,
				struct ap_device_trace_view *out)
{
	struct tally ops = { 0 }, devs = { 0 };
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < v->nchecks; i++) {
		const struct ap_device_trace_view *dt = &v->checks[i].device_trace;
		if (!dt->present)
			continue;
		if (!dt->available) {
			out->why = dt->why;
			continue;
		}
		out->available = 1;
		tally_add(&ops, dt->ops, dt->nops);
		tally_add(&devs, dt->devices, dt->ndevices);
	}
	if (!out->available && !out->why)
		out->why = "no probe ran";
	out->present = 1;
	out->ops = ops.v;
	out->nops = ops.n;
	out->devices = devs.v;
	out->ndevices = devs.n;
	ap_bundle_set_device_trace(b, out);
}

static void keys(const struct ap_count_view *c, size_t n, struct ap_buf *out)
{
	for (size_t i = 0; i < n; i++)
		ap_buf_addf(out, "%s%s x%lld", out->len ? ", " : "", c[i].name, c[i].n);
}

/* The conclusion of adaptation for b (resolved) with device trace dt. */
static void conclude(const struct ap_bundle_facts *b, const struct ap_device_trace_view *dt,
		     int indep, struct ap_buf *en, struct ap_buf *zh)
{
	struct ap_buf seen = { 0 };
	if (indep) {
		ap_buf_adds(en, "device-independent: no tensors, no operators, not patched "
			    "- no backend-specific patch needed");
		ap_buf_adds(zh, "与设备无关：未创建张量，未调用算子，未被插件修改——无需后端专门适配");
	} else if (!dt->available) {
		ap_buf_addf(en, "not determined: operators could not be traced (%s)", dt->why);
		ap_buf_addf(zh, "无法判定：该版本无法追踪算子（%s）", dt->why);
	} else {
		ap_buf_adds(en, "not device-independent:");
		keys(dt->ops, dt->nops, &seen);
		if (seen.len)
			ap_buf_addf(en, " operators %s;", ap_buf_str(&seen));
		ap_buf_reset(&seen);
		keys(dt->devices, dt->ndevices, &seen);
		if (seen.len)
			ap_buf_addf(en, " tensors on %s;", ap_buf_str(&seen));
		if (b->patched)
			ap_buf_addf(en, " patched by a plugin (now %s);", b->canonical);
		ap_buf_adds(en, " review whether a backend-specific patch is needed");
		ap_buf_addf(zh, "涉及后端：%s%s，需评估是否需要后端适配",
			    dt->nops || dt->ndevices ? "调用算子或创建张量" : "",
			    b->patched ? "；已被插件修改" : "");
	}
	ap_buf_free(&seen);
}

void ap_adaptation_decide(json_t *b)
{
	struct ap_bundle_facts v;
	struct ap_device_trace_view dt;
	if (ap_bundle_facts(b, &v))
		return;
	merge_device_traces(b, &v, &dt);
	if (v.found) {
		struct ap_buf en = { 0 }, zh = { 0 };
		int indep = dt.available && !dt.nops && !dt.ndevices && !v.patched;
		conclude(&v, &dt, indep, &en, &zh);
		ap_bundle_set_adaptation(b, indep, v.patched, dt.available, ap_buf_str(&en),
					 ap_buf_str(&zh));
		ap_buf_free(&en);
		ap_buf_free(&zh);
	}
	free(dt.ops);
	free(dt.devices);
	ap_bundle_facts_free(&v);
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
	const json_t *ref_checks = ref >= 0 ? ap_bundle_checks(b[ref]) : NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *checks = ap_bundle_checks(b[i]);
		if (ref >= 0 && ap_bundle_resolved(b[i])) {
			ap_bundle_set_comparison(b[i], ap_bundle_env_name(b[ref]),
						 ap_trace_diff(ref_checks, checks));
			ap_official_compare(ref_checks, checks);
		} else
			ap_bundle_set_comparison(b[i], NULL, NULL);
		ap_adaptation_decide(b[i]);
		ap_verdict_decide(b[i]);
		ap_bundle_finish(b[i]);
	}
}
