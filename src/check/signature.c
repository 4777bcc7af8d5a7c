#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonutil.h"
#include "check/signature.h"
#include "evidence/bundle.h"

#define REASON_ITEMS 3  /* differences spelled out in a check's reason */

/* --- one difference ------------------------------------------------------- */

struct sig_diff {
	json_t *out;          /* the differences so far */
	const char *overload; /* the overload compared, "" for an unnamed one */
};

/* Appends {what, overload, param, expected, seen, text}; expected and seen
 * are texts or NULL, text is formatted and prefixed with the overload. */
static void diff_add(struct sig_diff *d, const char *what, const char *param,
		     const char *expected, const char *seen, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void diff_add(struct sig_diff *d, const char *what, const char *param,
		     const char *expected, const char *seen, const char *fmt, ...)
{
	struct ap_buf text = { 0 };
	va_list ap;
	if (*d->overload)
		ap_buf_addf(&text, "overload %s: ", d->overload);
	va_start(ap, fmt);
	ap_buf_vaddf(&text, fmt, ap);
	va_end(ap);
	json_array_append_new(d->out, json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:s}", "what", what,
						"overload", *d->overload ? d->overload : NULL,
						"param", param, "expected", expected, "seen", seen,
						"text", ap_buf_str(&text)));
	ap_buf_free(&text);
}

/* --- parameters ----------------------------------------------------------- */

static const char *pname(const json_t *p)
{
	return ap_json_text(p, "name");
}

static const char *pkind(const json_t *p)
{
	return ap_json_text(p, "kind");
}

static long find_param(const json_t *params, const char *name)
{
	for (size_t i = 0; i < json_array_size(params); i++)
		if (!strcmp(pname(json_array_get(params, i)), name))
			return (long)i;
	return -1;
}

static int has_default(const json_t *p)
{
	return json_object_get(p, "default") || json_object_get(p, "default_repr");
}

/* Defaults agree: both absent, both values and equal as JSON, or both reprs
 * and equal as text. A value and a repr never agree. */
static int same_default(const json_t *a, const json_t *b)
{
	if (!has_default(a) || !has_default(b))
		return has_default(a) == has_default(b);
	const json_t *va = json_object_get(a, "default"), *vb = json_object_get(b, "default");
	if (va || vb)
		return va && vb && json_equal(va, vb);
	return !strcmp(ap_json_text(a, "default_repr"), ap_json_text(b, "default_repr"));
}

/* A default as text: its JSON, or its repr; "(none)" without one. */
static void show_default(const json_t *p, struct ap_buf *out)
{
	const json_t *v = json_object_get(p, "default");
	char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	if (s)
		ap_buf_adds(out, s);
	else if (json_object_get(p, "default_repr"))
		ap_buf_adds(out, ap_json_text(p, "default_repr"));
	else
		ap_buf_adds(out, "(none)");
	free(s);
}

static int positional(const json_t *p)
{
	return !strcmp(pkind(p), "positional-only") || !strcmp(pkind(p), "positional-or-keyword");
}

static void diff_default(struct sig_diff *d, const json_t *r, const json_t *s)
{
	struct ap_buf was = { 0 }, now = { 0 };
	if (same_default(r, s))
		return;
	show_default(r, &was);
	show_default(s, &now);
	diff_add(d, "default", pname(s), ap_buf_str(&was), ap_buf_str(&now),
		 "default of '%s' changed: %s -> %s", pname(s), ap_buf_str(&was), ap_buf_str(&now));
	ap_buf_free(&was);
	ap_buf_free(&now);
}

static void diff_kind(struct sig_diff *d, const json_t *r, const json_t *s)
{
	if (!strcmp(pkind(r), pkind(s)))
		return;
	diff_add(d, "kind", pname(s), pkind(r), pkind(s), "parameter '%s' changed kind: %s -> %s",
		 pname(s), pkind(r), pkind(s));
}

/* The reference's parameter at i is not in sig: renamed, when sig has at i a
 * parameter of the same kind that the reference lacks; else removed. */
static void diff_missing(struct sig_diff *d, const json_t *rp, const json_t *sp, size_t i,
			 char *matched)
{
	const json_t *r = json_array_get(rp, i), *s = json_array_get(sp, i);
	if (s && !matched[i] && find_param(rp, pname(s)) < 0 && !strcmp(pkind(r), pkind(s))) {
		matched[i] = 1;
		diff_add(d, "renamed", pname(r), pname(r), pname(s), "parameter '%s' renamed to '%s'",
			 pname(r), pname(s));
		diff_default(d, r, s);
		return;
	}
	diff_add(d, "removed", pname(r), pname(r), NULL, "parameter '%s' removed", pname(r));
}

static void diff_added(struct sig_diff *d, const json_t *s, size_t at)
{
	struct ap_buf how = { 0 }, def = { 0 };
	ap_buf_adds(&how, pkind(s));
	if (positional(s))
		ap_buf_addf(&how, " at position %zu", at + 1);
	show_default(s, &def);
	diff_add(d, "added", pname(s), NULL, pname(s), "parameter '%s' added (%s, default %s)",
		 pname(s), ap_buf_str(&how), ap_buf_str(&def));
	ap_buf_free(&how);
	ap_buf_free(&def);
}

/* The names of the positional parameters of a that other has positional
 * too, in a's order, as "(x, y)". */
static void common_order(const json_t *a, const json_t *other, struct ap_buf *out)
{
	size_t i;
	json_t *p;
	ap_buf_adds(out, "(");
	json_array_foreach(a, i, p) {
		long k = find_param(other, pname(p));
		if (positional(p) && k >= 0 && positional(json_array_get(other, (size_t)k)))
			ap_buf_addf(out, "%s%s", out->len > 1 ? ", " : "", pname(p));
	}
	ap_buf_adds(out, ")");
}

static void diff_params(struct sig_diff *d, const json_t *rp, const json_t *sp)
{
	size_t n = json_array_size(sp), i;
	char *matched = calloc(n + 1, 1);
	json_t *r;
	if (!matched)
		return;
	json_array_foreach(rp, i, r) {
		long k = find_param(sp, pname(r));
		if (k < 0) {
			diff_missing(d, rp, sp, i, matched);
			continue;
		}
		matched[k] = 1;
		diff_kind(d, r, json_array_get(sp, (size_t)k));
		diff_default(d, r, json_array_get(sp, (size_t)k));
	}
	for (i = 0; i < n; i++)
		if (!matched[i])
			diff_added(d, json_array_get(sp, i), i);
	free(matched);
	struct ap_buf was = { 0 }, now = { 0 };
	common_order(rp, sp, &was);
	common_order(sp, rp, &now);
	if (strcmp(ap_buf_str(&was), ap_buf_str(&now)))
		diff_add(d, "order", NULL, ap_buf_str(&was), ap_buf_str(&now),
			 "positional parameters reordered: %s -> %s", ap_buf_str(&was), ap_buf_str(&now));
	ap_buf_free(&was);
	ap_buf_free(&now);
}

/* --- overloads ------------------------------------------------------------ */

static const json_t *find_overload(const json_t *sig, const char *name)
{
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(sig, "overloads"), i, o)
		if (!strcmp(ap_json_text(o, "name"), name))
			return o;
	return NULL;
}

static void diff_overload(struct sig_diff *d, const json_t *r, const json_t *s)
{
	const json_t *rp = json_object_get(r, "params"), *sp = json_object_get(s, "params");
	if (json_is_array(rp) && json_is_array(sp)) {
		diff_params(d, rp, sp);
		return;
	}
	/* A docstring signature that did not parse: only its text is known. */
	const char *rt = ap_json_text(r, "text"), *st = ap_json_text(s, "text");
	if (strcmp(rt, st))
		diff_add(d, "text", NULL, rt, st, "signature changed: %s -> %s", rt, st);
}

static const char *source_text(const char *source)
{
	return strcmp(source, "-") ? source : "nowhere";
}

json_t *ap_signature_diff(const json_t *ref, const json_t *sig)
{
	struct sig_diff d = { json_array(), "" };
	const char *rs = ap_json_text(ref, "source"), *ss = ap_json_text(sig, "source");
	size_t i;
	json_t *o;
	if (!d.out)
		return NULL;
	if (strcmp(rs, ss)) {
		diff_add(&d, "source", NULL, rs, ss, "the signature comes from %s here, from %s in "
			 "the reference%s%s", source_text(ss), source_text(rs),
			 json_is_string(json_object_get(sig, "why")) ? ": " : "",
			 json_is_string(json_object_get(sig, "why")) ? ap_json_text(sig, "why") : "");
		return d.out;
	}
	json_array_foreach(json_object_get(ref, "overloads"), i, o) {
		const json_t *s = find_overload(sig, ap_json_text(o, "name"));
		d.overload = ap_json_text(o, "name");
		if (s)
			diff_overload(&d, o, s);
		else {
			d.overload = "";
			diff_add(&d, "overload-removed", NULL, ap_json_text(o, "text"), NULL,
				 "overload %s removed", ap_json_text(o, "text"));
		}
	}
	d.overload = "";
	json_array_foreach(json_object_get(sig, "overloads"), i, o)
		if (!find_overload(ref, ap_json_text(o, "name")))
			diff_add(&d, "overload-added", NULL, NULL, ap_json_text(o, "text"),
				 "overload %s added", ap_json_text(o, "text"));
	return d.out;
}

/* --- the check ------------------------------------------------------------ */

int ap_is_signature_check(const json_t *c)
{
	return !strcmp(ap_json_text(c, "kind"), "signature");
}

/* Whether b has a callable target whose signature can be compared. */
static int comparable(const json_t *b)
{
	return b && !ap_bundle_failed(b) && ap_bundle_resolved(b) &&
	       json_is_true(json_object_get(ap_bundle_signature(b), "callable"));
}

static int has_source(const json_t *sig)
{
	return json_is_string(json_object_get(sig, "source"));
}

/* The same torch release: the versions agree up to any "+local" part. */
static int same_release(const char *a, const char *b)
{
	if (!a || !b)
		return 0;
	size_t na = strcspn(a, "+"), nb = strcspn(b, "+");
	return na == nb && !strncmp(a, b, na);
}

static json_t *reference_check(json_t *const *b, size_t n, size_t ref)
{
	const json_t *sig = ap_bundle_signature(b[ref]);
	struct ap_buf why = { 0 };
	json_t *compared = json_array();
	for (size_t k = 0; k < n; k++)
		if (k != ref && comparable(b[k]))
			json_array_append_new(compared, json_string(ap_bundle_env_name(b[k])));
	if (!json_array_size(compared)) {
		json_decref(compared);
		return NULL;
	}
	json_t *detail = json_pack("{s:n, s:o, s:O?}", "reference", "compared", compared, "source",
				   json_object_get(sig, "source"));
	enum ap_status st = AP_PASS;
	if (!has_source(sig)) {
		st = AP_NOTRUN;
		ap_buf_addf(&why, "no-signature: %s", ap_json_text(sig, "why"));
	}
	json_t *c = ap_check_signature_new(st, why.len ? ap_buf_str(&why) : NULL, detail);
	ap_buf_free(&why);
	return c;
}

/* "differs from REF's at ... (VERSION): first; second; third; and N more".
 * Only this environment's own version is named: the reference's is in its
 * own bundle, and a check that quoted it would change with it. */
static void diff_reason(const json_t *diffs, const char *refname, int same, const char *here,
			struct ap_buf *out)
{
	size_t i, n = json_array_size(diffs);
	json_t *x;
	ap_buf_addf(out, "differs from %s's at %s torch release (%s here): ", refname,
		    same ? "the same" : "another", here ? here : "?");
	json_array_foreach(diffs, i, x) {
		if (i == REASON_ITEMS) {
			ap_buf_addf(out, "; and %zu more", n - REASON_ITEMS);
			break;
		}
		ap_buf_addf(out, "%s%s", i ? "; " : "", ap_json_text(x, "text"));
	}
}

json_t *ap_signature_check(json_t *const *b, size_t n, size_t i, int ref)
{
	if (!comparable(b[i]) || ref < 0)
		return NULL;
	if ((size_t)ref == i)
		return reference_check(b, n, i);
	const json_t *sig = ap_bundle_signature(b[i]), *rsig = ap_bundle_signature(b[ref]);
	const char *refname = ap_bundle_env_name(b[ref]);
	const char *here = ap_bundle_torch_version(b[i]);
	int same = same_release(here, ap_bundle_torch_version(b[ref]));
	struct ap_buf why = { 0 };
	enum ap_status st = AP_NOTRUN;
	json_t *diffs = NULL;
	if (!has_source(sig) && !has_source(rsig))
		ap_buf_addf(&why, "no-signature: %s", ap_json_text(sig, "why"));
	else if (!comparable(b[ref]) || !has_source(rsig))
		ap_buf_addf(&why, "not-compared: the reference %s has no signature of the target",
			    refname);
	else if (!(diffs = ap_signature_diff(rsig, sig)))
		return NULL;
	else if (json_array_size(diffs)) {
		st = same ? AP_FAIL : AP_WARN;
		diff_reason(diffs, refname, same, here, &why);
	} else
		st = AP_PASS;
	json_t *detail = json_pack("{s:s, s:s?, s:b, s:O?, s:o}", "reference", refname, "torch",
				   here, "same_torch", same, "source",
				   json_object_get(sig, "source"), "differences",
				   diffs ? diffs : json_array());
	json_t *c = ap_check_signature_new(st, why.len ? ap_buf_str(&why) : NULL, detail);
	ap_buf_free(&why);
	return c;
}
