#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "evidence/bundle.h"
#include "env/envs.h"
#include "base/err.h"
#include "evidence/submission.h"

static int ap_env_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ap_sub_env *)a)->name, ((const struct ap_sub_env *)b)->name);
}

static int ap_sub_add(struct ap_submission *s, const char *name, struct ap_buf *err)
{
	struct ap_buf dir = { 0 }, path = { 0 };
	json_error_t je;
	struct stat st;
	int r = 0;
	ap_buf_addf(&dir, "%s/%s", s->dir, name);
	ap_buf_addf(&path, "%s/bundle.json", ap_buf_str(&dir));
	if (lstat(ap_buf_str(&path), &st) || !S_ISREG(st.st_mode))
		goto out; /* not a bundle directory */
	json_t *b = json_load_file(ap_buf_str(&path), JSON_REJECT_DUPLICATES, &je);
	const char *schema = json_string_value(json_object_get(b, "schema"));
	if (!b || !schema || strcmp(schema, AP_BUNDLE_SCHEMA)) {
		ap_buf_addf(err, "%s: %s", ap_buf_str(&path), b ? "not an apiparity bundle "
			    "(schema " AP_BUNDLE_SCHEMA " expected)" : je.text);
		json_decref(b);
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
	return r;
}

int ap_submission_load(struct ap_submission *s, const char *dir, struct ap_buf *err)
{
	DIR *d;
	struct dirent *e;
	int r = 0;
	memset(s, 0, sizeof(*s));
	if (!(d = opendir(dir))) {
		int r = -errno;
		ap_buf_addf(err, "%s: %s", dir, strerror(-r));
		return r;
	}
	s->dir = strdup(dir);
	while (!r && (e = readdir(d)))
		if (e->d_name[0] != '.' && ap_env_name_ok(e->d_name))
			r = ap_sub_add(s, e->d_name, err);
	closedir(d);
	if (!r && !s->n) {
		ap_buf_addf(err, "%s: no bundles (DIR/<env>/bundle.json)", dir);
		r = -ENOENT;
	}
	if (r)
		ap_submission_free(s);
	else
		qsort(s->v, s->n, sizeof(*s->v), ap_env_cmp);
	return r;
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
	memset(s, 0, sizeof(*s));
}
