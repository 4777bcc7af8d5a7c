/* apiparity docs - the native API support entry of a target, written from
 * the measured bundles in the format of the backend's docs pages. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "review/docs.h"
#include "base/err.h"
#include "evidence/bundle.h"
#include "evidence/submission.h"

/* Support per product: each environment's label is a product; consistent
 * (with or without limits) is supported, inconsistent is not, and an
 * unverified environment is left out, since not listed means not verified. */
static json_t *docs_products(const struct ap_submission *s, struct ap_buf *limits)
{
	json_t *out = json_array();
	for (size_t i = 0; i < s->n; i++) {
		const json_t *b = s->v[i].bundle;
		const char *v = json_string_value(json_object_get(b, "verdict"));
		const char *label = json_string_value(json_object_get(json_object_get(b, "env"), "label"));
		if (!v || !strcmp(v, "unverified"))
			continue;
		json_array_append_new(out, json_pack("{s:s, s:b}", "product", label ? label : s->v[i].name,
						     "supported", strcmp(v, "inconsistent") != 0));
		if (!strcmp(v, "consistent-with-limits"))
			ap_buf_addf(limits, "%s%s: %s", limits->len ? "; " : "", label ? label : s->v[i].name,
				    json_string_value(json_array_get(json_object_get(b, "verdict_reasons"), 0)));
	}
	return out;
}

/* The upstream doc page of api for the torch version of the first bundle
 * where the target exists (major.minor). */
static void docs_url(const struct ap_submission *s, const char *api, struct ap_buf *url)
{
	for (size_t i = 0; i < s->n && !url->len; i++) {
		const json_t *b = s->v[i].bundle;
		const char *v = json_string_value(json_object_get(json_object_get(
			json_object_get(b, "fingerprint"), "torch"), "version"));
		int major, minor;
		if (ap_bundle_resolved(b) && v &&
		    sscanf(v, "%d.%d", &major, &minor) == 2)
			ap_buf_addf(url, "https://pytorch.org/docs/%d.%d/generated/%s.html", major, minor, api);
	}
}

int ap_cmd_docs(int argc, char **argv)
{
	struct ap_submission s;
	struct ap_buf err = { 0 }, out = { 0 }, limits = { 0 }, url = { 0 };
	if (argc != 3 || strcmp(argv[1], "entry"))
		return ap_usage("docs: want docs entry DIR");
	int r = ap_submission_load(&s, argv[2], &err);
	if (r) {
		r = ap_fail(r == -ENOENT ? -AP_ECONFIG : r, "docs entry", &err);
		ap_buf_free(&err);
		return r;
	}
	const char *api = json_string_value(json_object_get(s.v[0].bundle, "target"));
	json_t *products = docs_products(&s, &limits);
	docs_url(&s, api, &url);
	ap_docs_entry(api, url.len ? ap_buf_str(&url) : NULL, products,
		      limits.len ? ap_buf_str(&limits) : NULL, &out);
	fputs(ap_buf_str(&out), stdout);
	json_decref(products);
	ap_submission_free(&s);
	ap_buf_free(&err);
	ap_buf_free(&out);
	ap_buf_free(&limits);
	ap_buf_free(&url);
	return AP_EXIT_OK;
}
