/* fsutil.h - the few file-system operations evidence needs. */
#ifndef AP_FSUTIL_H
#define AP_FSUTIL_H

#include <stddef.h>

#include "base/buf.h"

/* Creates dir and its missing parents (mode 0755). 0 or -errno. */
int ap_mkdirs(const char *dir);

/* Creates the directory that path's last component sits in, and its
 * missing parents (nothing for a name without a '/'). 0 or -errno. */
int ap_mkdirs_parent(const char *path);

/* Makes dir (and its missing parents) a directory that evidence can be
 * written into, proven by creating and removing a file in it. 0, or -errno:
 * -ENOTDIR when dir is a file or a device, -EACCES or -EROFS when it cannot
 * be written. */
int ap_dir_writable(const char *dir);

/* Whether dir/rel, every link in it resolved, is inside dir (resolved too):
 * 1 inside, 0 outside, or -errno when either cannot be resolved (rel does
 * not exist). For a path a user names inside a tree, where a link could
 * lead out of it. */
int ap_path_within(const char *dir, const char *rel);

/* Flags of ap_dir_list(). */
#define AP_DIR_REGULAR 1  /* regular files only: a link to one is left out */
#define AP_DIR_NODOT   2  /* no name that begins with '.' (hidden files) */
#define AP_DIR_MARK    4  /* a directory's name ends in '/' (a link to one does not) */

/* The names in dir but "." and "..", sorted with strcmp: a new array of *n new
 * strings (free with ap_dir_free()), NULL for none. No symbolic link is
 * followed but dir itself; an entry's type comes from readdir where the file
 * system gives it, else from lstat (an entry gone meanwhile has none: it is
 * neither regular nor marked). 0, or -errno of opening or reading dir
 * (-ENOENT, -ENOTDIR, -EACCES, -ENOMEM), and then *names NULL and *n 0. */
int ap_dir_list(const char *dir, int flags, char ***names, size_t *n);

/* ap_dir_list() of the directory open at dfd, read from its start through a
 * descriptor of its own: dfd stays open and its offset unmoved. */
int ap_dir_list_at(int dfd, int flags, char ***names, size_t *n);

/* Frees the n names of an ap_dir_list() and their array. */
void ap_dir_free(char **names, size_t n);

/* Removes dir and everything under it, never following symbolic links.
 * A missing dir is not an error. 0 or -errno. */
int ap_rm_tree(const char *dir);

/* The bytes a file is read at a time: few calls for a big file, and still
 * small enough for a thread's stack. */
#define AP_READ_CHUNK (64u << 10)

/* The bytes a pipe, a log or a line's end is read at a time: a page (what
 * one write to a pipe delivers whole); the lines sought are short. */
#define AP_LINE_CHUNK 4096

/* The most an input file may hold unless its reader says otherwise (a
 * bundle with long traces is a few MiB; more is abuse). */
#define AP_READ_MAX (64u << 20)

/* Appends the whole file at path to out, the one way apiparity reads an input
 * file: it must be a regular file (a directory is -EISDIR, a FIFO, device or
 * socket -AP_ENOTREG, refused without blocking on it) of at most max bytes
 * (-EFBIG beyond). 0 or -errno; out is then as it was before the call.
 * Report errors with ap_strerror(). */
int ap_read_file_limited(const char *path, size_t max, struct ap_buf *out);

/* ap_read_file_limited() with max AP_READ_MAX. */
int ap_read_all(const char *path, struct ap_buf *out);

/* ap_read_file_limited() with open(2) flags added, such as O_NOFOLLOW to
 * refuse a final symbolic link (-ELOOP): for files inside a bundle. The same
 * errors otherwise (-EISDIR, -AP_ENOTREG, -EFBIG, -errno). */
int ap_read_bounded(const char *path, size_t max, int flags, struct ap_buf *out);

/* Writes all len bytes to fd, retrying short writes and EINTR. 0 or -errno. */
int ap_write_all(int fd, const void *data, size_t len);

/* Writes data to path through a temporary file in the same directory, fsync'd
 * and renamed into place: readers see the old file or the whole new one. On
 * failure (-errno, e.g. -ENOSPC) the old file is left as it was. */
int ap_write_atomic(const char *path, const void *data, size_t len);

#endif
