#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/yamldoc.h"
#include "review/policy.h"

/* The strings of the list a (none when it is not a list); an entry that is
 * not a string is other. 0 or -ENOMEM. */
static int strings(const json_t *a, const char *other, const char ***v, size_t *n)
{
	size_t i;
	json_t *x;
	*n = json_is_array(a) ? json_array_size(a) : 0;
	if (!(*v = calloc(*n ? *n : 1, sizeof(**v))))
		return -ENOMEM;
	json_array_foreach(a, i, x)
		(*v)[i] = json_is_string(x) ? json_string_value(x) : other;
	return 0;
}

/* A flag: the string "yes" or "true". */
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
		struct ap_policy_kind *k = &p->kinds[i++];
		p->nkinds = i;
		k->kind = kind;
		if (strings(list, "", &k->statuses, &k->nstatuses))
			return -ENOMEM;
	}
	return 0;
}

/* The policy of the tree doc (taken), where names it in messages. */
static struct ap_policy *policy_read(json_t *doc, const char *where, struct ap_buf *err)
{
	const json_t *statuses = json_object_get(doc, "statuses");
	struct ap_policy *p;
	if (!doc)
		return NULL;
	if (!json_is_object(doc) || !json_is_object(statuses)) {
		ap_buf_addf(err, "%s:%d: a policy maps 'statuses' (kind: [STATUS...])", where,
			    ap_yaml_line(doc));
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
	if (read_kinds(statuses, p) ||
	    strings(json_object_get(doc, "require_kinds"), NULL, &p->require_kinds,
		    &p->nrequire_kinds) ||
	    strings(json_object_get(doc, "require_envs"), NULL, &p->require_envs,
		    &p->nrequire_envs)) {
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
	json_decref(p->doc);
	free(p);
}
