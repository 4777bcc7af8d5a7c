/* matrix.c - the support matrix's lines: built, ordered, judged, written and
 * read back (see matrix.h for the format). The only file that spells a
 * line's keys: everyone else works on struct ap_matrix_line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "evidence/matrix.h"

/* Every key of a line, in the order it is written. */
static const char *const line_keys[] = {
	"schema", "env", "module", "api", "key", "owner", "status", "kind", "file", "line",
	"defined", "pure_python", "doc", "signature", "reaches", "on_self", "patched", "plugin_added", "check",
	"verdict", "reason",
};
#define NKEYS (sizeof(line_keys) / sizeof(line_keys[0]))

static const char *const check_counts[AP_MCOUNT_N] = { "checks", "passed", "failed", "notrun",
						       "samples" };

/* --- the line's memory --------------------------------------------------- */

/* A copy of s (NULL for NULL); *fail set when out of memory. */
static char *dup(const char *s, int *fail)
{
	char *d = s ? strdup(s) : NULL;
	if (s && !d)
		*fail = 1;
	return d;
}

static void strs_free(struct ap_matrix_strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct ap_matrix_strs){ 0 };
}

static int strs_copy(struct ap_matrix_strs *d, const struct ap_matrix_strs *s)
{
	int fail = 0;
	*d = (struct ap_matrix_strs){ .set = s->set };
	d->v = s->n ? calloc(s->n, sizeof(*d->v)) : NULL;
	if (s->n && !d->v)
		return -ENOMEM;
	for (d->n = 0; d->n < s->n; d->n++)
		d->v[d->n] = dup(s->v[d->n], &fail);
	if (fail)
		strs_free(d);
	return fail ? -ENOMEM : 0;
}

static void check_free(struct ap_matrix_check *c)
{
	free(c->reason);
	free(c->family);
	free(c->digest);
	strs_free(&c->operators);
	*c = (struct ap_matrix_check){ 0 };
}

void ap_matrix_line_free(struct ap_matrix_line *l)
{
	char **s[] = { &l->env, &l->module, &l->api, &l->key, &l->owner, &l->kind, &l->file,
		       &l->defined, &l->reason };
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		free(*s[i]);
	strs_free(&l->signature);
	strs_free(&l->reaches);
	strs_free(&l->on_self);
	check_free(&l->check);
	*l = (struct ap_matrix_line){ .status = AP_LINE_STATUS_UNKNOWN,
				      .verdict = AP_LINE_VERDICT_UNKNOWN };
}

int ap_matrix_line_init(struct ap_matrix_line *l, const char *env, const char *module,
			const char *api, enum ap_line_status status)
{
	int fail = 0;
	*l = (struct ap_matrix_line){ .status = status, .verdict = AP_LINE_VERDICT_UNKNOWN };
	l->env = dup(env, &fail);
	l->module = dup(module, &fail);
	l->api = dup(api, &fail);
	l->key = dup(api, &fail);
	if (fail)
		ap_matrix_line_free(l);
	return fail ? -ENOMEM : 0;
}

int ap_matrix_line_copy(struct ap_matrix_line *d, const struct ap_matrix_line *s)
{
	int fail = 0;
	*d = *s;
	char **f[] = { &d->env, &d->module, &d->api, &d->key, &d->owner, &d->kind, &d->file,
		       &d->defined, &d->reason, &d->check.reason, &d->check.family,
		       &d->check.digest };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		*f[i] = dup(*f[i], &fail);
	fail |= strs_copy(&d->signature, &s->signature) != 0;
	fail |= strs_copy(&d->reaches, &s->reaches) != 0;
	fail |= strs_copy(&d->on_self, &s->on_self) != 0;
	fail |= strs_copy(&d->check.operators, &s->check.operators) != 0;
	if (fail)
		ap_matrix_line_free(d);
	return fail ? -ENOMEM : 0;
}

/* --- from JSON ----------------------------------------------------------- */

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Replaces *dst with o's string key (NULL when it is no string). */
static void take_str(char **dst, const json_t *o, const char *key, int *fail)
{
	free(*dst);
	*dst = dup(str(o, key), fail);
}

static enum ap_tri tri(const json_t *v)
{
	return json_is_true(v) ? AP_TRI_TRUE : json_is_false(v) ? AP_TRI_FALSE : AP_TRI_NULL;
}

/* A list of strings from v (null unless an array; its non-strings left out). */
static int strs_read(struct ap_matrix_strs *s, const json_t *v)
{
	size_t i;
	const json_t *x;
	strs_free(s);
	if (!json_is_array(v))
		return 0;
	s->set = 1;
	s->v = json_array_size(v) ? calloc(json_array_size(v), sizeof(*s->v)) : NULL;
	if (json_array_size(v) && !s->v)
		return -ENOMEM;
	json_array_foreach(v, i, x)
		if (json_is_string(x) && !(s->v[s->n++] = strdup(json_string_value(x))))
			return -ENOMEM;
	return 0;
}

int ap_matrix_check_read(const json_t *cj, struct ap_matrix_check *c)
{
	int fail = 0;
	check_free(c);
	if (!json_is_object(cj))
		return 0;
	c->set = 1;
	c->status = ap_line_check_parse(str(cj, "status"));
	take_str(&c->reason, cj, "reason", &fail);
	take_str(&c->family, cj, "family", &fail);
	take_str(&c->digest, cj, "digest", &fail);
	for (size_t i = 0; i < AP_MCOUNT_N; i++)
		c->counts[i] = (long long)json_integer_value(json_object_get(cj, check_counts[i]));
	fail |= strs_read(&c->operators, json_object_get(cj, "operators")) != 0;
	return fail ? -ENOMEM : 0;
}

int ap_matrix_line_measured(struct ap_matrix_line *l, const json_t *o)
{
	int fail = 0;
	const json_t *v;
	static const struct {
		const char *key;
		size_t at;
	} strs[] = {
		{ "key", offsetof(struct ap_matrix_line, key) },
		{ "owner", offsetof(struct ap_matrix_line, owner) },
		{ "kind", offsetof(struct ap_matrix_line, kind) },
		{ "file", offsetof(struct ap_matrix_line, file) },
		{ "defined", offsetof(struct ap_matrix_line, defined) },
		{ "reason", offsetof(struct ap_matrix_line, reason) },
	};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (json_object_get(o, strs[i].key))
			take_str((char **)((char *)l + strs[i].at), o, strs[i].key, &fail);
	if ((v = json_object_get(o, "line"))) {
		l->has_line = json_is_integer(v);
		l->line = (long long)json_integer_value(v);
	}
	if ((v = json_object_get(o, "pure_python")))
		l->pure_python = tri(v);
	if ((v = json_object_get(o, "doc")))
		l->doc = tri(v);
	if ((v = json_object_get(o, "patched")))
		l->patched = tri(v);
	if ((v = json_object_get(o, "plugin_added")))
		l->plugin_added = json_is_true(v);
	if ((v = json_object_get(o, "signature")))
		fail |= strs_read(&l->signature, v) != 0;
	if ((v = json_object_get(o, "reaches")))
		fail |= strs_read(&l->reaches, v) != 0;
	if ((v = json_object_get(o, "on_self")))
		fail |= strs_read(&l->on_self, v) != 0;
	return fail ? -ENOMEM : 0;
}

int ap_matrix_line_from_json(const json_t *o, struct ap_matrix_line *l)
{
	enum ap_line_status st = ap_line_status_parse(str(o, "status"));
	if (!str(o, "env") || !str(o, "module") || !str(o, "api") || st == AP_LINE_STATUS_UNKNOWN) {
		*l = (struct ap_matrix_line){ .status = st, .verdict = AP_LINE_VERDICT_UNKNOWN };
		return -AP_EPROTO;
	}
	int r = ap_matrix_line_init(l, str(o, "env"), str(o, "module"), str(o, "api"), st);
	r = r ? r : ap_matrix_line_measured(l, o);
	if (!json_object_get(o, "key") && !r) {
		free(l->key);
		l->key = NULL;
	}
	r = r ? r : ap_matrix_check_read(json_object_get(o, "check"), &l->check);
	l->verdict = ap_line_verdict_parse(str(o, "verdict"));
	if (r)
		ap_matrix_line_free(l);
	return r;
}

/* --- to JSON ------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jtri(enum ap_tri t)
{
	return t == AP_TRI_NULL ? json_null() : json_boolean(t == AP_TRI_TRUE);
}

static json_t *jstrs(const struct ap_matrix_strs *s)
{
	if (!s->set)
		return json_null();
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->n; i++)
		json_array_append_new(a, json_string(s->v[i]));
	return a;
}

static json_t *check_json(const struct ap_matrix_check *c)
{
	size_t counts[AP_MCOUNT_N];
	if (!c->set)
		return json_null();
	for (size_t i = 0; i < AP_MCOUNT_N; i++)
		counts[i] = (size_t)c->counts[i];
	return ap_matrix_check(c->status, c->reason, c->family,
			       c->operators.set ? jstrs(&c->operators) : NULL, counts, c->digest);
}

json_t *ap_matrix_line_json(const struct ap_matrix_line *l)
{
	json_t *v[NKEYS] = {
		json_string(AP_MATRIX_SCHEMA), jstr(l->env), jstr(l->module), jstr(l->api),
		jstr(l->key), jstr(l->owner), json_string(ap_line_status_name(l->status)),
		jstr(l->kind), jstr(l->file),
		l->has_line ? json_integer((json_int_t)l->line) : json_null(), jstr(l->defined),
		jtri(l->pure_python), jtri(l->doc), jstrs(&l->signature), jstrs(&l->reaches),
		jstrs(&l->on_self), jtri(l->patched),
		json_boolean(l->plugin_added), check_json(&l->check),
		l->verdict == AP_LINE_VERDICT_UNKNOWN ? json_null() :
		json_string(ap_line_verdict_name(l->verdict)),
		jstr(l->reason),
	};
	json_t *o = json_object();
	int fail = !o;
	for (size_t i = 0; i < NKEYS; i++)
		fail |= !v[i] || (o && json_object_set_new(o, line_keys[i], v[i]));
	if (fail) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *ap_matrix_check(enum ap_line_check status, const char *reason, const char *family,
			json_t *operators, const size_t counts[5], const char *digest)
{
	json_t *c = json_pack("{s:s, s:s?, s:s?, s:o?}", "status", ap_line_check_name(status),
			      "reason", reason,
			      "family", family, "operators", operators);
	if (!c)
		return NULL;
	for (size_t i = 0; i < AP_MCOUNT_N; i++)
		json_object_set_new(c, check_counts[i], json_integer((json_int_t)counts[i]));
	json_object_set_new(c, "digest", digest ? json_string(digest) : json_null());
	return c;
}

/* --- the matrix ---------------------------------------------------------- */

int ap_matrix_check_is(const struct ap_matrix_line *l, enum ap_line_check st)
{
	return l->check.set && l->check.status == st;
}

int ap_matrix_add(struct ap_matrix *m, struct ap_matrix_line *l)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct ap_matrix_line *v = realloc(m->v, cap * sizeof(*v));
		if (!v) {
			ap_matrix_line_free(l);
			return -ENOMEM;
		}
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = *l;
	*l = (struct ap_matrix_line){ .status = AP_LINE_STATUS_UNKNOWN,
				      .verdict = AP_LINE_VERDICT_UNKNOWN };
	return 0;
}

void ap_matrix_free(struct ap_matrix *m)
{
	for (size_t i = 0; i < m->n; i++)
		ap_matrix_line_free(&m->v[i]);
	free(m->v);
	*m = (struct ap_matrix){ 0 };
}

/* The order of environments that line_cmp sorts by (qsort_r's context). */
struct env_order {
	const char *const *envs;
	size_t n;
};

static size_t env_pos(const struct env_order *o, const char *env)
{
	for (size_t i = 0; env && i < o->n; i++)
		if (!strcmp(o->envs[i], env))
			return i;
	return o->n;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static int line_cmp(const void *a, const void *b, void *ctx)
{
	const struct ap_matrix_line *x = a, *y = b;
	int c = strcmp(or_empty(x->api), or_empty(y->api));
	if (!c)
		c = strcmp(or_empty(x->module), or_empty(y->module));
	if (c)
		return c;
	size_t px = env_pos(ctx, x->env), py = env_pos(ctx, y->env);
	if (px != py)
		return px < py ? -1 : 1;
	return strcmp(or_empty(x->env), or_empty(y->env));
}

void ap_matrix_sort(struct ap_matrix *m, const char *const *envs, size_t nenvs)
{
	struct env_order o = { envs, nenvs };
	if (m->n)
		qsort_r(m->v, m->n, sizeof(m->v[0]), line_cmp, &o);
}

static void set_verdict(struct ap_matrix_line *l, enum ap_line_verdict verdict, char *reason)
{
	l->verdict = verdict;
	free(l->reason);
	l->reason = reason;
}

/* "WHAT ENV" as a new string (never NULL unless out of memory). */
static char *why(const char *what, const char *env)
{
	struct ap_buf s = { 0 };
	ap_buf_addf(&s, "%s%s", what, env);
	return s.data;
}

/* Whether the line's own checks failed there (see matrix.h). */
static int check_failed(const struct ap_matrix_line *l)
{
	return ap_matrix_check_is(l, AP_LCHECK_INCONSISTENT) || ap_matrix_check_is(l, AP_LCHECK_CRASH) ||
	       ap_matrix_check_is(l, AP_LCHECK_TIMEOUT);
}

/* "check STATUS: REASON" as a new string. */
static char *check_why(const struct ap_matrix_line *l)
{
	struct ap_buf s = { 0 };
	ap_buf_addf(&s, "check %s: %s", ap_line_check_name(l->check.status),
		    l->check.reason ? l->check.reason : "-");
	return s.data;
}

int ap_matrix_same_kind(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

int ap_matrix_strs_has(const struct ap_matrix_strs *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 1;
	return 0;
}

int ap_matrix_same_signature(const struct ap_matrix_strs *a, const struct ap_matrix_strs *b)
{
	if (a->set != b->set || a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return 0;
	return 1;
}

/* Judges lines [from, to) of one api against its reference (see matrix.h). */
static void judge_api(struct ap_matrix *m, size_t from, size_t to, const char *reference)
{
	const struct ap_matrix_line *ref = NULL;
	for (size_t i = from; reference && i < to; i++)
		if (m->v[i].status == AP_LSTATUS_PRESENT && !strcmp(m->v[i].env, reference))
			ref = &m->v[i];
	for (size_t i = from; !ref && i < to; i++)
		if (m->v[i].status == AP_LSTATUS_PRESENT)
			ref = &m->v[i];
	for (size_t i = from; i < to; i++) {
		struct ap_matrix_line *l = &m->v[i];
		const char *renv = ref ? ref->env : "";
		if (l->status == AP_LSTATUS_ABSENT)
			set_verdict(l, AP_LINE_ABSENT, strdup("absent in this environment's torch"));
		else if (l->status != AP_LSTATUS_PRESENT)
			/* the walk's own error says why; kept as it is, so judging
			 * twice changes nothing */
			set_verdict(l, AP_LINE_NOTRUN, l->reason ? strdup(l->reason) :
				    why("not measured: ", ap_line_status_name(l->status)));
		else if (l != ref && !ap_matrix_same_kind(l->kind, ref->kind))
			set_verdict(l, AP_LINE_INCONSISTENT, why("kind differs from ", renv));
		else if (l != ref && !ap_matrix_same_signature(&l->signature, &ref->signature))
			set_verdict(l, AP_LINE_INCONSISTENT, why("signature differs from ", renv));
		else if (check_failed(l))
			set_verdict(l, AP_LINE_INCONSISTENT, check_why(l));
		else
			set_verdict(l, AP_LINE_CONSISTENT, NULL);
	}
}

int ap_matrix_same_api(const struct ap_matrix_line *a, const struct ap_matrix_line *b)
{
	return a->api && b->api && a->module && b->module && !strcmp(a->api, b->api) &&
	       !strcmp(a->module, b->module);
}

void ap_matrix_judge(struct ap_matrix *m, const char *reference)
{
	size_t from = 0;
	for (size_t i = 1; i <= m->n; i++) {
		if (i < m->n && ap_matrix_same_api(&m->v[from], &m->v[i]))
			continue;
		judge_api(m, from, i, reference);
		from = i;
	}
}

int ap_matrix_render(const struct ap_matrix *m, struct ap_buf *out)
{
	int r = 0;
	for (size_t i = 0; !r && i < m->n; i++) {
		json_t *l = ap_matrix_line_json(&m->v[i]);
		r = l ? 0 : -ENOMEM;
		for (size_t k = 0; !r && k < NKEYS; k++) {
			const json_t *v = json_object_get(l, line_keys[k]);
			char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
			r = s ? ap_buf_addf(out, "%s\"%s\":%s", k ? "," : "{", line_keys[k], s) : -ENOMEM;
			free(s);
		}
		json_decref(l);
		r = r ? r : ap_buf_adds(out, "}\n");
	}
	return r;
}

/* --- reading back -------------------------------------------------------- */

/* Whether s is a name: ASCII letters, digits, '_', '.' and the characters
 * of extra; never a '/', so no name read back can lead a path astray. */
static int name_ok(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '.' || (*extra && strchr(extra, *s))))
			return 0;
	return 1;
}

/* Whether v is null or a string. */
static int opt_str(const json_t *v)
{
	return !v || json_is_null(v) || json_is_string(v);
}

/* Whether v is null or a list of strings. */
static int opt_strs(const json_t *v)
{
	size_t i;
	const json_t *s;
	if (v && !json_is_null(v) && !json_is_array(v))
		return 0;
	json_array_foreach(v, i, s)
		if (!json_is_string(s))
			return 0;
	return 1;
}

/* Why a line's check breaks the format (see matrix.h), or NULL. */
static const char *check_problem(const json_t *c)
{
	if (!c || json_is_null(c))
		return NULL;
	if (!json_is_object(c) || ap_line_check_parse(str(c, "status")) == AP_LINE_CHECK_UNKNOWN)
		return "check must be null or an object whose status is one of consistent, "
		       "inconsistent, not-run, crash, timeout";
	if (!opt_str(json_object_get(c, "reason")) || !opt_str(json_object_get(c, "family")) ||
	    !opt_str(json_object_get(c, "digest")))
		return "check's reason, family and digest must be strings or null";
	for (size_t i = 0; i < AP_MCOUNT_N; i++) {
		const json_t *x = json_object_get(c, check_counts[i]);
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return "check's counts must be numbers";
	}
	if (!opt_strs(json_object_get(c, "operators")))
		return "check's operators must be a list of strings or null";
	return NULL;
}

/* Whether v is absent, null or a boolean. */
static int opt_bool(const json_t *v)
{
	return !v || json_is_null(v) || json_is_boolean(v);
}

/* Why line l breaks the format, or NULL. */
static const char *line_problem(const json_t *l)
{
	if (!json_is_object(l))
		return "not a JSON object";
	if (!str(l, "schema") || strcmp(str(l, "schema"), AP_MATRIX_SCHEMA))
		return "no \"schema\": \"" AP_MATRIX_SCHEMA "\"";
	if (!str(l, "env") || !*str(l, "env") || !str(l, "api") || !*str(l, "api") ||
	    !str(l, "module"))
		return "env, module and api must be strings";
	if (!name_ok(str(l, "env"), "-") || !name_ok(str(l, "module"), "") ||
	    !name_ok(str(l, "api"), ""))
		return "env, module and api must be names (letters, digits, '_', '.', and '-' in env)";
	if (ap_line_status_parse(str(l, "status")) == AP_LINE_STATUS_UNKNOWN)
		return "status is not one of present, absent, import-error, crash, timeout, error";
	const json_t *v = json_object_get(l, "verdict");
	if (v && !json_is_null(v) &&
	    ap_line_verdict_parse(json_string_value(v)) == AP_LINE_VERDICT_UNKNOWN)
		return "verdict is not one of consistent, inconsistent, not-run, absent";
	static const char *const strs[] = { "key", "owner", "kind", "file", "defined", "reason" };
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++)
		if (!opt_str(json_object_get(l, strs[k])))
			return "key, owner, kind, file, defined and reason must be strings or null";
	v = json_object_get(l, "line");
	if (v && !json_is_null(v) && !json_is_integer(v))
		return "line must be a number or null";
	if (!opt_bool(json_object_get(l, "pure_python")) || !opt_bool(json_object_get(l, "doc")) ||
	    !opt_bool(json_object_get(l, "patched")) || !opt_bool(json_object_get(l, "plugin_added")))
		return "pure_python, doc, patched and plugin_added must be true, false or null";
	const char *cp = check_problem(json_object_get(l, "check"));
	if (cp)
		return cp;
	if (!opt_strs(json_object_get(l, "signature")) || !opt_strs(json_object_get(l, "reaches")) ||
	    !opt_strs(json_object_get(l, "on_self")))
		return "signature, reaches and on_self must be lists of strings or null";
	return NULL;
}

static int read_lines(const char *path, const struct ap_buf *text, struct ap_matrix *m,
		      struct ap_buf *err)
{
	const char *p = ap_buf_str(text), *end = p + text->len;
	for (int no = 1; p < end; no++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_error_t jerr;
		const char *why = NULL;
		json_t *l = NULL;
		struct ap_matrix_line line;
		if (len > AP_MATRIX_MAX_LINE)
			why = "line too long";
		else if (memchr(p, '\0', len))
			why = "NUL byte";
		else if (!(l = json_loadb(p, len, 0, &jerr)))
			why = jerr.text;
		else
			why = line_problem(l);
		if (why) {
			ap_buf_addf(err, "%s:%d: %s", path, no, why);
			json_decref(l);
			return -AP_EPROTO;
		}
		int r = ap_matrix_line_from_json(l, &line);
		json_decref(l);
		r = r ? r : ap_matrix_add(m, &line);
		if (r)
			return r;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

int ap_matrix_read(const char *path, struct ap_matrix *m, struct ap_buf *err)
{
	struct ap_buf text = { 0 }, file = { 0 };
	int r = ap_read_file_limited(path, AP_MATRIX_MAX_BYTES, &text);
	if (r == -EISDIR) {
		ap_buf_addf(&file, "%s/%s", path, AP_MATRIX_NAME);
		path = ap_buf_str(&file);
		r = ap_read_file_limited(path, AP_MATRIX_MAX_BYTES, &text);
	}
	if (r)
		ap_buf_addf(err, "%s: %s", path, ap_strerror(r));
	else if ((r = read_lines(path, &text, m, err)))
		ap_matrix_free(m);
	ap_buf_free(&text);
	ap_buf_free(&file);
	return r;
}

const char **ap_matrix_envs(const struct ap_matrix *m, size_t *n)
{
	const char **v = m->n ? malloc(m->n * sizeof(*v)) : NULL;
	*n = 0;
	for (size_t i = 0; v && i < m->n; i++) {
		size_t k = 0;
		while (k < *n && strcmp(v[k], m->v[i].env))
			k++;
		if (k == *n)
			v[(*n)++] = m->v[i].env;
	}
	return v;
}
