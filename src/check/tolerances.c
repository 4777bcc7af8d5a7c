#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/tolerances.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "base/ini.h"
#include "base/text.h"

#define BUILTIN_NAME "specs/tolerances.ini"

/* One override while its section is read. */
struct entry {
	char *section;
	int line;
	unsigned seen;   /* keys given, a bit each (keys[] order) */
	struct ap_tol_override o;
	char *reason;
};

struct parse {
	const char *file;
	struct entry *v;
	size_t n;
};

static const char *const keys[] = {
	"op", "dtype", "device", "rtol", "atol", "equal_nan", "reason", NULL
};
enum { K_OP, K_DTYPE, K_DEVICE, K_RTOL, K_ATOL, K_EQUAL_NAN, K_REASON };

static void entry_free(struct entry *e)
{
	free(e->section);
	free(e->reason);
	free(e->o.op);
	free(e->o.device);
	free(e->o.where);
}

/* A tolerance: a finite number >= 0 written out whole. */
static int number(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
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
	e->o.rtol = e->o.atol = -1;
	e->o.equal_nan = 1;
	if (!(e->section = strdup(k->section)))
		return NULL;
	p->n++;
	return e;
}

static int set_key(struct entry *e, int key, const char *val, struct ap_buf *err)
{
	switch (key) {
	case K_OP:
	case K_DEVICE:
		if (!ap_word_ok(val))
			return ap_ini_fail(err, "%s: '%s' is not a name (or *)", keys[key],
					   val);
		if (!(*(key == K_OP ? &e->o.op : &e->o.device) = strdup(val)))
			return ap_ini_fail(err, "out of memory");
		return 0;
	case K_DTYPE:
		e->o.any_dtype = !strcmp(val, "*");
		if (e->o.any_dtype)
			return 0;
		if (ap_dtype_parse(val, &e->o.dtype))
			return ap_ini_fail(err, "dtype: unknown dtype '%s' (bool, uint8, int8, "
					   "int16, int32, int64, float16, bfloat16, float32, "
					   "float64, complex64, complex128, or *)", val);
		return 0;
	case K_RTOL:
	case K_ATOL:
		if (number(val, key == K_RTOL ? &e->o.rtol : &e->o.atol))
			return ap_ini_fail(err, "%s: '%s' is not a number >= 0", keys[key],
					   val);
		return 0;
	case K_EQUAL_NAN:
		e->o.equal_nan = !strcmp(val, "yes");
		if (e->o.equal_nan || !strcmp(val, "no"))
			return 0;
		return ap_ini_fail(err, "equal_nan: must be yes or no, not '%s'", val);
	default:
		if (!*val)
			return ap_ini_fail(err, "reason: empty (say why the default is "
					   "wrong here)");
		e->reason = strdup(val);
		return e->reason ? 0 : ap_ini_fail(err, "out of memory");
	}
}

static int on_key(void *ctx, struct ap_ini_key *k, struct ap_buf *err)
{
	struct parse *p = ctx;
	if (!*k->section)
		return ap_ini_fail(err, "'%s' outside of any [override]", k->key);
	struct entry *e = current(p, k);
	if (!e)
		return ap_ini_fail(err, "out of memory");
	int key = ap_ini_key_index(keys, k, &e->seen, err);
	return key < 0 ? key : set_key(e, key, k->value, err);
}

/* A whole section: everything needed is there, and no earlier one claims the
 * same op, dtype and device. 0, or -1 with the reason in err. */
static int entry_check(struct parse *p, size_t i, struct ap_buf *err)
{
	struct entry *e = &p->v[i];
	static const int need[] = { K_OP, K_DTYPE, K_DEVICE, K_REASON };
	for (size_t j = 0; j < sizeof(need) / sizeof(need[0]); j++)
		if (!(e->seen & (1u << need[j])))
			return ap_ini_fail(err, "%s:%d: [%s] has no %s%s", p->file, e->line,
					   e->section, keys[need[j]], need[j] == K_REASON ?
					   " (every override says why)" : "");
	if (!(e->seen & (1u << K_RTOL | 1u << K_ATOL)))
		return ap_ini_fail(err, "%s:%d: [%s] sets neither rtol nor atol", p->file,
				   e->line, e->section);
	for (size_t j = 0; j < i; j++) {
		const struct ap_tol_override *o = &p->v[j].o;
		if (!strcmp(o->op, e->o.op) && !strcmp(o->device, e->o.device) &&
		    o->any_dtype == e->o.any_dtype && (o->any_dtype || o->dtype == e->o.dtype))
			return ap_ini_fail(err, "%s:%d: [%s] overrides the same op, dtype and "
					   "device as [%s] (line %d)", p->file, e->line,
					   e->section, p->v[j].section, p->v[j].line);
	}
	return 0;
}

/* Checks a whole section and says where it is. 0, -AP_ECONFIG or -ENOMEM. */
static int entry_finish(struct parse *p, size_t i, struct ap_buf *err)
{
	struct entry *e = &p->v[i];
	if (entry_check(p, i, err))
		return -AP_ECONFIG;
	struct ap_buf w = { 0 };
	if (ap_buf_addf(&w, "%s:%d: %s", p->file, e->line, e->reason)) {
		ap_buf_free(&w);
		return -ENOMEM;
	}
	e->o.where = w.data;
	return 0;
}

static void parse_free(struct parse *p)
{
	for (size_t i = 0; i < p->n; i++)
		entry_free(&p->v[i]);
	free(p->v);
}

int ap_tolerances_parse(struct ap_tolerances *t, const char *text, size_t len,
			const char *name, struct ap_buf *err)
{
	struct parse p = { .file = name };
	struct ap_buf copy = { 0 };
	memset(t, 0, sizeof(*t));
	int r = ap_buf_add(&copy, text, len) ? -ENOMEM : 0;
	if (!r)
		r = ap_ini_parse(copy.data ? copy.data : (char *)"", copy.len, name, on_key, &p,
				 err);
	for (size_t i = 0; !r && i < p.n; i++)
		r = entry_finish(&p, i, err);
	ap_buf_free(&copy);
	if (r) {
		parse_free(&p);
		return r;
	}
	if (p.n && !(t->v = calloc(p.n, sizeof(*t->v)))) {
		parse_free(&p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p.n; i++) {
		t->v[i] = p.v[i].o;   /* moved: the entry keeps only its own strings */
		memset(&p.v[i].o, 0, sizeof(p.v[i].o));
	}
	t->n = p.n;
	parse_free(&p);
	return 0;
}

/* ap_ini_load()'s view of ap_tolerances_parse(). */
static int parse_any(void *out, const char *text, size_t len, const char *name,
		     struct ap_buf *err)
{
	return ap_tolerances_parse(out, text, len, name, err);
}

int ap_tolerances_load(struct ap_tolerances *x, const char *path, struct ap_buf *err)
{
	memset(x, 0, sizeof(*x));
	return ap_ini_load(path, "tolerances file", ap_default_tolerances, ap_default_tolerances_len,
			   BUILTIN_NAME, parse_any, x, err);
}

/* device matches pattern: "*", or the same type ("openreg:0" is "openreg"). */
static int device_match(const char *pattern, const char *device)
{
	if (!strcmp(pattern, "*"))
		return 1;
	size_t n = strcspn(device, ":");
	return strlen(pattern) == n && !strncmp(pattern, device, n);
}

struct ap_tolerance ap_tolerance_for(const struct ap_tolerances *t, const char *op,
				     enum ap_dtype dt, const char *device,
				     const char **where)
{
	struct ap_tolerance tol = ap_tolerance_default(dt);
	const struct ap_tol_override *best = NULL;
	int best_score = -1;
	for (size_t i = 0; t && i < t->n; i++) {
		const struct ap_tol_override *o = &t->v[i];
		int op_named = strcmp(o->op, "*") != 0, dev_named = strcmp(o->device, "*") != 0;
		if ((op_named && (!op || strcmp(o->op, op))) ||
		    (!o->any_dtype && o->dtype != dt) ||
		    (dev_named && (!device || !device_match(o->device, device))))
			continue;
		int score = op_named * 4 + !o->any_dtype * 2 + dev_named;
		if (score > best_score)
			best = o, best_score = score;
	}
	if (where)
		*where = best ? best->where : "default";
	if (best) {
		if (best->rtol >= 0)
			tol.rtol = best->rtol;
		if (best->atol >= 0)
			tol.atol = best->atol;
		tol.equal_nan = best->equal_nan;
	}
	return tol;
}

void ap_tolerances_free(struct ap_tolerances *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].op);
		free(t->v[i].device);
		free(t->v[i].where);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}
