/* audit.c - support pages from a matrix, and pages audited by one (see
 * audit.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonutil.h"
#include "base/text.h"
#include "evidence/matrix.h"
#include "review/audit.h"
#include "review/docs.h"
#include "review/plugins.h"

static const char *const ap_finding_names[AP_FINDING_NCLASSES] = {
	[AP_FINDING_UNREADABLE] = "unreadable",
	[AP_FINDING_OPTIONAL_DEPENDENCY] = "optional-dependency",
	[AP_FINDING_ABSENT_IN_VERSION] = "absent-in-version",
	[AP_FINDING_PLUGIN_API] = "plugin-api",
	[AP_FINDING_INSTANCE_ATTRIBUTE] = "instance-attribute",
	[AP_FINDING_ABSENT] = "absent",
	[AP_FINDING_NOT_FOUND] = "not-found",
	[AP_FINDING_NOT_MEASURED] = "not-measured",
	[AP_FINDING_NOT_SWEPT] = "not-swept",
	[AP_FINDING_PLUGIN_ADDED] = "plugin-added",
	[AP_FINDING_UNBACKED] = "unbacked",
	[AP_FINDING_CONTRADICTED] = "contradicted",
	[AP_FINDING_BACKED] = "backed",
	[AP_FINDING_MISSING_SUB_ENTRY] = "missing-sub-entry",
};

const char *ap_docs_finding_name(enum ap_docs_finding_class c)
{
	return (unsigned)c < AP_FINDING_NCLASSES ? ap_finding_names[c] : "?";
}

/* --- the sweep's environments --------------------------------------------- */

int ap_docs_envs_read(const struct ap_sweep_meta *meta, struct ap_docs_envs *out)
{
	*out = (struct ap_docs_envs){ 0 };
	if (!meta->nenvs)
		return 0;
	if (!(out->v = calloc(meta->nenvs, sizeof(*out->v))))
		return -ENOMEM;
	for (size_t i = 0; i < meta->nenvs; i++) {
		const struct ap_sweep_meta_env *e = &meta->envs[i];
		struct ap_docs_env *d = &out->v[out->n++];
		d->name = e->name;
		d->product = e->label && *e->label ? e->label : e->name;
		d->torch = e->torch;
		d->plugins = e->plugins.set ? &e->plugins : NULL;
	}
	return 0;
}

void ap_docs_envs_free(struct ap_docs_envs *e)
{
	free(e->v);
	*e = (struct ap_docs_envs){ 0 };
}

/* --- generate ------------------------------------------------------------ */

/* The products of one API, lines [from, to) of the sorted matrix, into v
 * (room for envs->n * (to - from)); their number. */
static size_t api_products(const struct ap_docs_envs *envs, const struct ap_matrix *lines,
			   size_t from, size_t to, struct ap_docs_product *v)
{
	size_t n = 0;
	for (size_t i = 0; i < envs->n; i++) {
		const struct ap_docs_env *e = &envs->v[i];
		for (size_t k = from; k < to; k++) {
			const struct ap_matrix_line *l = &lines->v[k];
			enum ap_line_verdict lv = l->verdict;
			if (lv == AP_LINE_VERDICT_UNKNOWN || !e->name || strcmp(l->env, e->name) ||
			    (lv != AP_LINE_CONSISTENT && lv != AP_LINE_INCONSISTENT))
				continue;
			v[n++] = (struct ap_docs_product){ (char *)e->product,
							   lv == AP_LINE_CONSISTENT };
		}
	}
	return n;
}

/* The kind a page gives lines [from, to): class, method (a member), else
 * function; 0 when none of them is present. */
static int block_kind(const struct ap_matrix *lines, size_t from, size_t to,
		      enum ap_docs_kind *kind)
{
	for (size_t k = from; k < to; k++) {
		const struct ap_matrix_line *l = &lines->v[k];
		if (l->status != AP_LSTATUS_PRESENT)
			continue;
		*kind = l->owner ? AP_DOCS_METHOD
			: l->kind && !strcmp(l->kind, "class") ? AP_DOCS_CLASS : AP_DOCS_FUNCTION;
		return 1;
	}
	return 0;
}

/* The NOTE under a page's title: what its marks mean (the products are the
 * measured environments), that what it does not list was not measured, and
 * where upstream documents the module (url, NULL: not said). */
static void gen_note(struct ap_buf *out, enum ap_docs_format format, const char *url)
{
	ap_buf_adds(out, "> [!NOTE]\n>\n");
	ap_buf_adds(out, format == AP_DOCS_TABLE ?
		    "> - 本页由 apiparity 根据测量生成。API的**支持情况**中，每个产品是一个被测环境："
		    "✔表示该API在该环境上测得与原生一致，✘表示测得不一致；未测量或不存在该API的环境不列出。<br>\n" :
		    "> - 本页由 apiparity 根据测量生成。API的**产品支持情况**中，每个产品是一个被测环境："
		    "支持表示该API在该环境上测得与原生一致，不支持表示测得不一致；未测量或不存在该API的环境不列出。<br>\n");
	ap_buf_adds(out, "> - 未收录于本页的API未经测量，请谨慎使用。\n");
	if (url)
		ap_buf_addf(out, "> - 目录下罗列的模块和原生文档一致，对于模块的相关说明请查看原生文档"
			    "[LINK](%s)。\n", url);
	ap_buf_adds(out, "\n");
}

/* The text of page name in g, a new page (its title mod, its NOTE) when g
 * has none yet. NULL when out of memory. */
static struct ap_docs_gen_page *gen_page(struct ap_docs_gen *g, const char *name,
					 const char *mod, const struct ap_updocs *up,
					 enum ap_docs_format format)
{
	for (size_t i = g->n; i > 0; i--)
		if (!strcmp(g->v[i - 1].name, name))
			return &g->v[i - 1];
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct ap_docs_gen_page *v = realloc(g->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		g->v = v;
		g->cap = cap;
	}
	struct ap_docs_gen_page *p = &g->v[g->n];
	*p = (struct ap_docs_gen_page){ .name = strdup(name) };
	if (!p->name)
		return NULL;
	g->n++;
	struct ap_buf url = { 0 };
	int linked = up && !ap_updocs_url(up, mod, NULL, &url);
	ap_buf_addf(&p->text, "# %s\n\n", mod);
	gen_note(&p->text, format, linked ? ap_buf_str(&url) : NULL);
	ap_buf_free(&url);
	return p;
}

/* A new top-level block of p, under the section up gives api. NULL when
 * out of memory. */
static struct ap_docs_gen_block *gen_new_block(struct ap_docs_gen_page *p,
					       const struct ap_updocs *up, const char *api)
{
	if (p->nblocks == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		struct ap_docs_gen_block *v = realloc(p->blocks, cap * sizeof(*v));
		if (!v)
			return NULL;
		p->blocks = v;
		p->cap = cap;
	}
	struct ap_docs_gen_block *b = &p->blocks[p->nblocks];
	unsigned order = 0;
	const char *section = up ? ap_updocs_section(up, api, &order) : NULL;
	*b = (struct ap_docs_gen_block){ section ? strdup(section) : NULL, order, { 0 } };
	if (section && !b->section)
		return NULL;
	p->nblocks++;
	return b;
}

/* Whether two section titles (NULL: none) are the same. */
static int same_section(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* GitHub's anchor of a heading: lower case, what is not a letter, digit,
 * '-', '_' or space left out, spaces as '-' (bytes past ASCII kept). */
static void slug(const char *title, struct ap_buf *out)
{
	for (const unsigned char *c = (const unsigned char *)title; *c; c++) {
		if (*c == ' ')
			ap_buf_adds(out, "-");
		else if (*c >= 0x80 || *c == '-' || *c == '_' || (*c >= '0' && *c <= '9') ||
			 (*c >= 'a' && *c <= 'z'))
			ap_buf_add(out, (const char *)c, 1);
		else if (*c >= 'A' && *c <= 'Z')
			ap_buf_addf(out, "%c", *c - 'A' + 'a');
	}
}

/* Orders p's blocks by section, in upstream's order (a title's first
 * place), what no section holds last; matrix order within each. */
static void sort_blocks(struct ap_docs_gen_page *p)
{
	for (size_t i = 0; i < p->nblocks; i++)   /* a title's blocks: its first place */
		for (size_t k = 0; k < p->nblocks; k++)
			if (p->blocks[k].order && same_section(p->blocks[i].section, p->blocks[k].section) &&
			    p->blocks[k].order < p->blocks[i].order)
				p->blocks[i].order = p->blocks[k].order;
	for (size_t i = 1; i < p->nblocks; i++)    /* stable: insertion */
		for (size_t k = i; k > 0; k--) {
			unsigned a = p->blocks[k - 1].order, b = p->blocks[k].order;
			if ((a ? a : UINT_MAX) <= (b ? b : UINT_MAX))
				break;
			struct ap_docs_gen_block t = p->blocks[k];
			p->blocks[k] = p->blocks[k - 1];
			p->blocks[k - 1] = t;
		}
}

/* Appends p's blocks to its text, under their sections with a 目录 of them
 * when upstream places any, and frees them. */
static void gen_finish(struct ap_docs_gen_page *p)
{
	sort_blocks(p);
	int sectioned = p->nblocks && p->blocks[0].section;
	if (sectioned) {
		ap_buf_adds(&p->text, "## 目录\n\n");
		for (size_t i = 0; i < p->nblocks; i++) {
			const char *t = p->blocks[i].section ? p->blocks[i].section : "其他";
			if (i && same_section(p->blocks[i - 1].section, p->blocks[i].section))
				continue;
			ap_buf_adds(&p->text, "- [");
			ap_text_line(&p->text, t);
			ap_buf_adds(&p->text, "](#");
			slug(t, &p->text);
			ap_buf_adds(&p->text, ")\n");
		}
		ap_buf_adds(&p->text, "\n");
	}
	for (size_t i = 0; i < p->nblocks; i++) {
		struct ap_docs_gen_block *b = &p->blocks[i];
		if (sectioned && (!i || !same_section(p->blocks[i - 1].section, b->section))) {
			ap_buf_adds(&p->text, "## ");
			ap_text_line(&p->text, b->section ? b->section : "其他");
			ap_buf_adds(&p->text, "\n\n");
		}
		ap_buf_add(&p->text, b->text.data ? b->text.data : "", b->text.len);
	}
	for (size_t i = 0; i < p->nblocks; i++) {
		free(p->blocks[i].section);
		ap_buf_free(&p->blocks[i].text);
	}
	free(p->blocks);
	p->blocks = NULL;
	p->nblocks = p->cap = 0;
}

/* Whether a line says its object has a docstring of its own (1, 0, -1). */
static int doc_of(const struct ap_matrix_line *l)
{
	return l->doc == AP_TRI_NULL ? -1 : l->doc == AP_TRI_TRUE;
}

/* What a page's blocks are made with. */
struct gen {
	const struct ap_docs_envs *envs;
	const struct ap_matrix *lines;
	const struct ap_updocs *up;
	enum ap_docs_format format;
	struct ap_buf owner;   /* the class whose block came last */
	size_t unlinked;
};

static void gen_block(struct ap_docs_gen *pages, struct gen *g, size_t from, size_t to)
{
	const struct ap_docs_envs *envs = g->envs;
	const struct ap_matrix *lines = g->lines;
	struct ap_buf *owner = &g->owner;
	const struct ap_matrix_line *l = &lines->v[from];
	const char *mod = l->module, *api = l->api;
	enum ap_docs_kind kind;
	int entry_line = !strcmp(api, mod);
	if (!block_kind(lines, from, to, &kind) || (entry_line && kind != AP_DOCS_CLASS))
		return;
	/* a member follows the block of its class, or is left out: on a page a
	 * sub-entry belongs to the heading above it */
	if (kind == AP_DOCS_METHOD && strcmp(l->owner ? l->owner : "-", ap_buf_str(owner)))
		return;
	size_t room = envs->n * (to - from);
	struct ap_docs_product *products = calloc(room ? room : 1, sizeof(*products));
	size_t n = products ? api_products(envs, lines, from, to, products) : 0;
	if (n) {
		struct ap_buf page = { 0 }, url = { 0 };
		/* the page's file name: never a '/' or a leading '.', whatever
		 * the matrix says (the reader refuses such names too) */
		for (const char *p = mod; *p; p++)
			ap_buf_add(&page, *p == '.' || *p == '/' || *p == '\\' ? "-" : p, 1);
		ap_buf_adds(&page, ".md");
		struct ap_docs_gen_page *pg = gen_page(pages, ap_buf_str(&page), mod, g->up, g->format);
		if (!g->up || ap_updocs_url(g->up, api, &(struct ap_updocs_member){ -1, doc_of(l) },
					    &url))
			g->unlinked++;
		struct ap_docs_gen_block *b = pg && pg->nblocks ? &pg->blocks[pg->nblocks - 1] : NULL;
		if (b && kind != AP_DOCS_METHOD && pg->open) {
			ap_buf_adds(&b->text, AP_DOCS_BLOCK_END);
			pg->open = 0;
		}
		if (pg && kind != AP_DOCS_METHOD)
			b = gen_new_block(pg, g->up, api);
		unsigned flags = kind == AP_DOCS_CLASS ? AP_DOCS_OPEN
				 : kind == AP_DOCS_METHOD && l->kind && !ap_docs_called(l->kind) ? AP_DOCS_NO_CALL
				 : 0;
		if (b) {
			ap_docs_block(g->format, kind, api, url.len ? ap_buf_str(&url) : NULL,
				      products, n, NULL, flags, &b->text);
			pg->open |= kind == AP_DOCS_CLASS;
		}
		if (kind != AP_DOCS_METHOD) {
			ap_buf_reset(owner);
			ap_buf_adds(owner, api);
		}
		ap_buf_free(&page);
		ap_buf_free(&url);
	}
	free(products);
}

void ap_docs_generate(const struct ap_docs_envs *envs, const struct ap_matrix *lines,
		      const struct ap_updocs *up, enum ap_docs_format format,
		      struct ap_docs_gen *out, size_t *unlinked)
{
	struct gen g = { envs, lines, up, format, { 0 }, 0 };
	size_t n = lines->n, from = 0;
	*out = (struct ap_docs_gen){ 0 };
	for (size_t i = 1; i <= n; i++) {
		if (i < n && ap_matrix_same_api(&lines->v[from], &lines->v[i]))
			continue;
		gen_block(out, &g, from, i);
		from = i;
	}
	for (size_t i = 0; i < out->n; i++) {
		struct ap_docs_gen_page *p = &out->v[i];
		if (p->open && p->nblocks)
			ap_buf_adds(&p->blocks[p->nblocks - 1].text, AP_DOCS_BLOCK_END);
		gen_finish(p);
	}
	ap_buf_free(&g.owner);
	*unlinked = g.unlinked;
}

void ap_docs_gen_free(struct ap_docs_gen *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].name);
		ap_buf_free(&g->v[i].text);
		for (size_t k = 0; k < g->v[i].nblocks; k++) {
			free(g->v[i].blocks[k].section);
			ap_buf_free(&g->v[i].blocks[k].text);
		}
		free(g->v[i].blocks);
	}
	free(g->v);
	*g = (struct ap_docs_gen){ 0 };
}

/* --- audit --------------------------------------------------------------- */

/* The lines of one api, in matrix order. */
struct group {
	const struct ap_matrix_line **v;
	size_t n;
};

/* An environment's product, each env once (its last product). */
struct env_product {
	const char *env, *product;
};

struct audit {
	const struct ap_docs_envs *envs;
	const struct ap_matrix *lines;
	const struct ap_plugins *plugins;
	json_t *by_api;      /* api -> the index of its group */
	struct group *groups;
	size_t ngroups;
	const struct ap_matrix_line **slots; /* the groups' lines, one array */
	json_t *by_key;      /* key -> [apis] (each once) */
	json_t *members;     /* owner api -> [member apis] (each once) */
	json_t *classes;     /* "env file:line" of a class -> [its apis] (each once) */
	json_t *by_defined;  /* a class's module.qualname -> [its apis] (each once) */
	json_t *tops;        /* the first part of every api: what a full path starts with */
	json_t *audited;     /* class apis whose members were audited for sub-entries */
	struct env_product *products;
	size_t nproducts;
	json_t *listed;      /* resolved apis the pages have an entry for */
	struct ap_docs_findings *out;
	int oom;
};

/* The product of each named environment, in order; a name given twice
 * keeps its first place and its last product. */
static int env_products(struct audit *a)
{
	a->products = calloc(a->envs->n ? a->envs->n : 1, sizeof(*a->products));
	if (!a->products)
		return -1;
	for (size_t i = 0; i < a->envs->n; i++) {
		const struct ap_docs_env *e = &a->envs->v[i];
		size_t k = 0;
		if (!e->name || !e->product)
			continue;
		while (k < a->nproducts && strcmp(a->products[k].env, e->name))
			k++;
		a->products[k] = (struct env_product){ e->name, e->product };
		a->nproducts += k == a->nproducts;
	}
	return 0;
}

/* Appends value to the array a unless a holds it already. */
static void add_unique(json_t *a, const char *value)
{
	json_t *x;
	size_t i;
	json_array_foreach(a, i, x)
		if (!strcmp(json_string_value(x), value))
			return;
	json_array_append_new(a, json_string(value));
}

static void push_unique(json_t *index, const char *key, const char *value)
{
	json_t *a = json_object_get(index, key);
	if (!a) {
		a = json_array();
		json_object_set_new(index, key, a);
	}
	add_unique(a, value);
}

/* The identity of a class in one environment, "env file:line", from a
 * present line of kind class that has a file; 0 when l has none. */
static int class_id(const struct ap_matrix_line *l, struct ap_buf *id)
{
	if (l->status != AP_LSTATUS_PRESENT || !l->kind || strcmp(l->kind, "class") || !l->file ||
	    !l->has_line)
		return 0;
	ap_buf_reset(id);
	ap_buf_addf(id, "%s %s:%lld", l->env, l->file, l->line);
	return 1;
}

/* The lines of api, or NULL when the matrix has none. */
static const struct group *group_of(const struct audit *a, const char *api)
{
	const json_t *at = api ? json_object_get(a->by_api, api) : NULL;
	return at ? &a->groups[json_integer_value(at)] : NULL;
}

/* Adds l to the group of its api. */
static void group_add(struct audit *a, const struct ap_matrix_line *l)
{
	const struct group *have = group_of(a, l->api);
	struct group *g = (struct group *)have;
	if (!g) {
		g = &a->groups[a->ngroups];
		json_object_set_new(a->by_api, l->api, json_integer((json_int_t)a->ngroups++));
	}
	g->v[g->n++] = l;
}

static void audit_index(struct audit *a)
{
	struct ap_buf id = { 0 };
	size_t n = a->lines->n;
	a->by_api = json_object();
	a->by_key = json_object();
	a->members = json_object();
	a->classes = json_object();
	a->by_defined = json_object();
	a->tops = json_object();
	a->audited = json_object();
	a->listed = json_object();
	if (env_products(a))
		a->oom = 1;
	/* every group has room for all the lines: one allocation, in order */
	a->groups = calloc(n ? n : 1, sizeof(*a->groups));
	const struct ap_matrix_line **slots = calloc(n ? n : 1, sizeof(*slots));
	size_t *count = calloc(n ? n : 1, sizeof(*count));
	json_t *first = json_object();
	if (!a->groups || !slots || !count || !first) {
		free(slots);
		free(count);
		json_decref(first);
		return;
	}
	/* how many lines each api has, to cut slots into the groups */
	for (size_t i = 0; i < n; i++) {
		const json_t *at = json_object_get(first, a->lines->v[i].api);
		size_t g = at ? (size_t)json_integer_value(at) : json_object_size(first);
		if (!at)
			json_object_set_new(first, a->lines->v[i].api, json_integer((json_int_t)g));
		count[g]++;
	}
	for (size_t g = 0, at = 0; g < json_object_size(first); at += count[g++])
		a->groups[g].v = slots + at;
	a->slots = slots;
	free(count);
	json_decref(first);
	for (size_t i = 0; i < n; i++) {
		const struct ap_matrix_line *l = &a->lines->v[i];
		group_add(a, l);
		if (l->key)
			push_unique(a->by_key, l->key, l->api);
		if (l->owner)
			push_unique(a->members, l->owner, l->api);
		if (class_id(l, &id))
			push_unique(a->classes, ap_buf_str(&id), l->api);
		if (l->defined && l->status == AP_LSTATUS_PRESENT)
			push_unique(a->by_defined, l->defined, l->api);
		ap_buf_reset(&id);
		ap_buf_add(&id, l->api, strcspn(l->api, "."));
		json_object_set_new(a->tops, ap_buf_str(&id), json_true());
	}
	ap_buf_free(&id);
}

/* The last component of a dotted api. */
static const char *last_name(const char *api)
{
	const char *dot = strrchr(api, '.');
	return dot ? dot + 1 : api;
}

/* The apis of the same class as api, api first: those whose lines share a
 * line's identity, by file and line (class_id) or by where it is defined
 * (torch.sparse.Tensor is torch.Tensor). A new array, each api once. */
static json_t *same_class(const struct audit *a, const char *api)
{
	struct ap_buf id = { 0 };
	json_t *out = json_array(), *alias;
	const struct group *g = group_of(a, api);
	size_t k;
	add_unique(out, api);
	for (size_t i = 0; g && i < g->n; i++) {
		if (class_id(g->v[i], &id))
			json_array_foreach(json_object_get(a->classes, ap_buf_str(&id)), k, alias)
				add_unique(out, json_string_value(alias));
		if (g->v[i]->defined)
			json_array_foreach(json_object_get(a->by_defined, g->v[i]->defined), k, alias)
				add_unique(out, json_string_value(alias));
	}
	ap_buf_free(&id);
	return out;
}

/* The members of class api by name: its own, and those of the same class
 * reached by another path (torch.autograd.Function is
 * torch.autograd.function's Function, whose entry walks its members).
 * A new object, member name -> [member apis], its own first. */
static json_t *members_of(const struct audit *a, const char *api)
{
	json_t *out = json_object(), *aliases = same_class(a, api), *alias, *m;
	size_t k, j;
	json_array_foreach(aliases, k, alias)
		json_array_foreach(json_object_get(a->members, json_string_value(alias)), j, m)
			push_unique(out, last_name(json_string_value(m)), json_string_value(m));
	json_decref(aliases);
	return out;
}

/* The name as a reader takes it: Markdown escapes, blanks and a trailing
 * "()" dropped. */
static void normalise(const char *name, struct ap_buf *out)
{
	for (const char *p = name; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		if (*p != ' ' && *p != '\t' && *p != '`')
			ap_buf_add(out, p, 1);
	}
	if (out->len >= 2 && !strcmp(out->data + out->len - 2, "()"))
		out->data[out->len -= 2] = '\0';
}

/* The shortest (then first) of the apis of candidates, or NULL. */
static const char *shortest(const json_t *candidates)
{
	const char *best = NULL;
	size_t i;
	json_t *c;
	json_array_foreach(candidates, i, c)
		if (!best || strlen(json_string_value(c)) < strlen(best))
			best = json_string_value(c);
	return best;
}

/* The api a full dotted path names by identity, or NULL: the api itself;
 * else a class by where it is defined (torch.distributions.von_mises.VonMises
 * is the class the walk found as torch.distributions.VonMises); else its
 * parent so resolved and the member by name, on any path to that class
 * (members_of). */
static const char *resolve_path(const struct audit *a, const char *name, int depth)
{
	const struct group *g = group_of(a, name);
	if (g)
		return g->v[0]->api;
	const char *r = shortest(json_object_get(a->by_defined, name));
	const char *dot = strrchr(name, '.');
	if (r || !dot || depth > 16)
		return r;
	char *parent = strndup(name, (size_t)(dot - name));
	const char *p = parent ? resolve_path(a, parent, depth + 1) : NULL;
	json_t *members = p ? members_of(a, p) : NULL;
	g = group_of(a, json_string_value(json_array_get(json_object_get(members, dot + 1), 0)));
	json_decref(members);
	free(parent);
	return g ? g->v[0]->api : NULL;
}

/* Whether name is a full path: its first part is the first part of some
 * api (torch.…), which is then resolved by identity alone, never by a
 * suffix that another class shares. */
static int full_path(const struct audit *a, const char *name)
{
	char top[128];
	size_t n = strcspn(name, ".");
	if (n >= sizeof(top) || !name[n])
		return 0;
	memcpy(top, name, n);
	top[n] = '\0';
	return json_object_get(a->tops, top) != NULL;
}

/* A full path the matrix does not hold as written (the page's path to a
 * class is not where torch keeps it: torch.autograd.FunctionCtx.mark_dirty
 * is torch.autograd.function.FunctionCtx.mark_dirty): the one api under
 * the page's package (the path but its last two parts) that ends with
 * those two parts; NULL when none or several (torch.autograd.Node.name is
 * torch.autograd.graph.Node.name, never torch.fx.Node.name). */
static const char *resolve_under(const struct audit *a, const char *name)
{
	const char *last = strrchr(name, '.'), *prev = last;
	while (prev && prev > name && prev[-1] != '.')
		prev--;
	if (!last || !prev || prev == name)
		return NULL;
	size_t plen = (size_t)(prev - name), tlen = strlen(prev);
	const char *api, *r = NULL;
	json_t *v;
	int n = 0;
	json_object_foreach(a->by_api, api, v) {
		size_t m = strlen(api);
		if (m > plen + tlen && !strncmp(api, name, plen) && api[m - tlen - 1] == '.' &&
		    !strcmp(api + m - tlen, prev) && n++ == 0)
			r = api;
	}
	(void)v;
	return n == 1 ? r : NULL;
}

/* The matrix api a page's name stands for (see audit.h), or NULL. */
static const char *resolve(const struct audit *a, const char *name)
{
	const char *r = resolve_path(a, name, 0);
	if (r)
		return r;
	if (full_path(a, name))
		return resolve_under(a, name);
	r = shortest(json_object_get(a->by_key, name));
	if (r)
		return r;
	/* FunctionCtx.save_for_backward: the class and member are what the
	 * matrix keys it by */
	const char *last = strrchr(name, '.'), *prev = last;
	while (prev && prev > name && prev[-1] != '.')
		prev--;
	if (last && prev && prev > name && (r = shortest(json_object_get(a->by_key, prev))))
		return r;
	size_t n = strlen(name);
	const char *api;
	json_t *v;
	json_object_foreach(a->by_api, api, v) {
		size_t m = strlen(api);
		if (m > n && api[m - n - 1] == '.' && !strcmp(api + m - n, name) &&
		    (!r || m < strlen(r) || (m == strlen(r) && strcmp(api, r) < 0)))
			r = api;
	}
	(void)v;
	return r;
}

static void finding_free(struct ap_docs_finding *f)
{
	free(f->file);
	free(f->api);
	free(f->resolved);
	free(f->detail);
}

static void finding(struct audit *a, const struct ap_docs_entry *e, const char *api,
		    const char *resolved, enum ap_docs_finding_class cls, const char *detail)
{
	struct ap_docs_findings *out = a->out;
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 64;
		struct ap_docs_finding *v = realloc(out->v, cap * sizeof(*v));
		if (!v) {
			a->oom = 1;
			return;
		}
		out->v = v;
		out->cap = cap;
	}
	struct ap_docs_finding f = { strdup(e->file), e->line, strdup(api),
				     resolved ? strdup(resolved) : NULL, cls, strdup(detail) };
	if (!f.file || !f.api || (resolved && !f.resolved) || !f.detail) {
		finding_free(&f);
		a->oom = 1;
		return;
	}
	out->v[out->n++] = f;
}

/* Envs (comma-joined) whose lines of g have status st. */
static int envs_with_status(const struct group *g, enum ap_line_status st, struct ap_buf *out)
{
	int n = 0;
	for (size_t i = 0; g && i < g->n; i++)
		if (g->v[i]->status == st)
			ap_buf_addf(out, "%s%s", n++ ? ", " : "", g->v[i]->env);
	return n;
}

/* Envs (comma-joined) whose lines of g have verdict v. */
static int envs_with_verdict(const struct group *g, enum ap_line_verdict v, struct ap_buf *out)
{
	int n = 0;
	for (size_t i = 0; g && i < g->n; i++)
		if (g->v[i]->verdict == v)
			ap_buf_addf(out, "%s%s", n++ ? ", " : "", g->v[i]->env);
	return n;
}

/* The line of g in env, preferring a present one. */
static const struct ap_matrix_line *in_env(const struct group *g, const char *env)
{
	const struct ap_matrix_line *best = NULL;
	for (size_t i = 0; g && i < g->n; i++)
		if (!strcmp(g->v[i]->env, env) && (!best || g->v[i]->status == AP_LSTATUS_PRESENT))
			best = g->v[i];
	return best;
}

/* The longest catalog entry a name lies under: its own lines (api = module
 * = the entry), into *found (its v to free); 0 if none. */
static int covering(const struct audit *a, const char *name, struct group *found)
{
	struct ap_buf p = { 0 };
	*found = (struct group){ 0 };
	ap_buf_adds(&p, name);
	for (char *dot; !found->n && (dot = strrchr(p.data ? p.data : "", '.'));) {
		*dot = '\0';
		p.len = (size_t)(dot - p.data);
		const struct group *g = group_of(a, p.data);
		free(found->v);
		found->v = g ? calloc(g->n, sizeof(*found->v)) : NULL;
		for (size_t i = 0; found->v && i < g->n; i++)
			if (!strcmp(g->v[i]->module, p.data))
				found->v[found->n++] = g->v[i];
	}
	ap_buf_free(&p);
	return found->n > 0;
}

static const struct ap_matrix_line *first_present(const struct group *g)
{
	for (size_t i = 0; g && i < g->n; i++)
		if (g->v[i]->status == AP_LSTATUS_PRESENT)
			return g->v[i];
	return NULL;
}

/* A line's kind as the findings write it ("-" when it has none). */
static const char *kind_of(const struct ap_matrix_line *l)
{
	return l && l->kind ? l->kind : "-";
}

/* Whether api is a class where the matrix has it. */
static int is_class(const struct audit *a, const char *api)
{
	return !strcmp(kind_of(first_present(group_of(a, api))), "class");
}

/* The present lines of g whose reaches (on_self: whose on_self) holds
 * member, into *out (its v to free), their envs comma-joined into envs. */
static size_t reached_by(const struct group *g, const char *member, int on_self,
			 struct group *out, struct ap_buf *envs)
{
	*out = (struct group){ .v = g ? calloc(g->n ? g->n : 1, sizeof(*out->v)) : NULL };
	for (size_t i = 0; out->v && i < g->n; i++) {
		const struct ap_matrix_line *l = g->v[i];
		if (l->status == AP_LSTATUS_PRESENT && ap_matrix_strs_has(on_self ? &l->on_self : &l->reaches,
								  member)) {
			ap_buf_addf(envs, "%s%s", out->n ? ", " : "", l->env);
			out->v[out->n++] = l;
		}
	}
	return out->n;
}

/* Whether the walk listed what getattr reaches on the lines of g (a module
 * or class whose members were walked, by a sweep that records it): only
 * then can a name missing there be called absent or not found. */
static int reaches_known(const struct group *g)
{
	for (size_t i = 0; g && i < g->n; i++)
		if (g->v[i]->status == AP_LSTATUS_PRESENT && g->v[i]->reaches.set)
			return 1;
	return 0;
}

static void audit_claims(struct audit *a, const struct ap_docs_entry *e, const char *name,
			 const char *api, const struct group *ls);

/* The lines of api and of every other path to the same class
 * (same_class: torch.TypedStorage is torch.storage.TypedStorage, whose
 * entry walks its members), into *out (its v to free); NULL when api has no
 * lines. */
static const struct group *with_aliases(const struct audit *a, const char *api,
					struct group *out)
{
	const struct group *g = group_of(a, api);
	json_t *aliases = g ? same_class(a, api) : NULL, *alias;
	size_t k, total = 0;
	*out = (struct group){ 0 };
	json_array_foreach(aliases, k, alias)
		total += group_of(a, json_string_value(alias))->n;
	out->v = aliases ? calloc(total ? total : 1, sizeof(*out->v)) : NULL;
	json_array_foreach(aliases, k, alias) {
		const struct group *ag = group_of(a, json_string_value(alias));
		for (size_t i = 0; out->v && i < ag->n; i++)
			out->v[out->n++] = ag->v[i];
	}
	json_decref(aliases);
	return out->v ? out : g;
}

/* Whether name is a plugin's (a->plugins) that no measured environment
 * loads, with why in d: the measurement could not have seen it. Where an
 * environment loads the plugin, its walk saw what the plugin added. */
static int plugin_api(const struct audit *a, const char *name, struct ap_buf *d)
{
	struct ap_buf how = { 0 };
	const struct ap_plugin *p = ap_plugin_adding(a->plugins, name, &how);
	int unknown = 0;
	for (size_t i = 0; p && i < a->envs->n; i++) {
		const struct ap_matrix_strs *loaded = a->envs->v[i].plugins;
		unknown += !loaded;
		for (size_t k = 0; loaded && k < loaded->n; k++)
			if (!strcmp(loaded->v[k], p->package))
				p = NULL;
	}
	if (p)
		ap_buf_addf(d, "%s adds it when it loads (backend %s: %s; %s), and no measured "
			    "environment %s %s", p->package, p->backend, ap_buf_str(&how), p->at,
			    unknown ? "is known to load" : "loads", p->package);
	ap_buf_free(&how);
	return p != NULL;
}

/* Classes an entry whose name resolves to nothing in the matrix. Each
 * claim that a name is not there rests on what the walk saw getattr reach
 * on its module or class (reaches, on_self); where the walk did not look,
 * nothing is claimed but that. */
static void audit_unresolved(struct audit *a, const struct ap_docs_entry *e, const char *name)
{
	struct group cover, via = { 0 }, on_self = { 0 }, all = { 0 }, served = { 0 };
	int covered = covering(a, name, &cover);
	struct ap_buf d = { 0 }, cls = { 0 }, self_envs = { 0 };
	const char *dot = strrchr(name, '.');
	if (dot)
		ap_buf_add(&cls, name, (size_t)(dot - name));
	const char *owner = cls.len ? resolve(a, ap_buf_str(&cls)) : NULL;
	const struct group *og = with_aliases(a, owner, &all);
	int in_class = og && is_class(a, owner);
	if (covered && !first_present(&cover) && envs_with_status(&cover, AP_LSTATUS_ABSENT, &d)) {
		const char *why = cover.v[0]->reason;
		ap_buf_addf(&d, ": the torch there has no %s (%s)", cover.v[0]->api, why ? why : "?");
		finding(a, e, name, NULL, AP_FINDING_ABSENT_IN_VERSION, ap_buf_str(&d));
	} else if (covered && envs_with_status(&cover, AP_LSTATUS_IMPORT_ERROR, &d)) {
		const char *why = cover.v[0]->reason;
		ap_buf_addf(&d, ": %s does not import (%s)", cover.v[0]->api, why ? why : "?");
		finding(a, e, name, NULL, AP_FINDING_OPTIONAL_DEPENDENCY, ap_buf_str(&d));
	} else if (og && reached_by(og, dot + 1, 0, &via, &d)) {
		/* torch.optim.Adam.zero_grad, torch._assert: reached through its
		 * module or class, where it has no line of its own */
		audit_claims(a, e, name, owner, &via);
	} else if (in_class && !reaches_known(og)) {
		ap_buf_addf(&d, "the sweep did not record what getattr reaches on %s", owner);
		finding(a, e, name, NULL, AP_FINDING_NOT_SWEPT, ap_buf_str(&d));
	} else if (plugin_api(a, name, &d)) {
		finding(a, e, name, NULL, AP_FINDING_PLUGIN_API, ap_buf_str(&d));
	} else if (in_class && reached_by(og, dot + 1, 1, &on_self, &self_envs)) {
		ap_buf_addf(&d, "the source of %s assigns self.%s (%s), and getattr does not reach it "
			    "on the class", owner, dot + 1, ap_buf_str(&self_envs));
		finding(a, e, name, NULL, AP_FINDING_INSTANCE_ATTRIBUTE, ap_buf_str(&d));
	} else if (in_class) {
		ap_buf_addf(&d, "getattr(%s, '%s') reaches nothing in any measured environment",
			    owner, dot + 1);
		finding(a, e, name, NULL, AP_FINDING_NOT_FOUND, ap_buf_str(&d));
	} else if (covered && !strchr(name + strlen(cover.v[0]->api) + 1, '.') &&
		   reaches_known(&cover) && !reached_by(&cover, "__getattr__", 0, &served, &d)) {
		ap_buf_addf(&d, "import %s, then getattr '%s': nothing in any measured torch",
			    cover.v[0]->api, name + strlen(cover.v[0]->api) + 1);
		finding(a, e, name, NULL, AP_FINDING_ABSENT, ap_buf_str(&d));
	} else if (served.n) {
		ap_buf_reset(&d);
		ap_buf_addf(&d, "%s serves names through __getattr__, which no walk can list",
			    cover.v[0]->api);
		finding(a, e, name, NULL, AP_FINDING_NOT_SWEPT, ap_buf_str(&d));
	} else
		finding(a, e, name, NULL, AP_FINDING_NOT_SWEPT, covered ?
			"no walk of the sweep lists what it is under" : "no catalog entry covers it");
	free(served.v);
	free(cover.v);
	free(via.v);
	free(on_self.v);
	free(all.v);
	ap_buf_free(&d);
	ap_buf_free(&cls);
	ap_buf_free(&self_envs);
}

/* The claims of entry e against the lines ls of its api. */
static void audit_claims(struct audit *a, const struct ap_docs_entry *e, const char *name,
			 const char *api, const struct group *ls)
{
	struct ap_buf bad = { 0 }, unmatched = { 0 };
	int matched = 0;
	for (size_t k = 0; k < a->nproducts; k++) {
		const char *env = a->products[k].env, *prod = a->products[k].product;
		const struct ap_docs_product *p = NULL;
		int claim;
		for (size_t i = 0; i < e->nproducts; i++)
			if (!strcmp(e->products[i].product, prod))
				p = &e->products[i];
		if (p)
			claim = p->supported;
		else if (e->others >= 0)
			claim = e->others; /* 是 (but...) or 否: every product */
		else
			continue;
		matched++;
		const struct ap_matrix_line *l = in_env(ls, env);
		enum ap_line_verdict lv = l ? l->verdict : AP_LINE_ABSENT;
		const char *v = lv == AP_LINE_VERDICT_UNKNOWN ? "-" : ap_line_verdict_name(lv);
		if (claim && (lv == AP_LINE_INCONSISTENT || lv == AP_LINE_ABSENT))
			ap_buf_addf(&bad, "%s%s says supported, measured %s in %s", bad.len ? "; " : "",
				    prod, v, env);
		else if (!claim && lv == AP_LINE_CONSISTENT)
			ap_buf_addf(&bad, "%s%s says not supported, measured consistent in %s",
				    bad.len ? "; " : "", prod, env);
	}
	for (size_t i = 0; i < e->nproducts; i++)
		ap_buf_addf(&unmatched, "%s%s", i ? ", " : "", e->products[i].product);
	if (!matched) {
		struct ap_buf d = { 0 };
		ap_buf_addf(&d, "no measured environment is labelled %s",
			    unmatched.len ? ap_buf_str(&unmatched) : "(no product listed)");
		finding(a, e, name, api, AP_FINDING_UNBACKED, ap_buf_str(&d));
		ap_buf_free(&d);
	} else if (bad.len)
		finding(a, e, name, api, AP_FINDING_CONTRADICTED, ap_buf_str(&bad));
	else
		finding(a, e, name, api, AP_FINDING_BACKED, "every measured product agrees");
	ap_buf_free(&bad);
	ap_buf_free(&unmatched);
}

static int any_plugin_added(const struct group *g)
{
	for (size_t i = 0; g && i < g->n; i++)
		if (g->v[i]->plugin_added)
			return 1;
	return 0;
}

static void audit_entry(struct audit *a, const struct ap_docs_entry *e)
{
	struct ap_buf name = { 0 }, d = { 0 };
	normalise(e->api, &name);
	const char *api = resolve(a, ap_buf_str(&name));
	const struct group *ls = api ? group_of(a, api) : NULL;
	if (api)
		json_object_set_new(a->listed, api, json_true());
	if (e->format == AP_DOCS_UNREADABLE)
		finding(a, e, ap_buf_str(&name), api, AP_FINDING_UNREADABLE,
			e->kind == AP_DOCS_CLASS ?
			"no support stated for the class itself (its methods may state theirs)" :
			"its support could not be read");
	else if (!api)
		audit_unresolved(a, e, ap_buf_str(&name));
	else if (envs_with_status(ls, AP_LSTATUS_PRESENT, &d) == 0) {
		ap_buf_reset(&d);
		if (envs_with_status(ls, AP_LSTATUS_IMPORT_ERROR, &d))
			finding(a, e, ap_buf_str(&name), api, AP_FINDING_OPTIONAL_DEPENDENCY,
				ls->v[0]->reason ? ls->v[0]->reason : "");
		else if (envs_with_verdict(ls, AP_LINE_NOTRUN, &d))
			finding(a, e, ap_buf_str(&name), api, AP_FINDING_NOT_MEASURED, "its walk failed");
		else
			finding(a, e, ap_buf_str(&name), api, AP_FINDING_ABSENT, "absent in every measured torch");
	} else if (any_plugin_added(ls))
		finding(a, e, ap_buf_str(&name), api, AP_FINDING_PLUGIN_ADDED, "it exists only once a plugin loads");
	else
		audit_claims(a, e, ap_buf_str(&name), api, ls);
	ap_buf_free(&name);
	ap_buf_free(&d);
}

/* Whether any of apis has an entry on the pages. */
static int any_listed(const struct audit *a, const json_t *apis)
{
	size_t i;
	json_t *x;
	json_array_foreach(apis, i, x)
		if (json_object_get(a->listed, json_string_value(x)))
			return 1;
	return 0;
}

/* Members of a listed class that no entry lists, consistent somewhere. */
static void audit_missing(struct audit *a, const struct ap_docs_entry *e)
{
	struct ap_buf name = { 0 };
	normalise(e->api, &name);
	const char *api = e->kind != AP_DOCS_METHOD ? resolve(a, ap_buf_str(&name)) : NULL;
	json_t *aliases = api ? same_class(a, api) : NULL, *alias;
	size_t k;
	json_array_foreach(aliases, k, alias)
		if (json_object_get(a->audited, json_string_value(alias)))
			api = NULL; /* a class on two pages, by any path: said once */
	json_array_foreach(aliases, k, alias)
		json_object_set_new(a->audited, json_string_value(alias), json_true());
	json_decref(aliases);
	json_t *members = api ? members_of(a, api) : NULL, *apis;
	const char *member;
	json_object_foreach(members, member, apis) {
		const char *mapi = json_string_value(json_array_get(apis, 0));
		const struct group *ls = group_of(a, mapi);
		struct ap_buf envs = { 0 }, d = { 0 }, sub = { 0 };
		if (any_listed(a, apis) || !envs_with_verdict(ls, AP_LINE_CONSISTENT, &envs)) {
			ap_buf_free(&envs);
			continue;
		}
		ap_buf_addf(&sub, "%s.%s", ap_buf_str(&name), member);
		const char *kind = kind_of(first_present(ls));
		ap_buf_addf(&d, "the pages list %s but not its %s %s%s (measured consistent in %s)",
			    ap_buf_str(&name), kind, member, ap_docs_called(kind) ? "()" : "",
			    ap_buf_str(&envs));
		finding(a, e, ap_buf_str(&sub), mapi, AP_FINDING_MISSING_SUB_ENTRY, ap_buf_str(&d));
		ap_buf_free(&envs);
		ap_buf_free(&d);
		ap_buf_free(&sub);
	}
	json_decref(members);
	ap_buf_free(&name);
}

static int by_place(const struct ap_docs_finding *a, const struct ap_docs_finding *b)
{
	int c = strcmp(a->file, b->file);
	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	/* the entry's own finding before the sub-entries it lacks */
	return (a->cls == AP_FINDING_MISSING_SUB_ENTRY) - (b->cls == AP_FINDING_MISSING_SUB_ENTRY);
}

/* Sorts v by place, stably: entries were audited in page order, and are
 * nearly sorted already. */
static void sort_by_place(struct ap_docs_finding *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && by_place(&v[k - 1], &v[k]) > 0; k--) {
			struct ap_docs_finding t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
}

int ap_docs_audit(const struct ap_docs_entries *entries, const struct ap_docs_envs *envs,
		  const struct ap_matrix *lines, const struct ap_plugins *plugins,
		  struct ap_docs_findings *out)
{
	struct audit a = { .envs = envs, .lines = lines, .plugins = plugins, .out = out };
	*out = (struct ap_docs_findings){ 0 };
	audit_index(&a);
	for (size_t i = 0; !a.oom && i < entries->n; i++)
		audit_entry(&a, &entries->v[i]);
	for (size_t i = 0; !a.oom && i < entries->n; i++)
		audit_missing(&a, &entries->v[i]);
	sort_by_place(out->v, out->n);
	json_decref(a.by_api);
	free(a.groups);
	free(a.slots);
	json_decref(a.by_key);
	json_decref(a.members);
	json_decref(a.classes);
	json_decref(a.by_defined);
	json_decref(a.tops);
	json_decref(a.audited);
	free(a.products);
	json_decref(a.listed);
	if (a.oom) {
		ap_docs_findings_free(out);
		return -ENOMEM;
	}
	return 0;
}

void ap_docs_findings_free(struct ap_docs_findings *f)
{
	for (size_t i = 0; i < f->n; i++)
		finding_free(&f->v[i]);
	free(f->v);
	*f = (struct ap_docs_findings){ 0 };
}

void ap_docs_audit_text(const struct ap_docs_findings *findings, struct ap_buf *out)
{
	size_t counts[AP_FINDING_NCLASSES] = { 0 }, norder = 0;
	enum ap_docs_finding_class order[AP_FINDING_NCLASSES];
	for (size_t i = 0; i < findings->n; i++) {
		const struct ap_docs_finding *f = &findings->v[i];
		struct ap_buf line = { 0 };
		const char *cls = ap_docs_finding_name(f->cls);
		ap_buf_addf(&line, "%s:%lld: %s: %s: %s", f->file, f->line, cls, f->api, f->detail);
		ap_text_line(out, ap_buf_str(&line));
		ap_buf_adds(out, "\n");
		ap_buf_free(&line);
		if ((unsigned)f->cls >= AP_FINDING_NCLASSES)
			continue;
		if (!counts[f->cls]++)
			order[norder++] = f->cls;
	}
	for (size_t k = 0; k < norder; k++)
		ap_buf_addf(out, "%zu %s\n", counts[order[k]], ap_docs_finding_name(order[k]));
}

void ap_docs_pages_text(const struct ap_docs_pages *pages, struct ap_buf *out)
{
	for (size_t i = 0; i < pages->n; i++) {
		const struct ap_docs_page *p = &pages->v[i];
		struct ap_buf line = { 0 };
		ap_buf_addf(&line, "%s: %s", p->file, p->not_read ? p->not_read : "formats: ");
		for (size_t k = 0; !p->not_read && k < p->nformats; k++)
			ap_buf_addf(&line, "%s%s %zu", k ? ", " : "", ap_docs_format_name(p->formats[k]),
				    p->counts[k]);
		if (!p->not_read && !p->nformats)
			ap_buf_adds(&line, "none (no entry in a format this parser reads)");
		ap_text_line(out, ap_buf_str(&line));
		ap_buf_adds(out, "\n");
		ap_buf_free(&line);
	}
}
