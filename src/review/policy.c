#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/outcome.h"
#include "check/compare.h"
#include "base/yamldoc.h"
#include "review/policy.h"

/* What a key of a policy holds. */
enum value { V_NAME, V_NAMES, V_FLAG, V_STATUSES, V_KINDS, V_FACTS, V_TOLERANCES, V_LIMITS };

static const struct key {
	const char *key;
	enum value value;
} keys[] = {
	{ "policy", V_NAME },          { "require_envs", V_NAMES },
	{ "statuses", V_STATUSES },    { "require_kinds", V_KINDS },
	{ "require_official", V_FLAG }, { "traces_agree", V_FLAG },
	{ "require_signature", V_FLAG }, { "require_facts", V_FACTS },
	{ "accept_tolerances", V_TOLERANCES }, { "accept_limits", V_LIMITS },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* Says why key of o is wrong, "where:LINE: key: why", and returns -1. */
__attribute__((format(printf, 5, 6)))
static int bad(struct ap_buf *err, const char *where, const json_t *o, const char *key,
	       const char *fmt, ...)
{
	va_list ap;
	ap_buf_addf(err, "%s:%d: %s: ", where, ap_yaml_key_line(o, key), key);
	va_start(ap, fmt);
	ap_buf_vaddf(err, fmt, ap);
	va_end(ap);
	return -1;
}

/* What v is, for a message: 'word' or "a list", "a mapping". */
static const char *shape(const json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		snprintf(buf, n, "'%.60s'", json_string_value(v));
	else
		snprintf(buf, n, "%s", json_is_array(v) ? "a list" : "a mapping");
	return buf;
}

/* Each of kinds, "probe|numeric": words of check kinds. */
static int kind_words_ok(const char *kinds)
{
	char word[64];
	for (const char *p = kinds;; p++) {
		size_t n = strcspn(p, "|");
		if (!n || n >= sizeof(word))
			return 0;
		memcpy(word, p, n);
		word[n] = 0;
		if (ap_check_kind_parse(word) == AP_KIND_UNKNOWN)
			return 0;
		p += n;
		if (!*p)
			return 1;
	}
}

/* The list at key of o, every entry a string that ok() takes (NULL: any
 * non-empty one). 0 or -1 with the reason in err. */
static int check_list(const json_t *o, const char *key, const char *where,
		      int (*ok)(const char *), const char *what, struct ap_buf *err)
{
	const json_t *a = json_object_get(o, key), *x;
	char buf[80];
	size_t i;
	if (!json_is_array(a))
		return bad(err, where, o, key, "a list of %s, not %s", what, shape(a, buf, sizeof(buf)));
	json_array_foreach(a, i, x)
		if (!json_is_string(x) || !*json_string_value(x) ||
		    (ok && !ok(json_string_value(x))))
			return bad(err, where, o, key, "%s is not %s", shape(x, buf, sizeof(buf)), what);
	return 0;
}

static int status_word_ok(const char *w)
{
	return ap_status_parse(w) != AP_STATUS_UNKNOWN;
}

/* statuses: a mapping of check kinds to lists of statuses. */
static int check_statuses(const json_t *doc, const char *where, struct ap_buf *err)
{
	const json_t *m = json_object_get(doc, "statuses"), *v;
	const char *kind;
	char buf[80];
	if (!json_is_object(m))
		return bad(err, where, doc, "statuses", "a mapping of check kinds to lists of "
			   "statuses, not %s", shape(m, buf, sizeof(buf)));
	json_object_foreach((json_t *)m, kind, v) {
		if (ap_yaml_meta(kind))
			continue;
		if (ap_check_kind_parse(kind) == AP_KIND_UNKNOWN)
			return bad(err, where, m, kind, "not a kind of check (probe, script, numeric, "
				   "official, claim, signature, resolution, plan)");
		if (check_list(m, kind, where, status_word_ok, "a status (PASS, FAIL, ERROR, "
			       "CRASH, TIMEOUT, WARN, NOTRUN, SKIP)", err))
			return -1;
	}
	return 0;
}

static const char *const fact_keys[] = { "env", "device", "devices", "torch", "plugin", NULL };

/* A version prefix: numbers and dots, "2.6". */
static int version_ok(const char *v)
{
	size_t n = strspn(v, "0123456789.");
	return n && !v[n] && v[0] != '.' && v[n - 1] != '.' && !strstr(v, "..");
}

/* One requirement of require_facts: a mapping of fact_keys, at least one,
 * each a name ("devices" a count of 1 or more, "torch" a version). */
static int check_fact(const json_t *m, const char *where, struct ap_buf *err)
{
	const char *key;
	const json_t *v;
	char buf[80];
	int n = 0;
	json_object_foreach((json_t *)m, key, v) {
		size_t k = 0;
		const char *w = json_string_value(v);
		if (ap_yaml_meta(key))
			continue;
		while (fact_keys[k] && strcmp(fact_keys[k], key))
			k++;
		if (!fact_keys[k])
			return bad(err, where, m, key, "not a fact a requirement names (env, device, "
				   "devices, torch, plugin)");
		if (!w || !*w || strlen(w) > 128)
			return bad(err, where, m, key, "a name, not %s", shape(v, buf, sizeof(buf)));
		if (!strcmp(key, "devices") && (strspn(w, "0123456789") != strlen(w) ||
						 atol(w) < 1 || strlen(w) > 6))
			return bad(err, where, m, key, "a count of 1 or more, not '%s'", w);
		if (!strcmp(key, "torch") && !version_ok(w))
			return bad(err, where, m, key, "a version (2.6, 2.6.0), not '%s'", w);
		n++;
	}
	if (!n)
		return bad(err, where, m, "require_facts", "a requirement names at least one fact "
			   "(env, device, devices, torch, plugin)");
	return 0;
}

/* require_facts: a list of requirements (check_fact). */
static int check_facts(const json_t *doc, const char *where, struct ap_buf *err)
{
	const json_t *a = json_object_get(doc, "require_facts"), *x;
	char buf[80];
	size_t i;
	if (!json_is_array(a))
		return bad(err, where, doc, "require_facts", "a list of mappings (env, device, "
			   "devices, torch, plugin), not %s", shape(a, buf, sizeof(buf)));
	json_array_foreach(a, i, x) {
		if (!json_is_object(x))
			return bad(err, where, doc, "require_facts", "%s is not a mapping of facts",
				   shape(x, buf, sizeof(buf)));
		if (check_fact(x, where, err))
			return -1;
	}
	return 0;
}

/* A number a tolerance may be: finite, not negative. */
static int tolerance_ok(const char *w, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(w, &end);
	return *w && !*end && !errno && isfinite(*out) && *out >= 0;
}

/* The mapping m of a list at key: every key of it one of want (NULL-ended),
 * each there, each a non-empty string of at most 512 bytes. */
static int check_entry(const json_t *m, const char *const *want, const char *where,
		       struct ap_buf *err)
{
	const char *key;
	const json_t *v;
	char buf[80];
	json_object_foreach((json_t *)m, key, v) {
		size_t k = 0;
		if (ap_yaml_meta(key))
			continue;
		while (want[k] && strcmp(want[k], key))
			k++;
		if (!want[k]) {
			bad(err, where, m, key, "not a key of this entry (known: ");
			for (k = 0; want[k]; k++)
				ap_buf_addf(err, "%s%s", k ? ", " : "", want[k]);
			return ap_buf_adds(err, ")"), -1;
		}
		if (!json_is_string(v) || !*json_string_value(v) || strlen(json_string_value(v)) > 512)
			return bad(err, where, m, key, "a word, not %s", shape(v, buf, sizeof(buf)));
	}
	for (size_t k = 0; want[k]; k++)
		if (!json_object_get(m, want[k]))
			return bad(err, where, m, want[k], "missing from an entry that has %s",
				   want[0]);
	return 0;
}

static const char *const tolerance_keys[] = { "op", "dtype", "device", "rtol", "atol", NULL };
static const char *const limit_keys[] = { "backend", "op", "raises", NULL };

/* One accept_tolerances entry: its words and numbers as a tolerances file
 * would take them. */
static int check_tolerance(const json_t *m, const char *where, struct ap_buf *err)
{
	double x;
	enum ap_dtype dt;
	const char *dtype = json_string_value(json_object_get(m, "dtype"));
	if (check_entry(m, tolerance_keys, where, err))
		return -1;
	if (strcmp(dtype, "*") && ap_dtype_parse(dtype, &dt))
		return bad(err, where, m, "dtype", "a dtype (float32, bfloat16, ...) or *, not '%s'",
			   dtype);
	for (int k = 3; k < 5; k++)
		if (!tolerance_ok(json_string_value(json_object_get(m, tolerance_keys[k])), &x))
			return bad(err, where, m, tolerance_keys[k], "a number of 0 or more, not '%s'",
				   json_string_value(json_object_get(m, tolerance_keys[k])));
	return 0;
}

/* One accept_limits entry: raises is TYPE: TEXT. */
static int check_limit(const json_t *m, const char *where, struct ap_buf *err)
{
	if (check_entry(m, limit_keys, where, err))
		return -1;
	const char *raises = json_string_value(json_object_get(m, "raises"));
	const char *colon = strchr(raises, ':');
	if (!colon || colon == raises || !colon[1 + strspn(colon + 1, " ")])
		return bad(err, where, m, "raises", "TYPE: TEXT (the exception type the device "
			   "raises and text of its message), not '%s'", raises);
	return 0;
}

/* A list of mappings at key, each checked by one. */
static int check_mappings(const json_t *doc, const char *key, const char *where,
			  int (*one)(const json_t *, const char *, struct ap_buf *),
			  struct ap_buf *err)
{
	const json_t *a = json_object_get(doc, key), *x;
	char buf[80];
	size_t i;
	if (!json_is_array(a))
		return bad(err, where, doc, key, "a list of mappings, not %s", shape(a, buf, sizeof(buf)));
	json_array_foreach(a, i, x) {
		if (!json_is_object(x))
			return bad(err, where, doc, key, "%s is not a mapping", shape(x, buf, sizeof(buf)));
		if (one(x, where, err))
			return -1;
	}
	return 0;
}

static int check_key(const json_t *doc, const struct key *k, const char *where,
		     struct ap_buf *err)
{
	const json_t *v = json_object_get(doc, k->key);
	const char *w = json_string_value(v);
	char buf[80];
	switch (k->value) {
	case V_NAME:
		return w && *w ? 0 : bad(err, where, doc, k->key, "a name, not %s",
					 w ? "''" : shape(v, buf, sizeof(buf)));
	case V_NAMES:
		return check_list(doc, k->key, where, NULL, "a name", err);
	case V_FLAG:
		if (w && (!strcmp(w, "yes") || !strcmp(w, "no") || !strcmp(w, "true") ||
			  !strcmp(w, "false")))
			return 0;
		return bad(err, where, doc, k->key, "\"yes\" or \"no\", not %s",
			   shape(v, buf, sizeof(buf)));
	case V_STATUSES:
		return check_statuses(doc, where, err);
	case V_FACTS:
		return check_facts(doc, where, err);
	case V_TOLERANCES:
		return check_mappings(doc, k->key, where, check_tolerance, err);
	case V_LIMITS:
		return check_mappings(doc, k->key, where, check_limit, err);
	default:
		return check_list(doc, k->key, where, kind_words_ok,
				  "kinds of check (probe, \"probe|numeric\")", err);
	}
}

/* Every key of doc known and of its shape, statuses there. */
static int policy_check(const json_t *doc, const char *where, struct ap_buf *err)
{
	const char *key;
	const json_t *v;
	if (!json_is_object(doc) || !json_is_object(json_object_get(doc, "statuses"))) {
		ap_buf_addf(err, "%s:%d: a policy maps 'statuses' (kind: [STATUS...])", where,
			    ap_yaml_line(doc));
		return -1;
	}
	json_object_foreach((json_t *)doc, key, v) {
		size_t i = 0;
		while (i < NKEYS && strcmp(keys[i].key, key))
			i++;
		if (ap_yaml_meta(key))
			continue;
		if (i == NKEYS) {
			bad(err, where, doc, key, "not a key of a policy (known: ");
			for (size_t k = 0; k < NKEYS; k++)
				ap_buf_addf(err, "%s%s", k ? ", " : "", keys[k].key);
			return ap_buf_adds(err, ")"), -1;
		}
		if (check_key(doc, &keys[i], where, err))
			return -1;
	}
	return 0;
}

/* The strings of the list a (none when it is not one). 0 or -ENOMEM. */
static int strings(const json_t *a, const char ***v, size_t *n)
{
	size_t i;
	json_t *x;
	*n = json_is_array(a) ? json_array_size(a) : 0;
	if (!(*v = calloc(*n ? *n : 1, sizeof(**v))))
		return -ENOMEM;
	json_array_foreach(a, i, x)
		(*v)[i] = json_string_value(x);
	return 0;
}

/* A flag: "yes" or "true". */
static int yes(const json_t *doc, const char *key)
{
	const char *v = json_string_value(json_object_get(doc, key));
	return v && (!strcmp(v, "yes") || !strcmp(v, "true"));
}

static int read_kinds(const json_t *statuses, struct ap_policy *p)
{
	const char *kind;
	json_t *list;
	size_t i = 0;
	if (!(p->kinds = calloc(json_object_size(statuses) + 1, sizeof(*p->kinds))))
		return -ENOMEM;
	json_object_foreach((json_t *)statuses, kind, list) {
		if (ap_yaml_meta(kind))
			continue;
		struct ap_policy_kind *k = &p->kinds[i++];
		p->nkinds = i;
		k->kind = kind;
		if (strings(list, &k->statuses, &k->nstatuses))
			return -ENOMEM;
	}
	return 0;
}

/* require_facts (checked) into p->require_facts. 0 or -ENOMEM. */
static int read_facts(const json_t *a, struct ap_policy *p)
{
	size_t i;
	json_t *x;
	if (!(p->require_facts = calloc(json_array_size(a) + 1, sizeof(*p->require_facts))))
		return -ENOMEM;
	json_array_foreach(a, i, x) {
		struct ap_policy_fact *f = &p->require_facts[p->nrequire_facts++];
		const char *devices = json_string_value(json_object_get(x, "devices"));
		f->env = json_string_value(json_object_get(x, "env"));
		f->device = json_string_value(json_object_get(x, "device"));
		f->torch = json_string_value(json_object_get(x, "torch"));
		f->plugin = json_string_value(json_object_get(x, "plugin"));
		f->devices = devices ? atol(devices) : 0;
		f->line = ap_yaml_line(x);
	}
	return 0;
}

/* "FILE:LINE" of a policy entry, for what it makes. */
static char *entry_where(const char *where, const json_t *m)
{
	struct ap_buf b = { 0 };
	if (ap_buf_addf(&b, "%s:%d", where, ap_yaml_line(m))) {
		ap_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* accept_tolerances (checked) as overrides. 0 or -ENOMEM. */
static int read_tolerances(const json_t *a, const char *where, struct ap_tolerances *t)
{
	size_t i;
	json_t *x;
	if (!json_array_size(a))
		return 0;
	if (!(t->v = calloc(json_array_size(a), sizeof(*t->v))))
		return -ENOMEM;
	json_array_foreach(a, i, x) {
		struct ap_tol_override *o = &t->v[t->n++];
		const char *dtype = json_string_value(json_object_get(x, "dtype"));
		o->op = strdup(json_string_value(json_object_get(x, "op")));
		o->device = strdup(json_string_value(json_object_get(x, "device")));
		o->any_dtype = !strcmp(dtype, "*");
		if (!o->any_dtype)
			ap_dtype_parse(dtype, &o->dtype);
		o->rtol = strtod(json_string_value(json_object_get(x, "rtol")), NULL);
		o->atol = strtod(json_string_value(json_object_get(x, "atol")), NULL);
		o->equal_nan = 1;
		o->where = entry_where(where, x);
		if (!o->op || !o->device || !o->where)
			return -ENOMEM;
	}
	return 0;
}

/* accept_limits (checked) as limits. 0 or -ENOMEM. */
static int read_limits(const json_t *a, const char *where, struct ap_limits *l)
{
	size_t i;
	json_t *x;
	if (!json_array_size(a))
		return 0;
	if (!(l->v = calloc(json_array_size(a), sizeof(*l->v))))
		return -ENOMEM;
	json_array_foreach(a, i, x) {
		struct ap_limit *o = &l->v[l->n++];
		const char *raises = json_string_value(json_object_get(x, "raises"));
		const char *colon = strchr(raises, ':');
		o->where = entry_where(where, x);
		o->name = strdup(o->where ? o->where : "");
		o->backend = strdup(json_string_value(json_object_get(x, "backend")));
		o->op = strdup(json_string_value(json_object_get(x, "op")));
		o->exception = strndup(raises, (size_t)(colon - raises));
		o->message = strdup(colon + 1 + strspn(colon + 1, " "));
		o->what = strdup("accepted by the policy");
		o->reason = strdup("accepted by the policy");
		if (!o->where || !o->name || !o->backend || !o->op || !o->exception || !o->message ||
		    !o->what || !o->reason)
			return -ENOMEM;
	}
	return 0;
}

/* The policy of the tree doc (taken), where names it in messages. */
static struct ap_policy *policy_read(json_t *doc, const char *where, struct ap_buf *err)
{
	struct ap_policy *p;
	if (!doc)
		return NULL;
	if (policy_check(doc, where, err)) {
		json_decref(doc);
		return NULL;
	}
	if (!(p = calloc(1, sizeof(*p)))) {
		json_decref(doc);
		ap_buf_addf(err, "%s: out of memory", where);
		return NULL;
	}
	p->doc = doc;
	p->name = json_string_value(json_object_get(doc, "policy"));
	p->require_official = yes(doc, "require_official");
	p->traces_agree = yes(doc, "traces_agree");
	p->require_signature = yes(doc, "require_signature");
	if (read_tolerances(json_object_get(doc, "accept_tolerances"), where, &p->accept_tolerances) ||
	    read_limits(json_object_get(doc, "accept_limits"), where, &p->accept_limits) ||
	    read_facts(json_object_get(doc, "require_facts"), p) ||
	    read_kinds(json_object_get(doc, "statuses"), p) ||
	    strings(json_object_get(doc, "require_kinds"), &p->require_kinds, &p->nrequire_kinds) ||
	    strings(json_object_get(doc, "require_envs"), &p->require_envs, &p->nrequire_envs)) {
		ap_policy_free(p);
		ap_buf_addf(err, "%s: out of memory", where);
		return NULL;
	}
	return p;
}

struct ap_policy *ap_policy_load(const char *path, struct ap_buf *err)
{
	if (!path)
		return policy_read(ap_yaml_parse(ap_default_policy, ap_default_policy_len,
						 "(built-in) policies/default.yaml", err),
				   "(built-in)", err);
	return policy_read(ap_yaml_load(path, err), path, err);
}

struct ap_policy *ap_policy_parse(const char *text, size_t len, const char *name,
				  struct ap_buf *err)
{
	return policy_read(ap_yaml_parse(text, len, name, err), name, err);
}

int ap_policy_allows(const struct ap_policy *p, const char *kind, const char *status)
{
	for (size_t k = 0; k < p->nkinds; k++) {
		if (strcmp(p->kinds[k].kind, kind))
			continue;
		for (size_t i = 0; i < p->kinds[k].nstatuses; i++)
			if (!strcmp(p->kinds[k].statuses[i], status))
				return 1;
		return 0;
	}
	return 0;
}

void ap_policy_free(struct ap_policy *p)
{
	if (!p)
		return;
	for (size_t k = 0; p->kinds && k < p->nkinds; k++)
		free(p->kinds[k].statuses);
	free(p->kinds);
	free(p->require_kinds);
	free(p->require_envs);
	free(p->require_facts);
	ap_tolerances_free(&p->accept_tolerances);
	ap_limits_free(&p->accept_limits);
	json_decref(p->doc);
	free(p);
}
