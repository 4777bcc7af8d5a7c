/* test-fsutil.c - unit tests for src/base/fsutil.h: the one bounded reader of
 * input files, the check that an output directory can be written, and the
 * one directory listing. */
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

#include "base/err.h"
#include "base/fsutil.h"

/* A fresh temporary directory per test. */
static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = malloc(4096);
	if (!dir)
		return -1;
	snprintf(dir, 4096, "%s/test-fsutil-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	ap_rm_tree(*state);
	free(*state);
	return 0;
}

static void path_in(void **state, const char *name, struct ap_buf *p)
{
	ap_buf_reset(p);
	ap_buf_addf(p, "%s/%s", (const char *)*state, name);
}

static void write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ap_write_all(fd, text, len), 0);
	close(fd);
}

static void regular_file_is_read_whole_after_what_out_held(void **state)
{
	struct ap_buf p = { 0 }, out = { 0 };
	path_in(state, "f", &p);
	write_file(ap_buf_str(&p), "a\0b\n", 4);
	ap_buf_adds(&out, "x");
	assert_int_equal(ap_read_file_limited(ap_buf_str(&p), 4, &out), 0);
	assert_int_equal(out.len, 5);
	assert_memory_equal(out.data, "xa\0b\n", 5);
	ap_buf_free(&p);
	ap_buf_free(&out);
}

static void file_over_the_limit_is_efbig_and_out_is_unchanged(void **state)
{
	struct ap_buf p = { 0 }, out = { 0 };
	path_in(state, "big", &p);
	write_file(ap_buf_str(&p), "12345", 5);
	ap_buf_adds(&out, "kept");
	assert_int_equal(ap_read_file_limited(ap_buf_str(&p), 4, &out), -EFBIG);
	assert_string_equal(ap_buf_str(&out), "kept");
	ap_buf_free(&p);
	ap_buf_free(&out);
}

static void directory_is_refused_as_eisdir(void **state)
{
	struct ap_buf out = { 0 };
	assert_int_equal(ap_read_file_limited(*state, 1024, &out), -EISDIR);
	assert_int_equal(out.len, 0);
}

static void fifo_is_refused_at_once_not_waited_on(void **state)
{
	struct ap_buf p = { 0 }, out = { 0 };
	path_in(state, "fifo", &p);
	assert_int_equal(mkfifo(ap_buf_str(&p), 0600), 0);
	alarm(5); /* a reader that waits for a writer would hang here */
	assert_int_equal(ap_read_file_limited(ap_buf_str(&p), 1024, &out), -AP_ENOTREG);
	alarm(0);
	assert_string_equal(ap_strerror(-AP_ENOTREG), "not a regular file");
	ap_buf_free(&p);
}

static void endless_device_is_refused(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	assert_int_equal(ap_read_file_limited("/dev/zero", 1024, &out), -AP_ENOTREG);
	assert_int_equal(ap_read_all("/dev/zero", &out), -AP_ENOTREG);
	assert_int_equal(out.len, 0);
}

static void proc_file_that_lies_about_its_size_is_still_bounded(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	/* st_size 0, yet many bytes: the bound holds on what is read. */
	assert_int_equal(ap_read_file_limited("/proc/self/maps", 8, &out), -EFBIG);
	assert_int_equal(out.len, 0);
}

static void missing_file_is_enoent(void **state)
{
	struct ap_buf p = { 0 }, out = { 0 };
	path_in(state, "none", &p);
	assert_int_equal(ap_read_all(ap_buf_str(&p), &out), -ENOENT);
	ap_buf_free(&p);
}

static void writable_dir_is_created_with_its_parents(void **state)
{
	struct ap_buf p = { 0 };
	struct stat st;
	path_in(state, "a/b/c", &p);
	assert_int_equal(ap_dir_writable(ap_buf_str(&p)), 0);
	assert_int_equal(stat(ap_buf_str(&p), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	ap_buf_free(&p);
}

static void file_or_device_as_a_directory_is_enotdir(void **state)
{
	struct ap_buf p = { 0 };
	path_in(state, "file", &p);
	write_file(ap_buf_str(&p), "x", 1);
	assert_int_equal(ap_dir_writable(ap_buf_str(&p)), -ENOTDIR);
	assert_int_equal(ap_dir_writable("/dev/null"), -ENOTDIR);
	ap_buf_free(&p);
}

static void write_test_leaves_nothing_behind(void **state)
{
	struct ap_buf p = { 0 };
	path_in(state, "empty", &p);
	assert_int_equal(ap_dir_writable(ap_buf_str(&p)), 0);
	assert_int_equal(rmdir(ap_buf_str(&p)), 0); /* fails unless empty */
	/* ... also when the probe gets descriptor 0 (a run with stdin closed):
	 * it is a descriptor like any other, closed and its file removed */
	int in = dup(0);
	assert_true(in > 0);
	close(0);
	int r = ap_dir_writable(ap_buf_str(&p));
	int zero_free = fcntl(0, F_GETFD) < 0;
	assert_int_equal(dup2(in, 0), 0);
	close(in);
	assert_int_equal(r, 0);
	assert_true(zero_free);
	assert_int_equal(rmdir(ap_buf_str(&p)), 0);
	ap_buf_free(&p);
}

/* A directory of: b (file), a (file), .hidden (file), d/ (dir), ln -> a,
 * dl -> d. */
static void make_listing_dir(void **state, struct ap_buf *p)
{
	static const char *files[] = { "b", "a", ".hidden" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		path_in(state, files[i], p);
		write_file(ap_buf_str(p), "x", 1);
	}
	path_in(state, "d", p);
	assert_int_equal(mkdir(ap_buf_str(p), 0755), 0);
	path_in(state, "ln", p);
	assert_int_equal(symlink("a", ap_buf_str(p)), 0);
	path_in(state, "dl", p);
	assert_int_equal(symlink("d", ap_buf_str(p)), 0);
}

/* The names listed, joined by spaces. */
static void joined(char **names, size_t n, struct ap_buf *out)
{
	ap_buf_reset(out);
	for (size_t i = 0; i < n; i++)
		ap_buf_addf(out, "%s%s", i ? " " : "", names[i]);
}

static void listing_is_sorted_and_holds_no_dot_entries(void **state)
{
	struct ap_buf p = { 0 }, got = { 0 };
	char **names;
	size_t n;
	make_listing_dir(state, &p);
	assert_int_equal(ap_dir_list(*state, 0, &names, &n), 0);
	joined(names, n, &got);
	assert_string_equal(ap_buf_str(&got), ".hidden a b d dl ln");
	ap_dir_free(names, n);
	assert_int_equal(ap_dir_list(*state, AP_DIR_NODOT, &names, &n), 0);
	joined(names, n, &got);
	assert_string_equal(ap_buf_str(&got), "a b d dl ln");
	ap_dir_free(names, n);
	ap_buf_free(&p);
	ap_buf_free(&got);
}

static void regular_listing_leaves_out_dirs_and_links(void **state)
{
	struct ap_buf p = { 0 }, got = { 0 };
	char **names;
	size_t n;
	make_listing_dir(state, &p);
	assert_int_equal(ap_dir_list(*state, AP_DIR_REGULAR | AP_DIR_NODOT, &names, &n), 0);
	joined(names, n, &got);
	assert_string_equal(ap_buf_str(&got), "a b");
	ap_dir_free(names, n);
	ap_buf_free(&p);
	ap_buf_free(&got);
}

static void marked_listing_ends_real_directories_in_a_slash(void **state)
{
	struct ap_buf p = { 0 }, got = { 0 };
	char **names;
	size_t n;
	make_listing_dir(state, &p);
	assert_int_equal(ap_dir_list(*state, AP_DIR_MARK, &names, &n), 0);
	joined(names, n, &got);
	assert_string_equal(ap_buf_str(&got), ".hidden a b d/ dl ln");
	ap_dir_free(names, n);
	ap_buf_free(&p);
	ap_buf_free(&got);
}

static void listing_at_a_descriptor_leaves_it_open_and_unmoved(void **state)
{
	struct ap_buf p = { 0 }, got = { 0 };
	char **names;
	size_t n;
	make_listing_dir(state, &p);
	int fd = open(*state, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	off_t at = lseek(fd, 0, SEEK_CUR);
	for (int round = 0; round < 2; round++) {
		assert_int_equal(ap_dir_list_at(fd, AP_DIR_NODOT, &names, &n), 0);
		joined(names, n, &got);
		assert_string_equal(ap_buf_str(&got), "a b d dl ln");
		ap_dir_free(names, n);
	}
	assert_true(lseek(fd, 0, SEEK_CUR) == at);
	close(fd);
	ap_buf_free(&p);
	ap_buf_free(&got);
}

static void listing_what_is_no_directory_is_an_error(void **state)
{
	struct ap_buf p = { 0 };
	char **names = (char **)&p;
	size_t n = 7;
	path_in(state, "missing", &p);
	assert_int_equal(ap_dir_list(ap_buf_str(&p), 0, &names, &n), -ENOENT);
	assert_null(names);
	assert_int_equal(n, 0);
	path_in(state, "file", &p);
	write_file(ap_buf_str(&p), "x", 1);
	assert_int_equal(ap_dir_list(ap_buf_str(&p), 0, &names, &n), -ENOTDIR);
	assert_int_equal(ap_dir_list(*state, 0, &names, &n), 0);
	assert_int_equal(n, 1);
	ap_dir_free(names, n);
	ap_buf_free(&p);
}

static void empty_directory_lists_nothing(void **state)
{
	char **names;
	size_t n = 7;
	assert_int_equal(ap_dir_list(*state, 0, &names, &n), 0);
	assert_null(names);
	assert_int_equal(n, 0);
	ap_dir_free(names, n);
}

/* A tree with a file, a link inside it to that file, a link that climbs
 * out to its sibling, and a name that climbs out without a link. */
static void path_within_follows_links_out_of_the_tree(void **state)
{
	struct ap_buf tree = { 0 }, p = { 0 };
	path_in(state, "tree/sub", &p);
	assert_int_equal(ap_mkdirs(ap_buf_str(&p)), 0);
	path_in(state, "tree", &tree);
	path_in(state, "tree/sub/a.py", &p);
	write_file(ap_buf_str(&p), "x", 1);
	path_in(state, "outside.py", &p);
	write_file(ap_buf_str(&p), "x", 1);
	path_in(state, "tree/in.py", &p);
	assert_int_equal(symlink("sub/a.py", ap_buf_str(&p)), 0);
	path_in(state, "tree/out.py", &p);
	assert_int_equal(symlink("../outside.py", ap_buf_str(&p)), 0);
	path_in(state, "tree2", &p); /* a sibling whose name starts with the tree's */
	assert_int_equal(ap_mkdirs(ap_buf_str(&p)), 0);
	path_in(state, "tree2/b.py", &p);
	write_file(ap_buf_str(&p), "x", 1);
	const char *t = ap_buf_str(&tree);
	assert_int_equal(ap_path_within(t, "sub/a.py"), 1);
	assert_int_equal(ap_path_within(t, "in.py"), 1);
	assert_int_equal(ap_path_within(t, "out.py"), 0);
	assert_int_equal(ap_path_within(t, "../tree2/b.py"), 0);
	assert_int_equal(ap_path_within(t, "missing.py"), -ENOENT);
	assert_int_equal(ap_path_within("/", "etc"), 1);
	path_in(state, "made/deep/file.ini", &p);
	assert_int_equal(ap_mkdirs_parent(ap_buf_str(&p)), 0);
	path_in(state, "made/deep", &p);
	struct stat st;
	assert_int_equal(stat(ap_buf_str(&p), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(ap_mkdirs_parent("file.ini"), 0);
	ap_buf_free(&tree);
	ap_buf_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(regular_file_is_read_whole_after_what_out_held, setup, teardown),
		cmocka_unit_test_setup_teardown(file_over_the_limit_is_efbig_and_out_is_unchanged, setup, teardown),
		cmocka_unit_test_setup_teardown(directory_is_refused_as_eisdir, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_is_refused_at_once_not_waited_on, setup, teardown),
		cmocka_unit_test_setup_teardown(endless_device_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(proc_file_that_lies_about_its_size_is_still_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_file_is_enoent, setup, teardown),
		cmocka_unit_test_setup_teardown(writable_dir_is_created_with_its_parents, setup, teardown),
		cmocka_unit_test_setup_teardown(file_or_device_as_a_directory_is_enotdir, setup, teardown),
		cmocka_unit_test_setup_teardown(write_test_leaves_nothing_behind, setup, teardown),
		cmocka_unit_test_setup_teardown(listing_is_sorted_and_holds_no_dot_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(regular_listing_leaves_out_dirs_and_links, setup, teardown),
		cmocka_unit_test_setup_teardown(marked_listing_ends_real_directories_in_a_slash, setup, teardown),
		cmocka_unit_test_setup_teardown(listing_at_a_descriptor_leaves_it_open_and_unmoved, setup, teardown),
		cmocka_unit_test_setup_teardown(listing_what_is_no_directory_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_directory_lists_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(path_within_follows_links_out_of_the_tree, setup, teardown),
	};
	return cmocka_run_group_tests_name("fsutil", tests, NULL, NULL);
}
