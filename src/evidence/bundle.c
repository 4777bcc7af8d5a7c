#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/jsonutil.h"
#include "base/text.h"
#include "base/version.h"
#include "env/fingerprint.h"
#include "env/protocol.h"
#include "evidence/bundle.h"
#include "evidence/manifest.h"

/* A bundle's time, "YYYY-MM-DDTHH:MM:SSZ", and its NUL, with room. */
#define AP_UTC_SIZE 32

static void utc_now(char out[AP_UTC_SIZE])
{
	time_t now = time(NULL);
	strftime(out, AP_UTC_SIZE, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

json_t *ap_bundle_new(const struct ap_env *env, const char *target, size_t order)
{
	struct ap_buf where = { 0 };
	char now[AP_UTC_SIZE];
	utc_now(now);
	ap_env_describe(env, &where);
	json_t *b = json_pack("{s:s, s:{s:s, s:s, s:s}, s:s, s:{s:s, s:s?, s:s?, s:s}, s:s,"
			      " s:n, s:n, s:n, s:[], s:n}",
			      "schema", AP_BUNDLE_SCHEMA, "tool", "name", "apiparity", "version",
			      ap_version, "commit", ap_commit, "target", target, "env", "name",
			      env->name, "label", env->label, "device", env->device, "where",
			      ap_buf_str(&where), "started_utc", now, "fingerprint", "resolution",
			      "family", "checks", "error");
	ap_buf_free(&where);
	/* The position in --env, so that the report keeps the order the user gave. */
	json_object_set_new(json_object_get(b, "env"), "order", json_integer((json_int_t)order));
	return b;
}

json_t *ap_check_new(const char *name, const char *kind, enum ap_status status,
		     const char *reason)
{
	return json_pack("{s:s, s:s, s:s, s:s?, s:[], s:i}", "name", name, "kind", kind,
			 "status", ap_status_name(status), "reason", reason, "trace", "duration_ms", 0);
}

enum ap_verdict ap_bundle_verdict(const json_t *b)
{
	return ap_verdict_parse(json_string_value(json_object_get(b, "verdict")));
}

enum ap_status ap_check_status(const json_t *c)
{
	return ap_status_parse(json_string_value(json_object_get(c, "status")));
}

const char *ap_check_reason(const json_t *c)
{
	return json_string_value(json_object_get(c, "reason"));
}

enum ap_check_kind ap_check_kind(const json_t *c)
{
	return ap_check_kind_parse(json_string_value(json_object_get(c, "kind")));
}

void ap_check_excuse(json_t *c, const char *name, const char *backend, const char *what,
		     const char *limit_reason, const char *where, const char *raised,
		     const char *message, const char *reason)
{
	json_object_set_new(c, "limit", json_pack("{s:s, s:s, s:s, s:s, s:s, s:O, s:s?, s:s%}",
						  "name", name, "backend", backend, "what", what,
						  "reason", limit_reason, "where", where, "seen",
						  json_object_get(c, "reason"), "raised", raised,
						  "message", message ? message : "",
						  message ? ap_utf8_prefix(message, 4096) : (size_t)0));
	ap_check_set_status(c, AP_NOTRUN);
	json_object_set_new(c, "reason", json_string(reason));
}

const json_t *ap_bundle_env(const json_t *b)
{
	return json_object_get(b, "env");
}

const char *ap_bundle_error_message(const json_t *b)
{
	return json_string_value(json_object_get(json_object_get(b, "error"), "message"));
}

void ap_check_set_status(json_t *c, enum ap_status st)
{
	json_object_set_new(c, "status", json_string(ap_status_name(st)));
}

json_t *ap_check_signature_new(enum ap_status status, const char *reason, json_t *detail)
{
	json_t *c = ap_check_new("signature", "signature", status, reason);
	if (c)
		json_object_set_new(c, "signature", detail);
	else
		json_decref(detail);
	return c;
}

json_t *ap_numeric_check_new(const char *name, enum ap_status status, const char *reason,
			     const struct ap_numeric_meta *m, const char *device,
			     const char *against, const char *across, int same_torch)
{
	json_t *c = ap_check_new(name, "numeric", status, reason);
	json_t *more = json_pack("{s:s, s:s, s:s?, s:s, s:s?, s:I, s:I, s:s, s:s, s:s?, s:s?, s:b,"
				 " s:[], s:[], s:n}", "op", m->op, "variant", m->variant ? m->variant : "",
				 "dtype", m->dtype, "sample_kind", m->kind, "form", m->form, "sample_index",
				 (json_int_t)m->index, "seed", (json_int_t)m->seed, "input_digest",
				 m->input_digest, "device", device, "against", against, "across",
				 across, "same_torch", same_torch, "outputs", "measurements",
				 "exception");
	if (!c || !more || json_object_update(c, more)) {
		json_decref(c);
		c = NULL;
	}
	json_decref(more);
	return c;
}

/* A double as JSON holds it: a number, or {"$float": "inf"|"-inf"|"nan"}. */
static json_t *real(double v)
{
	if (isfinite(v))
		return json_real(v);
	return json_pack("{s:s}", "$float", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

void ap_numeric_add_measure(json_t *c, const struct ap_measure *m)
{
	json_array_append_new(json_object_get(c, "measurements"), json_pack(
		"{s:s, s:s?, s:s?, s:b, s:b, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:s?, s:s?,"
		" s:s?}", "output", m->output, "dtype", m->dtype, "dtype_expected", m->dtype_expected,
		"dtype_match", m->dtype_match, "shape_match", m->shape_match, "numel",
		(json_int_t)m->numel, "mismatches", (json_int_t)m->mismatches, "first_mismatch",
		(json_int_t)m->first_mismatch, "max_abs", real(m->max_abs), "max_rel", real(m->max_rel),
		"worst_ratio", real(m->worst_ratio), "rtol", real(m->rtol), "atol", real(m->atol),
		"tol_source", m->tol_source, "digest", m->digest, "digest_expected",
		m->digest_expected));
	if (m->has_default)
		json_object_set_new(json_array_get(json_object_get(c, "measurements"),
						   json_array_size(json_object_get(c, "measurements")) - 1),
				    "default", json_pack("{s:o, s:o, s:I, s:o}", "rtol",
							 real(m->default_rtol), "atol", real(m->default_atol),
							 "mismatches", (json_int_t)m->default_mismatches,
							 "worst_ratio", real(m->default_worst_ratio)));
}

void ap_numeric_add_output(json_t *c, const char *output, const char *dtype, json_t *shape,
			   const char *digest)
{
	json_array_append_new(json_object_get(c, "outputs"), json_pack(
		"{s:s, s:s?, s:o, s:s?}", "output", output, "dtype", dtype, "shape",
		shape ? shape : json_null(), "digest", digest));
}

void ap_numeric_set_exception(json_t *c, const char *seen, const char *expected)
{
	json_object_set_new(c, "exception", json_pack("{s:s?, s:s?}", "seen", seen, "expected",
						      expected));
}

void ap_bundle_add_check(json_t *b, json_t *c)
{
	json_array_append(json_object_get(b, "checks"), c);
}

const json_t *ap_bundle_set_error(json_t *b, int err, const char *message)
{
	json_t *e = json_pack("{s:s, s:i, s:s}", "kind", ap_strerror(err), "exit_code",
			      ap_exit_code(err), "message", message);
	json_object_set_new(b, "error", e);
	return e;
}

void ap_bundle_set_operators(json_t *b, const char *reference, long long seed, int max_samples,
			     size_t count, const json_t *skipped, const json_t *opinfo,
			     json_t *adapter)
{
	json_object_set_new(b, "operators", json_pack(
		"{s:s, s:I, s:i, s:I, s:o, s:O, s:o*}", "reference", reference, "seed",
		(json_int_t)seed, "max_samples", max_samples, "count", (json_int_t)count, "skipped",
		skipped ? json_deep_copy(skipped) : json_array(), "opinfo",
		opinfo ? opinfo : json_null(), "adapter", adapter));
}

int ap_bundle_family(const json_t *b)
{
	const json_t *f = json_object_get(b, "family");
	return f && !json_is_null(f);
}

void ap_bundle_set_family(json_t *b, const char *name, const char *member,
			  const char *summary_en, const char *summary_zh)
{
	json_object_set_new(b, "family", json_pack("{s:s, s:s, s:s?, s:s?}", "name", name,
			    "member", member, "summary_en", summary_en, "summary_zh", summary_zh));
}

void ap_bundle_set_official(json_t *b, const char *root, const char *version,
			    const char *isolation, json_t *found, json_t *adapter)
{
	json_object_set_new(b, "official", json_pack("{s:s, s:s?, s:s, s:o?, s:o?}", "root", root,
			    "package_version", version, "isolation", isolation, "found", found,
			    "adapter", adapter));
}

void ap_bundle_set_comparison(json_t *b, const char *reference, json_t *differences)
{
	json_t *cmp = json_object();
	if (reference) {
		json_object_set_new(cmp, "reference", json_string(reference));
		json_object_set_new(cmp, "differences", differences);
	} else
		json_decref(differences);
	json_object_set_new(b, "comparison", cmp);
}

void ap_bundle_set_verdict(json_t *b, enum ap_verdict v, json_t *reasons)
{
	json_object_set_new(b, "verdict", json_string(ap_verdict_name(v)));
	json_object_set_new(b, "verdict_reasons", reasons);
}

static json_t *counts_object(const struct ap_count_view *c, size_t n)
{
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, c[i].name, json_integer((json_int_t)c[i].n));
	return o;
}

void ap_bundle_set_device_trace(json_t *b, const struct ap_device_trace_view *dt)
{
	json_object_set_new(b, "device_trace", json_pack(
		"{s:b, s:s?, s:o, s:o}", "available", dt->available, "why",
		dt->available ? NULL : dt->why, "ops", counts_object(dt->ops, dt->nops),
		"tensor_devices", counts_object(dt->devices, dt->ndevices)));
}

void ap_bundle_set_adaptation(json_t *b, int independent, int patched, int traced,
			      const char *conclusion_en, const char *conclusion_zh)
{
	json_object_set_new(b, "adaptation", json_pack(
		"{s:b, s:b, s:b, s:s, s:s}", "device_independent", independent, "patched",
		patched, "traced", traced, "conclusion_en", conclusion_en, "conclusion_zh",
		conclusion_zh));
}

void ap_difference_add(json_t *out, const char *check, const char *step,
		       const json_t *expected, const json_t *seen)
{
	json_array_append_new(out, json_pack("{s:s, s:s, s:O, s:O}", "check", check,
					     "step", step, "expected",
					     expected ? expected : json_null(),
					     "seen", seen ? seen : json_null()));
}

void ap_check_set_reference_status(json_t *c, const json_t *status)
{
	json_object_set(c, "reference_status", (json_t *)status);
}

json_t *ap_bundle_checks(const json_t *b)
{
	return json_object_get(b, "checks");
}

void ap_bundle_finish(json_t *b)
{
	char now[AP_UTC_SIZE];
	utc_now(now);
	json_object_set_new(b, "finished_utc", json_string(now));
}

int ap_resolved(const json_t *resolution)
{
	return ap_proto_resolve_found(resolution);
}

int ap_bundle_resolved(const json_t *b)
{
	return ap_resolved(json_object_get(b, "resolution"));
}

const json_t *ap_bundle_signature(const json_t *b)
{
	return json_object_get(json_object_get(b, "resolution"), "signature_data");
}

json_t *ap_bundle_fingerprint(const json_t *b)
{
	json_t *fp = json_object_get(b, "fingerprint");
	return json_is_object(fp) ? fp : NULL;
}

const char *ap_bundle_torch_version(const json_t *b)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(b, "fingerprint"),
								 "torch"), "version"));
}

const char *ap_bundle_env_name(const json_t *b)
{
	return ap_json_text(json_object_get(b, "env"), "name");
}

int ap_bundle_failed(const json_t *b)
{
	const json_t *err = json_object_get(b, "error");
	return err && !json_is_null(err);
}

void ap_bundle_probe_counts(const json_t *b, int *passed, int *total)
{
	size_t i;
	json_t *c;
	*passed = *total = 0;
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		const char *kind = ap_json_text(c, "kind");
		enum ap_status st = ap_check_status(c);
		if ((strcmp(kind, "probe") && strcmp(kind, "script") && strcmp(kind, "numeric")) ||
		    st == AP_NOTRUN)
			continue;
		(*total)++;
		*passed += st == AP_PASS;
	}
}

int ap_bundle_pick_reference(json_t *const *b, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		int ok = !ap_bundle_failed(b[i]) && ap_bundle_resolved(b[i]);
		if (name ? !strcmp(ap_json_text(json_object_get(b[i], "env"), "name"), name) : ok)
			return ok ? (int)i : -1;
	}
	return -1;
}

static void log_fingerprint(const json_t *b, struct ap_buf *out)
{
	struct ap_fingerprint fp;
	struct ap_buf err = { 0 };
	const json_t *j = json_object_get(b, "fingerprint");
	ap_buf_adds(out, "\n== fingerprint\n");
	if (!j || json_is_null(j))
		ap_buf_adds(out, "(none: the environment could not be fingerprinted)\n");
	else if (ap_fingerprint_decode(&fp, j, &err) == 0) {
		ap_fingerprint_render(&fp, out);
		ap_fingerprint_free(&fp);
	} else
		ap_buf_addf(out, "(unreadable: %s)\n", ap_buf_str(&err));
	ap_buf_free(&err);
}

static void log_resolution(const json_t *b, struct ap_buf *out)
{
	const json_t *r = json_object_get(b, "resolution");
	ap_buf_addf(out, "\n== resolution of %s\n", ap_json_text(b, "target"));
	if (!r || json_is_null(r)) {
		ap_buf_adds(out, "(not resolved)\n");
		return;
	}
	if (!ap_resolved(r)) {
		ap_buf_addf(out, "absent: '%s' has no '%s'\nnearest names:", ap_json_text(r, "deepest"),
			    ap_json_text(r, "missing"));
		size_t i;
		json_t *n;
		json_array_foreach(json_object_get(r, "nearest"), i, n)
			ap_buf_addf(out, " %s", json_string_value(n));
		ap_buf_adds(out, json_array_size(json_object_get(r, "nearest")) ? "\n" : " (none)\n");
		return;
	}
	const json_t *patch = json_object_get(r, "patch");
	ap_buf_addf(out, "kind: %s%s%s\ndefined in: %s:%lld (%s)\nsignature: %s\n",
		    ap_json_text(r, "kind"), json_is_string(json_object_get(r, "owner")) ? " of " : "",
		    json_is_string(json_object_get(r, "owner")) ? ap_json_text(r, "owner") : "",
		    ap_json_text(r, "file"), (long long)json_integer_value(json_object_get(r, "line")),
		    json_is_true(json_object_get(r, "pure_python")) ? "pure Python" : "native",
		    ap_json_text(r, "signature"));
	ap_buf_addf(out, "patched by a plugin: %s\n",
		    json_is_true(json_object_get(patch, "patched")) ? "YES" : "no");
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(patch, "changes"), i, c)
		ap_buf_addf(out, "  %s: %s -> %s\n", ap_json_text(c, "what"),
			    ap_json_text(c, "before"), ap_json_text(c, "after"));
}

static void log_check(const json_t *c, struct ap_buf *out)
{
	ap_buf_addf(out, "\n== check %s (%s): %s", ap_json_text(c, "name"),
		    ap_json_text(c, "kind"), ap_json_text(c, "status"));
	if (json_is_string(json_object_get(c, "reason")))
		ap_buf_addf(out, " (%s)", ap_json_text(c, "reason"));
	ap_buf_addf(out, ", %lld ms\n", (long long)json_integer_value(json_object_get(c, "duration_ms")));
	const json_t *says = json_object_get(c, "says");
	if (says)
		ap_buf_addf(out, "   checks: %s\n", ap_json_text(says, "en"));
	size_t i;
	json_t *st;
	json_array_foreach(json_object_get(c, "trace"), i, st) {
		char *v = json_dumps(json_object_get(st, "value"), JSON_ENCODE_ANY | JSON_COMPACT);
		ap_buf_addf(out, "   %s = %s\n", ap_json_text(st, "step"), v ? v : "?");
		free(v);
	}
	const json_t *sig = json_object_get(c, "signature");
	if (json_is_string(json_object_get(sig, "reference")))
		ap_buf_addf(out, "   against %s, at %s torch release (%s here)\n",
			    ap_json_text(sig, "reference"),
			    json_is_true(json_object_get(sig, "same_torch")) ? "the same" : "another",
			    ap_json_text(sig, "torch"));
	json_array_foreach(json_object_get(sig, "differences"), i, st)
		ap_buf_addf(out, "   differs: %s\n", ap_json_text(st, "text"));
	const char *o = json_string_value(json_object_get(c, "output"));
	if (o && *o)
		ap_buf_addf(out, "   output:\n%s%s", o, o[strlen(o) - 1] == '\n' ? "" : "\n");
}

static void log_outcome(const json_t *b, struct ap_buf *out)
{
	const json_t *cmp = json_object_get(b, "comparison");
	const json_t *diffs = json_object_get(cmp, "differences");
	const json_t *ad = json_object_get(b, "adaptation");
	size_t i;
	json_t *v;
	if (json_is_string(json_object_get(cmp, "reference")))
		ap_buf_addf(out, "\n== traces against %s: %s\n", ap_json_text(cmp, "reference"),
			    json_array_size(diffs) ? "DIFFERENT" : "identical");
	json_array_foreach(diffs, i, v) {
		char *e = json_dumps(json_object_get(v, "expected"), JSON_ENCODE_ANY | JSON_COMPACT);
		char *s = json_dumps(json_object_get(v, "seen"), JSON_ENCODE_ANY | JSON_COMPACT);
		ap_buf_addf(out, "   %s / %s: expected %s, seen %s\n", ap_json_text(v, "check"),
			    ap_json_text(v, "step"), e ? e : "?", s ? s : "?");
		free(e);
		free(s);
	}
	if (ad)
		ap_buf_addf(out, "\n== backend adaptation\n%s\n", ap_json_text(ad, "conclusion_en"));
	ap_buf_addf(out, "\n== verdict: %s\n", ap_json_text(b, "verdict"));
	json_array_foreach(json_object_get(b, "verdict_reasons"), i, v)
		ap_buf_addf(out, "   %s\n", json_string_value(v));
}

void ap_runlog_render(const json_t *b, struct ap_buf *out)
{
	const json_t *tool = json_object_get(b, "tool"), *env = json_object_get(b, "env");
	ap_buf_addf(out, "apiparity %s (%s) check %s\n", ap_json_text(tool, "version"),
		    ap_json_text(tool, "commit"), ap_json_text(b, "target"));
	ap_buf_addf(out, "environment: %s (%s), %s\nstarted %s, finished %s\n", ap_json_text(env, "name"),
		    ap_json_text(env, "label"), ap_json_text(env, "where"), ap_json_text(b, "started_utc"),
		    ap_json_text(b, "finished_utc"));
	if (ap_bundle_failed(b))
		ap_buf_addf(out, "ERROR: %s\n", ap_json_text(json_object_get(b, "error"), "message"));
	log_fingerprint(b, out);
	log_resolution(b, out);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(b, "checks"), i, c)
		log_check(c, out);
	log_outcome(b, out);
}

static int write_named(const char *dir, const char *name, const char *data, size_t len,
			  struct ap_buf *err)
{
	struct ap_buf path = { 0 };
	ap_buf_addf(&path, "%s/%s", dir, name);
	int r = ap_write_atomic(ap_buf_str(&path), data, len);
	if (r)
		ap_buf_addf(err, "cannot write %s: %s", ap_buf_str(&path), strerror(-r));
	ap_buf_free(&path);
	return r;
}

int ap_bundle_write(const char *dir, const json_t *b, struct ap_buf *err)
{
	struct ap_buf raw = { 0 }, log = { 0 };
	char *json = json_dumps(b, JSON_INDENT(2));
	if (!json)
		return -ENOMEM;
	int r = write_named(dir, "bundle.json", json, strlen(json), err);
	free(json);
	ap_runlog_render(b, &raw);
	/* The transcript is read with cat and less: what a probe said shows
	 * there, and no escape in it reaches the terminal. */
	ap_text_term(&log, ap_buf_str(&raw), raw.len, AP_TEXT_BLOCK);
	ap_buf_free(&raw);
	if (!r)
		r = write_named(dir, "run.log", ap_buf_str(&log), log.len, err);
	ap_buf_free(&log);
	if (!r)
		r = ap_manifest_write(dir, err);
	return r;
}
