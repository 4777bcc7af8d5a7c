#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "evidence/bundle.h"
#include "env/envs.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "evidence/submission.h"

/* The position check was given the environment in (env.order); a bundle
 * without one comes after those with one. */
static json_int_t env_order(const struct ap_sub_env *e)
{
	const json_t *o = json_object_get(json_object_get(e->bundle, "env"), "order");
	return json_is_integer(o) && json_integer_value(o) >= 0 ? json_integer_value(o)
								 : LLONG_MAX;
}

static int env_cmp(const void *a, const void *b)
{
	const struct ap_sub_env *x = a, *y = b;
	json_int_t ox = env_order(x), oy = env_order(y);
	return ox != oy ? (ox < oy ? -1 : 1) : strcmp(x->name, y->name);
}

/* Reads and parses path as a bundle; NULL with why in err. */
static json_t *bundle_read(const char *path, struct ap_buf *err)
{
	struct ap_buf text = { 0 };
	json_error_t je;
	json_t *b = NULL;
	int r = ap_read_all(path, &text);
	if (r)
		ap_buf_addf(err, "%s: %s", path, ap_strerror(r));
	else if (!(b = json_loadb(text.data ? text.data : "", text.len, JSON_REJECT_DUPLICATES, &je)))
		ap_buf_addf(err, "%s: %s (line %d)", path, je.text, je.line);
	ap_buf_free(&text);
	const char *schema = json_string_value(json_object_get(b, "schema"));
	if (b && (!schema || strcmp(schema, AP_BUNDLE_SCHEMA))) {
		ap_buf_addf(err, "%s: not an apiparity bundle (schema " AP_BUNDLE_SCHEMA
			    " expected)", path);
		json_decref(b);
		b = NULL;
	}
	return b;
}

/* Adds DIR/name when it holds a bundle.json; one that cannot be read is
 * -AP_EPROTO with err set, or, when s->broken exists, listed there. */
static int sub_add(struct ap_submission *s, const char *name, struct ap_buf *err)
{
	struct ap_buf dir = { 0 }, path = { 0 }, why = { 0 };
	struct stat st;
	int r = 0;
	ap_buf_addf(&dir, "%s/%s", s->dir, name);
	ap_buf_addf(&path, "%s/bundle.json", ap_buf_str(&dir));
	if (lstat(ap_buf_str(&path), &st) || S_ISLNK(st.st_mode))
		goto out; /* not a bundle directory; a link is not followed */
	json_t *b = bundle_read(ap_buf_str(&path), &why);
	if (!b && s->broken) {
		json_object_set_new(s->broken, name, json_string(ap_buf_str(&why)));
		goto out;
	}
	if (!b) {
		ap_buf_adds(err, ap_buf_str(&why));
		r = -AP_EPROTO;
		goto out;
	}
	struct ap_sub_env *v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v) {
		json_decref(b);
		r = -ENOMEM;
		goto out;
	}
	s->v = v;
	s->v[s->n++] = (struct ap_sub_env){ strdup(name), strdup(ap_buf_str(&dir)), b };
out:
	ap_buf_free(&dir);
	ap_buf_free(&path);
	ap_buf_free(&why);
	return r;
}

static int sub_load(struct ap_submission *s, const char *dir, int all, struct ap_buf *err)
{
	char **names;
	size_t n;
	memset(s, 0, sizeof(*s));
	int r = ap_dir_list(dir, AP_DIR_NODOT, &names, &n);
	if (r) {
		ap_buf_addf(err, "%s: %s", dir, strerror(-r));
		return r;
	}
	s->dir = strdup(dir);
	if (all && !(s->broken = json_object()))
		r = -ENOMEM;
	for (size_t i = 0; !r && i < n; i++)
		if (ap_env_name_ok(names[i]))
			r = sub_add(s, names[i], err);
	ap_dir_free(names, n);
	if (!r && !s->n && !json_object_size(s->broken)) {
		ap_buf_addf(err, "%s: no bundles (DIR/<env>/bundle.json)", dir);
		r = -ENOENT;
	}
	if (r)
		ap_submission_free(s);
	else if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), env_cmp);
	return r;
}

int ap_submission_load(struct ap_submission *s, const char *dir, struct ap_buf *err)
{
	return sub_load(s, dir, 0, err);
}

int ap_submission_load_all(struct ap_submission *s, const char *dir, struct ap_buf *err)
{
	return sub_load(s, dir, 1, err);
}

const struct ap_sub_env *ap_submission_find(const struct ap_submission *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

void ap_submission_free(struct ap_submission *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].dir);
		json_decref(s->v[i].bundle);
	}
	free(s->v);
	free(s->dir);
	json_decref(s->broken);
	memset(s, 0, sizeof(*s));
}
