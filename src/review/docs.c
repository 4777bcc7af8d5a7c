/* docs.c - reads a backend's native API support pages (see docs.h).
 *
 * The page is scanned line by line as spans of the input, never as C strings:
 * the text is untrusted, may hold NUL bytes, invalid UTF-8, CRLF line ends or
 * stop anywhere. Every string that leaves this file goes through ustr(),
 * which repairs the UTF-8 so that a JSON writer never refuses it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/text.h"
#include "review/docs.h"

#define AP_CLASS_TAG "<code><i>class</i></code>"
#define AP_CLASS_TAG2 "<code>class</code>"
#define AP_CLASS_TAG3 "_`class`_" /* the 2.7.1 pages */
#define AP_FULL_COLON "\xef\xbc\x9a" /* ： U+FF1A */
#define AP_CHECK "\xe2\x9c\x94"      /* ✔ */
#define AP_CROSS "\xe2\x9c\x98"      /* ✘ */
#define AP_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */
#define AP_DIR_DEPTH 32
#define AP_ROW_CELLS 16 /* more columns than any API table has */

struct ap_span {
	const char *p;
	size_t n;
};

enum ap_fmt { AP_FMT_NONE, AP_FMT_TABLE, AP_FMT_LIST, AP_FMT_LINE, AP_FMT_ROW, AP_FMT_BAD };

static const enum ap_docs_format ap_fmt_formats[] = { AP_DOCS_UNREADABLE, AP_DOCS_TABLE,
						      AP_DOCS_LIST,       AP_DOCS_LINE,
						      AP_DOCS_API_TABLE,  AP_DOCS_UNREADABLE };

static const char *const ap_format_names[AP_DOCS_NFORMATS] = {
	[AP_DOCS_UNREADABLE] = "unreadable", [AP_DOCS_TABLE] = "table", [AP_DOCS_LIST] = "list",
	[AP_DOCS_LINE] = "line", [AP_DOCS_API_TABLE] = "api-table"
};

static const char *const ap_kind_names[] = {
	[AP_DOCS_FUNCTION] = "function", [AP_DOCS_CLASS] = "class", [AP_DOCS_METHOD] = "method",
	[AP_DOCS_ROW] = "row"
};

const char *ap_docs_kind_name(enum ap_docs_kind k)
{
	return (unsigned)k < sizeof(ap_kind_names) / sizeof(*ap_kind_names) ? ap_kind_names[k] : "?";
}

const char *ap_docs_format_name(enum ap_docs_format f)
{
	return (unsigned)f < AP_DOCS_NFORMATS ? ap_format_names[f] : "?";
}

/* What one entry has said so far; emitted when the next begins. */
struct ap_entry {
	struct ap_buf api;
	enum ap_docs_kind kind;
	size_t line;
	enum ap_fmt fmt;
	struct ap_docs_product *products;
	size_t nproducts, cap;
	int all;
	int others; /* what it says of a product it does not name: 1, 0, -1 nothing */
	int has_url, has_limits;
	struct ap_buf url, limits;
};

struct ap_page {
	const char *text;
	size_t len, pos, lineno;
	const char *name;
	struct ap_docs_entries *out;
	struct ap_buf parent; /* api of the last ### heading: methods hang on it */
	char fence;           /* '`' or '~' while inside a fenced code block */
	int oom;
	int open;
	struct ap_entry e;
};

/* ---- spans ---- */

static struct ap_span docs_sp(const char *p, size_t n)
{
	return (struct ap_span){ p, n };
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static struct ap_span trim(struct ap_span s)
{
	while (s.n && is_blank(s.p[0]))
		s.p++, s.n--;
	while (s.n && is_blank(s.p[s.n - 1]))
		s.n--;
	return s;
}

static int docs_starts(struct ap_span s, const char *pfx)
{
	size_t k = strlen(pfx);
	return s.n >= k && !memcmp(s.p, pfx, k);
}

/* Advances s past pfx when s starts with it. */
static int eat(struct ap_span *s, const char *pfx)
{
	if (!docs_starts(*s, pfx))
		return 0;
	s->p += strlen(pfx);
	s->n -= strlen(pfx);
	return 1;
}

static int docs_eq(struct ap_span s, const char *lit)
{
	return s.n == strlen(lit) && !memcmp(s.p, lit, s.n);
}

/* Offset of needle in s, or s.n when absent. */
static size_t find(struct ap_span s, const char *needle)
{
	const char *at = memmem(s.p, s.n, needle, strlen(needle));
	return at ? (size_t)(at - s.p) : s.n;
}

/* ---- strings out ---- */

/* Length of the valid UTF-8 sequence at s, 0 when invalid: ap_utf8_seq(), as
 * strict as jansson (no overlongs, surrogates or code points past U+10FFFF).
 * Control characters but tab count as invalid: a stray CR or NUL in a product
 * name would not survive being written back as a line. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = ap_utf8_seq(s, n);
	if (len == 1 && s[0] < 0x20 && s[0] != '\t')
		return 0;
	return len;
}

/* A new string of the bytes, each invalid byte replaced by U+FFFD so
 * that a damaged page still yields its entries. NULL only when out of memory. */
static char *ustr(const char *p, size_t n)
{
	struct ap_buf b = { 0 };
	int r = ap_buf_add(&b, "", 0);
	for (size_t i = 0; !r && i < n;) {
		size_t k = utf8_len((const unsigned char *)p + i, n - i);
		r = k ? ap_buf_add(&b, p + i, k) : ap_buf_adds(&b, AP_REPLACEMENT);
		i += k ? k : 1;
	}
	if (r) {
		ap_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* ustr() of b when has, else NULL; -1 when out of memory. */
static int ubuf(const struct ap_buf *b, int has, char **out)
{
	*out = has ? ustr(ap_buf_str(b), b->len) : NULL;
	return has && !*out ? -1 : 0;
}

/* ---- lines ---- */

/* The line at the cursor without its "\n" or "\r\n"; 0 at the end. */
static int peek(const struct ap_page *pg, struct ap_span *l)
{
	if (pg->pos >= pg->len)
		return 0;
	struct ap_span rest = docs_sp(pg->text + pg->pos, pg->len - pg->pos);
	const char *nl = memchr(rest.p, '\n', rest.n);
	*l = docs_sp(rest.p, nl ? (size_t)(nl - rest.p) : rest.n);
	if (l->n && l->p[l->n - 1] == '\r')
		l->n--;
	return 1;
}

static void advance(struct ap_page *pg)
{
	const char *nl = memchr(pg->text + pg->pos, '\n', pg->len - pg->pos);
	pg->pos = nl ? (size_t)(nl - pg->text) + 1 : pg->len;
	pg->lineno++;
}

static int docs_blank(struct ap_span l)
{
	return trim(l).n == 0;
}

/* The next line that is not blank, skipping blanks; 0 at the end. */
static int peek_content(struct ap_page *pg, struct ap_span *l)
{
	while (peek(pg, l) && docs_blank(*l))
		advance(pg);
	return pg->pos < pg->len;
}

/* Whether l starts a list item ("- " or "* "); item gets its text. */
static int docs_item(struct ap_span l, struct ap_span *item)
{
	struct ap_span s = trim(l);
	if (!(eat(&s, "- ") || eat(&s, "* ")))
		return 0;
	*item = trim(s);
	return 1;
}

/* Number of leading '#' of an ATX heading (1..6), 0 for any other line. */
static int heading_level(struct ap_span l)
{
	size_t k = 0;
	while (k < l.n && k < 7 && l.p[k] == '#')
		k++;
	if (k == 0 || k > 6 || (k < l.n && !is_blank(l.p[k])))
		return 0;
	return (int)k;
}

/* ---- fields of an entry ---- */

/* Whether l is `**label**：rest` (also with ":" or the colon inside the
 * bold); rest gets the trimmed text after it. */
static int docs_field(struct ap_span l, const char *label, struct ap_span *rest)
{
	struct ap_span s = trim(l);
	if (!eat(&s, "**") || !eat(&s, label))
		return 0;
	if (!(eat(&s, "**" AP_FULL_COLON) || eat(&s, "**:") ||
	      eat(&s, AP_FULL_COLON "**") || eat(&s, ":**")))
		return 0;
	*rest = trim(s);
	return 1;
}

/* The text of `<term>X</term>` at the start of *s, advancing past it; the
 * whole trimmed s when it has no <term>. 0 when a tag is left open or closed
 * without being opened: that is a broken tag, not a name. */
static int docs_term(struct ap_span *s, struct ap_span *product)
{
	*s = trim(*s);
	if (!eat(s, "<term>")) {
		if (find(*s, "</term>") < s->n)
			return 0;
		*product = *s;
		*s = docs_sp(s->p + s->n, 0);
		return 1;
	}
	size_t end = find(*s, "</term>");
	if (end == s->n)
		return 0;
	*product = trim(docs_sp(s->p, end));
	s->p += end + strlen("</term>");
	s->n -= end + strlen("</term>");
	return 1;
}

static int add_product(struct ap_page *pg, struct ap_span product, int supported)
{
	struct ap_entry *e = &pg->e;
	if (e->nproducts == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 4;
		struct ap_docs_product *v = realloc(e->products, cap * sizeof(*v));
		if (!v) {
			pg->oom = 1;
			return -1;
		}
		e->products = v;
		e->cap = cap;
	}
	char *name = ustr(product.p, product.n);
	if (!name) {
		pg->oom = 1;
		return -1;
	}
	e->products[e->nproducts++] = (struct ap_docs_product){ name, supported };
	return 0;
}

/* Whether mark is ✔ (check) or ✘ (!check), as the character or as the
 * HTML entities a page may spell it with (`&#10004;`, `&#x2714;`): the
 * rendered page shows the same mark. */
static int is_mark(struct ap_span mark, int check)
{
	static const char *const yes[] = { AP_CHECK, "&#10004;", "&#x2714;", "&#X2714;" };
	static const char *const no[] = { AP_CROSS, "&#10008;", "&#x2718;", "&#X2718;" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (docs_eq(mark, check ? yes[i] : no[i]))
			return 1;
	return 0;
}

/* One data row `| <term>product</term> | ✔ |`; -1 when it is not that. */
static int table_row(struct ap_page *pg, struct ap_span l)
{
	struct ap_span s = trim(l), product;
	if (!eat(&s, "|"))
		return -1;
	if (s.n && s.p[s.n - 1] == '|')
		s.n--;
	size_t bar = find(s, "|");
	if (bar == s.n)
		return -1;
	struct ap_span cell = docs_sp(s.p, bar), mark = docs_sp(s.p + bar + 1, s.n - bar - 1);
	/* a third column is no format we know: its meaning would be a guess */
	if (find(mark, "|") < mark.n)
		return -1;
	mark = trim(mark);
	if (!docs_term(&cell, &product) || !product.n || !docs_blank(cell))
		return -1;
	if (!is_mark(mark, 1) && !is_mark(mark, 0))
		return -1;
	return add_product(pg, product, is_mark(mark, 1));
}

/* A separator row such as `| ---- | :----: |`. */
static int table_rule(struct ap_span l)
{
	int dash = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (!strchr("|-: \t", l.p[i]) || !l.p[i])
			return 0;
		dash |= l.p[i] == '-';
	}
	return dash;
}

/* The table after `**支持情况**：`: a header row, a rule, then one row per
 * product. Consumes every row; -1 when any is unreadable or none is there. */
static int read_table(struct ap_page *pg)
{
	struct ap_span l;
	int row = 0, bad = 0;
	if (!peek_content(pg, &l))
		return -1;
	while (peek(pg, &l) && docs_starts(trim(l), "|")) {
		if (row == 1 && !table_rule(l))
			bad = 1;
		else if (row >= 2 && !bad && table_row(pg, l))
			bad = 1;
		row++;
		advance(pg);
	}
	return bad || row < 3 ? -1 : 0;
}

/* One item `<term>product</term>：支持` (or 不支持); -1 when not that. */
static int list_item(struct ap_page *pg, struct ap_span item)
{
	struct ap_span product, value = item;
	if (docs_starts(item, "<term>")) {
		if (!docs_term(&value, &product))
			return -1;
	} else {
		size_t c = find(item, AP_FULL_COLON);
		c = c < item.n ? c : find(item, ":");
		product = trim(docs_sp(item.p, c));
		value = docs_sp(item.p + c, item.n - c);
		if (find(product, "</term>") < product.n)
			return -1;
	}
	value = trim(value);
	if (!product.n || !(eat(&value, AP_FULL_COLON) || eat(&value, ":")))
		return -1;
	value = trim(value);
	if (!docs_eq(value, "支持") && !docs_eq(value, "不支持"))
		return -1;
	return add_product(pg, product, docs_eq(value, "支持"));
}

/* The list after `**产品支持情况**：`; -1 when an item is unreadable or none. */
static int read_list(struct ap_page *pg)
{
	struct ap_span l, item;
	int n = 0, bad = 0;
	if (!peek_content(pg, &l))
		return -1;
	while (peek(pg, &l) && docs_item(l, &item)) {
		if (!bad && list_item(pg, item))
			bad = 1;
		n++;
		advance(pg);
	}
	return bad || !n ? -1 : 0;
}

/* Length of the `<br>` (`<br/>`, `<br />`) at the start of s, else 0. */
static size_t br_len(struct ap_span s)
{
	static const char *const tags[] = { "<br>", "<br/>", "<br />" };
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (docs_starts(s, tags[i]))
			return strlen(tags[i]);
	return 0;
}

static int eat_br(struct ap_span *s)
{
	size_t k = br_len(*s);
	s->p += k;
	s->n -= k;
	return k > 0;
}

/* `是`, `否`, or `是，暂不支持<term>X</term>[、<term>Y</term>...]`; an API
 * table's cell breaks the line with `<br>` where the line has `，`. */
static int docs_read_line(struct ap_page *pg, struct ap_span v)
{
	struct ap_span product;
	if (docs_eq(v, "是") || docs_eq(v, "否")) {
		pg->e.all = pg->e.others = docs_eq(v, "是");
		return 0;
	}
	if (!eat(&v, "是") || !(eat(&v, "，") || eat(&v, ",") || eat_br(&v)))
		return -1;
	pg->e.others = 1;
	v = trim(v);
	if (!eat(&v, "暂不支持") && !eat(&v, "不支持"))
		return -1;
	int n = 0;
	for (v = trim(v); v.n; v = trim(v), n++) {
		if (!docs_starts(v, "<term>") || !docs_term(&v, &product) || !product.n)
			return -1;
		if (add_product(pg, product, 0))
			return -1;
		v = trim(v);
		(void)(eat(&v, "、") || eat(&v, "，") || eat(&v, ",") || eat(&v, "和"));
	}
	return n ? 0 : -1;
}

/* Records which support format was read; a second statement in the same
 * entry, or one that could not be read, makes it unreadable. */
static void set_format(struct ap_page *pg, enum ap_fmt fmt, int r)
{
	pg->e.fmt = pg->e.fmt != AP_FMT_NONE || r ? AP_FMT_BAD : fmt;
}

/* A support statement in any of the formats; 0 when l starts none. Text
 * after a table's or a list's label is not a format we know, so unreadable. */
static int read_support(struct ap_page *pg, struct ap_span l)
{
	struct ap_span rest;
	enum ap_fmt fmt = docs_field(l, "支持情况", &rest)     ? AP_FMT_TABLE
			  : docs_field(l, "产品支持情况", &rest) ? AP_FMT_LIST
			  : docs_field(l, "是否支持", &rest)     ? AP_FMT_LINE
							       : AP_FMT_NONE;
	if (fmt == AP_FMT_NONE)
		return 0;
	advance(pg);
	if (fmt == AP_FMT_LINE)
		set_format(pg, fmt, docs_read_line(pg, rest));
	else if (rest.n)
		set_format(pg, fmt, -1);
	else
		set_format(pg, fmt, fmt == AP_FMT_TABLE ? read_table(pg) : read_list(pg));
	return 1;
}

/* `[name](url)`: the url; a malformed link is left out rather than guessed. */
static void read_url(struct ap_page *pg, struct ap_span v)
{
	size_t open = find(v, "](");
	if (pg->e.has_url || !docs_starts(v, "[") || open == v.n)
		return;
	struct ap_span url = docs_sp(v.p + open + 2, v.n - open - 2);
	size_t close = find(url, ")");
	if (close == url.n || !trim(docs_sp(url.p, close)).n)
		return;
	url = trim(docs_sp(url.p, close));
	pg->e.has_url = 1;
	if (ap_buf_add(&pg->e.url, url.p, url.n))
		pg->oom = 1;
}

/* Adds one part of the limits, after a "; " when there are some already. */
static void add_limit(struct ap_page *pg, struct ap_span part)
{
	if (!part.n)
		return;
	if (pg->e.has_limits && ap_buf_adds(&pg->e.limits, "; "))
		pg->oom = 1;
	if (ap_buf_add(&pg->e.limits, part.p, part.n))
		pg->oom = 1;
	pg->e.has_limits = 1;
}

/* The limits' list items joined with "; ". */
static void read_limit_items(struct ap_page *pg)
{
	struct ap_span l, item;
	if (!peek_content(pg, &l))
		return;
	while (peek(pg, &l) && docs_item(l, &item)) {
		add_limit(pg, item);
		advance(pg);
	}
}

/* The text after the label, else the list that follows; "-" says none. */
static void read_limits(struct ap_page *pg, struct ap_span v)
{
	if (pg->e.has_limits)
		return;
	if (!v.n)
		return read_limit_items(pg);
	if (docs_eq(v, "-"))
		return;
	pg->e.has_limits = 1;
	if (ap_buf_add(&pg->e.limits, v.p, v.n))
		pg->oom = 1;
}

/* One line inside an entry; consumes it and whatever block it introduces. */
static void entry_line(struct ap_page *pg, struct ap_span l)
{
	struct ap_span rest;
	if (docs_field(l, "原生文档", &rest)) {
		advance(pg);
		read_url(pg, rest);
	} else if (docs_field(l, "限制与说明", &rest)) {
		advance(pg);
		read_limits(pg, rest);
	} else if (!read_support(pg, l)) {
		advance(pg);
	}
}

/* ---- entries ---- */

static void products_free(struct ap_docs_product *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].product);
	free(v);
}

static void docs_entry_free(struct ap_docs_entry *e)
{
	free(e->api);
	free(e->file);
	free(e->doc_url);
	free(e->limits);
	products_free(e->products, e->nproducts);
}

/* The open entry as the pages' reader gives it; its products move into *d
 * when it is readable. -1 when out of memory (d then needs freeing). */
static int entry_make(struct ap_page *pg, struct ap_docs_entry *d)
{
	struct ap_entry *e = &pg->e;
	int ok = e->fmt != AP_FMT_NONE && e->fmt != AP_FMT_BAD;
	*d = (struct ap_docs_entry){ .kind = e->kind, .line = (long long)e->line,
				     .format = ap_fmt_formats[e->fmt],
				     .all_products = ok && e->all,
				     .others = ok && e->others >= 0 ? e->others : -1 };
	if (ok) {
		d->products = e->products;
		d->nproducts = e->nproducts;
		e->products = NULL;
		e->nproducts = e->cap = 0;
	}
	if (ubuf(&e->api, 1, &d->api) || !(d->file = ustr(pg->name, strlen(pg->name))) ||
	    ubuf(&e->url, e->has_url, &d->doc_url) || ubuf(&e->limits, e->has_limits, &d->limits))
		return -1;
	return 0;
}

static void entry_clear(struct ap_entry *e)
{
	ap_buf_free(&e->api);
	ap_buf_free(&e->url);
	ap_buf_free(&e->limits);
	products_free(e->products, e->nproducts);
	memset(e, 0, sizeof(*e));
}

/* Appends *e to out, taking it; -1 (and e freed) when out of memory. */
static int entries_push(struct ap_docs_entries *out, struct ap_docs_entry *e)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 64;
		struct ap_docs_entry *v = realloc(out->v, cap * sizeof(*v));
		if (!v) {
			docs_entry_free(e);
			return -1;
		}
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = *e;
	return 0;
}

/* Emits the open entry, if any. */
static void entry_close(struct ap_page *pg)
{
	struct ap_docs_entry d;
	if (!pg->open)
		return;
	if (!pg->oom && entry_make(pg, &d)) {
		docs_entry_free(&d);
		pg->oom = 1;
	} else if (!pg->oom && entries_push(pg->out, &d))
		pg->oom = 1;
	entry_clear(&pg->e);
	pg->open = 0;
}

static void entry_open(struct ap_page *pg, enum ap_docs_kind kind, struct ap_span api)
{
	entry_close(pg);
	pg->open = 1;
	pg->e.kind = kind;
	pg->e.line = pg->lineno + 1;
	pg->e.others = -1;
	if (ap_buf_add(&pg->e.api, api.p, api.n))
		pg->oom = 1;
}

/* `### [<code><i>class</i></code>] api`: a function or a class entry. */
static void docs_heading(struct ap_page *pg, struct ap_span l)
{
	struct ap_span api = trim(docs_sp(l.p + 3, l.n - 3));
	int cls = 0;
	while (eat(&api, AP_CLASS_TAG) || eat(&api, AP_CLASS_TAG2) || eat(&api, AP_CLASS_TAG3))
		cls = 1, api = trim(api);
	entry_open(pg, cls ? AP_DOCS_CLASS : AP_DOCS_FUNCTION, api);
	ap_buf_reset(&pg->parent);
	if (ap_buf_add(&pg->parent, api.p, api.n))
		pg->oom = 1;
}

/* Whether l is `> <font size="3">name()</font>`; name gets `name`. */
static int method_line(struct ap_span l, struct ap_span *name)
{
	struct ap_span s = l;
	if (!eat(&s, ">"))
		return 0;
	s = trim(s);
	if (!docs_starts(s, "<font"))
		return 0;
	size_t gt = find(s, ">");
	s = gt < s.n ? docs_sp(s.p + gt + 1, s.n - gt - 1) : docs_sp(s.p + s.n, 0);
	s.n = find(s, "<");
	s.n = find(s, "(");
	*name = trim(s);
	return 1;
}

/* A method sub-entry: its api is the enclosing heading's api + "." + name. */
static void docs_method(struct ap_page *pg, struct ap_span name)
{
	struct ap_buf api = { 0 };
	int r = 0;
	if (pg->parent.len)
		r = ap_buf_add(&api, pg->parent.data, pg->parent.len) || ap_buf_adds(&api, ".");
	if (r || ap_buf_add(&api, name.p, name.n) || ap_buf_add(&api, "", 0))
		pg->oom = 1;
	entry_open(pg, AP_DOCS_METHOD, docs_sp(ap_buf_str(&api), api.len));
	ap_buf_free(&api);
}

/* ---- the oldest pages: one API table ---- */

/* Where an API table keeps what: its number of columns and the column of
 * each field (-1: none). */
struct ap_cols {
	int n, name, support, limits;
};

/* The cells of a table row `| a | b |`, trimmed, split at every '|' that
 * is not escaped as `\|`; -1 when l is no row or has more than max cells. */
static int row_cells(struct ap_span l, struct ap_span *cells, int max)
{
	struct ap_span s = trim(l);
	size_t from = 0;
	int n = 0;
	if (!eat(&s, "|"))
		return -1;
	if (s.n && s.p[s.n - 1] == '|' && !(s.n >= 2 && s.p[s.n - 2] == '\\'))
		s.n--;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] == '\\') {
			i++;
			continue;
		}
		if (s.p[i] != '|')
			continue;
		if (n == max)
			return -1;
		cells[n++] = trim(docs_sp(s.p + from, i - from));
		from = i + 1;
	}
	if (n == max)
		return -1;
	cells[n++] = trim(docs_sp(s.p + from, s.n - from));
	return n;
}

/* Whether l is the header of an API table, `| API名称 | 是否支持 | 限制与说明 |`
 * (other columns, such as a 序号, are left unread). */
static int api_table_header(struct ap_span l, struct ap_cols *c)
{
	struct ap_span cells[AP_ROW_CELLS];
	int n = row_cells(l, cells, AP_ROW_CELLS);
	*c = (struct ap_cols){ n, -1, -1, -1 };
	for (int i = 0; i < n; i++) {
		if (docs_eq(cells[i], "API名称") && c->name < 0)
			c->name = i;
		else if (docs_eq(cells[i], "是否支持") && c->support < 0)
			c->support = i;
		else if (docs_eq(cells[i], "限制与说明") && c->limits < 0)
			c->limits = i;
	}
	return c->name >= 0 && c->support >= 0;
}

/* `[name](url)`: name and url; 0 (and nothing changed) for any other text. */
static int link_parts(struct ap_span *name, struct ap_span *url)
{
	struct ap_span s = *name;
	size_t open = find(s, "](");
	if (!docs_starts(s, "[") || open == s.n || s.p[s.n - 1] != ')')
		return 0;
	struct ap_span target = trim(docs_sp(s.p + open + 2, s.n - open - 3));
	if (!target.n)
		return 0;
	*url = target;
	*name = trim(docs_sp(s.p + 1, open - 1));
	return 1;
}

/* A limits cell: `-` or nothing is none; `<br>` breaks become "; ". */
static void row_limits(struct ap_page *pg, struct ap_span v)
{
	if (docs_eq(v, "-"))
		return;
	while (v.n) {
		size_t i = 0, k = 0;
		while (i < v.n && !(k = br_len(docs_sp(v.p + i, v.n - i))))
			i++;
		add_limit(pg, trim(docs_sp(v.p, i)));
		v = docs_sp(v.p + i + k, v.n - i - k);
	}
}

/* One data row: an entry of kind "row" at its line. A row of another
 * width than the header, without a name, or under a header without its
 * rule is unreadable. */
static void api_row(struct ap_page *pg, const struct ap_cols *c, struct ap_span l, int rule)
{
	struct ap_span cells[AP_ROW_CELLS], url;
	int n = row_cells(l, cells, AP_ROW_CELLS);
	struct ap_span name = n > c->name ? cells[c->name] : docs_sp(l.p, 0);
	int has_url = link_parts(&name, &url);
	entry_open(pg, AP_DOCS_ROW, name);
	if (has_url && ap_buf_add(&pg->e.url, url.p, url.n))
		pg->oom = 1;
	pg->e.has_url = has_url;
	if (!rule || n != c->n || !name.n) {
		set_format(pg, AP_FMT_ROW, -1);
		return;
	}
	set_format(pg, AP_FMT_ROW, docs_read_line(pg, cells[c->support]));
	if (c->limits >= 0)
		row_limits(pg, cells[c->limits]);
}

/* The header at the cursor, its rule, and every row up to the first line
 * that is not one. Rows stand alone: none is a method of a heading above. */
static void read_api_table(struct ap_page *pg, const struct ap_cols *c)
{
	struct ap_span l;
	entry_close(pg);
	ap_buf_reset(&pg->parent);
	advance(pg);
	int rule = peek(pg, &l) && table_rule(l);
	if (rule)
		advance(pg);
	while (!pg->oom && peek(pg, &l) && docs_starts(trim(l), "|")) {
		api_row(pg, c, l, rule);
		advance(pg);
	}
	entry_close(pg);
}

/* Tracks ``` and ~~~ fences: code is never read as headings or fields. */
static int fence_line(struct ap_page *pg, struct ap_span l)
{
	struct ap_span s = trim(l);
	char c = s.n >= 3 && (s.p[0] == '`' || s.p[0] == '~') ? s.p[0] : 0;
	if (c && (s.p[1] != c || s.p[2] != c))
		c = 0;
	if (c && (!pg->fence || pg->fence == c))
		pg->fence = pg->fence ? 0 : c;
	return c || pg->fence;
}

static void page_line(struct ap_page *pg, struct ap_span l)
{
	struct ap_span name;
	struct ap_cols cols;
	int level = heading_level(l);
	if (fence_line(pg, l)) {
		advance(pg);
	} else if (api_table_header(l, &cols)) {
		read_api_table(pg, &cols);
	} else if (level == 3) {
		docs_heading(pg, l);
		advance(pg);
	} else if (level == 1 || level == 2) {
		entry_close(pg);
		ap_buf_reset(&pg->parent);
		advance(pg);
	} else if (method_line(l, &name)) {
		docs_method(pg, name);
		advance(pg);
	} else if (pg->open) {
		entry_line(pg, l);
	} else {
		advance(pg);
	}
}

int ap_docs_parse(const char *text, size_t len, const char *name, struct ap_docs_entries *out)
{
	struct ap_page pg = { .text = text ? text : "", .len = text ? len : 0,
			      .name = name ? name : "", .out = out };
	struct ap_span l;
	if (pg.len >= 3 && !memcmp(pg.text, "\xef\xbb\xbf", 3))
		pg.pos = 3;
	while (!pg.oom && peek(&pg, &l))
		page_line(&pg, l);
	entry_close(&pg);
	entry_clear(&pg.e);
	ap_buf_free(&pg.parent);
	return pg.oom ? -ENOMEM : 0;
}

void ap_docs_entries_free(struct ap_docs_entries *e)
{
	for (size_t i = 0; i < e->n; i++)
		docs_entry_free(&e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

void ap_docs_pages_free(struct ap_docs_pages *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].file);
		free(p->v[i].not_read);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* ---- a directory of pages ---- */

#define AP_DOCS_PAGE_MAX (8u << 20)

struct ap_paths {
	char **v;
	size_t n, cap;
};

static int paths_add(struct ap_paths *ps, const char *path)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 16;
		char **v = realloc(ps->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ps->v = v;
		ps->cap = cap;
	}
	if (!(ps->v[ps->n] = strdup(path)))
		return -ENOMEM;
	ps->n++;
	return 0;
}

static void paths_free(struct ap_paths *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->v[i]);
	free(ps->v);
}

static int is_md(const char *name)
{
	size_t n = strlen(name);
	return n > 3 && !strcmp(name + n - 3, ".md");
}

static int docs_walk(const char *top, const char *rel, struct ap_paths *ps,
		   struct ap_buf *err, int depth);

/* One directory entry: a page to read, or a directory to walk. Hidden names
 * are skipped (.git and the like hold no pages), and so are symbolic links to
 * directories, which could loop; a page that is a link or not a regular
 * file is listed, and load_page says it is not read. */
static int walk_one(const char *top, const char *rel, const char *name,
		       struct ap_paths *ps, struct ap_buf *err, int depth)
{
	struct ap_buf sub = { 0 }, full = { 0 };
	struct stat st;
	int r = 0;
	if (name[0] == '.')
		return 0;
	if (ap_buf_addf(&sub, "%s%s%s", rel, *rel ? "/" : "", name) ||
	    ap_buf_addf(&full, "%s/%s", top, ap_buf_str(&sub)))
		r = -ENOMEM;
	else if (lstat(full.data, &st) == 0 && S_ISDIR(st.st_mode))
		r = docs_walk(top, sub.data, ps, err, depth + 1);
	else if (is_md(name) && lstat(full.data, &st) == 0)
		r = paths_add(ps, sub.data);
	if (r == -ENOMEM && !err->len)
		ap_buf_adds(err, "out of memory");
	ap_buf_free(&sub);
	ap_buf_free(&full);
	return r;
}

static int docs_walk(const char *top, const char *rel, struct ap_paths *ps,
		   struct ap_buf *err, int depth)
{
	struct ap_buf path = { 0 };
	char **names = NULL;
	size_t n = 0;
	if (ap_buf_addf(&path, "%s%s%s", top, *rel ? "/" : "", rel))
		return ap_buf_adds(err, "out of memory"), -ENOMEM;
	int r = depth > AP_DIR_DEPTH ? -ELOOP : ap_dir_list(path.data, 0, &names, &n);
	if (r)
		ap_buf_addf(err, "%s: %s", path.data, strerror(-r));
	for (size_t i = 0; !r && i < n; i++)
		r = walk_one(top, rel, names[i], ps, err, depth);
	ap_dir_free(names, n);
	ap_buf_free(&path);
	return r;
}

/* What the entries [from, n) of all, the page rel's, say of it; not_read
 * (NULL: it was read) why it was not. */
static int page_summary(const char *rel, const struct ap_docs_entries *all, size_t from,
			const char *not_read, struct ap_docs_pages *pages)
{
	struct ap_docs_page pg = { .entries = all->n - from };
	for (size_t i = from; i < all->n; i++) {
		size_t k = 0;
		while (k < pg.nformats && pg.formats[k] != all->v[i].format)
			k++;
		if (k == pg.nformats)
			pg.formats[pg.nformats++] = all->v[i].format;
		pg.counts[k]++;
	}
	if (pages->n == pages->cap) {
		size_t cap = pages->cap ? pages->cap * 2 : 16;
		struct ap_docs_page *v = realloc(pages->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		pages->v = v;
		pages->cap = cap;
	}
	if (!(pg.file = ustr(rel, strlen(rel))))
		return -ENOMEM;
	if (not_read && !(pg.not_read = strdup(not_read))) {
		free(pg.file);
		return -ENOMEM;
	}
	pages->v[pages->n++] = pg;
	return 0;
}

/* Appends the entries of dir/rel to all, and its summary to pages (may be
 * NULL). Only a regular file of the folder itself, of at most
 * AP_DOCS_PAGE_MAX bytes, is read: a link may lead out of the folder, and a
 * page is a few hundred kilobytes; another is listed as not read. */
static int load_page(const char *dir, const char *rel, struct ap_docs_entries *all,
		     struct ap_docs_pages *pages, struct ap_buf *err)
{
	struct ap_buf path = { 0 }, text = { 0 };
	struct stat st;
	size_t from = all->n;
	const char *not_read = NULL;
	int r = ap_buf_addf(&path, "%s/%s", dir, rel);
	if (!r && (lstat(path.data, &st) || !S_ISREG(st.st_mode)))
		not_read = "not read: not a regular file of the folder (a link, a device ...)";
	else if (!r && (r = ap_read_file_limited(path.data, AP_DOCS_PAGE_MAX, &text)) == -EFBIG) {
		not_read = "not read: larger than 8 MiB, which no page is";
		r = 0;
	} else if (r)
		ap_buf_addf(err, "%s: %s", path.data, ap_strerror(r));
	if (!r && ((!not_read && ap_docs_parse(ap_buf_str(&text), text.len, rel, all)) ||
		   (pages && page_summary(rel, all, from, not_read, pages))))
		r = -ENOMEM;
	if (r == -ENOMEM && !err->len)
		ap_buf_adds(err, "out of memory");
	ap_buf_free(&path);
	ap_buf_free(&text);
	return r;
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ap_docs_load_pages(const char *dir, struct ap_docs_entries *out, struct ap_docs_pages *pages,
		       struct ap_buf *err)
{
	struct ap_paths ps = { 0 };
	*out = (struct ap_docs_entries){ 0 };
	if (pages)
		*pages = (struct ap_docs_pages){ 0 };
	int r = docs_walk(dir, "", &ps, err, 0);
	if (r == -ENOMEM && !err->len)
		ap_buf_adds(err, "out of memory");
	if (!r && ps.n)
		qsort(ps.v, ps.n, sizeof(*ps.v), path_cmp);
	for (size_t i = 0; !r && i < ps.n; i++)
		r = load_page(dir, ps.v[i], out, pages, err);
	paths_free(&ps);
	if (r) {
		ap_docs_entries_free(out);
		if (pages)
			ap_docs_pages_free(pages);
	}
	return r;
}

int ap_docs_load(const char *dir, struct ap_docs_entries *out, struct ap_buf *err)
{
	return ap_docs_load_pages(dir, out, NULL, err);
}

/* ---- lookup ---- */

static const struct ap_docs_entry *find_api(const struct ap_docs_entries *entries,
					    const char *api, size_t n)
{
	for (size_t i = 0; i < entries->n; i++) {
		const char *s = entries->v[i].api;
		if (strlen(s) == n && !memcmp(s, api, n))
			return &entries->v[i];
	}
	return NULL;
}

const struct ap_docs_entry *ap_docs_find(const struct ap_docs_entries *entries, const char *api,
					 int *exact)
{
	int dummy;
	exact = exact ? exact : &dummy;
	*exact = 0;
	if (!entries || !api)
		return NULL;
	const struct ap_docs_entry *e = find_api(entries, api, strlen(api));
	if (e) {
		*exact = 1;
		return e;
	}
	const char *dot = strrchr(api, '.');
	return dot ? find_api(entries, api, (size_t)(dot - api)) : NULL;
}

/* ---- the entry as JSON ---- */

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* Sets o[key] = v, taking v; -1 when v is NULL (out of memory) or set fails. */
static int put(json_t *o, const char *key, json_t *v)
{
	return v ? json_object_set_new(o, key, v) : -1;
}

static json_t *products_json(const struct ap_docs_entry *e)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < e->nproducts; i++) {
		json_t *p = json_object();
		if (!p || put(p, "product", json_string(e->products[i].product)) ||
		    put(p, "supported", json_boolean(e->products[i].supported)) ||
		    json_array_append_new(a, p)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *ap_docs_entry_json(const struct ap_docs_entry *e)
{
	json_t *o = json_object();
	if (!o || put(o, "api", json_string(e->api)) ||
	    put(o, "kind", json_string(ap_docs_kind_name(e->kind))) ||
	    put(o, "file", json_string(e->file)) || put(o, "line", json_integer(e->line)) ||
	    put(o, "format", json_string(ap_docs_format_name(e->format))) ||
	    put(o, "doc_url", jstr_or_null(e->doc_url)) || put(o, "products", products_json(e)) ||
	    put(o, "all_products", json_boolean(e->all_products)) ||
	    put(o, "others", e->others >= 0 ? json_boolean(e->others) : json_null()) ||
	    put(o, "limits", jstr_or_null(e->limits))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The index of word in names (n of them), or -1. */
static int word_index(const char *const *names, size_t n, const char *word)
{
	for (size_t i = 0; word && i < n; i++)
		if (!strcmp(names[i], word))
			return (int)i;
	return -1;
}

/* A copy of the string at key of o into *dst: NULL stays NULL (null or
 * missing); -EINVAL when it is another type, -ENOMEM. */
static int copy_str(const json_t *o, const char *key, char **dst)
{
	const json_t *v = json_object_get(o, key);
	*dst = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -EINVAL;
	return (*dst = strdup(json_string_value(v))) ? 0 : -ENOMEM;
}

int ap_docs_entry_from_json(const json_t *o, struct ap_docs_entry *e)
{
	const json_t *ps = json_object_get(o, "products"), *p, *others = json_object_get(o, "others");
	int kind = word_index(ap_kind_names, sizeof(ap_kind_names) / sizeof(*ap_kind_names),
			      json_string_value(json_object_get(o, "kind")));
	int format = word_index(ap_format_names, AP_DOCS_NFORMATS,
				json_string_value(json_object_get(o, "format")));
	size_t i;
	memset(e, 0, sizeof(*e));
	if (!json_is_object(o) || kind < 0 || format < 0 || !json_is_array(ps) ||
	    !json_is_string(json_object_get(o, "api")) || !json_is_integer(json_object_get(o, "line")))
		return -EINVAL;
	e->kind = (enum ap_docs_kind)kind;
	e->format = (enum ap_docs_format)format;
	e->line = json_integer_value(json_object_get(o, "line"));
	e->all_products = json_is_true(json_object_get(o, "all_products"));
	e->others = json_is_boolean(others) ? json_is_true(others) : -1;
	int r = copy_str(o, "api", &e->api);
	r = r ? r : copy_str(o, "file", &e->file);
	r = r ? r : copy_str(o, "doc_url", &e->doc_url);
	r = r ? r : copy_str(o, "limits", &e->limits);
	if (!r && json_array_size(ps) && !(e->products = calloc(json_array_size(ps), sizeof(*e->products))))
		r = -ENOMEM;
	json_array_foreach(ps, i, p) {
		const char *name = json_string_value(json_object_get(p, "product"));
		if (r || !name || !json_is_boolean(json_object_get(p, "supported"))) {
			r = r ? r : -EINVAL;
			break;
		}
		if (!(e->products[e->nproducts].product = strdup(name))) {
			r = -ENOMEM;
			break;
		}
		e->products[e->nproducts++].supported = json_is_true(json_object_get(p, "supported"));
	}
	if (r) {
		docs_entry_free(e);
		memset(e, 0, sizeof(*e));
	}
	return r;
}

/* ---- writing an entry ---- */

/* s on one line: a newline inside would end the field and break the entry. */
static void add_oneline(struct ap_buf *out, const char *s)
{
	for (; *s; s++)
		ap_buf_add(out, *s == '\n' || *s == '\r' ? " " : s, 1);
}

static void add_products(const struct ap_docs_product *products, size_t n, struct ap_buf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (!products[i].product)
			continue;
		ap_buf_adds(out, "- <term>");
		add_oneline(out, products[i].product);
		ap_buf_adds(out, "</term>" AP_FULL_COLON);
		ap_buf_adds(out, products[i].supported ? "支持\n" : "不支持\n");
	}
}

int ap_docs_called(const char *kind)
{
	static const char *const calls[] = { "method", "classmethod", "staticmethod", "function",
					     "builtin", "builtin-method", "callable", "class" };
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(kind, calls[i]))
			return 1;
	return 0;
}

/* An entry's <div> block: link, products and limits (ap_docs_entry()). */
static void entry_body(const char *api, const char *url, const struct ap_docs_product *products,
		       size_t nproducts, const char *limits, struct ap_buf *out)
{
	ap_buf_adds(out, "<div style=\"margin-left: 2em\">\n\n");
	if (url) {
		ap_buf_adds(out, "**原生文档**" AP_FULL_COLON "[");
		add_oneline(out, api ? api : "");
		ap_buf_adds(out, "](");
		add_oneline(out, url);
		ap_buf_adds(out, ")\n\n");
	}
	ap_buf_adds(out, "**产品支持情况**" AP_FULL_COLON "\n\n");
	add_products(products, nproducts, out);
	ap_buf_adds(out, "\n**限制与说明**" AP_FULL_COLON);
	add_oneline(out, limits && *limits ? limits : "-");
	ap_buf_adds(out, "\n\n</div>\n");
}

void ap_docs_entry(const char *api, const char *url, const struct ap_docs_product *products,
		   size_t nproducts, const char *limits, struct ap_buf *out)
{
	ap_buf_adds(out, "### ");
	add_oneline(out, api ? api : "");
	ap_buf_adds(out, "\n\n");
	entry_body(api, url, products, nproducts, limits, out);
}

void ap_docs_member_entry(const char *owner, const char *api, unsigned flags, const char *url,
			  const struct ap_docs_product *products, size_t nproducts,
			  const char *limits, struct ap_buf *out)
{
	size_t n = strlen(owner);
	const char *dot = strrchr(api, '.');
	const char *name = !strncmp(api, owner, n) && api[n] == '.' ? api + n + 1
			   : dot ? dot + 1 : api;
	ap_buf_adds(out, "### " AP_CLASS_TAG " ");
	add_oneline(out, owner);
	ap_buf_adds(out, "\n\n<div style=\"margin-left: 2em\">\n\n> <font size=\"3\">");
	add_oneline(out, name);
	ap_buf_adds(out, flags & AP_DOCS_NO_CALL ? "</font>\n\n" : "()</font>\n\n");
	entry_body(api, url, products, nproducts, limits, out);
	ap_buf_adds(out, "\n</div>\n");
}

/* ---- writing a page's blocks ---- */

static void add_table(const struct ap_docs_product *products, size_t n, struct ap_buf *out)
{
	ap_buf_adds(out, "| 硬件 | 是否支持 |\n| ---- | :----: |\n");
	for (size_t i = 0; i < n; i++) {
		if (!products[i].product)
			continue;
		ap_buf_adds(out, "| <term>");
		add_oneline(out, products[i].product);
		ap_buf_addf(out, "</term> | %s |\n", products[i].supported ? AP_CHECK : AP_CROSS);
	}
}

void ap_docs_block(enum ap_docs_format format, enum ap_docs_kind kind, const char *api,
		   const char *url, const struct ap_docs_product *products, size_t nproducts,
		   const char *limits, unsigned flags, struct ap_buf *out)
{
	int table = format == AP_DOCS_TABLE;
	const char *dot = strrchr(api, '.');
	if (kind == AP_DOCS_METHOD) {
		ap_buf_adds(out, "> <font size=\"3\">");
		add_oneline(out, dot ? dot + 1 : api);
		ap_buf_adds(out, flags & AP_DOCS_NO_CALL ? "</font>\n\n" : "()</font>\n\n");
	} else {
		ap_buf_adds(out, kind == AP_DOCS_CLASS ? "### " AP_CLASS_TAG " " : "### ");
		add_oneline(out, api);
		ap_buf_adds(out, "\n\n");
	}
	ap_buf_adds(out, "<div style=\"margin-left: 2em\">\n\n");
	if (url) {
		ap_buf_adds(out, "**原生文档**" AP_FULL_COLON "[");
		add_oneline(out, api);
		ap_buf_adds(out, "](");
		add_oneline(out, url);
		ap_buf_adds(out, ")\n\n");
	}
	ap_buf_adds(out, table ? "**支持情况**" AP_FULL_COLON "\n\n" : "**产品支持情况**" AP_FULL_COLON "\n\n");
	if (table)
		add_table(products, nproducts, out);
	else
		add_products(products, nproducts, out);
	if (limits && *limits) {
		ap_buf_adds(out, "\n**限制与说明**" AP_FULL_COLON);
		add_oneline(out, limits);
		ap_buf_adds(out, "\n");
	}
	ap_buf_adds(out, flags & AP_DOCS_OPEN ? "\n" : "\n" AP_DOCS_BLOCK_END);
}
