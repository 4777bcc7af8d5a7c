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
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
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
	char chunk[65536];
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
