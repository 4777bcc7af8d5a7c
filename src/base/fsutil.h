/* fsutil.h - the few file-system operations evidence needs. */
#ifndef AP_FSUTIL_H
#define AP_FSUTIL_H

#include <stddef.h>

#include "base/buf.h"

/* Creates dir and its missing parents (mode 0755). 0 or -errno. */
int ap_mkdirs(const char *dir);

/* Removes dir and everything under it, never following symbolic links.
 * A missing dir is not an error. 0 or -errno. */
int ap_rm_tree(const char *dir);

/* Appends the whole file at path to out. 0 or -errno (out keeps what was
 * read before a failure). */
int ap_read_all(const char *path, struct ap_buf *out);

/* Appends the regular file at path, of at most max bytes, to out: for input
 * someone else wrote. A FIFO is not waited on; flags adds open(2) flags, such
 * as O_NOFOLLOW to refuse a final symbolic link. 0, -ELOOP (a link, with
 * O_NOFOLLOW), -EINVAL (not a regular file), -EFBIG (over max), or -errno;
 * out keeps what was read before a failure. */
int ap_read_bounded(const char *path, size_t max, int flags, struct ap_buf *out);

/* Writes all len bytes to fd, retrying short writes and EINTR. 0 or -errno. */
int ap_write_all(int fd, const void *data, size_t len);

/* Writes data to path through a temporary file in the same directory, fsync'd
 * and renamed into place: readers see the old file or the whole new one. On
 * failure (-errno, e.g. -ENOSPC) the old file is left as it was. */
int ap_write_atomic(const char *path, const void *data, size_t len);

#endif
