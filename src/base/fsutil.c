#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/fsutil.h"

int ap_mkdirs(const char *dir)
{
	struct ap_buf b = { 0 };
	int r = ap_buf_adds(&b, dir);
	for (char *p = b.data ? b.data + 1 : NULL; !r && p; p = strchr(p + 1, '/')) {
		char c = *p;
		*p = '\0';
		if (mkdir(b.data, 0755) && errno != EEXIST)
			r = -errno;
		*p = c;
		if (!c)
			break;
	}
	if (!r && mkdir(dir, 0755) && errno != EEXIST)
		r = -errno;
	ap_buf_free(&b);
	return r;
}

int ap_mkdirs_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return 0;
	struct ap_buf dir = { 0 };
	int r = ap_buf_add(&dir, path, (size_t)(slash - path)) ? -ENOMEM : ap_mkdirs(ap_buf_str(&dir));
	ap_buf_free(&dir);
	return r;
}

int ap_path_within(const char *dir, const char *rel)
{
	struct ap_buf p = { 0 };
	ap_buf_addf(&p, "%s/%s", dir, rel);
	char *d = realpath(dir, NULL), *f = d ? realpath(ap_buf_str(&p), NULL) : NULL;
	int r = !f ? -errno : 0;
	size_t n = d ? strlen(d) : 0;
	if (f)
		r = !strncmp(f, d, n) && (f[n] == '/' || (n == 1 && d[0] == '/'));
	free(d);
	free(f);
	ap_buf_free(&p);
	return r;
}

int ap_dir_writable(const char *dir)
{
	struct ap_buf probe = { 0 };
	struct stat st;
	int r = ap_mkdirs(dir);
	if (!r && stat(dir, &st))
		r = -errno;
	if (!r && !S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	if (!r && ap_buf_addf(&probe, "%s/.apiparity-write-test.%ld", dir, (long)getpid()))
		r = -ENOMEM;
	int fd = r ? -1 : open(ap_buf_str(&probe), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (!r && fd < 0)
		r = -errno;
	if (fd >= 0) {
		close(fd);
		unlink(ap_buf_str(&probe));
	}
	ap_buf_free(&probe);
	return r;
}

/* The directories nftw may hold open while it removes a tree: a deeper tree
 * is still removed, its deeper levels reopened as they are reached. */
#define AP_RM_TREE_FDS 16

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) ? -1 : 0;
}

int ap_rm_tree(const char *dir)
{
	struct stat st;
	if (lstat(dir, &st) && errno == ENOENT)
		return 0;
	return nftw(dir, rm_one, AP_RM_TREE_FDS, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

/* The names a listing makes room for at first, doubled as it grows: one
 * allocation for most directories apiparity reads. */
#define AP_DIR_ROOM 32

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The DT_ type of entry e of d: readdir's, or lstat's where the file system
 * does not say; DT_UNKNOWN for an entry gone meanwhile. */
static unsigned char entry_type(DIR *d, const struct dirent *e)
{
	struct stat st;
	if (e->d_type != DT_UNKNOWN)
		return e->d_type;
	if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
		return DT_UNKNOWN;
	return IFTODT(st.st_mode);
}

/* Appends name (and a '/' when slash) to v[0..*n), *cap its room. 0 or -ENOMEM. */
static int names_push(char ***v, size_t *n, size_t *cap, const char *name, int slash)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : AP_DIR_ROOM;
		char **nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	size_t len = strlen(name);
	char *s = malloc(len + 2);
	if (!s)
		return -ENOMEM;
	memcpy(s, name, len);
	s[len] = '/';
	s[len + slash] = '\0';
	(*v)[(*n)++] = s;
	return 0;
}

/* Lists d (and closes it) as ap_dir_list() says. */
static int dir_read(DIR *d, int flags, char ***names, size_t *n)
{
	char **v = NULL;
	size_t len = 0, cap = 0;
	int r = 0;
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(d);
		if (!e) {
			r = -errno;
			break;
		}
		const char *s = e->d_name;
		if (!strcmp(s, ".") || !strcmp(s, "..") || ((flags & AP_DIR_NODOT) && s[0] == '.'))
			continue;
		unsigned char t = flags & (AP_DIR_REGULAR | AP_DIR_MARK) ? entry_type(d, e) : DT_UNKNOWN;
		if ((flags & AP_DIR_REGULAR) && t != DT_REG)
			continue;
		if ((r = names_push(&v, &len, &cap, s, (flags & AP_DIR_MARK) && t == DT_DIR)))
			break;
	}
	closedir(d);
	if (r) {
		ap_dir_free(v, len);
		v = NULL, len = 0;
	} else if (len)
		qsort(v, len, sizeof(*v), name_cmp);
	*names = v;
	*n = len;
	return r;
}

/* Lists the directory open at fd, which it takes. */
static int dir_list_fd(int fd, int flags, char ***names, size_t *n)
{
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	*names = NULL;
	*n = 0;
	if (!d) {
		int r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	return dir_read(d, flags, names, n);
}

int ap_dir_list(const char *dir, int flags, char ***names, size_t *n)
{
	return dir_list_fd(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), flags, names, n);
}

int ap_dir_list_at(int dfd, int flags, char ***names, size_t *n)
{
	return dir_list_fd(openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), flags, names, n);
}

void ap_dir_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int regular(const struct stat *st, size_t max)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -AP_ENOTREG;
	return (unsigned long long)st->st_size > max ? -EFBIG : 0;
}

static int read_limited(const char *path, size_t max, int flags, struct ap_buf *out)
{
	char chunk[AP_READ_CHUNK];
	struct stat st;
	size_t before = out->len, got = 0;
	/* A device is not even opened (that can rewind a tape); the check is
	 * repeated on what was opened, O_NONBLOCK so that a FIFO swapped in
	 * meanwhile does not wait for a writer. With O_NOFOLLOW a final link is
	 * refused before it is followed. */
	int nofollow = flags & O_NOFOLLOW;
	int r = (nofollow ? lstat(path, &st) : stat(path, &st)) ? -errno :
		nofollow && S_ISLNK(st.st_mode) ? -ELOOP : regular(&st, max);
	int fd = r ? -1 : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | flags);
	if (r || fd < 0)
		return r ? r : -errno;
	r = fstat(fd, &st) ? -errno : regular(&st, max);
	while (!r) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		/* A file that grows while read (or lies in st_size, as /proc does). */
		if ((got += (size_t)n) > max)
			r = -EFBIG;
		else
			r = ap_buf_add(out, chunk, (size_t)n);
	}
	close(fd);
	if (r && out->data) {
		out->len = before;
		out->data[before] = '\0';
	}
	return r;
}

int ap_read_file_limited(const char *path, size_t max, struct ap_buf *out)
{
	return read_limited(path, max, 0, out);
}

int ap_read_all(const char *path, struct ap_buf *out)
{
	return ap_read_file_limited(path, AP_READ_MAX, out);
}

int ap_read_bounded(const char *path, size_t max, int flags, struct ap_buf *out)
{
	return read_limited(path, max, flags, out);
}

int ap_write_all(int fd, const void *data, size_t len)
{
	for (const char *p = data; len;) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ap_write_atomic(const char *path, const void *data, size_t len)
{
	/* A temporary file of its own: several threads and processes may store
	 * the same file at once (the test index, concurrent checks). */
	struct ap_buf tmp = { 0 };
	ap_buf_addf(&tmp, "%s.XXXXXX", path);
	int fd = tmp.data ? mkostemp(tmp.data, O_CLOEXEC) : -1;
	int r = fd < 0 ? -errno : ap_write_all(fd, data, len);
	if (!r && (fchmod(fd, 0644) || fsync(fd)))
		r = -errno;
	if (fd >= 0 && close(fd) && !r)
		r = -errno;
	if (!r && rename(ap_buf_str(&tmp), path))
		r = -errno;
	if (r && fd >= 0)
		unlink(ap_buf_str(&tmp));
	ap_buf_free(&tmp);
	return r;
}
