/* sweepview.c - matrix.md, matrix.html and diff (see sweepview.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "evidence/manifest.h"

#include "base/text.h"
#include "evidence/matrix.h"
#include "evidence/sweepfile.h"
#include "review/escape.h"
#include "review/sweepview.h"

/* The summary's columns: the line verdicts, in enum ap_line_verdict order. */
enum { V_OK = AP_LINE_CONSISTENT, V_BAD = AP_LINE_INCONSISTENT, V_NOTRUN = AP_LINE_NOTRUN,
       V_ABSENT = AP_LINE_ABSENT, NV = AP_LINE_VERDICT_COUNT };
static const char *const vcolors[NV] = { "#2e7d32", "#c62828", "#9e9e9e", "#e0e0e0" };

static int verdict_index(const struct ap_matrix_line *l)
{
	return l->verdict == AP_LINE_VERDICT_UNKNOWN ? V_NOTRUN : (int)l->verdict;
}

/* A line's part of the summary: its verdict, except that at depth probe and
 * numeric an API whose checks did not run counts as not run (its verdict
 * only says that its resolution and signature agree). */
static int vindex(const struct ap_matrix_line *l)
{
	int v = verdict_index(l);
	return v == V_OK && ap_matrix_check_is(l, AP_LCHECK_NOTRUN) ? V_NOTRUN : v;
}

/* The counts of one module in one environment ("" in env: all of them). */
struct cell {
	const char *env;
	long long c[NV];
};

/* One module's counts: all environments first, then each in the order
 * it first appears. */
struct row {
	const char *module;
	struct cell *cells;
	size_t n;
};

/* Every module's counts, in the order modules first appear. */
struct summary {
	struct row *rows;
	size_t n;
};

static struct cell *cell_of(struct row *r, const char *env)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->cells[i].env, env))
			return &r->cells[i];
	struct cell *v = realloc(r->cells, (r->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	r->cells = v;
	v[r->n] = (struct cell){ .env = env };
	return &v[r->n++];
}

static struct row *row_of(struct summary *s, const char *module)
{
	for (size_t i = s->n; i-- > 0;)
		if (!strcmp(s->rows[i].module, module))
			return &s->rows[i];
	struct row *v = realloc(s->rows, (s->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->rows = v;
	v[s->n] = (struct row){ .module = module };
	return &v[s->n++];
}

static struct summary summarise(const struct ap_matrix *lines)
{
	struct summary s = { 0 };
	for (size_t i = 0; i < lines->n; i++) {
		const struct ap_matrix_line *l = &lines->v[i];
		struct row *r = row_of(&s, l->module);
		const char *keys[2] = { "", l->env };
		for (int k = 0; r && k < 2; k++) {
			struct cell *c = cell_of(r, keys[k]);
			if (c)
				c->c[vindex(l)]++;
		}
	}
	return s;
}

static void summary_free(struct summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->rows[i].cells);
	free(s->rows);
}

/* What a page shows for a value of sweep.json: "-" when not known. */
static const char *known(const char *s)
{
	return s ? s : "-";
}

static void md_envs(const struct ap_sweep_meta *meta, struct ap_buf *out)
{
	ap_buf_adds(out, "| environment | label | torch |\n| --- | --- | --- |\n");
	for (size_t i = 0; i < meta->nenvs; i++) {
		const struct ap_sweep_meta_env *e = &meta->envs[i];
		ap_buf_adds(out, "| ");
		ap_escape_md(known(e->name), out);
		ap_buf_adds(out, " | ");
		ap_escape_md(known(e->label), out);
		ap_buf_adds(out, " | ");
		ap_escape_md(known(e->torch), out);
		ap_buf_adds(out, " |\n");
	}
}

/* The lines of APIs not consistent everywhere, for both pages. */
static int notable(const struct ap_matrix_line *l)
{
	int v = verdict_index(l);
	return v == V_BAD || v == V_NOTRUN;
}

/* The word a page shows for a line's verdict ("-" before it is judged). */
static const char *verdict_word(const struct ap_matrix_line *l)
{
	return l->verdict == AP_LINE_VERDICT_UNKNOWN ? "-" : ap_line_verdict_name(l->verdict);
}

void ap_sweepview_md(const struct ap_sweep_meta *meta, const struct ap_matrix *lines, struct ap_buf *out)
{
	struct summary s = summarise(lines);
	ap_buf_adds(out, "# API support matrix\n\nDepth: ");
	ap_escape_md(known(meta->depth), out);
	ap_buf_addf(out, ". %zu lines (one per API per environment).\n\n", lines->n);
	md_envs(meta, out);
	ap_buf_adds(out, "\n## Per module\n\n| module | environment | consistent | inconsistent "
		    "| not run | absent |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
	for (size_t m = 0; m < s.n; m++)
		for (size_t e = 0; e < s.rows[m].n; e++) {
			const struct cell *c = &s.rows[m].cells[e];
			if (!*c->env)
				continue;
			ap_buf_adds(out, "| ");
			ap_escape_md(s.rows[m].module, out);
			ap_buf_adds(out, " | ");
			ap_escape_md(c->env, out);
			ap_buf_addf(out, " | %lld | %lld | %lld | %lld |\n", c->c[V_OK], c->c[V_BAD],
				    c->c[V_NOTRUN], c->c[V_ABSENT]);
		}
	ap_buf_adds(out, "\n## Not consistent or not run\n\n| api | environment | verdict | reason |\n"
		    "| --- | --- | --- | --- |\n");
	for (size_t i = 0; i < lines->n; i++) {
		const struct ap_matrix_line *l = &lines->v[i];
		if (!notable(l))
			continue;
		ap_buf_adds(out, "| ");
		ap_escape_md_code(l->api, out);
		ap_buf_adds(out, " | ");
		ap_escape_md(l->env, out);
		ap_buf_adds(out, " | ");
		ap_escape_md(verdict_word(l), out);
		ap_buf_adds(out, " | ");
		ap_escape_md(l->reason, out);
		ap_buf_adds(out, " |\n");
	}
	summary_free(&s);
}

static const char html_style[] =
	"body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
	"table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}"
	"td.n{text-align:right}.key span{display:inline-block;width:1em;height:1em;margin:0 4px}";

/* One SVG bar: the four verdicts' shares of a module's lines, 300 px wide. */
static void svg_bar(const long long *c, struct ap_buf *out)
{
	long long total = 0;
	double x = 0;
	for (int v = 0; v < NV; v++)
		total += c[v];
	ap_buf_adds(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"14\" "
		    "role=\"img\"><title>");
	for (int v = 0; v < NV; v++)
		ap_buf_addf(out, "%s%s %lld", v ? ", " : "", ap_line_verdict_name((enum ap_line_verdict)v), (long long)c[v]);
	ap_buf_adds(out, "</title>");
	for (int v = 0; total && v < NV; v++) {
		double w = 300.0 * (double)c[v] / (double)total;
		if (w > 0)
			ap_buf_addf(out, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"14\" "
				    "fill=\"%s\"/>", x, w, vcolors[v]);
		x += w;
	}
	ap_buf_adds(out, "</svg>");
}

static void html_row(const char *mod, const char *env, const long long *c, int bar,
		     struct ap_buf *out)
{
	ap_buf_adds(out, "<tr><td>");
	ap_escape_xml(mod, out);
	ap_buf_adds(out, "</td><td>");
	ap_escape_xml(*env ? env : "all", out);
	ap_buf_adds(out, "</td>");
	for (int v = 0; v < NV; v++)
		ap_buf_addf(out, "<td class=\"n\">%lld</td>", (long long)c[v]);
	ap_buf_adds(out, "<td>");
	if (bar)
		svg_bar(c, out);
	ap_buf_adds(out, "</td></tr>\n");
}

static void html_notable(const struct ap_matrix *lines, struct ap_buf *out)
{
	ap_buf_adds(out, "<h2>Not consistent or not run</h2>\n<table><tr><th>api</th>"
		    "<th>environment</th><th>verdict</th><th>reason</th></tr>\n");
	for (size_t i = 0; i < lines->n; i++) {
		const struct ap_matrix_line *l = &lines->v[i];
		if (!notable(l))
			continue;
		const char *cells[4] = { l->api, l->env, verdict_word(l), l->reason ? l->reason : "-" };
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

void ap_sweepview_html(const struct ap_sweep_meta *meta, const struct ap_matrix *lines, struct ap_buf *out)
{
	struct summary s = summarise(lines);
	ap_buf_addf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "style-src 'unsafe-inline'\"><title>apiparity: API support matrix</title>"
		    "<style>%s</style></head><body>\n<h1>API support matrix</h1>\n<p>Depth: ",
		    html_style);
	ap_escape_xml(known(meta->depth), out);
	ap_buf_addf(out, "; %zu lines.</p>\n<table><tr><th>environment</th><th>label</th>"
		    "<th>torch</th></tr>\n", lines->n);
	for (size_t i = 0; i < meta->nenvs; i++) {
		const struct ap_sweep_meta_env *e = &meta->envs[i];
		const char *cells[3] = { known(e->name), known(e->label), known(e->torch) };
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
	for (size_t m = 0; m < s.n; m++) {
		/* the all-environments cell is each row's first */
		html_row(s.rows[m].module, "", s.rows[m].cells[0].c, 1, out);
		for (size_t k = 1; k < s.rows[m].n; k++)
			html_row(s.rows[m].module, s.rows[m].cells[k].env, s.rows[m].cells[k].c, 0, out);
	}
	ap_buf_adds(out, "</table>\n");
	html_notable(lines, out);
	ap_buf_adds(out, "</body></html>\n");
	summary_free(&s);
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

int ap_sweepview_write(const char *dir, const struct ap_sweep_meta *meta, const struct ap_matrix *lines,
		       struct ap_buf *err)
{
	struct ap_buf jl = { 0 }, md = { 0 }, html = { 0 }, mj = { 0 };
	int r = ap_sweep_meta_render(meta, &mj);
	r = r ? r : ap_matrix_render(lines, &jl);
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

/* The lines of one environment of a matrix, sorted by (module, api) and,
 * for a line given twice, by position: to find an API's line. */
struct index {
	const struct ap_matrix_line **v;
	size_t n;
};

static int api_cmp(const struct ap_matrix_line *x, const struct ap_matrix_line *y)
{
	int c = strcmp(x->module, y->module);
	return c ? c : strcmp(x->api, y->api);
}

static int index_cmp(const void *a, const void *b)
{
	const struct ap_matrix_line *x = *(const struct ap_matrix_line *const *)a;
	const struct ap_matrix_line *y = *(const struct ap_matrix_line *const *)b;
	int c = api_cmp(x, y);
	return c ? c : (x > y) - (x < y);
}

/* Indexes env's lines of lines into *ix. 0 or -ENOMEM. */
static int index_env(const struct ap_matrix *lines, const char *env, struct index *ix)
{
	*ix = (struct index){ 0 };
	if (lines->n && !(ix->v = malloc(lines->n * sizeof(*ix->v))))
		return -ENOMEM;
	for (size_t i = 0; i < lines->n; i++)
		if (!strcmp(lines->v[i].env, env))
			ix->v[ix->n++] = &lines->v[i];
	if (ix->n) /* an empty matrix has no array: qsort's base must not be NULL */
		qsort(ix->v, ix->n, sizeof(*ix->v), index_cmp);
	return 0;
}

/* The line in ix of the API of l (the last one given, if twice), or NULL. */
static const struct ap_matrix_line *line_in(const struct index *ix,
					    const struct ap_matrix_line *l)
{
	size_t lo = 0, hi = ix->n;
	/* the first line after every line of l's API */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (api_cmp(ix->v[mid], l) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && !api_cmp(ix->v[lo - 1], l) ? ix->v[lo - 1] : NULL;
}

static int is_present(const struct ap_matrix_line *l)
{
	return l && l->status == AP_LSTATUS_PRESENT;
}

static int add_change(struct ap_matrix_diff *d, enum ap_diff_part p,
		      const struct ap_matrix_line *x, const struct ap_matrix_line *y)
{
	struct ap_matrix_changes *c = &d->part[p];
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct ap_matrix_change *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct ap_matrix_change){ x, y };
	return 0;
}

/* Whether a present line of env in m carries a signature (a sweep at depth
 * signature or deeper). */
static int has_signatures(const struct ap_matrix *m, const char *env)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].status == AP_LSTATUS_PRESENT && m->v[i].signature.set &&
		    !strcmp(m->v[i].env, env))
			return 1;
	return 0;
}

/* The line in ix of what l (a line of the other side) is a name of: its
 * class (owner), else its module entry when l is one of the module's own
 * names; NULL when neither is there or present. */
static const struct ap_matrix_line *parent_in(const struct index *ix,
					      const struct ap_matrix_line *l)
{
	const char *dot = strrchr(l->api, '.');
	size_t n = strlen(l->module);
	struct ap_matrix_line key = { .module = l->module };
	if (l->owner)
		key.api = l->owner;
	else if (dot && (size_t)(dot - l->api) == n && !strncmp(l->api, l->module, n))
		key.api = l->module;
	else
		return NULL;
	const struct ap_matrix_line *p = line_in(ix, &key);
	return is_present(p) ? p : NULL;
}

/* Whether ix holds the own line of l's catalog entry (api = module = the
 * entry), whatever its status: that side walked what l lies under. */
static int walked_entry(const struct index *ix, const struct ap_matrix_line *l)
{
	struct ap_matrix_line key = { .module = l->module, .api = l->module };
	return line_in(ix, &key) != NULL;
}

/* Compares one API seen in both (x in a, y in b), both measured: its kind,
 * else its signature, else its verdict (a behaviour change). */
static int compare(struct ap_matrix_diff *d, const struct ap_matrix_line *x,
		   const struct ap_matrix_line *y)
{
	if (!ap_matrix_same_kind(x->kind, y->kind))
		return add_change(d, AP_DIFF_KIND, x, y);
	if (d->signatures && !ap_matrix_same_signature(&x->signature, &y->signature))
		return add_change(d, AP_DIFF_SIGNATURE, x, y);
	/* a verdict that follows from the change above is not news */
	if (x->verdict != y->verdict)
		return add_change(d, AP_DIFF_BEHAVIOUR, x, y);
	return 0;
}

/* The present class line in ix defined as def (its identity) at a path
 * other than api, the first by path; NULL when none (or def is NULL). */
static const struct ap_matrix_line *defined_in(const struct index *ix, const char *def,
					       const char *api)
{
	const struct ap_matrix_line *best = NULL;
	for (size_t i = 0; def && i < ix->n; i++) {
		const struct ap_matrix_line *l = ix->v[i];
		if (is_present(l) && l->defined && !strcmp(l->defined, def) && strcmp(l->api, api) &&
		    (!best || strcmp(l->api, best->api) < 0))
			best = l;
	}
	return best;
}

/* Where l (present in a, with no line in b) went in b: the class of the
 * same definition at another path, or l's namesake member of it; NULL when
 * neither. */
static const struct ap_matrix_line *moved_to(const struct index *ia, const struct index *ib,
					     const struct ap_matrix_line *l)
{
	if (l->defined || !l->owner)
		return defined_in(ib, l->defined, l->api);
	struct ap_matrix_line key = { .module = l->module, .api = l->owner };
	const struct ap_matrix_line *o = line_in(ia, &key), *y, *m;
	if (!o || !(y = defined_in(ib, o->defined, o->api)))
		return NULL;
	struct ap_buf api = { 0 };
	ap_buf_addf(&api, "%s.%s", y->api, strrchr(l->api, '.') + 1);
	key = (struct ap_matrix_line){ .module = y->module, .api = api.data };
	m = line_in(ib, &key);
	ap_buf_free(&api);
	return is_present(m) ? m : NULL;
}

/* Whether l is where something of the diff moved to. */
static int moved_here(const struct ap_matrix_diff *d, const struct ap_matrix_line *l)
{
	const struct ap_matrix_changes *c = &d->part[AP_DIFF_MOVED];
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].b == l)
			return 1;
	return 0;
}

/* What a has (in ea) that b (in eb) has no line for: moved, unlisted,
 * removed, or not compared (see ap_matrix_diff). */
static int diff_gone(struct ap_matrix_diff *d, const struct ap_matrix *a, const char *ea,
		     const struct index *ia, const struct index *ib)
{
	int r = 0;
	for (size_t i = 0; !r && i < a->n; i++) {
		const struct ap_matrix_line *l = &a->v[i], *y, *p;
		if (strcmp(l->env, ea) || !is_present(l))
			continue;
		y = line_in(ib, l);
		if (y && y->status != AP_LSTATUS_ABSENT)
			continue;
		if (!y && !walked_entry(ib, l)) {
			d->uncompared++;
			continue;
		}
		/* no line in b: the same class at another path is a move; reached
		 * there through its class or module, or possibly served by the
		 * module's __getattr__, is no removal */
		p = parent_in(ib, l);
		if ((y = moved_to(ia, ib, l)))
			r = add_change(d, AP_DIFF_MOVED, l, y);
		else if (p && (ap_matrix_strs_has(&p->reaches, strrchr(l->api, '.') + 1) ||
			       (!l->owner && ap_matrix_strs_has(&p->reaches, "__getattr__"))))
			r = add_change(d, AP_DIFF_UNLISTED, l, p);
		else
			r = add_change(d, AP_DIFF_REMOVED, l, NULL);
	}
	return r;
}

int ap_matrix_diff(const struct ap_matrix *a, const char *ea, const struct ap_matrix *b,
		   const char *eb, struct ap_matrix_diff *d)
{
	struct index ia, ib;
	int r = index_env(a, ea, &ia);
	int rb = index_env(b, eb, &ib);
	r = r ? r : rb;
	*d = (struct ap_matrix_diff){ .signatures = has_signatures(a, ea) && has_signatures(b, eb) };
	r = r ? r : diff_gone(d, a, ea, &ia, &ib);
	for (size_t i = 0; !r && i < b->n; i++) {
		const struct ap_matrix_line *l = &b->v[i], *x;
		if (strcmp(l->env, eb))
			continue;
		x = line_in(&ia, l);
		if (is_present(l) && !x && !walked_entry(&ia, l))
			d->uncompared++;
		else if (is_present(l) && !is_present(x) && (!x || x->status == AP_LSTATUS_ABSENT)) {
			if (!moved_here(d, l))
				r = add_change(d, AP_DIFF_ADDED, NULL, l);
		} else if (is_present(l) && is_present(x))
			r = compare(d, x, l);
	}
	free(ia.v);
	free(ib.v);
	if (r)
		ap_matrix_diff_free(d);
	return r;
}

void ap_matrix_diff_free(struct ap_matrix_diff *d)
{
	for (int p = 0; p < AP_DIFF_NPARTS; p++)
		free(d->part[p].v);
	*d = (struct ap_matrix_diff){ 0 };
}

/* A signature (a list of overload texts) as one line. */
static void sig_text(const struct ap_matrix_strs *s, struct ap_buf *out)
{
	if (!s->set) {
		ap_buf_adds(out, "-");
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		ap_buf_addf(out, "%s%s", i ? " | " : "", s->v[i]);
}

static const char *text(const char *s)
{
	return s ? s : "-";
}

static const char *verdict_text(enum ap_line_verdict v)
{
	return v == AP_LINE_VERDICT_UNKNOWN ? "-" : ap_line_verdict_name(v);
}

static void diff_line(struct ap_buf *out, enum ap_diff_part p, const struct ap_matrix_change *c)
{
	static const char *const what[AP_DIFF_NPARTS] = { "added", "removed", "moved",
							  "unlisted", "signature", "kind",
							  "behaviour" };
	struct ap_buf line = { 0 }, a = { 0 }, b = { 0 };
	const struct ap_matrix_line *side =
		c->b && p != AP_DIFF_UNLISTED && p != AP_DIFF_MOVED ? c->b : c->a;
	ap_buf_addf(&line, "%-10s %s", what[p], side->api);
	if (p == AP_DIFF_MOVED)
		ap_buf_addf(&line, " -> %s", c->b->api);
	else if (p == AP_DIFF_UNLISTED)
		ap_buf_addf(&line, ": no line of its own, %s %s", ap_matrix_strs_has(&c->b->reaches,
			    strrchr(c->a->api, '.') + 1) ? "reached through" :
			    "possibly served by the __getattr__ of", c->b->api);
	else if (p == AP_DIFF_ADDED || p == AP_DIFF_REMOVED)
		ap_buf_addf(&line, "  (%s)", text(side->kind));
	else if (p == AP_DIFF_SIGNATURE) {
		sig_text(&c->a->signature, &a);
		sig_text(&c->b->signature, &b);
		ap_buf_addf(&line, ": %s -> %s", ap_buf_str(&a), ap_buf_str(&b));
	} else if (p == AP_DIFF_KIND)
		ap_buf_addf(&line, ": %s -> %s", text(c->a->kind), text(c->b->kind));
	else
		ap_buf_addf(&line, ": %s -> %s", verdict_text(c->a->verdict),
			    verdict_text(c->b->verdict));
	ap_text_line(out, ap_buf_str(&line));
	ap_buf_adds(out, "\n");
	ap_buf_free(&line);
	ap_buf_free(&a);
	ap_buf_free(&b);
}

void ap_matrix_diff_text(const struct ap_matrix_diff *diff, struct ap_buf *out)
{
	for (int p = 0; p < AP_DIFF_NPARTS; p++)
		for (size_t i = 0; i < diff->part[p].n; i++)
			diff_line(out, (enum ap_diff_part)p, &diff->part[p].v[i]);
	ap_buf_addf(out, "%zu added, %zu removed, %zu moved, %zu unlisted, %zu signature changes, "
		    "%zu kind changes, %zu behaviour changes\n", diff->part[AP_DIFF_ADDED].n,
		    diff->part[AP_DIFF_REMOVED].n, diff->part[AP_DIFF_MOVED].n,
		    diff->part[AP_DIFF_UNLISTED].n,
		    diff->part[AP_DIFF_SIGNATURE].n, diff->part[AP_DIFF_KIND].n,
		    diff->part[AP_DIFF_BEHAVIOUR].n);
	if (diff->uncompared)
		ap_buf_addf(out, "%zu not compared: what they lie under was walked on one side "
			    "only\n", diff->uncompared);
	if (!diff->signatures)
		ap_buf_adds(out, "signatures not compared: a side was swept without them "
			    "(depth resolve)\n");
}
