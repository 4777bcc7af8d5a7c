#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/embedded.h"
#include "base/err.h"
#include "check/spec.h"
#include "env/protocol.h"
#include "base/yamldoc.h"

/* A validation error at the line of object o. */
static int spec_err(struct ap_buf *err, const char *file, const json_t *o,
		       const char *fmt, const char *arg)
{
	ap_buf_addf(err, "%s:%d: ", file, ap_yaml_line(o));
	ap_buf_addf(err, fmt, arg);
	return -AP_ECONFIG;
}

/* Checks that o has only keys from allowed (NULL-ended), "__line__" aside. */
static int spec_keys(const json_t *o, const char *const *allowed, const char *file,
			struct ap_buf *err)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)o, key, v) {
		int k = 0;
		while (allowed[k] && strcmp(allowed[k], key))
			k++;
		if (!allowed[k] && !ap_yaml_meta(key))
			return spec_err(err, file, o, "unknown key '%s'", key);
	}
	return 0;
}

/* A required (or optional) string field, copied. */
static int spec_str(const json_t *o, const char *key, int required, char **out,
		       const char *file, struct ap_buf *err)
{
	const json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v && !required)
		return 0;
	if (!json_is_string(v))
		return spec_err(err, file, o, v ? "'%s' must be text" : "'%s' is missing", key);
	*out = strdup(json_string_value(v));
	return *out ? 0 : -ENOMEM;
}

/* Calls fn on each {field} of template t; stops at the first non-zero. */
static int template_fields(const char *t, int (*fn)(void *ctx, const char *f, size_t n),
			      void *ctx)
{
	for (const char *p = strchr(t, '{'); p; p = strchr(p + 1, '{')) {
		const char *end = strchr(p, '}');
		if (!end)
			return 0;
		int r = fn(ctx, p + 1, (size_t)(end - p - 1));
		if (r)
			return r;
	}
	return 0;
}

/* A member's field name (a {placeholder}, a required field): a short word;
 * a longer one is cut, and then names no field. */
#define AP_FIELD_NAME_MAX 64

struct ap_field_check {
	const json_t *member;
	char missing[AP_FIELD_NAME_MAX];
};

static int field_present(void *ctx, const char *f, size_t n)
{
	struct ap_field_check *c = ctx;
	snprintf(c->missing, sizeof(c->missing), "%.*s", (int)n, f);
	return json_is_string(json_object_get(c->member, c->missing)) ? 0 : 1;
}

static int member_load(struct ap_family *fam, struct ap_member *m, const json_t *o,
			  struct ap_buf *err)
{
	const char *key, *tname;
	json_t *v, *t;
	if (!json_is_object(o))
		return spec_err(err, fam->file, o, "%s", "a member must be a mapping");
	json_object_foreach((json_t *)o, key, v)
		if (!ap_yaml_meta(key) && !json_is_string(v))
			return spec_err(err, fam->file, o, "member field '%s' must be text", key);
	int r = spec_str(o, "class", 1, &m->cls, fam->file, err);
	if (r)
		return r;
	json_object_foreach(fam->bind, tname, t) {
		struct ap_field_check c = { o, "" };
		if (template_fields(json_string_value(t), field_present, &c))
			return spec_err(err, fam->file, o, "member lacks field '%s' that the "
					   "bindings use", c.missing);
	}
	m->fields = json_deep_copy(o);
	json_object_del(m->fields, "__line__");
	json_object_del(m->fields, "__lines__");
	m->line = ap_yaml_line(o);
	return m->fields ? 0 : -ENOMEM;
}

static int probe_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	return 1;
}

static int probe_load(struct ap_family *fam, size_t idx, const json_t *o,
			 struct ap_buf *err)
{
	static const char *const keys[] = { "name", "needs", "says", "code", NULL };
	static const char *const says_keys[] = { "en", "zh", NULL };
	struct ap_probe *p = &fam->probes[idx];
	const json_t *says = json_object_get(o, "says");
	if (!json_is_object(o))
		return spec_err(err, fam->file, o, "%s", "a probe must be a mapping");
	int r = spec_keys(o, keys, fam->file, err);
	r = r ? r : spec_str(o, "name", 1, &p->name, fam->file, err);
	r = r ? r : spec_str(o, "needs", 0, &p->needs, fam->file, err);
	r = r ? r : spec_str(o, "code", 1, &p->code, fam->file, err);
	if (r)
		return r;
	if (!probe_name_ok(p->name))
		return spec_err(err, fam->file, o, "probe name '%s' must be [a-z0-9-]+", p->name);
	for (size_t i = 0; i < idx; i++)
		if (!strcmp(fam->probes[i].name, p->name))
			return spec_err(err, fam->file, o, "probe '%s' defined twice", p->name);
	if (!json_is_object(says))
		return spec_err(err, fam->file, o, "%s", "'says' (en, zh) is missing");
	r = spec_keys(says, says_keys, fam->file, err);
	r = r ? r : spec_str(says, "en", 1, &p->says_en, fam->file, err);
	r = r ? r : spec_str(says, "zh", 0, &p->says_zh, fam->file, err);
	if (!r && !p->says_zh)
		r = (p->says_zh = strdup(p->says_en)) ? 0 : -ENOMEM;
	return r;
}

static int family_summary(struct ap_family *fam, const json_t *doc, struct ap_buf *err)
{
	const json_t *s = json_object_get(doc, "summary");
	if (!s)
		return 0;
	if (!json_is_object(s))
		return spec_err(err, fam->file, doc, "%s", "'summary' must map en and zh");
	int r = spec_str(s, "en", 1, &fam->summary_en, fam->file, err);
	return r ? r : spec_str(s, "zh", 0, &fam->summary_zh, fam->file, err);
}

static int family_bind(struct ap_family *fam, const json_t *doc, struct ap_buf *err)
{
	const json_t *b = json_object_get(doc, "bind");
	const char *k;
	json_t *v;
	if (!json_is_object(b))
		return spec_err(err, fam->file, doc, "%s", "'bind' (name: expression) is missing");
	fam->bind = json_deep_copy(b);
	json_object_del(fam->bind, "__line__");
	json_object_del(fam->bind, "__lines__");
	json_object_foreach(fam->bind, k, v)
		if (!json_is_string(v))
			return spec_err(err, fam->file, b, "binding '%s' must be an expression", k);
	return 0;
}

static int family_load(struct ap_family *fam, const json_t *doc, struct ap_buf *err)
{
	static const char *const keys[] = { "family", "summary", "bind", "members", "probes", NULL };
	const json_t *members = json_object_get(doc, "members");
	const json_t *probes = json_object_get(doc, "probes");
	if (!json_is_object(doc))
		return ap_buf_addf(err, "%s: a spec is a mapping", fam->file), -AP_ECONFIG;
	int r = spec_keys(doc, keys, fam->file, err);
	r = r ? r : spec_str(doc, "family", 1, &fam->name, fam->file, err);
	r = r ? r : family_summary(fam, doc, err);
	r = r ? r : family_bind(fam, doc, err);
	if (r)
		return r;
	if (!json_is_array(members) || !json_array_size(members))
		return spec_err(err, fam->file, doc, "%s", "'members' must list at least one class");
	if (!json_is_array(probes) || !json_array_size(probes))
		return spec_err(err, fam->file, doc, "%s", "'probes' must list at least one probe");
	fam->members = calloc(json_array_size(members), sizeof(*fam->members));
	fam->probes = calloc(json_array_size(probes), sizeof(*fam->probes));
	if (!fam->members || !fam->probes)
		return -ENOMEM;
	for (size_t i = 0; !r && i < json_array_size(members); i++, fam->nmembers++)
		r = member_load(fam, &fam->members[i], json_array_get(members, i), err);
	for (size_t i = 0; !r && i < json_array_size(probes); i++, fam->nprobes++)
		r = probe_load(fam, i, json_array_get(probes, i), err);
	return r;
}

static void family_free(struct ap_family *f)
{
	for (size_t i = 0; i < f->nmembers; i++) {
		free(f->members[i].cls);
		json_decref(f->members[i].fields);
	}
	for (size_t i = 0; i < f->nprobes; i++) {
		struct ap_probe *p = &f->probes[i];
		free(p->name);
		free(p->needs);
		free(p->says_en);
		free(p->says_zh);
		free(p->code);
	}
	free(f->members);
	free(f->probes);
	free(f->name);
	free(f->summary_en);
	free(f->summary_zh);
	free(f->file);
	json_decref(f->bind);
	memset(f, 0, sizeof(*f));
}

int ap_specs_add(struct ap_specs *s, const char *text, size_t len, const char *name,
		 struct ap_buf *err)
{
	json_t *doc = ap_yaml_parse(text, len, name, err);
	if (!doc)
		return -AP_ECONFIG;
	struct ap_family *v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v) {
		json_decref(doc);
		return -ENOMEM;
	}
	s->v = v;
	struct ap_family *f = &s->v[s->n];
	memset(f, 0, sizeof(*f));
	f->file = strdup(name);
	int r = f->file ? family_load(f, doc, err) : -ENOMEM;
	for (size_t i = 0; !r && i < s->n; i++)
		if (!strcmp(s->v[i].name, f->name))
			r = spec_err(err, name, doc, "family '%s' is defined twice", f->name);
	json_decref(doc);
	if (r) {
		family_free(f);
		return r;
	}
	s->n++;
	return 0;
}

static int yaml_name(const char *n)
{
	size_t len = strlen(n);
	return len > 5 && !strcmp(n + len - 5, ".yaml") && n[0] != '.';
}


static int specs_load_dir(struct ap_specs *s, const char *dir, struct ap_buf *err)
{
	char **names;
	size_t n;
	int r = ap_dir_list(dir, 0, &names, &n);
	if (r)
		return ap_buf_addf(err, "%s: %s", dir, strerror(-r)), -AP_ECONFIG;
	for (size_t i = 0; i < n; i++) {
		struct ap_buf path = { 0 }, text = { 0 };
		if (!yaml_name(names[i]))
			continue;
		ap_buf_addf(&path, "%s/%s", dir, names[i]);
		if (!r && (r = ap_read_all(ap_buf_str(&path), &text)))
			ap_buf_addf(err, "%s: %s", ap_buf_str(&path), ap_strerror(r));
		else if (!r)
			r = ap_specs_add(s, ap_buf_str(&text), text.len, ap_buf_str(&path), err);
		r = r == -AP_ECONFIG || !r ? r : -AP_ECONFIG;
		ap_buf_free(&path);
		ap_buf_free(&text);
	}
	ap_dir_free(names, n);
	if (!r && !s->n)
		return ap_buf_addf(err, "%s: no *.yaml spec files", dir), -AP_ECONFIG;
	return r;
}

int ap_specs_load(struct ap_specs *s, const char *dir, struct ap_buf *err)
{
	int r = 0;
	memset(s, 0, sizeof(*s));
	if (dir)
		r = specs_load_dir(s, dir, err);
	for (const struct ap_embedded *e = ap_builtin_specs; !dir && !r && e->name; e++) {
		struct ap_buf name = { 0 };
		ap_buf_addf(&name, "(built-in) specs/%s", e->name);
		r = ap_specs_add(s, e->data, e->len, ap_buf_str(&name), err);
		ap_buf_free(&name);
	}
	if (r)
		ap_specs_free(s);
	return r;
}

const struct ap_family *ap_specs_find(const struct ap_specs *s, const char *cls,
				      const struct ap_member **m)
{
	for (size_t i = 0; cls && i < s->n; i++)
		for (size_t k = 0; k < s->v[i].nmembers; k++)
			if (!strcmp(s->v[i].members[k].cls, cls)) {
				*m = &s->v[i].members[k];
				return &s->v[i];
			}
	*m = NULL;
	return NULL;
}

/* Fills {field} placeholders of t from the member's fields. */
static int expand(const char *t, const json_t *fields, struct ap_buf *out)
{
	char key[AP_FIELD_NAME_MAX];
	for (const char *p = t; *p;) {
		const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL;
		if (!close)
			return ap_buf_adds(out, p);
		if (ap_buf_add(out, p, (size_t)(open - p)))
			return -ENOMEM;
		snprintf(key, sizeof(key), "%.*s", (int)(close - open - 1), open + 1);
		const char *v = json_string_value(json_object_get(fields, key));
		if (ap_buf_adds(out, v ? v : ""))
			return -ENOMEM;
		p = close + 1;
	}
	return 0;
}

json_t *ap_member_bind(const struct ap_family *f, const struct ap_member *m)
{
	json_t *out = json_array();
	const char *name;
	json_t *t;
	json_object_foreach(f->bind, name, t) {
		struct ap_buf b = { 0 };
		int r = expand(json_string_value(t), m->fields, &b);
		if (r || json_array_append_new(out, json_pack("[s,s]", name, ap_buf_str(&b)))) {
			ap_buf_free(&b);
			json_decref(out);
			return NULL;
		}
		ap_buf_free(&b);
	}
	return out;
}

int ap_member_has_trait(const struct ap_member *m, const char *trait)
{
	const char *t = json_string_value(json_object_get(m->fields, "traits"));
	size_t n = strlen(trait);
	for (const char *p = t; p && *p;) {
		p += strspn(p, " \t");
		size_t w = strcspn(p, " \t");
		if (w == n && !strncmp(p, trait, n))
			return 1;
		p += w;
	}
	return 0;
}

void ap_specs_free(struct ap_specs *s)
{
	for (size_t i = 0; i < s->n; i++)
		family_free(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

json_t *ap_probe_request(const char *name, const char *code, const json_t *bind,
			 int timeout_s)
{
	return ap_proto_probe(name, code, bind, timeout_s);
}
