#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/ini.h"
#include "base/err.h"
#include "base/fsutil.h"

struct ini {
	ap_ini_fn *fn;
	void *ctx;
	struct ap_buf *err;
	struct ap_ini_key k; /* section, latest key, current line */
	int err_line;        /* the line the error in err is about, 0: none */
};

int ap_ini_fail(struct ap_buf *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ap_buf_vaddf(err, fmt, ap);
	va_end(ap);
	return -1;
}

int ap_ini_key_index(const char *const *keys, const struct ap_ini_key *k, unsigned *seen,
		     struct ap_buf *err)
{
	int i = 0;
	while (keys[i] && strcmp(keys[i], k->key))
		i++;
	if (!keys[i]) {
		ap_buf_addf(err, "unknown key '%s' (known: ", k->key);
		for (int j = 0; keys[j]; j++)
			ap_buf_addf(err, "%s%s", j ? ", " : "", keys[j]);
		return ap_ini_fail(err, ")");
	}
	if (*seen & (1u << i))
		return ap_ini_fail(err, "key '%s' given twice in [%s]", k->key, k->section);
	*seen |= 1u << i;
	return i;
}

static char *rstrip(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static char *lskip(char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* The first of chars in s, or the ';' of an inline comment (after a space),
 * or the end of s. */
static char *find_or_comment(char *s, const char *chars)
{
	int was_space = 0;
	while (*s && !(chars && strchr(chars, *s)) && !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return s;
}

/* Hands one key to the callback; 0 when it refused it (err set). */
static int ini_key(struct ini *p, const char *key, const char *value)
{
	p->k.key = key;
	p->k.value = value;
	p->k.err_line = p->k.line;
	if (!p->fn(p->ctx, &p->k, p->err))
		return 1;
	p->err_line = p->k.err_line;
	return 0;
}

static int ini_fail(struct ini *p, const char *why)
{
	ap_buf_adds(p->err, why);
	p->err_line = p->k.line;
	return 0;
}

/* Parses one line (without its newline); 0 with err and err_line set if it
 * is wrong. */
static int ini_line(struct ini *p, char *line)
{
	char *start = lskip(rstrip(line)), *end;
	if (!*start || *start == ';' || *start == '#')
		return 1;
	if (start > line && p->k.key) {
		*find_or_comment(start, NULL) = '\0';
		return ini_key(p, p->k.key, rstrip(start));
	}
	if (*start == '[') {
		if (*(end = find_or_comment(start + 1, "]")) != ']')
			return ini_fail(p, "not an INI line (expected [name] or key = value)");
		*end = '\0';
		p->k.section = start + 1;
		p->k.section_line = p->k.line;
		p->k.key = NULL;
		return 1;
	}
	end = find_or_comment(start, "=:");
	if (*end != '=' && *end != ':')
		return ini_fail(p, "not an INI line (expected [name] or key = value)");
	*end = '\0';
	char *val = end + 1;
	*find_or_comment(val, NULL) = '\0';
	return ini_key(p, rstrip(start), rstrip(lskip(val)));
}

int ap_ini_parse(char *text, size_t len, const char *file, ap_ini_fn *fn, void *ctx,
		 struct ap_buf *err)
{
	struct ini p = { .fn = fn, .ctx = ctx, .err = err, .k = { .section = "" } };
	char *s = text, *end = text + len;
	const char *nul = memchr(text, '\0', len);
	if (len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3))
		s += 3;
	while (s < end) {
		char *nl = memchr(s, '\n', (size_t)(end - s)), *next = nl ? nl + 1 : end;
		p.k.line++;
		if (nul && nul < next) {
			ap_buf_addf(err, "a NUL byte at column %zu (a text file has none)",
				    (size_t)(nul - s) + 1);
			p.err_line = p.k.line;
			break;
		}
		if (nl)
			*nl = '\0';
		if (!ini_line(&p, s))
			break;
		s = next;
	}
	if (!p.err_line)
		return 0;
	struct ap_buf msg = { 0 };
	ap_buf_addf(&msg, "%s:%d: %s", file, p.err_line, ap_buf_str(err));
	ap_buf_reset(err);
	ap_buf_adds(err, ap_buf_str(&msg));
	ap_buf_free(&msg);
	return -AP_ECONFIG;
}

#define AP_INI_FILE_MAX (1u << 20)

int ap_ini_load(const char *path, const char *what, const char *builtin, size_t len,
		const char *builtin_name, ap_ini_parse_fn *parse, void *out, struct ap_buf *err)
{
	if (!path || !strcmp(path, "-"))
		return parse(out, builtin, len, builtin_name, err);
	struct ap_buf text = { 0 };
	int r = ap_read_file_limited(path, AP_INI_FILE_MAX, &text);
	if (!r)
		r = parse(out, ap_buf_str(&text), text.len, path, err);
	else if (r != -ENOMEM) {
		if (r == -EFBIG)
			ap_buf_addf(err, "%s: larger than 1 MiB, not a %s", path, what);
		else
			ap_buf_addf(err, "%s: %s", path, ap_strerror(r));
		r = -AP_ECONFIG;
	}
	ap_buf_free(&text);
	return r;
}

/* --- records -------------------------------------------------------------- */

struct records {
	struct ap_ini_records *r;
	const char *file;
};

/* The record of the section k is in, a new one at its header. */
static struct ap_ini_record *record_of(struct records *rs, const struct ap_ini_key *k)
{
	struct ap_ini_records *r = rs->r;
	char *at = r->v;
	if (r->n && ((struct ap_ini_record *)(at + (r->n - 1) * r->size))->line == k->section_line)
		return (struct ap_ini_record *)(at + (r->n - 1) * r->size);
	if (!(at = realloc(r->v, (r->n + 1) * r->size)))
		return NULL;
	r->v = at;
	struct ap_ini_record *rec = (struct ap_ini_record *)(at + r->n * r->size);
	memset(rec, 0, r->size);
	rec->line = k->section_line;
	struct ap_buf w = { 0 };
	if (!(rec->name = strdup(k->section)) || ap_buf_addf(&w, "%s:%d", rs->file, rec->line)) {
		free(rec->name);
		ap_buf_free(&w);
		return NULL;
	}
	rec->where = w.data;
	r->n++;
	return rec;
}

static int record_key(void *ctx, struct ap_ini_key *k, struct ap_buf *err)
{
	struct records *rs = ctx;
	if (!*k->section)
		return ap_ini_fail(err, "'%s' outside of any [%s]", k->key, rs->r->what);
	struct ap_ini_record *rec = record_of(rs, k);
	if (!rec)
		return ap_ini_fail(err, "out of memory");
	int key = ap_ini_key_index(rs->r->keys, k, &rec->seen, err);
	return key < 0 ? key : rs->r->set(rec, key, k->value, err);
}

/* Record i whole: every key there, its name its own. */
static int record_finish(const struct ap_ini_records *r, const char *file, size_t i,
			 struct ap_buf *err)
{
	const char *at = r->v;
	const struct ap_ini_record *rec = (const struct ap_ini_record *)(at + i * r->size);
	for (int k = 0; r->keys[k]; k++)
		if (!(rec->seen & (1u << k))) {
			ap_ini_fail(err, "%s:%d: [%s] has no %s%s", file, rec->line, rec->name,
				    r->keys[k], r->hints && r->hints[k] ? r->hints[k] : "");
			return -AP_ECONFIG;
		}
	for (size_t j = 0; j < i; j++) {
		const struct ap_ini_record *o = (const struct ap_ini_record *)(at + j * r->size);
		if (!strcmp(o->name, rec->name)) {
			ap_ini_fail(err, "%s:%d: [%s] is named as the %s at line %d", file, rec->line,
				    rec->name, r->what, o->line);
			return -AP_ECONFIG;
		}
	}
	return 0;
}

int ap_ini_records_parse(struct ap_ini_records *r, const char *text, size_t len, const char *file,
			 struct ap_buf *err)
{
	struct records rs = { r, file };
	struct ap_buf copy = { 0 };
	int e = ap_buf_add(&copy, text, len) ? -ENOMEM : 0;
	if (!e)
		e = ap_ini_parse(copy.data ? copy.data : (char *)"", copy.len, file, record_key, &rs,
				 err);
	for (size_t i = 0; !e && i < r->n; i++)
		e = record_finish(r, file, i, err);
	ap_buf_free(&copy);
	return e;
}

void ap_ini_record_free(struct ap_ini_record *rec)
{
	free(rec->name);
	free(rec->where);
}
