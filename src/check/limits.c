#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "check/limits.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "base/ini.h"
#include "base/jsonutil.h"
#include "base/text.h"
#include "evidence/bundle.h"

#define BUILTIN_NAME "specs/backend-limits.ini"

static const char *const keys[] = { "backend", "op", "what", "raises", "reason", NULL };
enum { K_BACKEND, K_OP, K_WHAT, K_RAISES, K_REASON, K_COUNT };

/* One limit while its section is read. */
struct entry {
	int line;
	unsigned seen;   /* keys given, a bit each (keys[] order) */
	struct ap_limit l;
};

struct parse {
	const char *file;
	struct entry *v;
	size_t n;
};

static void limit_free(struct ap_limit *l)
{
	free(l->name);
	free(l->backend);
	free(l->op);
	free(l->what);
	free(l->exception);
	free(l->message);
	free(l->reason);
	free(l->where);
}

static struct entry *current(struct parse *p, const struct ap_ini_key *k)
{
	if (p->n && p->v[p->n - 1].line == k->section_line)
		return &p->v[p->n - 1];
	struct entry *v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->v = v;
	struct entry *e = &v[p->n];
	memset(e, 0, sizeof(*e));
	e->line = k->section_line;
	if (!(e->l.name = strdup(k->section)))
		return NULL;
	p->n++;
	return e;
}

/* raises = TYPE: TEXT (a type alone would excuse every failure of that type). */
static int set_raises(struct entry *e, const char *val, struct ap_buf *err)
{
	const char *colon = strchr(val, ':');
	size_t n = colon ? (size_t)(colon - val) : strlen(val);
	const char *text = colon ? colon + 1 : "";
	text += strspn(text, " \t");
	e->l.exception = strndup(val, n);
	e->l.message = strdup(text);
	if (!e->l.exception || !e->l.message)
		return ap_ini_fail(err, "out of memory");
	if (!ap_word_ok(e->l.exception) || !*e->l.message)
		return ap_ini_fail(err, "raises: '%s' is not TYPE: TEXT (the exception type "
				   "the device raises and text of its message)", val);
	return 0;
}

static int set_key(struct entry *e, int key, const char *val, struct ap_buf *err)
{
	if (!*val)
		return ap_ini_fail(err, "%s: empty%s", keys[key], key == K_REASON ?
				   " (say why it is the backend's limit)" : "");
	switch (key) {
	case K_BACKEND:
	case K_OP:
		if (!ap_word_ok(val))
			return ap_ini_fail(err, "%s: '%s' is not a name%s", keys[key], val,
					   key == K_OP ? " (or a pattern, or *)" : "");
		if (!(*(key == K_OP ? &e->l.op : &e->l.backend) = strdup(val)))
			return ap_ini_fail(err, "out of memory");
		return 0;
	case K_RAISES:
		return set_raises(e, val, err);
	default:
		if (!(*(key == K_WHAT ? &e->l.what : &e->l.reason) = strdup(val)))
			return ap_ini_fail(err, "out of memory");
		return 0;
	}
}

static int on_key(void *ctx, struct ap_ini_key *k, struct ap_buf *err)
{
	struct parse *p = ctx;
	if (!*k->section)
		return ap_ini_fail(err, "'%s' outside of any [limit]", k->key);
	struct entry *e = current(p, k);
	if (!e)
		return ap_ini_fail(err, "out of memory");
	int key = ap_ini_key_index(keys, k, &e->seen, err);
	return key < 0 ? key : set_key(e, key, k->value, err);
}

/* A whole section: every key there, its name its own. 0, -AP_ECONFIG with
 * the reason in err, or -ENOMEM. */
static int entry_finish(struct parse *p, size_t i, struct ap_buf *err)
{
	struct entry *e = &p->v[i];
	for (int k = 0; k < K_COUNT; k++)
		if (!(e->seen & (1u << k))) {
			ap_ini_fail(err, "%s:%d: [%s] has no %s%s", p->file, e->line, e->l.name,
				    keys[k], k == K_REASON ? " (every limit says why it is the "
				    "backend's)" : "");
			return -AP_ECONFIG;
		}
	for (size_t j = 0; j < i; j++)
		if (!strcmp(p->v[j].l.name, e->l.name)) {
			ap_ini_fail(err, "%s:%d: [%s] is named as the limit at line %d", p->file,
				    e->line, e->l.name, p->v[j].line);
			return -AP_ECONFIG;
		}
	struct ap_buf w = { 0 };
	if (ap_buf_addf(&w, "%s:%d", p->file, e->line)) {
		ap_buf_free(&w);
		return -ENOMEM;
	}
	e->l.where = w.data;
	return 0;
}

static void parse_free(struct parse *p)
{
	for (size_t i = 0; i < p->n; i++)
		limit_free(&p->v[i].l);
	free(p->v);
}

int ap_limits_parse(struct ap_limits *l, const char *text, size_t len, const char *name,
		    struct ap_buf *err)
{
	struct parse p = { .file = name };
	struct ap_buf copy = { 0 };
	memset(l, 0, sizeof(*l));
	int r = ap_buf_add(&copy, text, len) ? -ENOMEM : 0;
	if (!r)
		r = ap_ini_parse(copy.data ? copy.data : (char *)"", copy.len, name, on_key, &p,
				 err);
	for (size_t i = 0; !r && i < p.n; i++)
		r = entry_finish(&p, i, err);
	ap_buf_free(&copy);
	if (!r && p.n && !(l->v = calloc(p.n, sizeof(*l->v))))
		r = -ENOMEM;
	if (r) {
		parse_free(&p);
		return r;
	}
	for (size_t i = 0; i < p.n; i++)
		l->v[i] = p.v[i].l;   /* moved: the entries keep nothing */
	l->n = p.n;
	free(p.v);
	return 0;
}

/* ap_ini_load()'s view of ap_limits_parse(). */
static int parse_any(void *out, const char *text, size_t len, const char *name,
		     struct ap_buf *err)
{
	return ap_limits_parse(out, text, len, name, err);
}

int ap_limits_load(struct ap_limits *x, const char *path, struct ap_buf *err)
{
	memset(x, 0, sizeof(*x));
	return ap_ini_load(path, "limits file", ap_default_limits, ap_default_limits_len,
			   BUILTIN_NAME, parse_any, x, err);
}

/* device is of type backend ("openreg:0" is an "openreg"). */
static int backend_match(const char *backend, const char *device)
{
	size_t n = strcspn(device, ":");
	return strlen(backend) == n && !strncmp(backend, device, n);
}

/* The failure limit x excuses: the device raised its exception type, with
 * its text in the message. */
static int failure_match(const struct ap_limit *x, const char *exception, const char *message)
{
	if (!exception || !message)
		return 0; /* it raised nothing: it computed something else */
	return !strcmp(x->exception, exception) && strstr(message, x->message);
}

const struct ap_limit *ap_limit_match(const struct ap_limits *l, const char *device,
				      const char *op, const char *exception,
				      const char *message)
{
	for (size_t i = 0; l && device && op && i < l->n; i++) {
		const struct ap_limit *x = &l->v[i];
		if (backend_match(x->backend, device) && !fnmatch(x->op, op, 0) &&
		    failure_match(x, exception, message))
			return x;
	}
	return NULL;
}

void ap_limits_free(struct ap_limits *l)
{
	for (size_t i = 0; i < l->n; i++)
		limit_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int ap_limits_applied(const struct ap_fact_check *checks, size_t n,
		      struct ap_limit_applied **rows, size_t *nrows)
{
	*nrows = 0;
	if (!(*rows = calloc(n ? n : 1, sizeof(**rows))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct ap_fact_limit *l = &checks[i].limit;
		size_t k = 0;
		if (!l->name || checks[i].status != AP_NOTRUN)
			continue;
		while (k < *nrows && strcmp((*rows)[k].name, l->name))
			k++;
		if (k == *nrows)
			(*rows)[(*nrows)++] = (struct ap_limit_applied){ l->name, l->backend, l->what,
									 l->reason, l->where, 0 };
		(*rows)[k].samples++;
	}
	return 0;
}
