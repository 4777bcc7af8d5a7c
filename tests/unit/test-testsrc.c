/* test-testsrc.c - unit tests for src/testsrc.h: the cache key of a Debian
 * version, the sha256 of a file in a .dsc, and whether a version's test tree
 * is already cached under APIPARITY_TESTS_ROOT. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "check/testsrc.h"
#include "testutil.h"

/* ---- ap_upstream_version ---- */

static void expect_upstream(const char *debian, const char *want)
{
	struct ap_buf b = { 0 };
	ap_upstream_version(debian, &b);
	assert_string_equal(ap_buf_str(&b), want);
	ap_buf_free(&b);
}

static void debian_revision_is_dropped(void **state)
{
	(void)state;
	expect_upstream("2.6.0+dfsg-7", "2.6.0+dfsg");
	expect_upstream("1.13.1+dfsg-4", "1.13.1+dfsg");
}

static void epoch_is_dropped(void **state)
{
	(void)state;
	expect_upstream("1:2.6.0-1", "2.6.0");
	expect_upstream("1:2.6.0+dfsg-7", "2.6.0+dfsg");
}

static void native_version_is_kept_whole(void **state)
{
	(void)state;
	expect_upstream("2.6.0", "2.6.0");
}

static void only_the_last_dash_starts_the_revision(void **state)
{
	(void)state;
	expect_upstream("1.0-rc1-2", "1.0-rc1");
}

/* ---- ap_dsc_sha256 ---- */

#define SHA256_ORIG "3a9d9b2c4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a"
#define SHA256_DEB "b0c1d2e3f405162738495a6b7c8d9eaf0b1c2d3e4f5061728394a5b6c7d8e9f0"
#define SHA1_ORIG "0123456789abcdef0123456789abcdef01234567"

/* A .dsc as the archive serves it: signed, with a continued Package-List, the
 * three checksum sections, and a signature file listed only under Sha1. */
static const char dsc[] =
	"-----BEGIN PGP SIGNED MESSAGE-----\n"
	"Hash: SHA512\n"
	"\n"
	"Format: 3.0 (quilt)\n"
	"Source: pytorch\n"
	"Binary: libtorch-dev, libtorch2.6, python3-torch\n"
	"Architecture: any\n"
	"Version: 2.6.0+dfsg-7\n"
	"Maintainer: Debian Deep Learning Team <debian-ai@lists.debian.org>\n"
	"Homepage: https://pytorch.org/\n"
	"Standards-Version: 4.7.0\n"
	"Testsuite: autopkgtest\n"
	"Package-List:\n"
	" libtorch-dev deb science optional arch=any\n"
	" python3-torch deb python optional arch=any\n"
	"Checksums-Sha1:\n"
	" " SHA1_ORIG " 61440812 pytorch_2.6.0+dfsg.orig.tar.xz\n"
	" 89abcdef0123456789abcdef0123456789abcdef 833 pytorch_2.6.0+dfsg.orig.tar.xz.asc\n"
	" fedcba9876543210fedcba9876543210fedcba98 61234 pytorch_2.6.0+dfsg-7.debian.tar.xz\n"
	"Checksums-Sha256:\n"
	" " SHA256_ORIG " 61440812 pytorch_2.6.0+dfsg.orig.tar.xz\n"
	" " SHA256_DEB " 61234 pytorch_2.6.0+dfsg-7.debian.tar.xz\n"
	"Files:\n"
	" 0123456789abcdef0123456789abcdef 61440812 pytorch_2.6.0+dfsg.orig.tar.xz\n"
	" 89abcdef0123456789abcdef01234567 833 pytorch_2.6.0+dfsg.orig.tar.xz.asc\n"
	" fedcba9876543210fedcba9876543210 61234 pytorch_2.6.0+dfsg-7.debian.tar.xz\n"
	"\n"
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iQIzBAEBCgAdFiEE\n"
	"-----END PGP SIGNATURE-----\n";

static void orig_tarball_hash_is_found(void **state)
{
	(void)state;
	char hex[65];
	assert_int_equal(ap_dsc_sha256(dsc, "pytorch_2.6.0+dfsg.orig.tar.xz", hex), 0);
	assert_string_equal(hex, SHA256_ORIG);
}

static void hash_of_a_later_line_is_found(void **state)
{
	(void)state;
	char hex[65];
	assert_int_equal(ap_dsc_sha256(dsc, "pytorch_2.6.0+dfsg-7.debian.tar.xz", hex), 0);
	assert_string_equal(hex, SHA256_DEB);
}

static void name_only_under_sha1_is_not_found(void **state)
{
	(void)state;
	char hex[65] = "untouched";
	assert_int_equal(ap_dsc_sha256(dsc, "pytorch_2.6.0+dfsg.orig.tar.xz.asc", hex), -ENOENT);
	assert_string_equal(hex, "untouched");
}

static void prefix_of_a_name_is_not_a_match(void **state)
{
	(void)state;
	char hex[65];
	assert_int_equal(ap_dsc_sha256(dsc, "pytorch_2.6.0+dfsg.orig.tar", hex), -ENOENT);
}

static void dsc_without_sha256_section_is_not_found(void **state)
{
	(void)state;
	static const char old[] =
		"Format: 1.0\n"
		"Source: pytorch\n"
		"Version: 1.0-1\n"
		"Checksums-Sha1:\n"
		" " SHA1_ORIG " 100 pytorch_1.0.orig.tar.gz\n"
		"Files:\n"
		" 0123456789abcdef0123456789abcdef 100 pytorch_1.0.orig.tar.gz\n";
	char hex[65];
	assert_int_equal(ap_dsc_sha256(old, "pytorch_1.0.orig.tar.gz", hex), -ENOENT);
}

static void truncated_hash_is_not_accepted(void **state)
{
	(void)state;
	/* SHA256_ORIG less its last character: 63 hex digits. */
	static const char cut[] =
		"Format: 3.0 (quilt)\n"
		"Source: pytorch\n"
		"Checksums-Sha256:\n"
		" 3a9d9b2c4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5 61440812 "
		"pytorch_2.6.0+dfsg.orig.tar.xz\n"
		"Files:\n"
		" 0123456789abcdef0123456789abcdef 61440812 pytorch_2.6.0+dfsg.orig.tar.xz\n";
	char hex[65];
	assert_int_equal(ap_dsc_sha256(cut, "pytorch_2.6.0+dfsg.orig.tar.xz", hex), -ENOENT);
}

static void names_after_the_sha256_section_are_not_read_as_its_lines(void **state)
{
	(void)state;
	/* A 64-character field under Files: is not a sha256. */
	static const char later[] =
		"Source: pytorch\n"
		"Checksums-Sha256:\n"
		" " SHA256_DEB " 61234 pytorch_2.6.0+dfsg-7.debian.tar.xz\n"
		"Files:\n"
		" " SHA256_ORIG " 61440812 pytorch_2.6.0+dfsg.orig.tar.xz\n";
	char hex[65];
	assert_int_equal(ap_dsc_sha256(later, "pytorch_2.6.0+dfsg.orig.tar.xz", hex), -ENOENT);
}

/* ---- ap_tests_root / ap_testsrc_cached ---- */

#define KEY "2.6.0+dfsg"

struct fixture {
	char root[4096];
	char path[4096 + 64];
};

static int make_root(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (t_tempdir(f->root, sizeof(f->root), "test-testsrc") || setenv("APIPARITY_TESTS_ROOT", f->root, 1)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

/* Removes only what the tests may have made. */
static int remove_root(void **state)
{
	struct fixture *f = *state;
	const char *made[] = { "/" KEY "/.apiparity-tests", "/" KEY "/test", "/" KEY "/docs/source",
			       "/" KEY "/docs", "/" KEY, "" };
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(f->path, sizeof(f->path), "%s%s", f->root, made[i]);
		if (remove(f->path) && errno != ENOENT)
			return -1;
	}
	unsetenv("APIPARITY_TESTS_ROOT");
	free(f);
	return 0;
}

static const char *under(struct fixture *f, const char *rel)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->root, rel);
	return f->path;
}

static void tests_root_comes_from_the_environment(void **state)
{
	struct fixture *f = *state;
	assert_string_equal(ap_tests_root(), f->root);
}

static void unset_or_empty_tests_root_is_the_default(void **state)
{
	(void)state;
	unsetenv("APIPARITY_TESTS_ROOT");
	assert_string_equal(ap_tests_root(), AP_DEFAULT_TESTS_ROOT);
	setenv("APIPARITY_TESTS_ROOT", "", 1);
	assert_string_equal(ap_tests_root(), AP_DEFAULT_TESTS_ROOT);
}

static void version_never_unpacked_is_not_cached(void **state)
{
	struct fixture *f = *state;
	struct ap_buf out = { 0 };
	assert_int_equal(ap_testsrc_cached(KEY, &out), 0);
	assert_string_equal(ap_buf_str(&out), under(f, KEY "/test"));
	ap_buf_free(&out);
}

static void test_tree_without_stamp_is_not_cached(void **state)
{
	struct fixture *f = *state;
	struct ap_buf out = { 0 };
	assert_int_equal(mkdir(under(f, KEY), 0755), 0);
	assert_int_equal(mkdir(under(f, KEY "/test"), 0755), 0);
	assert_int_equal(ap_testsrc_cached(KEY, &out), 0);
	assert_string_equal(ap_buf_str(&out), under(f, KEY "/test"));
	ap_buf_free(&out);
}

/* KEY's test tree with its stamp, as a finished unpack leaves it. */
static void make_stamped_tree(struct fixture *f)
{
	assert_int_equal(mkdir(under(f, KEY), 0755), 0);
	assert_int_equal(mkdir(under(f, KEY "/test"), 0755), 0);
	int fd = open(under(f, KEY "/.apiparity-tests"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static void stamped_version_is_cached(void **state)
{
	struct fixture *f = *state;
	struct ap_buf out = { 0 };
	make_stamped_tree(f);
	assert_int_equal(ap_testsrc_cached(KEY, &out), 1);
	assert_string_equal(ap_buf_str(&out), under(f, KEY "/test"));
	ap_buf_free(&out);
}

static void stamp_of_another_version_does_not_count(void **state)
{
	struct fixture *f = *state;
	struct ap_buf out = { 0 };
	assert_int_equal(mkdir(under(f, KEY), 0755), 0);
	int fd = open(under(f, KEY "/.apiparity-tests"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ap_testsrc_cached("2.5.1+dfsg", &out), 0);
	assert_string_equal(ap_buf_str(&out), under(f, "2.5.1+dfsg/test"));
	ap_buf_free(&out);
}

/* A tree fetched before docs sources were is not complete: it is fetched
 * again for them; with them, it is; and they are found for torch's version. */
static void a_tree_is_complete_only_with_its_docs_sources(void **state)
{
	struct fixture *f = *state;
	struct ap_buf docs = { 0 };
	make_stamped_tree(f);
	assert_int_equal(ap_testsrc_complete(KEY), 0);
	assert_int_equal(ap_testsrc_docs("2.6.0+debian", &docs), -ENOENT);
	assert_int_equal(mkdir(under(f, KEY "/docs"), 0755), 0);
	assert_int_equal(mkdir(under(f, KEY "/docs/source"), 0755), 0);
	assert_int_equal(ap_testsrc_complete(KEY), 1);
	assert_int_equal(ap_testsrc_complete("2.5.1+dfsg"), 0);
	assert_int_equal(ap_testsrc_docs("2.6.0+debian", &docs), 0);
	assert_string_equal(ap_buf_str(&docs), under(f, KEY "/docs/source"));
	ap_buf_reset(&docs);
	/* another release's sources are not these */
	assert_int_equal(ap_testsrc_docs("2.6.1", &docs), -ENOENT);
	assert_int_equal(ap_testsrc_docs("2.6", &docs), -ENOENT);
	assert_int_equal(ap_testsrc_docs(NULL, &docs), -ENOENT);
	assert_int_equal(docs.len, 0);
	ap_buf_free(&docs);
}

#define T(name) cmocka_unit_test_setup_teardown(name, make_root, remove_root)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debian_revision_is_dropped),
		cmocka_unit_test(epoch_is_dropped),
		cmocka_unit_test(native_version_is_kept_whole),
		cmocka_unit_test(only_the_last_dash_starts_the_revision),
		cmocka_unit_test(orig_tarball_hash_is_found),
		cmocka_unit_test(hash_of_a_later_line_is_found),
		cmocka_unit_test(name_only_under_sha1_is_not_found),
		cmocka_unit_test(prefix_of_a_name_is_not_a_match),
		cmocka_unit_test(dsc_without_sha256_section_is_not_found),
		cmocka_unit_test(truncated_hash_is_not_accepted),
		cmocka_unit_test(names_after_the_sha256_section_are_not_read_as_its_lines),
		T(tests_root_comes_from_the_environment),
		T(unset_or_empty_tests_root_is_the_default),
		T(version_never_unpacked_is_not_cached),
		T(test_tree_without_stamp_is_not_cached),
		T(stamped_version_is_cached),
		T(stamp_of_another_version_does_not_count),
		T(a_tree_is_complete_only_with_its_docs_sources),
	};
	return cmocka_run_group_tests_name("testsrc", tests, NULL, NULL);
}
