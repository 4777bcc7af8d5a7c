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

static int ap_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
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
	return nftw(dir, ap_rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

int ap_read_all(const char *path, struct ap_buf *out)
{
	char chunk[65536];
	int r = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		if ((r = ap_buf_add(out, chunk, (size_t)n)))
			break;
	}
	close(fd);
	return r;
}

static int read_fd_bounded(int fd, size_t max, struct ap_buf *out)
{
	char chunk[65536];
	size_t total = 0;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		/* the size was checked, but the file may grow while it is read */
		if ((total += (size_t)n) > max)
			return -EFBIG;
		if (ap_buf_add(out, chunk, (size_t)n))
			return -ENOMEM;
	}
}

int ap_read_bounded(const char *path, size_t max, int flags, struct ap_buf *out)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
	if (fd < 0)
		return -errno;
	int r = fstat(fd, &st) ? -errno : 0;
	if (!r && !S_ISREG(st.st_mode))
		r = -EINVAL;
	if (!r && (uintmax_t)st.st_size > max)
		r = -EFBIG;
	if (!r)
		r = read_fd_bounded(fd, max, out);
	close(fd);
	return r;
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
	struct ap_buf tmp = { 0 };
	ap_buf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(ap_buf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int r = fd < 0 ? -errno : ap_write_all(fd, data, len);
	if (!r && fsync(fd))
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
