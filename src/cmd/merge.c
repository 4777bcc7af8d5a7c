/* apiparity merge - join the shards of a sweep into one matrix, after
 * checking that each is whole, untouched, and that together they are the
 * catalog once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/text.h"
#include "cmd/cmd.h"
#include "evidence/manifest.h"
#include "evidence/matrix.h"
#include "evidence/sweepfile.h"
#include "review/sweepview.h"

#define MAX_SHARDS 4096

struct shard {
	char *dir;
	struct ap_sweep_meta meta;
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

static void add_shard(struct merge *m, const char *dir)
{
	struct ap_buf why = { 0 };
	struct ap_sweep_meta meta;
	if (ap_sweep_meta_read(dir, &meta, &why)) {
		problem(m, "%s%s", ap_buf_str(&why), "");
		ap_buf_free(&why);
		return;
	}
	if (!meta.sharded)
		problem(m, "%s is a whole sweep, not a shard%s", dir, "");
	else if (m->n == MAX_SHARDS)
		problem(m, "more than 4096 shards given%s%s", "", "");
	else {
		struct shard *s = &m->v[m->n++];
		s->dir = strdup(dir);
		s->meta = meta;
		s->index = (unsigned)meta.index;
		s->count = (unsigned)meta.count;
		meta = (struct ap_sweep_meta){ 0 };
	}
	ap_sweep_meta_free(&meta);
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

/* Whether two values of sweep.json are the same (missing ones too). */
static int same_text(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* Each shard: finished, untouched since (its manifest), of the same sweep as
 * the first. */
static void check_shard(struct merge *m, const struct shard *s, const struct shard *first)
{
	struct ap_manifest_issue is[4];
	char what[64];
	snprintf(what, sizeof(what), "shard %u/%u", s->index, s->count);
	if (s->meta.state == AP_SWEEP_FAILED)
		problem(m, "%s (%s) failed; see its output, then run it again with --resume", what,
			s->dir);
	else if (s->meta.state != AP_SWEEP_COMPLETE)
		problem(m, "%s (%s) did not finish (still running, or killed): run it again "
			"with --resume", what, s->dir);
	int k = ap_manifest_verify(s->dir, is, 4);
	if (k < 0)
		problem(m, "%s: %s: no readable MANIFEST.sha256", what, s->dir);
	for (int i = 0; i < k && i < 4; i++)
		problem(m, "%s: checksums do not match: %s", what, is[i].path);
	if (!same_text(s->meta.catalog, first->meta.catalog))
		problem(m, "%s: another %s than the first shard's", what, "catalog");
	if (!same_text(s->meta.depth, first->meta.depth))
		problem(m, "%s: another %s than the first shard's", what, "depth");
	int envs_same = s->meta.nenvs == first->meta.nenvs;
	for (size_t i = 0; envs_same && i < s->meta.nenvs; i++)
		envs_same = same_text(s->meta.envs[i].name, first->meta.envs[i].name);
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

static int triple_cmp(const void *a, const void *b)
{
	const struct ap_matrix_line *x = *(const struct ap_matrix_line *const *)a;
	const struct ap_matrix_line *y = *(const struct ap_matrix_line *const *)b;
	int c = strcmp(x->env, y->env);
	c = c ? c : strcmp(x->module, y->module);
	c = c ? c : strcmp(x->api, y->api);
	return c ? c : (x > y) - (x < y);
}

/* Sets twice[i] for each line of all that an earlier line already gives
 * (the same env, module and api). 0 or -ENOMEM. */
static int find_twice(const struct ap_matrix *all, char *twice)
{
	const struct ap_matrix_line **v = malloc((all->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < all->n; i++)
		v[i] = &all->v[i];
	qsort(v, all->n, sizeof(*v), triple_cmp);
	for (size_t i = 1; i < all->n; i++)
		if (!strcmp(v[i]->env, v[i - 1]->env) && !strcmp(v[i]->module, v[i - 1]->module) &&
		    !strcmp(v[i]->api, v[i - 1]->api))
			twice[v[i] - all->v] = 1;
	free(v);
	return 0;
}

/* What reading one shard's matrix gave: its lines end at end in all. */
struct shard_read {
	size_t end;
	int failed;
	struct ap_buf err;
};

/* The problems of the shards read, in the order they are given: a matrix
 * that does not read, a line that another shard (or the same) gave before. */
static int read_problems(struct merge *m, const struct ap_matrix *all, struct shard_read *sr)
{
	char *twice = calloc(all->n + 1, 1);
	int r = twice ? find_twice(all, twice) : -ENOMEM;
	for (size_t k = 0, from = 0; !r && k < m->n; from = sr[k++].end) {
		if (sr[k].failed)
			problem(m, "%s%s", ap_buf_str(&sr[k].err), "");
		for (size_t i = from; i < sr[k].end; i++) {
			const struct ap_matrix_line *l = &all->v[i];
			struct ap_buf id = { 0 };
			if (!twice[i])
				continue;
			ap_buf_addf(&id, "%s %s %s", l->env, l->module, l->api);
			problem(m, "overlap: %s is in two shards (%s)", ap_buf_str(&id), m->v[k].dir);
			ap_buf_free(&id);
		}
	}
	free(twice);
	return r;
}

static int read_all_lines(struct merge *m, struct ap_matrix *all)
{
	struct shard_read *sr = calloc(m->n, sizeof(*sr));
	int r = sr ? 0 : -ENOMEM;
	for (size_t k = 0; !r && k < m->n; k++) {
		struct ap_matrix lines = { 0 };
		sr[k].failed = ap_matrix_read(m->v[k].dir, &lines, &sr[k].err) != 0;
		for (size_t i = 0; !r && i < lines.n; i++)
			r = ap_matrix_add(all, &lines.v[i]);
		ap_matrix_free(&lines);
		sr[k].end = all->n;
	}
	r = r ? r : read_problems(m, all, sr);
	for (size_t k = 0; sr && k < m->n; k++)
		ap_buf_free(&sr[k].err);
	free(sr);
	return r;
}

static int merge_write(struct merge *m, const char *out, struct ap_matrix *all)
{
	struct ap_buf err = { 0 };
	struct ap_sweep_meta *meta = &m->v[0].meta;
	const char *names[4096];
	size_t n = meta->nenvs < 4096 ? meta->nenvs : 4096;
	for (size_t i = 0; i < n; i++)
		names[i] = meta->envs[i].name ? meta->envs[i].name : "-";
	ap_matrix_sort(all, names, n);
	meta->sharded = 0;
	meta->state = AP_SWEEP_COMPLETE;
	int r = ap_rm_tree(out);
	r = r ? r : ap_mkdirs(out);
	if (r)
		ap_buf_addf(&err, "%s: %s", out, strerror(-r));
	r = r ? r : ap_sweepview_write(out, meta, all, &err);
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
		ap_sweep_meta_free(&m->v[k].meta);
	}
	ap_buf_free(&m->problems);
	free(m);
	ap_matrix_free(&all);
	return rc;
}
