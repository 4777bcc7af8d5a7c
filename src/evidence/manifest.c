#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/sha256.h"
#include "evidence/manifest.h"

int ap_path_is_safe(const char *rel)
{
	if (!rel || !*rel || *rel == '/')
		return 0;
	for (const char *p = rel; *p; p++)
		if (*p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	for (const char *c = rel; c;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && !strncmp(c, "..", 2)))
			return 0;
		c = c[n] ? c + n + 1 : NULL;
	}
	return 1;
}

/* --- walking the bundle ------------------------------------------------- */

/* Every entry under a directory other than a directory, by relative path. */
struct ap_entry {
	char *rel;
	mode_t mode;
};

struct ap_tree {
	struct ap_entry *v;
	size_t n, cap;
};

static void tree_free(struct ap_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].rel);
	free(t->v);
	*t = (struct ap_tree){ 0 };
}

/* The entries a tree makes room for at first, doubled as it grows: a
 * bundle's few files. */
#define AP_TREE_ROOM 32

static int tree_add(struct ap_tree *t, const char *rel, mode_t mode)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : AP_TREE_ROOM;
		struct ap_entry *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	if (!(t->v[t->n].rel = strdup(rel)))
		return -ENOMEM;
	t->v[t->n++].mode = mode;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ap_entry *)a)->rel, ((const struct ap_entry *)b)->rel);
}

static int walk_dir(int dfd, const char *prefix, struct ap_tree *t);

/* Records name (in dfd, at prefix) or, for a real directory, what is under it. */
static int walk_entry(int dfd, const char *prefix, const char *name, struct ap_tree *t)
{
	struct stat st;
	char *rel = NULL;
	int r;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (asprintf(&rel, "%s%s", prefix, name) < 0)
		return -ENOMEM;
	if (!S_ISDIR(st.st_mode)) {
		r = tree_add(t, rel, st.st_mode);
		free(rel);
		return r;
	}
	int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = sub < 0 ? -errno : 0;
	char *subprefix = NULL;
	if (!r && asprintf(&subprefix, "%s/", rel) < 0)
		r = -ENOMEM;
	if (!r)
		r = walk_dir(sub, subprefix, t);
	if (sub >= 0)
		close(sub);
	free(subprefix);
	free(rel);
	return r;
}

/* Walks the directory open at dfd (which stays open), naming entries prefix+name. */
static int walk_dir(int dfd, const char *prefix, struct ap_tree *t)
{
	char **names;
	size_t n;
	int r = ap_dir_list_at(dfd, 0, &names, &n);
	for (size_t i = 0; !r && i < n; i++) {
		if (!*prefix && (!strcmp(names[i], AP_MANIFEST_NAME) ||
				 !strcmp(names[i], AP_MANIFEST_SIG_NAME)))
			continue;
		r = walk_entry(dfd, prefix, names[i], t);
	}
	ap_dir_free(names, n);
	return r;
}

/* Every non-directory under the directory open at dfd (not the top-level
 * manifest), sorted by path with strcmp. dfd stays open. */
static int manifest_walk(int dfd, struct ap_tree *t)
{
	int r = walk_dir(dfd, "", t);
	if (r)
		tree_free(t);
	else if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), entry_cmp);
	return r;
}

/* --- opening a listed file without leaving the bundle -------------------- */

/* Why a listed path could not be opened, beyond a plain errno. */
enum ap_open_fail {
	AP_OPEN_OK,
	AP_OPEN_ABSENT,   /* a component is missing, or is not a dir / regular file */
	AP_OPEN_SYMLINK,  /* a component is a symbolic link */
};

/* Steps one component down from *cur, which it replaces (and closes unless it
 * is the root). Symbolic links are never followed: O_NOFOLLOW on every step,
 * with the lstat beforehand only to tell the caller why. */
static int manifest_step(int root, int *cur, const char *name, int last, enum ap_open_fail *why)
{
	struct stat st;

	if (fstatat(*cur, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		*why = AP_OPEN_ABSENT;
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		*why = AP_OPEN_SYMLINK;
		return 0;
	}
	if (last ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)) {
		*why = AP_OPEN_ABSENT;
		return 0;
	}
	int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
	int fd = openat(*cur, name, flags);
	if (fd < 0 && (errno == ELOOP || errno == ENOENT || errno == ENOTDIR)) {
		/* it changed since the lstat; report it as it is now */
		*why = errno == ELOOP ? AP_OPEN_SYMLINK : AP_OPEN_ABSENT;
		return 0;
	}
	if (fd < 0)
		return -errno;
	if (*cur != root)
		close(*cur);
	*cur = fd;
	return 0;
}

/* Opens rel (already ap_path_is_safe) for reading under root, component by
 * component. Returns an fd, or -1 with *why set, or -errno. */
static int open_beneath(int root, const char *rel, enum ap_open_fail *why)
{
	char *copy = strdup(rel);
	int cur = root, r = 0;

	if (!copy)
		return -ENOMEM;
	*why = AP_OPEN_OK;
	char *save = NULL;
	char *name = strtok_r(copy, "/", &save);
	while (!r && *why == AP_OPEN_OK && name) {
		char *next = strtok_r(NULL, "/", &save);
		r = manifest_step(root, &cur, name, !next, why);
		name = next;
	}
	free(copy);
	if (!r && *why == AP_OPEN_OK)
		return cur;
	if (cur != root)
		close(cur);
	return r ? r : -1;
}

/* --- writing ------------------------------------------------------------ */

/* Adds "<hex>  <rel>\n" for entry e, which must be a plain file of a safe name. */
static int manifest_line(int root, const char *dir, const struct ap_entry *e,
			    struct ap_buf *out, struct ap_buf *err)
{
	enum ap_open_fail why;
	char hex[AP_SHA256_HEX_SIZE];

	if (S_ISLNK(e->mode)) {
		ap_buf_addf(err, "%s/%s: is a symbolic link; evidence must be plain files",
			    dir, e->rel);
		return -ELOOP;
	}
	if (!S_ISREG(e->mode)) {
		ap_buf_addf(err, "%s/%s: not a regular file; evidence must be plain files",
			    dir, e->rel);
		return -EINVAL;
	}
	if (!ap_path_is_safe(e->rel)) {
		ap_buf_addf(err, "%s/%s: name cannot be listed in a manifest "
			    "(backslash or control character)", dir, e->rel);
		return -EINVAL;
	}
	int fd = open_beneath(root, e->rel, &why);
	if (fd == -1)
		fd = why == AP_OPEN_SYMLINK ? -ELOOP : -ENOENT;
	int r = fd < 0 ? fd : ap_sha256_fd(fd, hex);
	if (fd >= 0)
		close(fd);
	if (!r)
		r = ap_buf_addf(out, "%s  %s\n", hex, e->rel);
	if (r)
		ap_buf_addf(err, "%s/%s: %s", dir, e->rel, strerror(-r));
	return r;
}


/* Replaces dir's manifest with text: temporary file, fsync, rename, fsync dir,
 * so that a crash leaves either the old manifest or the new one, whole. */
static int replace_manifest(int root, const char *dir, const struct ap_buf *text,
			       struct ap_buf *err)
{
	char *tmp = NULL;
	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, AP_MANIFEST_NAME) < 0)
		return -ENOMEM;
	int fd = mkostemp(tmp, O_CLOEXEC);
	int r = fd < 0 ? -errno : 0;
	if (!r && fchmod(fd, 0644))
		r = -errno;
	if (!r)
		r = ap_write_all(fd, text->data ? text->data : "", text->len);
	if (!r && fsync(fd))
		r = -errno;
	if (fd >= 0 && close(fd) && !r)
		r = -errno;
	if (!r && renameat(AT_FDCWD, tmp, root, AP_MANIFEST_NAME))
		r = -errno;
	if (!r && fsync(root))
		r = -errno;
	if (r)
		ap_buf_addf(err, "%s/%s: %s", dir, AP_MANIFEST_NAME, strerror(-r));
	if (r && fd >= 0)
		unlink(tmp);
	free(tmp);
	return r;
}

int ap_manifest_write(const char *dir, struct ap_buf *err)
{
	struct ap_tree t = { 0 };
	struct ap_buf text = { 0 };
	int r = 0;

	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		r = -errno;
		ap_buf_addf(err, "%s: %s", dir, strerror(-r));
		return r;
	}
	if ((r = manifest_walk(root, &t)))
		ap_buf_addf(err, "%s: %s", dir, strerror(-r));
	for (size_t i = 0; !r && i < t.n; i++)
		r = manifest_line(root, dir, &t.v[i], &text, err);
	if (!r)
		r = replace_manifest(root, dir, &text, err);
	ap_buf_free(&text);
	tree_free(&t);
	close(root);
	return r;
}

/* --- verifying ---------------------------------------------------------- */

/* A safe path from the manifest and its line, for the unlisted and
 * duplicate checks. */
struct listed {
	char *rel;
	int line;
};

struct ap_verify {
	int root;
	struct ap_manifest_issue *issues;
	size_t max;
	int n;
	struct listed *listed;
	size_t nlisted;
};

static void issue(struct ap_verify *v, int kind, const char *path, size_t len, int line)
{
	if ((size_t)v->n < v->max) {
		struct ap_manifest_issue *is = &v->issues[v->n];
		size_t n = len < sizeof(is->path) - 1 ? len : sizeof(is->path) - 1;
		is->kind = kind;
		memcpy(is->path, path, n);
		is->path[n] = '\0';
		is->line = line;
	}
	v->n++;
}

static int is_lower_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

/* Splits a manifest line without its newline, "<64 lowercase hex>  <path>":
 * *rel points at the path, *plen bytes long (not terminated). 0 when the
 * line is malformed. */
static int manifest_split(const char *p, size_t len, const char **rel, size_t *plen)
{
	*rel = p + AP_SHA256_HEX_LEN + 2;
	*plen = len > AP_SHA256_HEX_LEN + 2 ? len - AP_SHA256_HEX_LEN - 2 : 0;
	return len > AP_SHA256_HEX_LEN + 2 && is_lower_hex(p, AP_SHA256_HEX_LEN) &&
	       !memcmp(p + AP_SHA256_HEX_LEN, "  ", 2) && !memchr(*rel, '\0', *plen);
}

/* Checks one listed file against its digest. */
static int verify_file(struct ap_verify *v, const char *hex, const char *rel, int line)
{
	enum ap_open_fail why;
	char got[AP_SHA256_HEX_SIZE];

	int fd = open_beneath(v->root, rel, &why);
	if (fd == -1) {
		/* a link could point anywhere; it is never read through */
		issue(v, why == AP_OPEN_SYMLINK ? AP_MF_BADPATH : AP_MF_MISSING,
			 rel, strlen(rel), line);
		return 0;
	}
	if (fd < 0)
		return fd;
	int r = ap_sha256_fd(fd, got);
	close(fd);
	if (!r && memcmp(got, hex, AP_SHA256_HEX_LEN))
		issue(v, AP_MF_MISMATCH, rel, strlen(rel), line);
	return r;
}

static int remember(struct ap_verify *v, char *rel, int line)
{
	struct listed *l = realloc(v->listed, (v->nlisted + 1) * sizeof(*l));
	if (!l) {
		free(rel);
		return -ENOMEM;
	}
	v->listed = l;
	v->listed[v->nlisted++] = (struct listed){ rel, line };
	return 0;
}

/* One manifest line, without its newline: "<64 lowercase hex>  <path>". */
static int verify_line(struct ap_verify *v, const char *p, size_t len, int line)
{
	const char *path;
	size_t plen;

	if (!manifest_split(p, len, &path, &plen)) {
		issue(v, AP_MF_MALFORMED, p, len, line);
		return 0;
	}
	char *rel = strndup(path, plen);
	if (!rel)
		return -ENOMEM;
	if (!ap_path_is_safe(rel)) {
		issue(v, AP_MF_BADPATH, rel, plen, line);
		free(rel);
		return 0;
	}
	char hex[AP_SHA256_HEX_LEN];
	memcpy(hex, p, AP_SHA256_HEX_LEN);
	int r = verify_file(v, hex, rel, line);
	if (r) {
		free(rel);
		return r;
	}
	return remember(v, rel, line);
}

static int verify_lines(struct ap_verify *v, const struct ap_buf *text)
{
	/* An empty manifest has no buffer at all: start from "" */
	const char *p = ap_buf_str(text), *end = p + text->len;
	int line = 0, r = 0;

	while (!r && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		line++;
		if (!nl) {
			/* sha256sum(1) writes a newline after every line */
			issue(v, AP_MF_MALFORMED, p, (size_t)(end - p), line);
			break;
		}
		r = verify_line(v, p, (size_t)(nl - p), line);
		p = nl + 1;
	}
	return r;
}

/* By path, then by line: the first listing of a path comes first. */
static int listed_cmp(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;
	int c = strcmp(x->rel, y->rel);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int listed_path_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct listed *)elem)->rel);
}

/* A path listed twice is checked twice and could hide a second digest:
 * sha256sum(1) never writes one, so the manifest was edited. */
static void verify_duplicates(struct ap_verify *v)
{
	for (size_t i = 1; i < v->nlisted; i++)
		if (!strcmp(v->listed[i].rel, v->listed[i - 1].rel))
			issue(v, AP_MF_DUPLICATE, v->listed[i].rel, strlen(v->listed[i].rel),
				 v->listed[i].line);
}

/* Every file, link or other non-directory present that no line names. */
static int verify_unlisted(struct ap_verify *v)
{
	struct ap_tree t = { 0 };
	int r = manifest_walk(v->root, &t);
	if (r)
		return r;
	if (v->nlisted)
		qsort(v->listed, v->nlisted, sizeof(*v->listed), listed_cmp);
	verify_duplicates(v);
	for (size_t i = 0; i < t.n; i++) {
		const char *key = t.v[i].rel;
		if (!v->nlisted ||
		    !bsearch(key, v->listed, v->nlisted, sizeof(*v->listed), listed_path_cmp))
			issue(v, AP_MF_UNLISTED, key, strlen(key), 0);
	}
	tree_free(&t);
	return 0;
}

static int read_fd(int fd, struct ap_buf *out)
{
	char chunk[AP_READ_CHUNK];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		if (ap_buf_add(out, chunk, (size_t)n))
			return -ENOMEM;
	}
}

static int read_manifest(int root, struct ap_buf *text)
{
	int fd = openat(root, AP_MANIFEST_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = read_fd(fd, text);
	close(fd);
	return r;
}

int ap_manifest_verify(const char *dir, struct ap_manifest_issue *issues, size_t max)
{
	struct ap_verify v = { .issues = issues, .max = max };
	struct ap_buf text = { 0 };

	v.root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v.root < 0)
		return -errno;
	int r = read_manifest(v.root, &text);
	if (!r)
		r = verify_lines(&v, &text);
	if (!r)
		r = verify_unlisted(&v);
	for (size_t i = 0; i < v.nlisted; i++)
		free(v.listed[i].rel);
	free(v.listed);
	ap_buf_free(&text);
	close(v.root);
	return r ? r : v.n;
}

int ap_manifest_list(const char *dir, int (*fn)(void *ctx, const char *sha256, const char *rel),
		     void *ctx)
{
	struct ap_buf text = { 0 };
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	int r = read_manifest(root, &text);
	close(root);
	const char *p = ap_buf_str(&text), *end = p + text.len;
	while (!r && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *rel;
		size_t plen;
		if (!nl)
			break;
		if (manifest_split(p, (size_t)(nl - p), &rel, &plen)) {
			char hex[AP_SHA256_HEX_LEN + 1];
			char *path = strndup(rel, plen);
			if (!path)
				r = -ENOMEM;
			else if (ap_path_is_safe(path)) {
				memcpy(hex, p, AP_SHA256_HEX_LEN);
				hex[AP_SHA256_HEX_LEN] = '\0';
				r = fn(ctx, hex, path);
			}
			free(path);
		}
		p = nl + 1;
	}
	ap_buf_free(&text);
	return r;
}
