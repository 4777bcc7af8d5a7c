/* testutil.h - helpers the cmocka unit tests share: a temporary directory for a
 * fixture, writing a file into it, and removing it again. Header-only; include
 * it after <cmocka.h>. */
#ifndef AP_TESTUTIL_H
#define AP_TESTUTIL_H

#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

/* A test that needs the PNG pictures, in a build without them (make PNG=0):
 * skipped, by its name, with why. Put AP_PNG_SKIP(); first in its body. */
#if defined(AP_PNG) && !AP_PNG
#define AP_PNG_SKIP()                                                                 \
	do {                                                                          \
		print_message("[  SKIP    ] %s: PNG pictures are not built in (make "   \
			      "PNG=0)\n", __func__);                                     \
		skip();                                                               \
	} while (0)
#else
#define AP_PNG_SKIP() ((void)0)
#endif

/* Makes a fresh directory $TMPDIR/name.XXXXXX (/tmp when TMPDIR is unset or
 * empty) and leaves its path in buf (n bytes). 0, or -1 when it cannot. */
static inline int t_tempdir(char *buf, size_t n, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(buf, n, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	return mkdtemp(buf) ? 0 : -1;
}

/* Writes content to top/rel, creating the directories on the way (under top,
 * which must exist); a failure, or a path too long for 8 KiB, fails the test. */
static inline void t_put(const char *top, const char *rel, const char *content)
{
	char path[8192];
	int len = snprintf(path, sizeof(path), "%s/%s", top, rel);
	assert_true(len >= 0 && (size_t)len < sizeof(path));
	for (char *p = path + strlen(top) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	assert_true(fputs(content, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
}

/* nftw callback for t_rmtree: removes one file or (emptied) directory. */
static inline int t_remove_one(const char *path, const struct stat *st, int type,
			       struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

/* Removes top and everything under it, never following symbolic links.
 * 0, or -1 on any failure (a missing top included), so a teardown can return
 * it as is. */
static inline int t_rmtree(const char *top)
{
	return nftw(top, t_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
