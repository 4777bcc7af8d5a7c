#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/bundle.h"
#include "env/fingerprint.h"
#include "base/fsutil.h"
#include "base/text.h"
#include "evidence/manifest.h"

static const char *ap_s(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "-";
}

static void ap_log_fingerprint(const json_t *b, struct ap_buf *out)
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

static void ap_log_resolution(const json_t *b, struct ap_buf *out)
{
	const json_t *r = json_object_get(b, "resolution");
	ap_buf_addf(out, "\n== resolution of %s\n", ap_s(b, "target"));
	if (!r || json_is_null(r)) {
		ap_buf_adds(out, "(not resolved)\n");
		return;
	}
	if (!json_is_true(json_object_get(r, "found"))) {
		ap_buf_addf(out, "absent: '%s' has no '%s'\nnearest names:", ap_s(r, "deepest"),
			    ap_s(r, "missing"));
		size_t i;
		json_t *n;
		json_array_foreach(json_object_get(r, "nearest"), i, n)
			ap_buf_addf(out, " %s", json_string_value(n));
		ap_buf_adds(out, json_array_size(json_object_get(r, "nearest")) ? "\n" : " (none)\n");
		return;
	}
	const json_t *patch = json_object_get(r, "patch");
	ap_buf_addf(out, "kind: %s%s%s\ndefined in: %s:%lld (%s)\nsignature: %s\n",
		    ap_s(r, "kind"), json_is_string(json_object_get(r, "owner")) ? " of " : "",
		    json_is_string(json_object_get(r, "owner")) ? ap_s(r, "owner") : "",
		    ap_s(r, "file"), (long long)json_integer_value(json_object_get(r, "line")),
		    json_is_true(json_object_get(r, "pure_python")) ? "pure Python" : "native",
		    ap_s(r, "signature"));
	ap_buf_addf(out, "patched by a plugin: %s\n",
		    json_is_true(json_object_get(patch, "patched")) ? "YES" : "no");
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(patch, "changes"), i, c)
		ap_buf_addf(out, "  %s: %s -> %s\n", ap_s(c, "what"), ap_s(c, "before"), ap_s(c, "after"));
}

static void ap_log_check(const json_t *c, struct ap_buf *out)
{
	ap_buf_addf(out, "\n== check %s (%s): %s", ap_s(c, "name"), ap_s(c, "kind"), ap_s(c, "status"));
	if (json_is_string(json_object_get(c, "reason")))
		ap_buf_addf(out, " (%s)", ap_s(c, "reason"));
	ap_buf_addf(out, ", %lld ms\n", (long long)json_integer_value(json_object_get(c, "duration_ms")));
	const json_t *says = json_object_get(c, "says");
	if (says)
		ap_buf_addf(out, "   checks: %s\n", ap_s(says, "en"));
	size_t i;
	json_t *st;
	json_array_foreach(json_object_get(c, "trace"), i, st) {
		char *v = json_dumps(json_object_get(st, "value"), JSON_ENCODE_ANY | JSON_COMPACT);
		ap_buf_addf(out, "   %s = %s\n", ap_s(st, "step"), v ? v : "?");
		free(v);
	}
	const char *o = json_string_value(json_object_get(c, "output"));
	if (o && *o)
		ap_buf_addf(out, "   output:\n%s%s", o, o[strlen(o) - 1] == '\n' ? "" : "\n");
}

static void ap_log_outcome(const json_t *b, struct ap_buf *out)
{
	const json_t *cmp = json_object_get(b, "comparison");
	const json_t *diffs = json_object_get(cmp, "differences");
	const json_t *ad = json_object_get(b, "adaptation");
	size_t i;
	json_t *v;
	if (json_is_string(json_object_get(cmp, "reference")))
		ap_buf_addf(out, "\n== traces against %s: %s\n", ap_s(cmp, "reference"),
			    json_array_size(diffs) ? "DIFFERENT" : "identical");
	json_array_foreach(diffs, i, v) {
		char *e = json_dumps(json_object_get(v, "expected"), JSON_ENCODE_ANY | JSON_COMPACT);
		char *s = json_dumps(json_object_get(v, "seen"), JSON_ENCODE_ANY | JSON_COMPACT);
		ap_buf_addf(out, "   %s / %s: expected %s, seen %s\n", ap_s(v, "check"),
			    ap_s(v, "step"), e ? e : "?", s ? s : "?");
		free(e);
		free(s);
	}
	if (ad)
		ap_buf_addf(out, "\n== backend adaptation\n%s\n", ap_s(ad, "conclusion_en"));
	ap_buf_addf(out, "\n== verdict: %s\n", ap_s(b, "verdict"));
	json_array_foreach(json_object_get(b, "verdict_reasons"), i, v)
		ap_buf_addf(out, "   %s\n", json_string_value(v));
}

void ap_runlog_render(const json_t *b, struct ap_buf *out)
{
	const json_t *tool = json_object_get(b, "tool"), *env = json_object_get(b, "env");
	ap_buf_addf(out, "apiparity %s (%s) check %s\n", ap_s(tool, "version"),
		    ap_s(tool, "commit"), ap_s(b, "target"));
	ap_buf_addf(out, "environment: %s (%s), %s\nstarted %s, finished %s\n", ap_s(env, "name"),
		    ap_s(env, "label"), ap_s(env, "where"), ap_s(b, "started_utc"),
		    ap_s(b, "finished_utc"));
	const json_t *err = json_object_get(b, "error");
	if (err && !json_is_null(err))
		ap_buf_addf(out, "ERROR: %s\n", ap_s(err, "message"));
	ap_log_fingerprint(b, out);
	ap_log_resolution(b, out);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(b, "checks"), i, c)
		ap_log_check(c, out);
	ap_log_outcome(b, out);
}

static int ap_write_named(const char *dir, const char *name, const char *data, size_t len,
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
	int r = ap_write_named(dir, "bundle.json", json, strlen(json), err);
	free(json);
	ap_runlog_render(b, &raw);
	/* The transcript is read with cat and less: what a probe said shows
	 * there, and no escape in it reaches the terminal. */
	ap_text_term(&log, ap_buf_str(&raw), raw.len, AP_TEXT_BLOCK);
	ap_buf_free(&raw);
	if (!r)
		r = ap_write_named(dir, "run.log", ap_buf_str(&log), log.len, err);
	ap_buf_free(&log);
	if (!r)
		r = ap_manifest_write(dir, err);
	return r;
}
