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
	struct ap_ini_record rec;
	struct ap_limit l;
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

/* raises = TYPE: TEXT (a type alone would excuse every failure of that type). */
static int set_raises(struct ap_limit *l, const char *val, struct ap_buf *err)
{
	const char *colon = strchr(val, ':');
	size_t n = colon ? (size_t)(colon - val) : strlen(val);
	const char *text = colon ? colon + 1 : "";
	text += strspn(text, " \t");
	l->exception = strndup(val, n);
	l->message = strdup(text);
	if (!l->exception || !l->message)
		return ap_ini_fail(err, "out of memory");
	if (!ap_word_ok(l->exception) || !*l->message)
		return ap_ini_fail(err, "raises: '%s' is not TYPE: TEXT (the exception type "
				   "the device raises and text of its message)", val);
	return 0;
}

static int set_key(void *rec, int key, const char *val, struct ap_buf *err)
{
	struct ap_limit *l = &((struct entry *)rec)->l;
	if (!*val)
		return ap_ini_fail(err, "%s: empty%s", keys[key], key == K_REASON ?
				   " (say why it is the backend's limit)" : "");
	switch (key) {
	case K_BACKEND:
	case K_OP:
		if (!ap_word_ok(val))
			return ap_ini_fail(err, "%s: '%s' is not a name%s", keys[key], val,
					   key == K_OP ? " (or a pattern, or *)" : "");
		if (!(*(key == K_OP ? &l->op : &l->backend) = strdup(val)))
			return ap_ini_fail(err, "out of memory");
		return 0;
	case K_RAISES:
		return set_raises(l, val, err);
	default:
		if (!(*(key == K_WHAT ? &l->what : &l->reason) = strdup(val)))
			return ap_ini_fail(err, "out of memory");
		return 0;
	}
}

int ap_limits_parse(struct ap_limits *l, const char *text, size_t len, const char *name,
		    struct ap_buf *err)
{
	static const char *const hints[] = { NULL, NULL, NULL, NULL,
					     " (every limit says why it is the backend's)" };
	struct ap_ini_records r = { "limit", keys, hints, sizeof(struct entry), set_key, NULL, 0 };
	struct entry *v;
	memset(l, 0, sizeof(*l));
	int e = ap_ini_records_parse(&r, text, len, name, err);
	v = r.v;
	if (!e && r.n && !(l->v = calloc(r.n, sizeof(*l->v))))
		e = -ENOMEM;
	for (size_t i = 0; i < r.n; i++) {
		v[i].l.name = v[i].rec.name;   /* moved: the record keeps nothing */
		v[i].l.where = v[i].rec.where;
		if (e)
			limit_free(&v[i].l);
		else
			l->v[l->n++] = v[i].l;
	}
	free(r.v);
	return e;
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
