#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
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
