/* apiparity merge - join the shards of a sweep into one matrix, after
 * checking that each is whole, untouched, and that together they are the
 * catalog once. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/jsonutil.h"
#include "base/text.h"
#include "cmd/cmd.h"
#include "evidence/manifest.h"
#include "evidence/matrix.h"
#include "review/sweepview.h"

#define MAX_SHARDS 4096

struct shard {
	char *dir;
	json_t *meta;
	unsigned index, count;
};

struct merge {
	struct shard v[MAX_SHARDS];
	size_t n;
	struct ap_buf problems;   /* one line each */
};

static void problem(struct merge *m, const char *fmt, const char *a, const char *b)
{
	struct ap_buf line = { 0 };
	ap_buf_addf(&line, fmt, a, b);
	ap_text_line(&m->problems, ap_buf_str(&line));
	ap_buf_adds(&m->problems, "\n");
	ap_buf_free(&line);
}

static int is_dir(const char *p)
{
	struct stat st;
	return !lstat(p, &st) && S_ISDIR(st.st_mode);
}

static json_t *read_meta(const char *dir, struct ap_buf *why)
{
	struct ap_buf path = { 0 }, text = { 0 };
	ap_buf_addf(&path, "%s/%s", dir, AP_SWEEP_META_NAME);
	int r = ap_read_file_limited(ap_buf_str(&path), 1u << 20, &text);
	json_t *m = r ? NULL : json_loadb(ap_buf_str(&text), text.len, 0, NULL);
	if (r)
		ap_buf_addf(why, "%s: %s", ap_buf_str(&path), ap_strerror(r));
	else if (!m || strcmp(ap_json_text(m, "schema"), AP_SWEEP_SCHEMA))
		ap_buf_addf(why, "%s: not a sweep's %s", ap_buf_str(&path), AP_SWEEP_META_NAME);
	if (why->len) {
		json_decref(m);
		m = NULL;
	}
	ap_buf_free(&path);
	ap_buf_free(&text);
	return m;
}

static void add_shard(struct merge *m, const char *dir)
{
	struct ap_buf why = { 0 };
	json_t *meta = read_meta(dir, &why);
	const json_t *sh = json_object_get(meta, "shard");
	if (!meta)
		problem(m, "%s%s", ap_buf_str(&why), "");
	else if (!json_is_object(sh))
		problem(m, "%s is a whole sweep, not a shard%s", dir, "");
	else if (m->n == MAX_SHARDS)
		problem(m, "more than 4096 shards given%s%s", "", "");
	else {
		struct shard *s = &m->v[m->n++];
		s->dir = strdup(dir);
		s->meta = json_incref(meta);
		s->index = (unsigned)json_integer_value(json_object_get(sh, "index"));
		s->count = (unsigned)json_integer_value(json_object_get(sh, "count"));
	}
	json_decref(meta);
	ap_buf_free(&why);
}

/* arg is a shard's directory, or one holding shard-I-of-N directories. */
static void add_arg(struct merge *m, const char *arg)
{
	struct ap_buf meta = { 0 };
	struct stat st;
	ap_buf_addf(&meta, "%s/%s", arg, AP_SWEEP_META_NAME);
	int direct = !lstat(ap_buf_str(&meta), &st);
	ap_buf_free(&meta);
	char **names;
	size_t n, shards = 0;
	if (direct) {
		add_shard(m, arg);
		return;
	}
	int r = ap_dir_list(arg, 0, &names, &n);
	if (r) {
		problem(m, "%s: %s", arg, strerror(-r));
		return;
	}
	for (size_t i = 0; i < n; i++)
		shards += !strncmp(names[i], "shard-", 6);
	if (!shards)
		problem(m, "%s holds no sweep shard (shard-I-of-N/%s)", arg, AP_SWEEP_META_NAME);
	for (size_t i = 0; i < n; i++) {
		struct ap_buf p = { 0 };
		if (strncmp(names[i], "shard-", 6))
			continue;
		ap_buf_addf(&p, "%s/%s", arg, names[i]);
		if (is_dir(ap_buf_str(&p)))
			add_shard(m, ap_buf_str(&p));
		ap_buf_free(&p);
	}
	ap_dir_free(names, n);
}

/* Each shard: finished, untouched since (its manifest), of the same sweep as
 * the first. */
static void check_shard(struct merge *m, const struct shard *s, const struct shard *first)
{
	struct ap_manifest_issue is[4];
	char what[64];
	snprintf(what, sizeof(what), "shard %u/%u", s->index, s->count);
	const char *state = ap_json_text(s->meta, "state");
	if (!strcmp(state, "failed"))
		problem(m, "%s (%s) failed; see its output, then run it again with --resume", what,
			s->dir);
	else if (strcmp(state, "complete"))
		problem(m, "%s (%s) did not finish (still running, or killed): run it again "
			"with --resume", what, s->dir);
	int k = ap_manifest_verify(s->dir, is, 4);
	if (k < 0)
		problem(m, "%s: %s: no readable MANIFEST.sha256", what, s->dir);
	for (int i = 0; i < k && i < 4; i++)
		problem(m, "%s: checksums do not match: %s", what, is[i].path);
	static const char *const same[] = { "catalog", "depth" };
	for (size_t i = 0; i < 2; i++)
		if (strcmp(ap_json_text(s->meta, same[i]), ap_json_text(first->meta, same[i])))
			problem(m, "%s: another %s than the first shard's", what, same[i]);
	json_t *ea = json_object_get(s->meta, "envs"), *eb = json_object_get(first->meta, "envs");
	int envs_same = json_array_size(ea) == json_array_size(eb);
	for (size_t i = 0; envs_same && i < json_array_size(ea); i++)
		envs_same = !strcmp(ap_json_text(json_array_get(ea, i), "name"),
				    ap_json_text(json_array_get(eb, i), "name"));
	if (!envs_same)
		problem(m, "%s: other environments than the first shard's%s", what, "");
	char n[16];
	snprintf(n, sizeof(n), "%u", first->count);
	if (s->count != first->count)
		problem(m, "%s: the first shard says there are %s shards", what, n);
}

/* Every index 0..N-1 once. */
static void check_cover(struct merge *m)
{
	unsigned count = m->v[0].count;
	for (unsigned i = 0; i < count; i++) {
		size_t seen = 0, first = 0;
		for (size_t k = 0; k < m->n; k++)
			if (m->v[k].index == i && m->v[k].count == count && !seen++)
				first = k;
		char what[64];
		snprintf(what, sizeof(what), "shard %u/%u", i, count);
		if (!seen)
			problem(m, "%s is missing%s", what, "");
		for (size_t k = first + 1; seen > 1 && k < m->n; k++)
			if (m->v[k].index == i)
				problem(m, "%s is given twice (overlap): %s", what, m->v[k].dir);
	}
}

static int read_all_lines(struct merge *m, struct ap_matrix *all)
{
	json_t *seen = json_object();
	int r = 0;
	for (size_t k = 0; !r && k < m->n; k++) {
		struct ap_buf err = { 0 };
		struct ap_matrix lines = { 0 };
		if (ap_matrix_read(m->v[k].dir, &lines, &err)) {
			problem(m, "%s%s", ap_buf_str(&err), "");
			ap_buf_free(&err);
			continue;
		}
		for (size_t i = 0; i < lines.n; i++) {
			const struct ap_matrix_line *l = &lines.v[i];
			struct ap_buf id = { 0 };
			ap_buf_addf(&id, "%s %s %s", l->env, l->module, l->api);
			if (json_object_get(seen, ap_buf_str(&id)))
				problem(m, "overlap: %s is in two shards (%s)", ap_buf_str(&id),
					m->v[k].dir);
			json_object_set_new(seen, ap_buf_str(&id), json_true());
			ap_buf_free(&id);
		}
		for (size_t i = 0; !r && i < lines.n; i++)
			r = ap_matrix_add(all, &lines.v[i]);
		ap_matrix_free(&lines);
	}
	json_decref(seen);
	return r;
}

static int merge_write(struct merge *m, const char *out, struct ap_matrix *all)
{
	struct ap_buf err = { 0 };
	const json_t *envs = json_object_get(m->v[0].meta, "envs");
	const char *names[4096];
	size_t n = json_array_size(envs) < 4096 ? json_array_size(envs) : 4096;
	for (size_t i = 0; i < n; i++)
		names[i] = ap_json_text(json_array_get(envs, i), "name");
	ap_matrix_sort(all, names, n);
	json_t *meta = json_deep_copy(m->v[0].meta);
	json_object_set_new(meta, "shard", json_null());
	json_object_set_new(meta, "state", json_string("complete"));
	int r = ap_rm_tree(out);
	r = r ? r : ap_mkdirs(out);
	if (r)
		ap_buf_addf(&err, "%s: %s", out, strerror(-r));
	r = r ? r : ap_sweepview_write(out, meta, all, &err);
	json_decref(meta);
	if (r)
		r = ap_fail(r, "merge --out", &err);
	else
		printf("merged %zu shards, %zu lines: %s/%s\n", m->n, all->n, out,
		       AP_MATRIX_NAME);
	ap_buf_free(&err);
	return r;
}

struct merge_opts {
	const char *out;
};

static const struct ap_opt merge_opts[] = {
	{ "out", "DIR", "where the merged sweep goes", offsetof(struct merge_opts, out), NULL,
	  AP_OPT_REQUIRED },
};

static const struct ap_optset merge_set = { "merge", "SHARDDIR...",
	"join sweep shards, checksums verified", AP_OPTS(merge_opts) };
const struct ap_optset *const ap_merge_optsets[] = { &merge_set, NULL };

int ap_cmd_merge(int argc, char **argv)
{
	struct merge_opts o = { 0 };
	int r = ap_cli_parse(&merge_set, argc, argv, &o);
	if (r)
		return r < 0 ? AP_EXIT_OK : r;
	const char *out = o.out;
	if (!out || !*out || optind == argc)
		return ap_usage("merge: want merge SHARDDIR... --out DIR");
	struct merge *m = calloc(1, sizeof(*m));
	struct ap_matrix all = { 0 };
	if (!m)
		return ap_fail(-ENOMEM, "merge", NULL);
	for (int i = optind; i < argc; i++)
		add_arg(m, argv[i]);
	for (size_t k = 0; k < m->n; k++)
		check_shard(m, &m->v[k], &m->v[0]);
	if (m->n)
		check_cover(m);
	int rc = 0;
	if (!m->problems.len)
		rc = read_all_lines(m, &all);
	if (rc)
		rc = ap_fail(rc, "merge", NULL);
	else if (m->problems.len) {
		fputs(ap_buf_str(&m->problems), stdout);
		printf("not merged: the shards do not make one whole sweep\n");
		rc = AP_EXIT_FAILED;
	} else
		rc = merge_write(m, out, &all);
	for (size_t k = 0; k < m->n; k++) {
		free(m->v[k].dir);
		json_decref(m->v[k].meta);
	}
	ap_buf_free(&m->problems);
	free(m);
	ap_matrix_free(&all);
	return rc;
}
