#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "review/tracesummary.h"

/* Appends a tensor's dtype to the list out, once each. */
static void dtype_item(void *ctx, const struct ap_desc_item *it)
{
	struct ap_buf *out = ctx;
	size_t n = it->name ? strlen(it->name) : 0;
	if (it->kind != AP_DESC_TENSOR || !n)
		return;
	const char *at = strstr(ap_buf_str(out), it->name);
	/* each once: a match must be a whole word of the list */
	while (at && !((at == out->data || at[-1] == ',') && (at[n] == ',' || !at[n])))
		at = strstr(at + 1, it->name);
	if (!at)
		ap_buf_addf(out, "%s%s", out->len ? "," : "", it->name);
}

/* Appends a tensor's shape to out: "[2,3,64,64]". */
static void shape_item(void *ctx, const struct ap_desc_item *it)
{
	struct ap_buf *out = ctx;
	if (it->kind != AP_DESC_TENSOR)
		return;
	ap_buf_adds(out, out->len ? " [" : "[");
	for (size_t i = 0; i < it->ndim; i++)
		ap_buf_addf(out, "%s%lld", i ? "," : "", it->dims[i]);
	ap_buf_adds(out, "]");
}

void ap_trace_dtypes(const struct ap_trace *t, const struct ap_trace_api *api,
		     struct ap_buf *out)
{
	for (size_t i = api->first; i < t->n; i++)
		if (!strcmp(t->v[i].api, api->api))
			ap_case_desc_foreach(&t->v[i], 1, dtype_item, out);
}

static void print_head(FILE *out, const struct ap_trace *t)
{
	struct ap_buf cmd = { 0 }, line = { 0 };
	const char *torch = json_string_value(json_object_get(json_object_get(t->fingerprint,
									      "torch"), "version"));
	for (size_t i = 0; i < t->command.n; i++)
		ap_buf_addf(&cmd, "%s%s", i ? " " : "", t->command.v[i]);
	ap_buf_addf(&line, "trace of %s, in %s (torch %s): ", ap_buf_str(&cmd),
		    t->env ? t->env : "?", torch ? torch : "?");
	if (t->limited)
		ap_buf_adds(&line, "stopped at its time limit");
	else if (!t->has_returncode)
		ap_buf_adds(&line, "its end unknown");
	else if (t->returncode >= 0)
		ap_buf_addf(&line, "exited with status %d", t->returncode);
	else
		ap_buf_addf(&line, "killed by signal %d", -t->returncode);
	ap_text_fputs(ap_buf_str(&line), 0, out);
	fputc('\n', out);
	ap_buf_free(&cmd);
	ap_buf_free(&line);
}

void ap_trace_summary_print(FILE *out, const struct ap_trace *t, size_t top)
{
	struct ap_trace_api *apis = NULL;
	size_t n = 0;
	long over = 0;
	const char *k;
	const json_t *x;
	print_head(out, t);
	if (!t->torch) {
		fputs("  the program never imported torch: no API was traced\n", out);
		return;
	}
	json_object_foreach(t->over, k, x)
		over += (long)json_integer_value(x);
	if (ap_trace_apis(t, &apis, &n))
		return;
	fprintf(out, "  %zu APIs, %ld calls, %zu cases kept (%ld calls past --max-cases %ld)\n",
		n, ap_trace_calls(t), t->n, over, t->max_cases);
	if (n)
		fprintf(out, "  %7s %6s  %-44s %-9s %-18s %s\n", "calls", "cases", "api", "kind",
			"dtypes", "shapes (first case)");
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		struct ap_buf dts = { 0 }, shapes = { 0 }, row = { 0 };
		ap_trace_dtypes(t, &apis[i], &dts);
		ap_case_desc_foreach(&t->v[apis[i].first], 0, shape_item, &shapes);
		ap_buf_addf(&row, "  %7ld %6zu  %-44s %-9s %-18s %s", apis[i].calls, apis[i].ncases,
			    apis[i].api, ap_case_kind_name(apis[i].kind),
			    dts.len ? ap_buf_str(&dts) : "-", shapes.len ? ap_buf_str(&shapes) : "-");
		ap_text_fputs(ap_buf_str(&row), 0, out);
		fputc('\n', out);
		ap_buf_free(&dts);
		ap_buf_free(&shapes);
		ap_buf_free(&row);
	}
	if (top && n > top)
		fprintf(out, "  ... %zu more (apiparity trace --summary)\n", n - top);
	free(apis);
}
