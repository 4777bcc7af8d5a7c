/* sweepview.c - matrix.md, matrix.html and diff (see sweepview.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "evidence/manifest.h"

#include "base/jsonutil.h"
#include "base/text.h"
#include "evidence/matrix.h"
#include "review/escape.h"
#include "review/sweepview.h"

/* The summary's columns: the line verdicts, in enum ap_line_verdict order. */
enum { V_OK = AP_LINE_CONSISTENT, V_BAD = AP_LINE_INCONSISTENT, V_NOTRUN = AP_LINE_NOTRUN,
       V_ABSENT = AP_LINE_ABSENT, NV = AP_LINE_VERDICT_COUNT };
static const char *const vcolors[NV] = { "#2e7d32", "#c62828", "#9e9e9e", "#e0e0e0" };

static int verdict_index(const json_t *l)
{
	enum ap_line_verdict v = ap_matrix_verdict(l);
	return v == AP_LINE_VERDICT_UNKNOWN ? V_NOTRUN : (int)v;
}

/* A line's part of the summary: its verdict, except that at depth probe and
 * numeric an API whose checks did not run counts as not run (its verdict
 * only says that its resolution and signature agree). */
static int vindex(const json_t *l)
{
	int v = verdict_index(l);
	return v == V_OK && ap_matrix_check_is(l, AP_LCHECK_NOTRUN) ? V_NOTRUN : v;
}

/* module -> {env -> [4 counts], "": [4 counts, all environments]}, in the
 * order modules first appear. */
static json_t *summary(const json_t *lines)
{
	json_t *s = json_object(), *l;
	size_t i;
	json_array_foreach(lines, i, l) {
		const char *mod = ap_json_text(l, "module"), *env = ap_json_text(l, "env");
		json_t *m = json_object_get(s, mod);
		if (!m) {
			m = json_object();
			json_object_set_new(s, mod, m);
		}
		const char *keys[2] = { "", env };
		for (int k = 0; k < 2; k++) {
			json_t *c = json_object_get(m, keys[k]);
			if (!c) {
				c = json_pack("[iiii]", 0, 0, 0, 0);
				json_object_set_new(m, keys[k], c);
			}
			int v = vindex(l);
			json_array_set_new(c, (size_t)v,
					   json_integer(json_integer_value(json_array_get(c, (size_t)v)) + 1));
		}
	}
	return s;
}

static json_int_t count(const json_t *c, int v)
{
	return json_integer_value(json_array_get(c, (size_t)v));
}

static void md_envs(const json_t *meta, struct ap_buf *out)
{
	size_t i;
	json_t *e;
	ap_buf_adds(out, "| environment | label | torch |\n| --- | --- | --- |\n");
	json_array_foreach(json_object_get(meta, "envs"), i, e) {
		ap_buf_adds(out, "| ");
		ap_escape_md(ap_json_text(e, "name"), out);
		ap_buf_adds(out, " | ");
		ap_escape_md(ap_json_text(e, "label"), out);
		ap_buf_adds(out, " | ");
		ap_escape_md(ap_json_text(e, "torch"), out);
		ap_buf_adds(out, " |\n");
	}
}

/* The lines of APIs not consistent everywhere, for both pages. */
static int notable(const json_t *l)
{
	int v = verdict_index(l);
	return v == V_BAD || v == V_NOTRUN;
}

void ap_sweepview_md(const json_t *meta, const json_t *lines, struct ap_buf *out)
{
	json_t *s = summary(lines), *m, *l;
	const char *mod, *env;
	size_t i;
	ap_buf_adds(out, "# API support matrix\n\nDepth: ");
	ap_escape_md(ap_json_text(meta, "depth"), out);
	ap_buf_addf(out, ". %zu lines (one per API per environment).\n\n", json_array_size(lines));
	md_envs(meta, out);
	ap_buf_adds(out, "\n## Per module\n\n| module | environment | consistent | inconsistent "
		    "| not run | absent |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
	json_object_foreach(s, mod, m) {
		json_t *c;
		json_object_foreach(m, env, c) {
			if (!*env)
				continue;
			ap_buf_adds(out, "| ");
			ap_escape_md(mod, out);
			ap_buf_adds(out, " | ");
			ap_escape_md(env, out);
			ap_buf_addf(out, " | %lld | %lld | %lld | %lld |\n", (long long)count(c, V_OK),
				    (long long)count(c, V_BAD), (long long)count(c, V_NOTRUN),
				    (long long)count(c, V_ABSENT));
		}
	}
	ap_buf_adds(out, "\n## Not consistent or not run\n\n| api | environment | verdict | reason |\n"
		    "| --- | --- | --- | --- |\n");
	json_array_foreach(lines, i, l) {
		if (!notable(l))
			continue;
		ap_buf_adds(out, "| ");
		ap_escape_md_code(ap_json_text(l, "api"), out);
		ap_buf_adds(out, " | ");
		ap_escape_md(ap_json_text(l, "env"), out);
		ap_buf_adds(out, " | ");
		ap_escape_md(ap_json_text(l, "verdict"), out);
		ap_buf_adds(out, " | ");
		ap_escape_md(json_string_value(json_object_get(l, "reason")), out);
		ap_buf_adds(out, " |\n");
	}
	json_decref(s);
}

static const char html_style[] =
	"body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
	"table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}"
	"td.n{text-align:right}.key span{display:inline-block;width:1em;height:1em;margin:0 4px}";

/* One SVG bar: the four verdicts' shares of a module's lines, 300 px wide. */
static void svg_bar(const json_t *c, struct ap_buf *out)
{
	json_int_t total = 0;
	double x = 0;
	for (int v = 0; v < NV; v++)
		total += count(c, v);
	ap_buf_adds(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"14\" "
		    "role=\"img\"><title>");
	for (int v = 0; v < NV; v++)
		ap_buf_addf(out, "%s%s %lld", v ? ", " : "", ap_line_verdict_name((enum ap_line_verdict)v), (long long)count(c, v));
	ap_buf_adds(out, "</title>");
	for (int v = 0; total && v < NV; v++) {
		double w = 300.0 * (double)count(c, v) / (double)total;
		if (w > 0)
			ap_buf_addf(out, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"14\" "
				    "fill=\"%s\"/>", x, w, vcolors[v]);
		x += w;
	}
	ap_buf_adds(out, "</svg>");
}

static void html_row(const char *mod, const char *env, const json_t *c, int bar,
		     struct ap_buf *out)
{
	ap_buf_adds(out, "<tr><td>");
	ap_escape_xml(mod, out);
	ap_buf_adds(out, "</td><td>");
	ap_escape_xml(*env ? env : "all", out);
	ap_buf_adds(out, "</td>");
	for (int v = 0; v < NV; v++)
		ap_buf_addf(out, "<td class=\"n\">%lld</td>", (long long)count(c, v));
	ap_buf_adds(out, "<td>");
	if (bar)
		svg_bar(c, out);
	ap_buf_adds(out, "</td></tr>\n");
}

static void html_notable(const json_t *lines, struct ap_buf *out)
{
	size_t i;
	json_t *l;
	ap_buf_adds(out, "<h2>Not consistent or not run</h2>\n<table><tr><th>api</th>"
		    "<th>environment</th><th>verdict</th><th>reason</th></tr>\n");
	json_array_foreach(lines, i, l) {
		if (!notable(l))
			continue;
		const char *cells[4] = { ap_json_text(l, "api"), ap_json_text(l, "env"),
					 ap_json_text(l, "verdict"), ap_json_text(l, "reason") };
		ap_buf_adds(out, "<tr>");
		for (int k = 0; k < 4; k++) {
			ap_buf_adds(out, k ? "<td>" : "<td><code>");
			ap_escape_xml(cells[k], out);
			ap_buf_adds(out, k ? "</td>" : "</code></td>");
		}
		ap_buf_adds(out, "</tr>\n");
	}
	ap_buf_adds(out, "</table>\n");
}

void ap_sweepview_html(const json_t *meta, const json_t *lines, struct ap_buf *out)
{
	json_t *s = summary(lines), *m, *e;
	const char *mod, *env;
	size_t i;
	ap_buf_addf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "style-src 'unsafe-inline'\"><title>apiparity: API support matrix</title>"
		    "<style>%s</style></head><body>\n<h1>API support matrix</h1>\n<p>Depth: ",
		    html_style);
	ap_escape_xml(ap_json_text(meta, "depth"), out);
	ap_buf_addf(out, "; %zu lines.</p>\n<table><tr><th>environment</th><th>label</th>"
		    "<th>torch</th></tr>\n", json_array_size(lines));
	json_array_foreach(json_object_get(meta, "envs"), i, e) {
		const char *cells[3] = { ap_json_text(e, "name"), ap_json_text(e, "label"),
					 ap_json_text(e, "torch") };
		ap_buf_adds(out, "<tr>");
		for (int k = 0; k < 3; k++) {
			ap_buf_adds(out, "<td>");
			ap_escape_xml(cells[k], out);
			ap_buf_adds(out, "</td>");
		}
		ap_buf_adds(out, "</tr>\n");
	}
	ap_buf_adds(out, "</table>\n<h2>Per module</h2>\n<p class=\"key\">");
	for (int v = 0; v < NV; v++)
		ap_buf_addf(out, "<span style=\"background:%s\"></span>%s ", vcolors[v], ap_line_verdict_name((enum ap_line_verdict)v));
	ap_buf_adds(out, "</p>\n<table><tr><th>module</th><th>environment</th><th>consistent</th>"
		    "<th>inconsistent</th><th>not run</th><th>absent</th><th></th></tr>\n");
	json_object_foreach(s, mod, m) {
		json_t *c;
		html_row(mod, "", json_object_get(m, ""), 1, out);
		json_object_foreach(m, env, c)
			if (*env)
				html_row(mod, env, c, 0, out);
	}
	ap_buf_adds(out, "</table>\n");
	html_notable(lines, out);
	ap_buf_adds(out, "</body></html>\n");
	json_decref(s);
}

static int write_file(const char *dir, const char *name, const struct ap_buf *data,
		      struct ap_buf *err)
{
	struct ap_buf path = { 0 };
	ap_buf_addf(&path, "%s/%s", dir, name);
	int r = ap_write_atomic(ap_buf_str(&path), ap_buf_str(data), data->len);
	if (r)
		ap_buf_addf(err, "%s: %s", ap_buf_str(&path), strerror(-r));
	ap_buf_free(&path);
	return r;
}

int ap_sweepview_write(const char *dir, const json_t *meta, const json_t *lines,
		       struct ap_buf *err)
{
	struct ap_buf jl = { 0 }, md = { 0 }, html = { 0 }, mj = { 0 };
	char *s = json_dumps(meta, JSON_INDENT(2));
	int r = s ? ap_matrix_render(lines, &jl) : -ENOMEM;
	ap_buf_adds(&mj, s ? s : "");
	ap_buf_adds(&mj, "\n");
	free(s);
	ap_sweepview_md(meta, lines, &md);
	ap_sweepview_html(meta, lines, &html);
	r = r ? r : write_file(dir, AP_MATRIX_NAME, &jl, err);
	r = r ? r : write_file(dir, "matrix.md", &md, err);
	r = r ? r : write_file(dir, "matrix.html", &html, err);
	r = r ? r : write_file(dir, AP_SWEEP_META_NAME, &mj, err);
	r = r ? r : ap_manifest_write(dir, err);
	ap_buf_free(&jl);
	ap_buf_free(&md);
	ap_buf_free(&html);
	ap_buf_free(&mj);
	return r;
}

/* --- diff ---------------------------------------------------------------- */

/* "module api" -> the line of env in lines. */
static json_t *index_env(const json_t *lines, const char *env)
{
	json_t *ix = json_object(), *l;
	size_t i;
	json_array_foreach(lines, i, l) {
		if (strcmp(ap_json_text(l, "env"), env))
			continue;
		struct ap_buf id = { 0 };
		ap_buf_addf(&id, "%s %s", ap_json_text(l, "module"), ap_json_text(l, "api"));
		json_object_set(ix, ap_buf_str(&id), l);
		ap_buf_free(&id);
	}
	return ix;
}

static int is_present(const json_t *l)
{
	return l && !strcmp(ap_json_text(l, "status"), "present");
}

static json_t *change(const json_t *x, const json_t *y, const char *key)
{
	json_t *c = json_pack("{s:O, s:O, s:O?, s:O, s:O}", "api", json_object_get(y, "api"),
			      "module", json_object_get(y, "module"),
			      "kind", json_object_get(y, "kind"),
			      "a", json_object_get(x, key), "b", json_object_get(y, key));
	if (c && !strcmp(key, "verdict"))
		json_object_set(c, "reason", json_object_get(y, "reason"));
	return c;
}

/* Compares one API seen in both (x in a, y in b), both measured: its kind,
 * else its signature, else its verdict (a behaviour change). */
static void compare(json_t *d, const json_t *x, const json_t *y)
{
	if (!json_equal(json_object_get(x, "kind"), json_object_get(y, "kind")))
		json_array_append_new(json_object_get(d, "kind"), change(x, y, "kind"));
	else if (!json_equal(json_object_get(x, "signature"), json_object_get(y, "signature")))
		json_array_append_new(json_object_get(d, "signature"), change(x, y, "signature"));
	/* a verdict that follows from the change above is not news */
	else if (!json_equal(json_object_get(x, "verdict"), json_object_get(y, "verdict")))
		json_array_append_new(json_object_get(d, "behaviour"), change(x, y, "verdict"));
}

json_t *ap_matrix_diff(const json_t *a, const char *ea, const json_t *b, const char *eb)
{
	json_t *d = json_pack("{s:[], s:[], s:[], s:[], s:[]}", "added", "removed", "signature",
			      "kind", "behaviour");
	json_t *ia = index_env(a, ea), *ib = index_env(b, eb), *l;
	size_t i;
	json_array_foreach(b, i, l) {
		if (strcmp(ap_json_text(l, "env"), eb))
			continue;
		struct ap_buf id = { 0 };
		ap_buf_addf(&id, "%s %s", ap_json_text(l, "module"), ap_json_text(l, "api"));
		const json_t *x = json_object_get(ia, ap_buf_str(&id));
		if (is_present(l) && !is_present(x) &&
		    (!x || !strcmp(ap_json_text(x, "status"), "absent")))
			json_array_append(json_object_get(d, "added"), l);
		else if (is_present(l) && is_present(x))
			compare(d, x, l);
		ap_buf_free(&id);
	}
	json_array_foreach(a, i, l) {
		if (strcmp(ap_json_text(l, "env"), ea) || !is_present(l))
			continue;
		struct ap_buf id = { 0 };
		ap_buf_addf(&id, "%s %s", ap_json_text(l, "module"), ap_json_text(l, "api"));
		const json_t *y = json_object_get(ib, ap_buf_str(&id));
		if (!y || !strcmp(ap_json_text(y, "status"), "absent"))
			json_array_append(json_object_get(d, "removed"), l);
		ap_buf_free(&id);
	}
	json_decref(ia);
	json_decref(ib);
	return d;
}

/* A signature (a list of overload texts) as one line. */
static void sig_text(const json_t *s, struct ap_buf *out)
{
	size_t i;
	json_t *o;
	if (!json_is_array(s)) {
		ap_buf_adds(out, "-");
		return;
	}
	json_array_foreach(s, i, o)
		ap_buf_addf(out, "%s%s", i ? " | " : "", json_string_value(o));
}

static void diff_line(struct ap_buf *out, const char *what, const json_t *c, const char *key)
{
	struct ap_buf line = { 0 }, a = { 0 }, b = { 0 };
	ap_buf_addf(&line, "%-10s %s", what, ap_json_text(c, "api"));
	if (!strcmp(what, "added") || !strcmp(what, "removed"))
		ap_buf_addf(&line, "  (%s)", ap_json_text(c, "kind"));
	else if (!strcmp(key, "signature")) {
		sig_text(json_object_get(c, "a"), &a);
		sig_text(json_object_get(c, "b"), &b);
		ap_buf_addf(&line, ": %s -> %s", ap_buf_str(&a), ap_buf_str(&b));
	} else
		ap_buf_addf(&line, ": %s -> %s", ap_json_text(c, "a"), ap_json_text(c, "b"));
	ap_text_line(out, ap_buf_str(&line));
	ap_buf_adds(out, "\n");
	ap_buf_free(&line);
	ap_buf_free(&a);
	ap_buf_free(&b);
}

void ap_matrix_diff_text(const json_t *diff, struct ap_buf *out)
{
	static const char *const parts[] = { "added", "removed", "signature", "kind", "behaviour" };
	static const char *const keys[] = { "", "", "signature", "kind", "verdict" };
	size_t n[5];
	for (int p = 0; p < 5; p++) {
		size_t i;
		json_t *c;
		n[p] = json_array_size(json_object_get(diff, parts[p]));
		json_array_foreach(json_object_get(diff, parts[p]), i, c)
			diff_line(out, parts[p], c, keys[p]);
	}
	ap_buf_addf(out, "%zu added, %zu removed, %zu signature changes, %zu kind changes, "
		    "%zu behaviour changes\n", n[0], n[1], n[2], n[3], n[4]);
}
