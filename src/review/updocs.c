/* updocs.c - upstream's published URLs from its docs sources: see updocs.h.
 *
 * A line-based reading of the directives that place a name on a page; the
 * rest of reStructuredText does not decide where a name is published. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/text.h"
#include "review/updocs.h"

#define UPDOCS_FILE_MAX (4u << 20)
#define UPDOCS_FILES_MAX 4000
#define UPDOCS_DEPTH_MAX 4
#define UPDOCS_NAME_MAX 512 /* a dotted name longer than any of torch's */

/* One line of a file: its text (not NUL-terminated) and indentation. */
struct line {
	const char *p;
	size_t n, indent;
};

/* A class's member rule: which members its page documents. */
struct rule {
	enum ap_updocs_members members;
	int undoc;
};

/* What a file's reading carries along. */
struct reader {
	struct ap_updocs *d;
	const char *page;                 /* the .rst's path, without ".rst" */
	char *module;                     /* the current module, or NULL */
	struct rule summary;              /* autosummary's default template's */
	const char *templates;            /* dir/_templates */
	char *section;                    /* the current section's title, or NULL */
	unsigned section_no;
};

/* Adds an entry that takes name, page and anchor (freed when it cannot:
 * NULL name or page, or no room). 0 or -ENOMEM. */
static int add_entry(struct reader *rd, char *name, char *page, char *anchor,
		     struct rule rule)
{
	struct ap_updocs *d = rd->d;
	char *section = rd->section ? strdup(rd->section) : NULL;
	if (rd->section && !section) {
		free(name);
		name = NULL;
	}
	if (name && page && d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 256;
		struct ap_updocs_entry *v = realloc(d->v, cap * sizeof(*v));
		if (v) {
			d->v = v;
			d->cap = cap;
		}
	}
	if (!name || !page || d->n == d->cap) {
		free(name);
		free(page);
		free(anchor);
		free(section);
		return -ENOMEM;
	}
	d->v[d->n++] = (struct ap_updocs_entry){ name, page, anchor, rule.members, rule.undoc,
						 section, section ? rd->section_no : 0 };
	return 0;
}

/* The absolute name of n bytes at p, as updocs.h says. */
static char *absolute(const struct reader *rd, const char *p, size_t n)
{
	char *s;
	if (!rd->module || (n >= 6 && !strncmp(p, "torch.", 6)) || (n == 5 && !strncmp(p, "torch", 5)))
		return strndup(p, n);
	if (asprintf(&s, "%s.%.*s", rd->module, (int)n, p) < 0)
		return NULL;
	return s;
}

/* Whether n bytes at p are a dotted Python name (ap_dotted_name_ok). */
static int is_name(const char *p, size_t n)
{
	char name[UPDOCS_NAME_MAX + 1];
	if (n > UPDOCS_NAME_MAX)
		return 0;
	memcpy(name, p, n);
	name[n] = '\0';
	return ap_dotted_name_ok(name, UPDOCS_NAME_MAX);
}

/* ".. NAME:: ARG" at line l: the directive's name and argument (trimmed, a
 * signature's "(...)" cut off). 0 when l is no directive. */
static int directive(const struct line *l, const char **name, size_t *nname, const char **arg,
		     size_t *narg)
{
	const char *p = l->p + l->indent, *end = l->p + l->n;
	if (end - p < 4 || strncmp(p, ".. ", 3))
		return 0;
	const char *colons = NULL;
	for (const char *q = p + 3; q + 1 < end; q++)
		if (q[0] == ':' && q[1] == ':') {
			colons = q;
			break;
		}
	if (!colons)
		return 0;
	*name = p + 3;
	*nname = (size_t)(colons - *name);
	const char *a = colons + 2;
	while (a < end && (*a == ' ' || *a == '\t'))
		a++;
	const char *e = a;
	while (e < end && *e != '(' && *e != ' ' && *e != '\t')
		e++;
	*arg = a;
	*narg = (size_t)(e - a);
	return 1;
}

static int named(const char *p, size_t n, const char *word)
{
	return strlen(word) == n && !strncmp(p, word, n);
}

/* An option line ":KEY: VALUE" of a directive body: its key and value. */
static int option(const struct line *l, const char **key, size_t *nkey, const char **val,
		  size_t *nval)
{
	const char *p = l->p + l->indent, *end = l->p + l->n;
	if (p >= end || *p != ':')
		return 0;
	const char *c = memchr(p + 1, ':', (size_t)(end - p - 1));
	if (!c)
		return 0;
	*key = p + 1;
	*nkey = (size_t)(c - p - 1);
	const char *v = c + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*val = v;
	*nval = (size_t)(end - v);
	return 1;
}

/* The member rule of a template's text. */
static struct rule template_rule(const char *text)
{
	struct rule r = { AP_UPDOCS_NO_MEMBERS, strstr(text, ":undoc-members:") != NULL };
	if (strstr(text, ":inherited-members:"))
		r.members = AP_UPDOCS_ALL_MEMBERS;
	else if (strstr(text, ":members:"))
		r.members = AP_UPDOCS_OWN_MEMBERS;
	return r;
}

/* The member rule of template name (n bytes at p), looked up in
 * _templates/autosummary/ then _templates/; none when neither has it. */
static struct rule template_named(const struct reader *rd, const char *p, size_t n)
{
	static const char *const under[] = { "/autosummary/", "/" };
	struct rule m = { AP_UPDOCS_NO_MEMBERS, 0 };
	for (size_t i = 0; i < 2; i++) {
		struct ap_buf path = { 0 }, text = { 0 };
		ap_buf_addf(&path, "%s%s%.*s", rd->templates, under[i], (int)n, p);
		int r = memchr(p, '/', n) ? -EINVAL
					  : ap_read_file_limited(ap_buf_str(&path), 1u << 16, &text);
		if (!r)
			m = template_rule(ap_buf_str(&text));
		ap_buf_free(&path);
		ap_buf_free(&text);
		if (!r)
			break;
	}
	return m;
}

/* The page beside the .rst of a toctree's DIR/NAME.html. */
static char *toctree_page(const struct reader *rd, const char *dir, size_t ndir, const char *name)
{
	const char *slash = strrchr(rd->page, '/');
	int at = slash ? (int)(slash - rd->page + 1) : 0;
	char *s;
	if (asprintf(&s, "%.*s%.*s/%s.html", at, rd->page, (int)ndir, dir, name) < 0)
		return NULL;
	return s;
}

static char *own_page(const struct reader *rd)
{
	char *s;
	return asprintf(&s, "%s.html", rd->page) < 0 ? NULL : s;
}

/* An autosummary at line i: its entries, each on a page of its own where
 * it has a :toctree:. Returns the index of the first line after it. */
static size_t read_autosummary(struct reader *rd, const struct line *ls, size_t n, size_t i,
			       int *err)
{
	size_t base = ls[i].indent;
	const char *toctree = NULL;
	size_t ntoctree = 0;
	struct rule members = rd->summary;
	for (i++; i < n && (!ls[i].n || ls[i].indent > base); i++) {
		const char *k, *v, *p = ls[i].p + ls[i].indent;
		size_t nk, nv, np = ls[i].n - ls[i].indent;
		if (!ls[i].n)
			continue;
		if (option(&ls[i], &k, &nk, &v, &nv)) {
			if (named(k, nk, "toctree"))
				toctree = v, ntoctree = nv;
			else if (named(k, nk, "template"))
				members = template_named(rd, v, nv);
			continue;
		}
		while (np && (p[np - 1] == ' ' || p[np - 1] == '\r'))
			np--;
		if (np && *p == '~')
			p++, np--;
		if (!toctree || !is_name(p, np))
			continue; /* without a toctree, the name is published elsewhere */
		char *name = absolute(rd, p, np);
		if (*err == 0 && name)
			*err = add_entry(rd, name, toctree_page(rd, toctree, ntoctree, name), NULL,
					 members);
		else if (!name)
			*err = -ENOMEM;
	}
	return i;
}

/* The member rule of an autoclass's options (the lines after i); names
 * listed in ":members: a, b" are added as anchors of their own. */
static struct rule autoclass_members(struct reader *rd, const struct line *ls, size_t n,
				     size_t i, const char *cls, int *err)
{
	static const struct rule none = { AP_UPDOCS_NO_MEMBERS, 0 };
	struct rule m = none;
	size_t base = ls[i].indent;
	for (i++; i < n && ls[i].n && ls[i].indent > base; i++) {
		const char *k, *v;
		size_t nk, nv;
		if (!option(&ls[i], &k, &nk, &v, &nv))
			break;
		if (named(k, nk, "inherited-members"))
			m.members = AP_UPDOCS_ALL_MEMBERS;
		else if (named(k, nk, "undoc-members"))
			m.undoc = 1;
		else if (named(k, nk, "members") && !nv && m.members == AP_UPDOCS_NO_MEMBERS)
			m.members = AP_UPDOCS_OWN_MEMBERS;
		else if (named(k, nk, "members"))
			for (size_t a = 0; a < nv && !*err;) {
				size_t b = a;
				while (b < nv && v[b] != ',')
					b++;
				size_t s = a, e = b;
				while (s < e && v[s] == ' ')
					s++;
				while (e > s && v[e - 1] == ' ')
					e--;
				char *name = NULL;
				if (is_name(v + s, e - s) && asprintf(&name, "%s.%.*s", cls, (int)(e - s),
								      v + s) >= 0)
					*err = add_entry(rd, name, own_page(rd), strdup(name),
							 none);
				a = b + 1;
			}
	}
	return m;
}

/* The directives that document their argument on this page, as an anchor.
 * (`.. method::` and `.. attribute::` are left out: written inside a
 * class's body, their names are relative to it.) */
static int documents(const char *p, size_t n)
{
	static const char *const words[] = {
		"autofunction", "autodata", "autoattribute", "automethod", "autoexception",
		"autoclass", "py:function", "py:class", "py:data", "py:exception", "function",
		"class", "data", "exception", NULL
	};
	for (size_t i = 0; words[i]; i++)
		if (named(p, n, words[i]))
			return 1;
	return 0;
}

static int is_class(const char *p, size_t n)
{
	return named(p, n, "autoclass") || named(p, n, "autoexception") ||
	       named(p, n, "py:class") || named(p, n, "class");
}

static void set_module(struct reader *rd, const char *p, size_t n, int *err)
{
	free(rd->module);
	rd->module = NULL;
	if (is_name(p, n) && !(rd->module = strndup(p, n)))
		*err = -ENOMEM;
}

/* One directive at line i; the index of the next line to read. */
static size_t read_directive(struct reader *rd, const struct line *ls, size_t n, size_t i,
			     int *err)
{
	const char *dn, *arg;
	size_t ndn, narg;
	if (!directive(&ls[i], &dn, &ndn, &arg, &narg))
		return i + 1;
	if (named(dn, ndn, "autosummary"))
		return read_autosummary(rd, ls, n, i, err);
	if (named(dn, ndn, "currentmodule") || named(dn, ndn, "module") ||
	    named(dn, ndn, "py:module") || named(dn, ndn, "py:currentmodule")) {
		set_module(rd, arg, narg, err);
		return i + 1;
	}
	if (named(dn, ndn, "automodule")) {
		set_module(rd, arg, narg, err);
		char *anchor = NULL;
		if (rd->module && !*err) {
			if (asprintf(&anchor, "module-%s", rd->module) < 0)
				anchor = NULL;
			*err = add_entry(rd, strdup(rd->module), own_page(rd), anchor,
					 (struct rule){ AP_UPDOCS_NO_MEMBERS, 0 });
		}
		return i + 1;
	}
	if (!documents(dn, ndn) || !is_name(arg, narg))
		return i + 1;
	char *name = absolute(rd, arg, narg);
	if (!name) {
		*err = -ENOMEM;
		return i + 1;
	}
	struct rule m = { AP_UPDOCS_NO_MEMBERS, 0 };
	if (is_class(dn, ndn))
		m = autoclass_members(rd, ls, n, i, name, err);
	if (!*err)
		*err = add_entry(rd, strdup(name), own_page(rd), strdup(name), m);
	free(name);
	return i + 1;
}

/* Splits text into lines (each with its indentation: tabs count as 8). */
static struct line *split_lines(const char *text, size_t len, size_t *n)
{
	size_t cap = 1;
	for (size_t k = 0; k < len; k++)
		cap += text[k] == '\n';
	struct line *ls = calloc(cap, sizeof(*ls));
	*n = 0;
	for (size_t at = 0; ls && at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t e = nl ? (size_t)(nl - text) : len;
		struct line *l = &ls[(*n)++];
		l->p = text + at;
		l->n = e - at;
		while (l->indent < l->n && (l->p[l->indent] == ' ' || l->p[l->indent] == '\t'))
			l->indent++;
		if (l->indent == l->n)
			l->n = l->indent = 0; /* a blank line */
		at = e + 1;
	}
	return ls;
}

/* Whether l is a section adornment: one punctuation character, repeated,
 * at least three times, from the first column. */
static int adornment(const struct line *l)
{
	size_t n = l->n;
	while (n && (l->p[n - 1] == ' ' || l->p[n - 1] == '\r'))
		n--;
	if (l->indent || n < 3 || !strchr("=-~^\"'`#*+:._", l->p[0]))
		return 0;
	for (size_t k = 1; k < n; k++)
		if (l->p[k] != l->p[0])
			return 0;
	return 1;
}

/* A title as read, without reST's inline markup: a role (":hidden:`X`")
 * and the backquotes of a literal or reference ("`Constraints`"). */
static char *title_text(const char *p, size_t n)
{
	char *t = malloc(n + 1), *o = t;
	for (size_t k = 0; t && k < n; k++) {
		size_t r = 0;
		if (p[k] == ':')
			while (k + 1 + r < n && (p[k + 1 + r] == '-' || (p[k + 1 + r] >= 'a' && p[k + 1 + r] <= 'z')))
				r++;
		if (r && k + 1 + r + 1 < n && p[k + 1 + r] == ':' && p[k + 2 + r] == '`')
			k += r + 1;           /* the role, up to its closing ':' */
		else if (p[k] != '`')
			*o++ = p[k];
	}
	if (t)
		*o = 0;
	return t;
}

/* The lines a section heading at i takes (a title underlined, or over- and
 * underlined), its title made the current section; 0 when there is none. */
static size_t heading(struct reader *rd, const struct line *ls, size_t n, size_t i, int *err)
{
	int over = adornment(&ls[i]);
	size_t t = over ? i + 1 : i;
	if (t + 1 >= n || !ls[t].n || adornment(&ls[t]) || !adornment(&ls[t + 1]))
		return 0;
	if (!over && ls[t].indent)
		return 0; /* an underlined title starts in the first column */
	const char *p = ls[t].p + ls[t].indent;
	size_t np = ls[t].n - ls[t].indent;
	while (np && (p[np - 1] == ' ' || p[np - 1] == '\r'))
		np--;
	free(rd->section);
	if (!(rd->section = title_text(p, np)))
		*err = -ENOMEM;
	rd->section_no = ++rd->d->sections;
	return t + 2 - i;
}

static int read_page(struct reader *rd, const char *path)
{
	struct ap_buf text = { 0 };
	size_t n;
	int err = ap_read_file_limited(path, UPDOCS_FILE_MAX, &text);
	if (err)
		return err == -ENOMEM ? err : 0; /* an unreadable page documents nothing */
	struct line *ls = split_lines(ap_buf_str(&text), text.len, &n);
	if (!ls)
		err = -ENOMEM;
	for (size_t i = 0, h; ls && i < n && !err;)
		i = (h = heading(rd, ls, n, i, &err)) ? i + h : read_directive(rd, ls, n, i, &err);
	free(ls);
	free(rd->module);
	rd->module = NULL;
	free(rd->section);
	rd->section = NULL;
	ap_buf_free(&text);
	return err;
}

/* Every .rst under dir/rel (rel "" at the top), depth levels at most. */
static int read_tree(struct reader *rd, const char *dir, const char *rel, int depth,
		     struct ap_buf *err)
{
	struct ap_buf at = { 0 };
	char **names;
	size_t n;
	ap_buf_addf(&at, "%s%s%s", dir, *rel ? "/" : "", rel);
	int r = ap_dir_list(ap_buf_str(&at), AP_DIR_NODOT | AP_DIR_MARK, &names, &n);
	if (r && !*rel)
		ap_buf_addf(err, "%s: %s", ap_buf_str(&at), strerror(-r));
	for (size_t i = 0; !r && i < n && rd->d->files < UPDOCS_FILES_MAX; i++) {
		size_t len = strlen(names[i]);
		struct ap_buf sub = { 0 }, path = { 0 };
		ap_buf_addf(&sub, "%s%s%.*s", rel, *rel ? "/" : "", (int)len - 1, names[i]);
		if (names[i][len - 1] == '/' && names[i][0] != '_' && depth > 1)
			r = read_tree(rd, dir, ap_buf_str(&sub), depth - 1, err);
		else if (len > 4 && !strcmp(names[i] + len - 4, ".rst")) {
			ap_buf_reset(&sub);
			ap_buf_addf(&sub, "%s%s%.*s", rel, *rel ? "/" : "", (int)len - 4, names[i]);
			ap_buf_addf(&path, "%s/%s.rst", dir, ap_buf_str(&sub));
			rd->page = ap_buf_str(&sub);
			rd->d->files++;
			r = read_page(rd, ap_buf_str(&path));
		}
		ap_buf_free(&sub);
		ap_buf_free(&path);
	}
	ap_dir_free(names, n);
	ap_buf_free(&at);
	return *rel && r != -ENOMEM ? 0 : r;
}

/* By name; a name's own page before an anchor. */
static int by_name(const void *a, const void *b)
{
	const struct ap_updocs_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->anchor != NULL) - (y->anchor != NULL);
}

int ap_updocs_load(const char *dir, const char *version, struct ap_updocs *d,
		   struct ap_buf *err)
{
	int major, minor;
	*d = (struct ap_updocs){ 0 };
	if (!version || sscanf(version, "%d.%d", &major, &minor) != 2) {
		ap_buf_addf(err, "no MAJOR.MINOR in torch version '%s'", version ? version : "");
		return -EINVAL;
	}
	if (asprintf(&d->base, "https://pytorch.org/docs/%d.%d/", major, minor) < 0) {
		d->base = NULL;
		return -ENOMEM;
	}
	struct ap_buf templates = { 0 };
	ap_buf_addf(&templates, "%s/_templates", dir);
	struct reader rd = { .d = d, .summary = { AP_UPDOCS_NO_MEMBERS, 0 },
			     .templates = ap_buf_str(&templates) };
	rd.summary = template_named(&rd, "class.rst", 9);
	int r = read_tree(&rd, dir, "", UPDOCS_DEPTH_MAX, err);
	if (r == -ENOMEM && !err->len)
		ap_buf_adds(err, "out of memory");
	if (!r && d->n)
		qsort(d->v, d->n, sizeof(*d->v), by_name);
	else
		ap_updocs_free(d);
	ap_buf_free(&templates);
	return r;
}

static const struct ap_updocs_entry *find(const struct ap_updocs *d, const char *name, size_t n)
{
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(d->v[mid].name, name, n);
		if (!c && d->v[mid].name[n])
			c = 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && !strncmp(d->v[lo].name, name, n) && !d->v[lo].name[n] ? &d->v[lo] : NULL;
}

/* Whether the page of class cls documents its member api (what is known
 * of it: m). */
static int member_documented(const struct ap_updocs_entry *cls, const char *api,
			     const struct ap_updocs_member *m)
{
	const char *name = api + strlen(cls->name) + 1;
	if (cls->members == AP_UPDOCS_NO_MEMBERS || *name == '_')
		return 0;
	if (cls->members == AP_UPDOCS_OWN_MEMBERS && (!m || m->own != 1))
		return 0;
	return cls->undoc || (m && m->doc == 1);
}

int ap_updocs_url(const struct ap_updocs *d, const char *api, const struct ap_updocs_member *m,
		  struct ap_buf *url)
{
	const struct ap_updocs_entry *e = find(d, api, strlen(api));
	const char *anchor = e ? e->anchor : NULL;
	if (!e) {
		const char *dot = strrchr(api, '.');
		const struct ap_updocs_entry *cls = dot ? find(d, api, (size_t)(dot - api)) : NULL;
		if (!cls || !member_documented(cls, api, m))
			return -ENOENT;
		e = cls;
		anchor = api;
	}
	ap_buf_addf(url, "%s%s%s%s", d->base, e->page, anchor ? "#" : "", anchor ? anchor : "");
	return 0;
}

const char *ap_updocs_section(const struct ap_updocs *d, const char *api, unsigned *order)
{
	const struct ap_updocs_entry *e = find(d, api, strlen(api));
	const char *dot = strrchr(api, '.');
	if (!e && dot)
		e = find(d, api, (size_t)(dot - api));
	*order = e && e->section ? e->section_no : 0;
	return e ? e->section : NULL;
}

void ap_updocs_free(struct ap_updocs *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].name);
		free(d->v[i].page);
		free(d->v[i].anchor);
		free(d->v[i].section);
	}
	free(d->v);
	free(d->base);
	*d = (struct ap_updocs){ 0 };
}
