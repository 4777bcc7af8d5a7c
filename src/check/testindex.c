#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/sha256.h"
#include "env/protocol.h"
#include "env/worker.h"
#include "check/testindex.h"
#include "check/testsrc.h"

#define AP_INDEX_MAGIC "apiparity-usage-index "
/* 2: the indexer is named by the worker's indexer code alone (1: by the
 * whole worker), so no index that 1 wrote is trusted. */
#define AP_INDEX_FORMAT 3
#define AP_INDEXER_BEGIN "\n# apiparity-indexer: begin\n"
#define AP_INDEXER_END "\n# apiparity-indexer: end\n"
#define AP_INDEX_MAX_DEPTH 32
#define AP_INDEX_BUILD_MS (30 * 60 * 1000) /* a whole tree, parsed once */
#define AP_INDEX_MAX_BYTES (1u << 30) /* torch 2.6's test/ makes about 80 MiB */

void ap_testindex_indexer(const char *src, size_t len, char out[AP_INDEXER_SIZE])
{
	char hex[AP_SHA256_HEX_SIZE];
	const char *b = memmem(src, len, AP_INDEXER_BEGIN, strlen(AP_INDEXER_BEGIN));
	const char *e = b ? memmem(b, len - (size_t)(b - src), AP_INDEXER_END, strlen(AP_INDEXER_END))
			  : NULL;
	if (e)
		ap_sha256_mem(b, (size_t)(e - b) + strlen(AP_INDEXER_END), hex);
	else
		ap_sha256_mem(src, len, hex);
	snprintf(out, AP_INDEXER_SIZE, "%d.%.16s", AP_INDEX_FORMAT, hex);
}

/* What built an index: the format and this apiparity's worker's indexer. */
static void indexer(char out[AP_INDEXER_SIZE])
{
	ap_testindex_indexer(ap_worker_py, ap_worker_py_len, out);
}

/* The test files a tree walk makes room for at first, doubled as it grows. */
#define AP_TREE_FILES_ROOM 256
/* An index's header line is about 100 bytes: a file with no newline in its
 * first AP_HEADER_MAX bytes is no index. */
#define AP_HEADER_MAX 512

struct tree_file {
	char *rel;
	struct stat st;
};

static int by_rel(const void *a, const void *b)
{
	return strcmp(((const struct tree_file *)a)->rel, ((const struct tree_file *)b)->rel);
}

/* Collects test*.py under dir (rel: its path below the tree), not following
 * links to directories, as the worker's walk does not. */
static int collect(const char *dir, const char *rel, int depth, struct tree_file **v, size_t *n,
		   size_t *cap)
{
	char **names = NULL;
	size_t k = 0;
	/* AP_DIR_MARK reads d_type: no stat of each of the tree's thousands of
	 * data files */
	int r = depth > AP_INDEX_MAX_DEPTH ? -ELOOP : ap_dir_list(dir, AP_DIR_MARK, &names, &k);
	for (size_t i = 0; !r && i < k; i++) {
		struct ap_buf p = { 0 }, q = { 0 };
		struct stat st;
		char *name = names[i];
		size_t nl = strlen(name);
		int is_dir = name[nl - 1] == '/';
		if (is_dir)
			name[--nl] = '\0';
		int test = !strncmp(name, "test", 4) && nl > 3 && !strcmp(name + nl - 3, ".py");
		if (!test && !is_dir)
			continue;
		ap_buf_addf(&p, "%s/%s", dir, name);
		ap_buf_addf(&q, "%s%s%s", rel, *rel ? "/" : "", name);
		if (is_dir)
			r = collect(ap_buf_str(&p), ap_buf_str(&q), depth + 1, v, n, cap);
		else if (test && stat(ap_buf_str(&p), &st) == 0) {
			if (*n == *cap) {
				size_t c = *cap ? 2 * *cap : AP_TREE_FILES_ROOM;
				struct tree_file *nv = realloc(*v, c * sizeof(**v));
				r = nv ? 0 : -ENOMEM;
				if (nv) {
					*v = nv;
					*cap = c;
				}
			}
			if (!r) {
				(*v)[*n].rel = q.data;
				(*v)[*n].st = st;
				(*n)++;
				q.data = NULL;
			}
		}
		ap_buf_free(&p);
		ap_buf_free(&q);
	}
	ap_dir_free(names, k);
	return r;
}

/* A fetched tree is never changed in place (a new fetch replaces it whole,
 * stamp included), so its stamp stands for it: content, inode, time. */
static int stamp_sum(const char *tree, char hex[AP_SHA256_HEX_SIZE])
{
	struct ap_buf p = { 0 }, text = { 0 };
	struct stat st;
	const char *slash = strrchr(tree, '/');
	ap_buf_addf(&p, "%.*s/%s", slash ? (int)(slash - tree) : 0, tree, AP_TESTS_STAMP);
	int r = slash && !strcmp(slash, "/test") && lstat(ap_buf_str(&p), &st) == 0 &&
		S_ISREG(st.st_mode) ? ap_read_all(ap_buf_str(&p), &text) : -ENOENT;
	if (!r)
		r = ap_buf_addf(&text, "%c%llu %lld.%09ld", 0, (unsigned long long)st.st_ino,
				(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (!r)
		ap_sha256_mem(text.data, text.len, hex);
	ap_buf_free(&p);
	ap_buf_free(&text);
	return r;
}

int ap_testindex_tree_sum(const char *tree, char hex[AP_SHA256_HEX_SIZE])
{
	if (stamp_sum(tree, hex) == 0)
		return 0;
	struct tree_file *v = NULL;
	size_t n = 0, cap = 0;
	struct ap_buf all = { 0 };
	int r = collect(tree, "", 0, &v, &n, &cap);
	if (!r && n)
		qsort(v, n, sizeof(*v), by_rel);
	for (size_t i = 0; i < n; i++) {
		if (!r)
			r = ap_buf_addf(&all, "%s%c%lld%c%lld.%09ld\n", v[i].rel, 0,
					(long long)v[i].st.st_size, 0, (long long)v[i].st.st_mtim.tv_sec,
					v[i].st.st_mtim.tv_nsec);
		free(v[i].rel);
	}
	free(v);
	if (!r)
		ap_sha256_mem(all.data ? all.data : "", all.len, hex);
	ap_buf_free(&all);
	return r;
}

void ap_testindex_path(const char *tree, struct ap_buf *out)
{
	const char *root = ap_tests_root();
	size_t rl = strlen(root), tl = strlen(tree);
	const char *ver = !strncmp(tree, root, rl) && tree[rl] == '/' ? tree + rl + 1 : NULL;
	const char *slash = ver ? strchr(ver, '/') : NULL;
	if (slash && slash > ver && *ver != '.' && !strcmp(slash, "/test")) {
		ap_buf_addf(out, "%.*s/%s", (int)(slash - tree), tree, AP_TESTINDEX_NAME);
		return;
	}
	char hex[AP_SHA256_HEX_SIZE];
	ap_sha256_mem(tree, tl, hex);
	ap_buf_addf(out, "%s/.index/%.16s.idx", root, hex);
}

int ap_testindex_header(const char *sum, const char *body, size_t body_len, struct ap_buf *out)
{
	char ind[AP_INDEXER_SIZE], hex[AP_SHA256_HEX_SIZE];
	indexer(ind);
	ap_sha256_mem(body ? body : "", body_len, hex);
	return ap_buf_addf(out, "%s%s %s %zu %s\n", AP_INDEX_MAGIC, ind, sum, body_len, hex);
}

/* Checks the header of the whole file in ix against sum and this indexer. */
static int check_header(struct ap_testindex *ix, const char *sum)
{
	char want[32], ind[64], got[72], bsum[72];
	unsigned long long body;
	const char *nl = memchr(ix->map, '\n', ix->len < AP_HEADER_MAX ? ix->len : AP_HEADER_MAX);
	size_t ml = strlen(AP_INDEX_MAGIC);
	if (!nl || ix->len < ml || memcmp(ix->map, AP_INDEX_MAGIC, ml))
		return -EBADMSG;
	struct ap_buf line = { 0 };
	ap_buf_add(&line, ix->map + ml, (size_t)(nl - ix->map) - ml);
	int ok = sscanf(ap_buf_str(&line), "%63s %71s %llu %71s", ind, got, &body, bsum) == 4;
	ap_buf_free(&line);
	ix->body = (size_t)(nl - ix->map) + 1;
	if (!ok || body != ix->len - ix->body || (body && ix->map[ix->len - 1] != '\n') ||
	    strlen(bsum) != AP_SHA256_HEX_LEN)
		return -EBADMSG;
	memcpy(ix->body_sum, bsum, AP_SHA256_HEX_SIZE);
	indexer(want);
	return strcmp(ind, want) || strcmp(got, sum) ? -ESTALE : 0;
}

/* The stamp of a file whose body was seen to match: "DEV INO SIZE MTIME
 * CTIME BODY-SUM". */
static void stamp_of(const struct stat *st, const char *body_sum, struct ap_buf *out)
{
	ap_buf_addf(out, "%llu %llu %lld %lld.%09ld %lld.%09ld %s\n", (unsigned long long)st->st_dev,
		    (unsigned long long)st->st_ino, (long long)st->st_size,
		    (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
		    (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, body_sum);
}

/* Whether the body of the index at path (ix, st) has the bytes its header
 * names: by its stamp when the file is unchanged since one was written,
 * else by hashing it (then stamping it). */
static int body_intact(const char *path, const struct stat *st, const struct ap_testindex *ix)
{
	struct ap_buf sp = { 0 }, want = { 0 }, have = { 0 };
	char hex[AP_SHA256_HEX_SIZE];
	ap_buf_addf(&sp, "%s.ok", path);
	stamp_of(st, ix->body_sum, &want);
	int ok = !ap_read_file_limited(ap_buf_str(&sp), 512, &have) && have.len == want.len &&
		 !memcmp(have.data, want.data, want.len);
	if (!ok) {
		ap_sha256_mem(ix->map + ix->body, ix->len - ix->body, hex);
		ok = !strcmp(hex, ix->body_sum);
		if (ok)
			ap_write_atomic(ap_buf_str(&sp), want.data, want.len); /* a cache: best effort */
	}
	ap_buf_free(&sp);
	ap_buf_free(&want);
	ap_buf_free(&have);
	return ok;
}

int ap_testindex_open(const char *path, const char *sum, struct ap_testindex *ix)
{
	struct stat st;
	memset(ix, 0, sizeof(*ix));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = fstat(fd, &st) ? -errno : !S_ISREG(st.st_mode) || st.st_size == 0 ? -EBADMSG : 0;
	if (!r) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		r = m == MAP_FAILED ? -errno : 0;
		if (!r) {
			ix->map = m;
			ix->len = (size_t)st.st_size;
			ix->mapped = 1;
		}
	}
	close(fd);
	r = r ? r : check_header(ix, sum);
	if (!r && !body_intact(path, &st, ix))
		r = -EBADMSG;
	if (r)
		ap_testindex_close(ix);
	return r;
}

/* key against the key of the line at p (ended by a tab): <0, 0, >0. */
static int key_cmp(const char *key, const char *p, const char *end, const char **tab)
{
	size_t kl = strlen(key);
	*tab = memchr(p, '\t', (size_t)(end - p));
	if (!*tab)
		return 0;
	size_t ll = (size_t)(*tab - p);
	int c = memcmp(key, p, kl < ll ? kl : ll);
	return c ? c : kl < ll ? -1 : kl > ll ? 1 : 0;
}

int ap_testindex_get(struct ap_testindex *ix, const char *key, json_t **out)
{
	const char *base = ix->map, *lo = base + ix->body, *hi = base + ix->len;
	*out = NULL;
	while (lo < hi) {
		const char *mid = lo + (hi - lo) / 2;
		const char *start = mid > lo ? memrchr(lo, '\n', (size_t)(mid - lo)) : NULL;
		start = start ? start + 1 : lo;
		const char *end = memchr(start, '\n', (size_t)(hi - start)), *tab;
		if (!end)
			return -EBADMSG;
		int c = key_cmp(key, start, end, &tab);
		if (!tab)
			return -EBADMSG;
		if (c < 0) {
			hi = start;
		} else if (c > 0) {
			lo = end + 1;
		} else {
			json_error_t je;
			*out = json_loadb(tab + 1, (size_t)(end - tab - 1), JSON_DECODE_ANY, &je);
			return *out ? 0 : -EBADMSG;
		}
	}
	return 0;
}

const char *ap_testindex_file(struct ap_testindex *ix, json_int_t fid)
{
	if (!ix->files && ap_testindex_get(ix, "F", &ix->files))
		return NULL;
	return fid < 0 ? NULL : json_string_value(json_array_get(ix->files, (size_t)fid));
}

/* The line of key, as ap_testindex_get, into rec->doc. */
static int rec_get(struct ap_testindex *ix, const char *prefix, const char *name,
		   struct ap_index_rec *rec)
{
	struct ap_buf key = { 0 };
	memset(rec, 0, sizeof(*rec));
	int r = ap_buf_addf(&key, "%s %s", prefix, name);
	r = r ? r : ap_testindex_get(ix, ap_buf_str(&key), &rec->doc);
	ap_buf_free(&key);
	rec->found = !r && rec->doc;
	return r;
}

/* n zeroed elements of size each into *v (one at least). */
static int rec_alloc(void **v, size_t n, size_t size)
{
	*v = calloc(n ? n : 1, size);
	return *v ? 0 : -ENOMEM;
}

/* An integer element i of a, into *out. */
static int int_at(const json_t *a, size_t i, long long *out)
{
	const json_t *v = json_array_get(a, i);
	*out = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
	return json_is_integer(v) ? 0 : -EBADMSG;
}

/* A string element i of a (null too when nullable), into *out. */
static int str_at(const json_t *a, size_t i, int nullable, const char **out)
{
	const json_t *v = json_array_get(a, i);
	*out = json_string_value(v);
	return *out || (nullable && json_is_null(v)) ? 0 : -EBADMSG;
}

/* A file's tests: [[class or null, name, line]...]. */
static int read_tests(const json_t *a, struct ap_index_rec *rec)
{
	size_t n = json_array_size(a);
	int r = json_is_array(a) ? rec_alloc((void **)&rec->tests, n, sizeof(*rec->tests)) : -EBADMSG;
	for (size_t i = 0; !r && i < n; i++) {
		const json_t *t = json_array_get(a, i);
		struct ap_index_test *x = &rec->tests[i];
		r = str_at(t, 0, 1, &x->cls);
		r = r ? r : str_at(t, 1, 0, &x->name);
		r = r ? r : int_at(t, 2, &x->line);
	}
	rec->ntests = r ? 0 : n;
	return r;
}

/* A file's bindings: [[kind, local, dotted]...], those of three strings. */
static int read_bindings(const json_t *a, struct ap_index_rec *rec)
{
	size_t n = json_array_size(a), k = 0;
	int r = rec_alloc((void **)&rec->bindings, n, sizeof(*rec->bindings));
	for (size_t i = 0; !r && i < n; i++) {
		const json_t *b = json_array_get(a, i);
		struct ap_index_binding *x = &rec->bindings[k];
		if (!str_at(b, 0, 0, &x->kind) && !str_at(b, 1, 0, &x->local) &&
		    !str_at(b, 2, 0, &x->full))
			k++;
	}
	rec->nbindings = k;
	return r;
}

int ap_testindex_file_rec(struct ap_testindex *ix, const char *file, struct ap_index_rec *rec)
{
	int r = rec_get(ix, "f", file, rec);
	if (r || !rec->found)
		return r;
	const json_t *d = rec->doc;
	rec->error = json_string_value(json_object_get(d, "error"));
	rec->imports = json_object_get(d, "imports");
	if (!json_is_object(d))
		return -EBADMSG;
	if (rec->error)
		return 0;
	r = read_tests(json_object_get(d, "tests"), rec);
	return r ? r : read_bindings(json_object_get(d, "bindings"), rec);
}

int ap_testindex_defs(struct ap_testindex *ix, const char *name, struct ap_index_rec *rec)
{
	int r = rec_get(ix, "t", name, rec);
	size_t n = json_array_size(rec->doc);
	if (r || !rec->found)
		return r;
	r = json_is_array(rec->doc) ? rec_alloc((void **)&rec->defs, n, sizeof(*rec->defs))
				    : -EBADMSG;
	for (size_t i = 0; !r && i < n; i++) {
		const json_t *d = json_array_get(rec->doc, i);
		r = int_at(d, 0, &rec->defs[i].fid);
		r = r ? r : int_at(d, 1, &rec->defs[i].ti);
	}
	rec->ndefs = r ? 0 : n;
	return r;
}

int ap_testindex_uses(struct ap_testindex *ix, const char *name, struct ap_index_rec *rec)
{
	int r = rec_get(ix, "u", name, rec);
	size_t n = json_array_size(rec->doc);
	if (r || !rec->found)
		return r;
	r = json_is_array(rec->doc) ? rec_alloc((void **)&rec->uses, n, sizeof(*rec->uses))
				    : -EBADMSG;
	for (size_t i = 0; !r && i < n; i++) {
		const json_t *u = json_array_get(rec->doc, i);
		struct ap_index_use *x = &rec->uses[i];
		r = int_at(u, 0, &x->fid);
		r = r ? r : int_at(u, 1, &x->ti);
		r = r ? r : int_at(u, 2, &x->line);
		r = r ? r : str_at(u, 3, 0, &x->dotted);
		r = r ? r : str_at(u, 4, 0, &x->text);
	}
	rec->nuses = r ? 0 : n;
	return r;
}

int ap_testindex_gens(struct ap_testindex *ix, struct ap_index_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	int r = ap_testindex_get(ix, "D", &rec->doc);
	size_t n = json_array_size(rec->doc);
	rec->found = !r && rec->doc;
	if (r || !rec->found)
		return r;
	r = json_is_array(rec->doc) ? rec_alloc((void **)&rec->gens, n, sizeof(*rec->gens))
				    : -EBADMSG;
	for (size_t i = 0; !r && i < n; i++) {
		const json_t *g = json_array_get(rec->doc, i);
		struct ap_index_gen *x = &rec->gens[i];
		r = int_at(g, 0, &x->fid);
		r = r ? r : int_at(g, 1, &x->ti);
		r = r ? r : int_at(g, 2, &x->line);
		r = r ? r : str_at(g, 3, 0, &x->generator);
		r = r ? r : str_at(g, 4, 1, &x->source);
		x->devices = json_array_get(g, 5);
		r = r ? r : json_is_array(x->devices) ? 0 : -EBADMSG;
	}
	rec->ngens = r ? 0 : n;
	return r;
}

int ap_testindex_gen_facts(struct ap_testindex *ix, long long fid, struct ap_index_rec *rec)
{
	struct ap_buf id = { 0 };
	int r = ap_buf_addf(&id, "%lld", fid);
	r = r ? r : rec_get(ix, "G", ap_buf_str(&id), rec);
	ap_buf_free(&id);
	return r || !rec->found ? r : json_is_object(rec->doc) ? 0 : -EBADMSG;
}

void ap_index_rec_free(struct ap_index_rec *rec)
{
	free(rec->gens);
	free(rec->tests);
	free(rec->bindings);
	free(rec->defs);
	free(rec->uses);
	json_decref(rec->doc);
	memset(rec, 0, sizeof(*rec));
}

void ap_testindex_close(struct ap_testindex *ix)
{
	if (ix->map && ix->mapped)
		munmap(ix->map, ix->len);
	else
		free(ix->map);
	json_decref(ix->files);
	memset(ix, 0, sizeof(*ix));
}


/* Asks the worker to parse the tree into a file of its environment, and
 * reads that file here, through the worker's root. */
static int build(struct ap_worker *w, const char *root, const char *sum, struct ap_buf *out,
		 struct ap_buf *detail)
{
	json_t *req = ap_proto_tests_index(root), *res = NULL;
	struct ap_buf host = { 0 }, body = { 0 };
	int r = req ? ap_worker_call_within(w, req, &res, AP_INDEX_BUILD_MS) : -ENOMEM;
	json_decref(req);
	if (r) {
		ap_buf_addf(detail, "%s", ap_buf_str(&w->detail));
		return r;
	}
	const char *p = ap_proto_tests_index_path(res);
	if (!p || *p != '/' || strstr(p, "/../")) {
		ap_buf_adds(detail, "the worker's index answer names no file");
		json_decref(res);
		return -AP_EWORKER;
	}
	/* Seen through the worker's own root: its /tmp is a tmpfs of its mount
	 * namespace, under its chroot, that only /proc/PID/root reaches. */
	ap_buf_addf(&host, "/proc/%ld/root%s", (long)w->proc.pid, p);
	r = ap_read_file_limited(ap_buf_str(&host), AP_INDEX_MAX_BYTES, &body);
	unlink(ap_buf_str(&host));
	if (r)
		ap_buf_addf(detail, "cannot read the index the worker wrote at %s: %s",
			    ap_buf_str(&host), strerror(-r));
	r = r ? r : ap_testindex_header(sum, body.data, body.len, out);
	r = r ? r : ap_buf_add(out, body.data ? body.data : "", body.len);
	json_decref(res);
	ap_buf_free(&host);
	ap_buf_free(&body);
	return r;
}

/* An exclusive lock beside path, held while one process builds; -1 when
 * the directory cannot hold one (then each builds its own). */
static int lock_beside(const char *path)
{
	struct ap_buf lk = { 0 };
	ap_mkdirs_parent(path);
	ap_buf_addf(&lk, "%s.lock", path);
	int fd = open(ap_buf_str(&lk), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	while (fd >= 0 && flock(fd, LOCK_EX) && errno == EINTR)
		;
	ap_buf_free(&lk);
	return fd;
}

/* Builds the index under the lock beside path (or opens the one another
 * process built meanwhile). */
static int rebuild(struct ap_worker *w, const char *root, const char *path, const char *sum,
		   int force, struct ap_testindex *ix, struct ap_buf *warn, struct ap_buf *detail)
{
	struct ap_buf data = { 0 };
	int lock = lock_beside(path);
	int r = force ? -ESTALE : ap_testindex_open(path, sum, ix);
	if (r == -EBADMSG || force)
		ap_buf_addf(warn, "the usage index %s was damaged; rebuilt it\n", path);
	if (r && !(r = build(w, root, sum, &data, detail))) {
		int s = ap_write_atomic(path, data.data, data.len);
		if (s)
			ap_buf_addf(warn, "cannot store the usage index at %s: %s (built for this run "
				    "only)\n", path, strerror(-s));
		memset(ix, 0, sizeof(*ix));
		ix->map = data.data;
		ix->len = data.len;
		data.data = NULL;
		if ((r = check_header(ix, sum))) {
			ap_buf_adds(detail, "the worker's usage index does not parse");
			ap_testindex_close(ix);
		}
	}
	if (lock >= 0)
		close(lock);
	ap_buf_free(&data);
	return r;
}

int ap_testindex_load(struct ap_worker *w, const char *root, const char *tree, int force,
		      struct ap_testindex *ix, struct ap_buf *warn, struct ap_buf *detail)
{
	char sum[AP_SHA256_HEX_SIZE];
	struct ap_buf path = { 0 };
	int r = ap_testindex_tree_sum(tree, sum);
	if (r) {
		ap_buf_addf(detail, "cannot read the test tree %s: %s", tree, strerror(-r));
		return r;
	}
	ap_testindex_path(tree, &path);
	r = force ? -ESTALE : ap_testindex_open(ap_buf_str(&path), sum, ix);
	if (r)
		r = rebuild(w, root, ap_buf_str(&path), sum, force, ix, warn, detail);
	ap_buf_free(&path);
	return r;
}
