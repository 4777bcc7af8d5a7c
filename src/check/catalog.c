/* catalog.c - the sweep's catalog and its shards (see catalog.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/sha256.h"
#include "base/text.h"
#include "check/catalog.h"

/* The built-in catalog, specs/catalog.txt as built. */
extern const char ap_builtin_catalog[];

/* A dotted Python name: identifiers joined by single dots. */
static int dotted_ok(const char *s)
{
	return ap_dotted_name_ok(s, AP_CATALOG_NAME_MAX);
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ap_catalog_entry *)a)->name,
		      ((const struct ap_catalog_entry *)b)->name);
}

/* Splits line into at most 3 blank-separated words (in place). */
static int words(char *line, char **w)
{
	int n = 0;
	char *save = NULL;
	for (char *p = strtok_r(line, " \t\r", &save); p && n < 3;
	     p = strtok_r(NULL, " \t\r", &save))
		w[n++] = p;
	return n;
}

static int parse_line(struct ap_catalog *c, char *line, int no, const char *file,
		      struct ap_buf *err)
{
	char *w[3];
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	int n = words(line, w);
	if (!n)
		return 0;
	if (n != 2)
		ap_buf_addf(err, "%s:%d: want NAME WALK (walk: module or class)", file, no);
	else if (!dotted_ok(w[0]))
		ap_buf_addf(err, "%s:%d: '%s' is not a dotted Python name", file, no, w[0]);
	else if (strcmp(w[1], "module") && strcmp(w[1], "class"))
		ap_buf_addf(err, "%s:%d: unknown walk '%s' (known: module, class)", file, no, w[1]);
	else if (c->n == AP_CATALOG_MAX)
		ap_buf_addf(err, "%s:%d: more than %d entries", file, no, AP_CATALOG_MAX);
	if (err->len)
		return -AP_ECONFIG;
	struct ap_catalog_entry *e = &c->v[c->n];
	e->name = strdup(w[0]);
	e->walk = strdup(w[1]);
	e->line = no;
	c->n++;
	return e->name && e->walk ? 0 : -ENOMEM;
}

static int check_unique(struct ap_catalog *c, const char *file, struct ap_buf *err)
{
	for (size_t k = 1; k < c->n; k++)
		if (!strcmp(c->v[k - 1].name, c->v[k].name)) {
			int a = c->v[k - 1].line, b = c->v[k].line;
			ap_buf_addf(err, "%s:%d: %s is listed twice (also line %d)", file,
				    a > b ? a : b, c->v[k].name, a > b ? b : a);
			return -AP_ECONFIG;
		}
	if (!c->n) {
		ap_buf_addf(err, "%s: no entries", file);
		return -AP_ECONFIG;
	}
	return 0;
}

static void set_digest(struct ap_catalog *c)
{
	struct ap_buf canon = { 0 };
	for (size_t k = 0; k < c->n; k++)
		ap_buf_addf(&canon, "%s %s\n", c->v[k].name, c->v[k].walk);
	ap_sha256_mem(ap_buf_str(&canon), canon.len, c->digest);
	ap_buf_free(&canon);
}

int ap_catalog_parse(struct ap_catalog *c, const char *text, size_t len, const char *file,
		     struct ap_buf *err)
{
	memset(c, 0, sizeof(*c));
	c->v = calloc(AP_CATALOG_MAX, sizeof(*c->v));
	char *copy = malloc(len + 1);
	int r = c->v && copy ? 0 : -ENOMEM;
	if (copy) {
		memcpy(copy, text, len);
		copy[len] = '\0';
	}
	char *p = copy;
	for (int no = 1; !r && p; no++) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (strlen(p) != (size_t)((nl ? nl : copy + len) - p)) {
			ap_buf_addf(err, "%s:%d: NUL byte", file, no);
			r = -AP_ECONFIG;
		} else
			r = parse_line(c, p, no, file, err);
		p = nl ? nl + 1 : NULL;
	}
	free(copy);
	if (!r) {
		if (c->n) /* an empty catalog has no array: qsort's base must not be NULL */
			qsort(c->v, c->n, sizeof(*c->v), entry_cmp);
		r = check_unique(c, file, err);
	}
	if (r)
		ap_catalog_free(c);
	else
		set_digest(c);
	return r;
}

/* The most a catalog file may hold: the built-in one is a few KiB. */
#define AP_CATALOG_FILE_MAX (1u << 20)

int ap_catalog_load(struct ap_catalog *c, const char *path, struct ap_buf *err)
{
	struct ap_buf text = { 0 };
	if (!path)
		return ap_catalog_parse(c, ap_builtin_catalog, strlen(ap_builtin_catalog),
					"specs/catalog.txt (built in)", err);
	int r = ap_read_file_limited(path, AP_CATALOG_FILE_MAX, &text);
	if (r) {
		memset(c, 0, sizeof(*c));
		ap_buf_addf(err, "%s: %s", path, ap_strerror(r));
		return r == -ENOMEM ? r : -AP_ECONFIG;
	}
	r = ap_catalog_parse(c, ap_buf_str(&text), text.len, path, err);
	ap_buf_free(&text);
	return r;
}

void ap_catalog_free(struct ap_catalog *c)
{
	for (size_t k = 0; c->v && k < c->n; k++) {
		free(c->v[k].name);
		free(c->v[k].walk);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

json_t *ap_catalog_exclude(const struct ap_catalog *c, size_t k)
{
	json_t *out = json_array();
	size_t len = strlen(c->v[k].name);
	/* sorted by name: what lies under entry k follows it */
	for (size_t j = k + 1; out && j < c->n; j++) {
		if (strncmp(c->v[j].name, c->v[k].name, len))
			break;
		if (c->v[j].name[len] == '.')
			json_array_append_new(out, json_string(c->v[j].name));
	}
	return out;
}

int ap_shard_has(struct ap_shard s, size_t k)
{
	return !s.count || k % s.count == s.index;
}

/* A decimal number in [min, max]. */
static int number(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int shard_set(struct ap_shard *s, const char *i, const char *n, const char *from,
		     struct ap_buf *err)
{
	unsigned index, count;
	if (number(n, 1, AP_SHARD_MAX, &count)) {
		ap_buf_addf(err, "%s: the shard count '%s' is not a number from 1 to %d", from,
			    n ? n : "", AP_SHARD_MAX);
		return -EINVAL;
	}
	if (number(i, 0, count - 1, &index)) {
		ap_buf_addf(err, "%s: the shard index '%s' is not a number from 0 to %u", from,
			    i ? i : "", count - 1);
		return -EINVAL;
	}
	s->index = index;
	s->count = count;
	return 0;
}

/* A Slurm array index, far above any array Slurm allows (MaxArraySize). */
#define AP_ARRAY_INDEX_MAX (1u << 30)
/* A shard index as text: the digits of an unsigned and its NUL. */
#define AP_INDEX_TEXT 16

static int shard_slurm(struct ap_shard *s, struct ap_buf *err)
{
	unsigned id, min = 0;
	const char *mins = getenv("SLURM_ARRAY_TASK_MIN");
	if (number(getenv("SLURM_ARRAY_TASK_ID"), 0, AP_ARRAY_INDEX_MAX, &id) ||
	    (mins && number(mins, 0, AP_ARRAY_INDEX_MAX, &min)) || id < min) {
		ap_buf_addf(err, "SLURM_ARRAY_TASK_ID '%s' (SLURM_ARRAY_TASK_MIN '%s') is no array index",
			    getenv("SLURM_ARRAY_TASK_ID"), mins ? mins : "0");
		return -EINVAL;
	}
	char idx[AP_INDEX_TEXT];
	snprintf(idx, sizeof(idx), "%u", id - min);
	return shard_set(s, idx, getenv("SLURM_ARRAY_TASK_COUNT"),
			 "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT", err);
}

int ap_shard_resolve(const char *opt, const char *count_opt, struct ap_shard *s,
		     struct ap_buf *err)
{
	s->index = s->count = 0;
	if (opt) {
		const char *slash = strchr(opt, '/');
		char idx[AP_INDEX_TEXT];
		if (!slash || (size_t)(slash - opt) >= sizeof(idx)) {
			ap_buf_addf(err, "--shard '%s' is not I/N (e.g. 0/4)", opt);
			return -EINVAL;
		}
		memcpy(idx, opt, (size_t)(slash - opt));
		idx[slash - opt] = '\0';
		return shard_set(s, idx, slash + 1, "--shard", err);
	}
	if (getenv("SLURM_ARRAY_TASK_ID"))
		return shard_slurm(s, err);
	if (getenv("JOB_COMPLETION_INDEX")) {
		const char *n = count_opt ? count_opt : getenv("APIPARITY_SHARD_COUNT");
		if (!n) {
			ap_buf_adds(err, "JOB_COMPLETION_INDEX is set but not the count: pass "
				    "--shard-count N or set APIPARITY_SHARD_COUNT (the job's completions)");
			return -EINVAL;
		}
		return shard_set(s, getenv("JOB_COMPLETION_INDEX"), n,
				 "JOB_COMPLETION_INDEX/--shard-count", err);
	}
	return 0;
}
