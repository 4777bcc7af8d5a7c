#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonutil.h"
#include "check/signature.h"
#include "evidence/bundle.h"
#include "evidence/facts.h"

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

typedef struct ap_fact_param param;
typedef struct ap_fact_overload overload;

static long find_param(const overload *o, const char *name)
{
	for (size_t i = 0; i < o->nparams; i++)
		if (!strcmp(o->params[i].name, name))
			return (long)i;
	return -1;
}

static int has_default(const param *p)
{
	return p->default_value || p->has_default_repr;
}

/* Defaults agree: both absent, both values and equal as JSON, or both reprs
 * and equal as text. A value and a repr never agree. */
static int same_default(const param *a, const param *b)
{
	if (!has_default(a) || !has_default(b))
		return has_default(a) == has_default(b);
	if (a->default_value || b->default_value)
		return a->default_value && b->default_value &&
		       json_equal(a->default_value, b->default_value);
	return !strcmp(a->default_repr, b->default_repr);
}

/* A default as text: its JSON, or its repr; "(none)" without one. */
static void show_default(const param *p, struct ap_buf *out)
{
	char *s = p->default_value ? json_dumps(p->default_value, JSON_ENCODE_ANY | JSON_COMPACT)
				   : NULL;
	if (s)
		ap_buf_adds(out, s);
	else if (p->has_default_repr)
		ap_buf_adds(out, p->default_repr);
	else
		ap_buf_adds(out, "(none)");
	free(s);
}

static int positional(const param *p)
{
	return !strcmp(p->kind, "positional-only") || !strcmp(p->kind, "positional-or-keyword");
}

static void diff_default(struct sig_diff *d, const param *r, const param *s)
{
	struct ap_buf was = { 0 }, now = { 0 };
	if (same_default(r, s))
		return;
	show_default(r, &was);
	show_default(s, &now);
	diff_add(d, "default", s->name, ap_buf_str(&was), ap_buf_str(&now),
		 "default of '%s' changed: %s -> %s", s->name, ap_buf_str(&was), ap_buf_str(&now));
	ap_buf_free(&was);
	ap_buf_free(&now);
}

static void diff_kind(struct sig_diff *d, const param *r, const param *s)
{
	if (!strcmp(r->kind, s->kind))
		return;
	diff_add(d, "kind", s->name, r->kind, s->kind, "parameter '%s' changed kind: %s -> %s",
		 s->name, r->kind, s->kind);
}

/* The reference's parameter at i is not in sig: renamed, when sig has at i a
 * parameter of the same kind that the reference lacks; else removed. */
static void diff_missing(struct sig_diff *d, const overload *ro, const overload *so, size_t i,
			 char *matched)
{
	const param *r = &ro->params[i], *s = i < so->nparams ? &so->params[i] : NULL;
	if (s && !matched[i] && find_param(ro, s->name) < 0 && !strcmp(r->kind, s->kind)) {
		matched[i] = 1;
		diff_add(d, "renamed", r->name, r->name, s->name, "parameter '%s' renamed to '%s'",
			 r->name, s->name);
		diff_default(d, r, s);
		return;
	}
	diff_add(d, "removed", r->name, r->name, NULL, "parameter '%s' removed", r->name);
}

static void diff_added(struct sig_diff *d, const param *s, size_t at)
{
	struct ap_buf how = { 0 }, def = { 0 };
	ap_buf_adds(&how, s->kind);
	if (positional(s))
		ap_buf_addf(&how, " at position %zu", at + 1);
	show_default(s, &def);
	diff_add(d, "added", s->name, NULL, s->name, "parameter '%s' added (%s, default %s)",
		 s->name, ap_buf_str(&how), ap_buf_str(&def));
	ap_buf_free(&how);
	ap_buf_free(&def);
}

/* The names of the positional parameters of a that other has positional
 * too, in a's order, as "(x, y)". */
static void common_order(const overload *a, const overload *other, struct ap_buf *out)
{
	ap_buf_adds(out, "(");
	for (size_t i = 0; i < a->nparams; i++) {
		const param *p = &a->params[i];
		long k = find_param(other, p->name);
		if (positional(p) && k >= 0 && positional(&other->params[k]))
			ap_buf_addf(out, "%s%s", out->len > 1 ? ", " : "", p->name);
	}
	ap_buf_adds(out, ")");
}

static void diff_params(struct sig_diff *d, const overload *ro, const overload *so)
{
	size_t n = so->nparams, i;
	char *matched = calloc(n + 1, 1);
	if (!matched)
		return;
	for (i = 0; i < ro->nparams; i++) {
		const param *r = &ro->params[i];
		long k = find_param(so, r->name);
		if (k < 0) {
			diff_missing(d, ro, so, i, matched);
			continue;
		}
		matched[k] = 1;
		diff_kind(d, r, &so->params[k]);
		diff_default(d, r, &so->params[k]);
	}
	for (i = 0; i < n; i++)
		if (!matched[i])
			diff_added(d, &so->params[i], i);
	free(matched);
	struct ap_buf was = { 0 }, now = { 0 };
	common_order(ro, so, &was);
	common_order(so, ro, &now);
	if (strcmp(ap_buf_str(&was), ap_buf_str(&now)))
		diff_add(d, "order", NULL, ap_buf_str(&was), ap_buf_str(&now),
			 "positional parameters reordered: %s -> %s", ap_buf_str(&was), ap_buf_str(&now));
	ap_buf_free(&was);
	ap_buf_free(&now);
}

/* --- overloads ------------------------------------------------------------ */

static const overload *find_overload(const struct ap_fact_sigdata *sig, const char *name)
{
	for (size_t i = 0; i < sig->noverloads; i++)
		if (!strcmp(sig->overloads[i].name, name))
			return &sig->overloads[i];
	return NULL;
}

static void diff_overload(struct sig_diff *d, const overload *r, const overload *s)
{
	if (r->has_params && s->has_params) {
		diff_params(d, r, s);
		return;
	}
	/* A docstring signature that did not parse: only its text is known. */
	if (strcmp(r->text, s->text))
		diff_add(d, "text", NULL, r->text, s->text, "signature changed: %s -> %s", r->text,
			 s->text);
}

static const char *source_text(const char *source)
{
	return strcmp(source, "-") ? source : "nowhere";
}

static void sigdata_diff(struct sig_diff *d, const struct ap_fact_sigdata *ref,
			 const struct ap_fact_sigdata *sig)
{
	if (strcmp(ref->source, sig->source)) {
		diff_add(d, "source", NULL, ref->source, sig->source, "the signature comes from %s "
			 "here, from %s in the reference%s%s", source_text(sig->source),
			 source_text(ref->source), sig->why ? ": " : "", sig->why ? sig->why : "");
		return;
	}
	for (size_t i = 0; i < ref->noverloads; i++) {
		const overload *o = &ref->overloads[i], *s = find_overload(sig, o->name);
		d->overload = o->name;
		if (s)
			diff_overload(d, o, s);
		else {
			d->overload = "";
			diff_add(d, "overload-removed", NULL, o->text, NULL, "overload %s removed",
				 o->text);
		}
	}
	d->overload = "";
	for (size_t i = 0; i < sig->noverloads; i++)
		if (!find_overload(ref, sig->overloads[i].name))
			diff_add(d, "overload-added", NULL, NULL, sig->overloads[i].text,
				 "overload %s added", sig->overloads[i].text);
}

json_t *ap_signature_diff(const json_t *ref, const json_t *sig)
{
	struct sig_diff d = { json_array(), "" };
	struct ap_fact_sigdata r, s;
	if (!d.out)
		return NULL;
	if (ap_sigdata_read(ref, &r)) {
		json_decref(d.out);
		return NULL;
	}
	if (ap_sigdata_read(sig, &s)) {
		ap_sigdata_free(&r);
		json_decref(d.out);
		return NULL;
	}
	sigdata_diff(&d, &r, &s);
	ap_sigdata_free(&r);
	ap_sigdata_free(&s);
	return d.out;
}

/* --- the check ------------------------------------------------------------ */

/* The target's signature in b, read; all zero (not callable, no source)
 * when b has none or memory ran out. */
static struct ap_fact_sigdata signature_of(const json_t *b)
{
	struct ap_fact_sigdata s;
	if (ap_sigdata_read(ap_bundle_signature(b), &s))
		memset(&s, 0, sizeof(s));
	return s;
}

/* Whether b has a callable target whose signature can be compared. */
static int comparable(const json_t *b, const struct ap_fact_sigdata *sig)
{
	return b && !ap_bundle_failed(b) && ap_bundle_resolved(b) && sig->callable;
}

/* The same torch release: the versions agree up to any "+local" part. */
static int same_release(const char *a, const char *b)
{
	if (!a || !b)
		return 0;
	size_t na = strcspn(a, "+"), nb = strcspn(b, "+");
	return na == nb && !strncmp(a, b, na);
}

static json_t *reference_check(json_t *const *b, size_t n, size_t ref,
			       const struct ap_fact_sigdata *sig)
{
	struct ap_buf why = { 0 };
	json_t *compared = json_array();
	for (size_t k = 0; k < n; k++) {
		struct ap_fact_sigdata other = signature_of(b[k]);
		if (k != ref && comparable(b[k], &other))
			json_array_append_new(compared, json_string(ap_bundle_env_name(b[k])));
		ap_sigdata_free(&other);
	}
	if (!json_array_size(compared)) {
		json_decref(compared);
		return NULL;
	}
	json_t *detail = json_pack("{s:n, s:o, s:O?}", "reference", "compared", compared, "source",
				   sig->source_json);
	enum ap_status st = AP_PASS;
	if (!sig->has_source) {
		st = AP_NOTRUN;
		ap_buf_addf(&why, "no-signature: %s", sig->why ? sig->why : "-");
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
		ap_buf_addf(out, "%s%s", i ? "; " : "", json_string_value(json_object_get(x, "text")));
	}
}

/* The check of signature sig (here) against rsig (the reference's). */
static json_t *compared_check(json_t *const *b, size_t i, int ref,
			      const struct ap_fact_sigdata *sig, const struct ap_fact_sigdata *rsig)
{
	const char *refname = ap_bundle_env_name(b[ref]);
	const char *here = ap_bundle_torch_version(b[i]);
	int same = same_release(here, ap_bundle_torch_version(b[ref]));
	struct ap_buf why = { 0 };
	enum ap_status st = AP_NOTRUN;
	struct sig_diff d = { NULL, "" };
	if (!sig->has_source && !rsig->has_source)
		ap_buf_addf(&why, "no-signature: %s", sig->why ? sig->why : "-");
	else if (!comparable(b[ref], rsig) || !rsig->has_source)
		ap_buf_addf(&why, "not-compared: the reference %s has no signature of the target",
			    refname);
	else if (!(d.out = json_array()))
		return NULL;
	else {
		sigdata_diff(&d, rsig, sig);
		st = !json_array_size(d.out) ? AP_PASS : same ? AP_FAIL : AP_WARN;
		if (st != AP_PASS)
			diff_reason(d.out, refname, same, here, &why);
	}
	json_t *detail = json_pack("{s:s, s:s?, s:b, s:O?, s:o}", "reference", refname, "torch",
				   here, "same_torch", same, "source", sig->source_json,
				   "differences", d.out ? d.out : json_array());
	json_t *c = ap_check_signature_new(st, why.len ? ap_buf_str(&why) : NULL, detail);
	ap_buf_free(&why);
	return c;
}

json_t *ap_signature_check(json_t *const *b, size_t n, size_t i, int ref)
{
	struct ap_fact_sigdata sig = signature_of(b[i]), rsig = { 0 };
	json_t *c = NULL;
	if (comparable(b[i], &sig) && ref >= 0) {
		if ((size_t)ref == i)
			c = reference_check(b, n, i, &sig);
		else {
			rsig = signature_of(b[ref]);
			c = compared_check(b, i, ref, &sig, &rsig);
		}
	}
	ap_sigdata_free(&sig);
	ap_sigdata_free(&rsig);
	return c;
}
