/* test-manifest.c - unit tests for src/manifest.h: MANIFEST.sha256 over a
 * bundle, in sha256sum(1) format, and verifying an untrusted bundle against it
 * without ever reading outside it. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "evidence/manifest.h"
#include "testutil.h"

#define ABC_SHA256 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MAX_ISSUES 16

struct fixture {
	char top[4096];       /* the temporary directory; the bundle lies inside */
	char bundle[4096 + 16];
	struct ap_manifest_issue issues[MAX_ISSUES];
};

static int make_tempdir(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (t_tempdir(f->top, sizeof(f->top), "test-manifest")) {
		free(f);
		return -1;
	}
	snprintf(f->bundle, sizeof(f->bundle), "%s/bundle", f->top);
	*state = f;
	return mkdir(f->bundle, 0755);
}

static int remove_tempdir(void **state)
{
	struct fixture *f = *state;
	int r = t_rmtree(f->top);
	free(f);
	return r;
}

/* top-relative or bundle-relative path into a static buffer */
static const char *at(const char *dir, const char *rel)
{
	static char path[2][8192];
	static int which;
	which = !which;
	snprintf(path[which], sizeof(path[which]), "%s/%s", dir, rel);
	return path[which];
}

static void slurp(const char *path, struct ap_buf *out)
{
	char chunk[4096];
	size_t n;
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		assert_int_equal(ap_buf_add(out, chunk, n), 0);
	fclose(fp);
}

static void put_sample_bundle(const char *bundle)
{
	t_put(bundle, "results.jsonl", "{\"i\":0}\n");
	t_put(bundle, "env/bookworm/fingerprint.json", "{\"os\":\"debian\"}\n");
	t_put(bundle, "env/sid/fingerprint.json", "{\"os\":\"debian sid\"}\n");
	t_put(bundle, "empty", "");
}

static void write_manifest(const char *bundle)
{
	struct ap_buf err = { 0 };
	assert_int_equal(ap_manifest_write(bundle, &err), 0);
	assert_string_equal(ap_buf_str(&err), "");
}

/* Replaces the manifest with text, as someone handing over a bundle might. */
static void put_manifest(const char *bundle, const char *text)
{
	t_put(bundle, AP_MANIFEST_NAME, text);
}

static void assert_issue(const struct ap_manifest_issue *is, int kind, const char *path,
			 int line)
{
	assert_int_equal(is->kind, kind);
	assert_string_equal(is->path, path);
	assert_int_equal(is->line, line);
}

/* An inotify watch for any open or read of path. */
static int watch_reads(const char *path)
{
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(ino >= 0);
	assert_true(inotify_add_watch(ino, path, IN_OPEN | IN_ACCESS) >= 0);
	return ino;
}

static int was_read(int ino)
{
	char ev[4096];
	ssize_t n = read(ino, ev, sizeof(ev));
	assert_true(n > 0 || errno == EAGAIN);
	return n > 0;
}

/* Asserts verify never touched path, then that the watch would have seen it. */
static void assert_never_read(int ino, const char *path)
{
	char hex[65];
	assert_false(was_read(ino));
	assert_int_equal(ap_sha256_file(path, hex), 0);
	assert_true(was_read(ino));
	close(ino);
}

static void sha256_of_abc_is_the_fips_test_vector(void **state)
{
	(void)state;
	char hex[65];
	ap_sha256_mem("abc", 3, hex);
	assert_string_equal(hex, ABC_SHA256);
	ap_sha256_mem("", 0, hex);
	assert_string_equal(hex, EMPTY_SHA256);
}

static void sha256_of_a_file_matches_sha256_of_its_bytes(void **state)
{
	struct fixture *f = *state;
	char hex[65];
	t_put(f->top, "abc", "abc");
	assert_int_equal(ap_sha256_file(at(f->top, "abc"), hex), 0);
	assert_string_equal(hex, ABC_SHA256);
}

static void sha256_of_a_missing_file_fails_with_enoent(void **state)
{
	struct fixture *f = *state;
	char hex[65];
	assert_int_equal(ap_sha256_file(at(f->top, "nope"), hex), -ENOENT);
}

static void written_manifest_verifies_with_no_issues(void **state)
{
	struct fixture *f = *state;
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 0);
}

static void manifest_of_an_empty_bundle_is_empty_and_verifies(void **state)
{
	struct fixture *f = *state;
	struct ap_buf text = { 0 };
	write_manifest(f->bundle);
	slurp(at(f->bundle, AP_MANIFEST_NAME), &text);
	assert_int_equal(text.len, 0);
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 0);
}

static void manifest_lines_are_sorted_by_byte_value_in_sha256sum_format(void **state)
{
	struct fixture *f = *state;
	struct ap_buf text = { 0 };
	/* readdir order and locale order both differ from strcmp order here */
	t_put(f->bundle, "a/c", "abc");
	t_put(f->bundle, "a-b", "");
	t_put(f->bundle, "B", "");
	t_put(f->bundle, "a0", "");
	write_manifest(f->bundle);
	slurp(at(f->bundle, AP_MANIFEST_NAME), &text);
	assert_string_equal(ap_buf_str(&text),
			    EMPTY_SHA256 "  B\n"
			    EMPTY_SHA256 "  a-b\n"
			    ABC_SHA256 "  a/c\n"
			    EMPTY_SHA256 "  a0\n");
	ap_buf_free(&text);
}

static void sha256sum_accepts_the_written_manifest(void **state)
{
	struct fixture *f = *state;
	char cmd[8192 + 128];
	if (system("command -v sha256sum >/dev/null 2>&1"))
		skip();
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	snprintf(cmd, sizeof(cmd), "cd '%s' && sha256sum -c --quiet --strict %s >&2",
		 f->bundle, AP_MANIFEST_NAME);
	assert_int_equal(system(cmd), 0);
}

static void written_manifest_equals_what_sha256sum_writes(void **state)
{
	struct fixture *f = *state;
	struct ap_buf ours = { 0 }, theirs = { 0 };
	char cmd[8192 + 256];
	if (system("command -v sha256sum >/dev/null 2>&1"))
		skip();
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && find . -type f ! -path './%s' -printf '%%P\\n' | LC_ALL=C sort"
		 " | xargs -d '\\n' sha256sum > ../sha256sum.out",
		 f->bundle, AP_MANIFEST_NAME);
	assert_int_equal(system(cmd), 0);
	slurp(at(f->bundle, AP_MANIFEST_NAME), &ours);
	slurp(at(f->top, "sha256sum.out"), &theirs);
	assert_string_equal(ap_buf_str(&ours), ap_buf_str(&theirs));
	ap_buf_free(&ours);
	ap_buf_free(&theirs);
}

static void rewriting_replaces_the_manifest_and_leaves_no_temporary_file(void **state)
{
	struct fixture *f = *state;
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	t_put(f->bundle, "added-later", "x");
	write_manifest(f->bundle);
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 0);
	char cmd[8192 + 128];
	snprintf(cmd, sizeof(cmd), "test -z \"$(find '%s' -name '.%s*')\"", f->bundle,
		 AP_MANIFEST_NAME);
	assert_int_equal(system(cmd), 0);
}

static void one_changed_byte_is_one_mismatch_naming_the_file(void **state)
{
	struct fixture *f = *state;
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	t_put(f->bundle, "env/sid/fingerprint.json", "{\"os\":\"debian Sid\"}\n");
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	/* lines: empty, env/bookworm/..., env/sid/..., results.jsonl */
	assert_issue(&f->issues[0], AP_MF_MISMATCH, "env/sid/fingerprint.json", 3);
}

static void extra_file_is_reported_unlisted(void **state)
{
	struct fixture *f = *state;
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	t_put(f->bundle, "env/sid/extra.log", "late\n");
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	assert_issue(&f->issues[0], AP_MF_UNLISTED, "env/sid/extra.log", 0);
}

static void removed_file_is_reported_missing_with_its_line(void **state)
{
	struct fixture *f = *state;
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	assert_int_equal(unlink(at(f->bundle, "results.jsonl")), 0);
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	assert_issue(&f->issues[0], AP_MF_MISSING, "results.jsonl", 4);
}

static void path_listed_twice_is_a_duplicate_naming_its_second_line(void **state)
{
	struct fixture *f = *state;
	struct ap_buf text = { 0 };
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	slurp(at(f->bundle, AP_MANIFEST_NAME), &text);
	const char *last = strstr(ap_buf_str(&text), "  results.jsonl\n") - AP_SHA256_HEX_LEN;
	assert_int_equal(ap_buf_adds(&text, last), 0);
	put_manifest(f->bundle, ap_buf_str(&text));
	ap_buf_free(&text);
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	assert_issue(&f->issues[0], AP_MF_DUPLICATE, "results.jsonl", 5);
}

static void signature_beside_the_manifest_is_neither_listed_nor_unlisted(void **state)
{
	struct fixture *f = *state;
	struct ap_buf text = { 0 };
	put_sample_bundle(f->bundle);
	t_put(f->bundle, AP_MANIFEST_SIG_NAME, "old\n");
	write_manifest(f->bundle);
	slurp(at(f->bundle, AP_MANIFEST_NAME), &text);
	assert_null(strstr(ap_buf_str(&text), AP_MANIFEST_SIG_NAME));
	ap_buf_free(&text);
	t_put(f->bundle, AP_MANIFEST_SIG_NAME, "new\n");
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 0);
}

/* Only the top's manifest and signature are left out: files of those names
 * inside an environment's folder are evidence like any other. */
static void manifest_names_below_the_top_are_listed_and_checked(void **state)
{
	struct fixture *f = *state;
	struct ap_buf text = { 0 };
	put_sample_bundle(f->bundle);
	t_put(f->bundle, "env/sid/" AP_MANIFEST_NAME, "inner\n");
	write_manifest(f->bundle);
	slurp(at(f->bundle, AP_MANIFEST_NAME), &text);
	assert_non_null(strstr(ap_buf_str(&text), "  env/sid/" AP_MANIFEST_NAME "\n"));
	ap_buf_free(&text);
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 0);
	t_put(f->bundle, "env/bookworm/" AP_MANIFEST_SIG_NAME, "late\n");
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	assert_issue(&f->issues[0], AP_MF_UNLISTED, "env/bookworm/" AP_MANIFEST_SIG_NAME, 0);
}

static void missing_manifest_fails_with_enoent(void **state)
{
	struct fixture *f = *state;
	put_sample_bundle(f->bundle);
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), -ENOENT);
}

static void issues_beyond_max_are_counted_but_not_stored(void **state)
{
	struct fixture *f = *state;
	write_manifest(f->bundle);
	t_put(f->bundle, "u1", "");
	t_put(f->bundle, "u2", "");
	t_put(f->bundle, "u3", "");
	f->issues[2].line = 42;
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, 2), 3);
	assert_issue(&f->issues[0], AP_MF_UNLISTED, "u1", 0);
	assert_issue(&f->issues[1], AP_MF_UNLISTED, "u2", 0);
	assert_int_equal(f->issues[2].line, 42);
}

static void dotdot_path_is_badpath_and_the_file_outside_is_never_read(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "etc/passwd", "root:x:0:0\n");
	put_manifest(f->bundle, EMPTY_SHA256 "  ../etc/passwd\n");
	int ino = watch_reads(at(f->top, "etc/passwd"));
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	assert_issue(&f->issues[0], AP_MF_BADPATH, "../etc/passwd", 1);
	assert_never_read(ino, at(f->top, "etc/passwd"));
}

static void absolute_path_is_badpath(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "secret", "s");
	char text[8192 + 128];
	snprintf(text, sizeof(text), EMPTY_SHA256 "  %s\n", at(f->top, "secret"));
	put_manifest(f->bundle, text);
	int ino = watch_reads(at(f->top, "secret"));
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	assert_issue(&f->issues[0], AP_MF_BADPATH, at(f->top, "secret"), 1);
	assert_never_read(ino, at(f->top, "secret"));
}

static void listed_symlink_out_of_the_bundle_is_badpath_and_never_followed(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "secret", "s");
	assert_int_equal(symlink("../secret", at(f->bundle, "link")), 0);
	put_manifest(f->bundle, EMPTY_SHA256 "  link\n");
	int ino = watch_reads(at(f->top, "secret"));
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	assert_issue(&f->issues[0], AP_MF_BADPATH, "link", 1);
	assert_never_read(ino, at(f->top, "secret"));
}

static void path_through_a_symlinked_directory_is_badpath_and_never_followed(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "outside/secret", "s");
	assert_int_equal(symlink("../outside", at(f->bundle, "dir")), 0);
	put_manifest(f->bundle, EMPTY_SHA256 "  dir/secret\n");
	int ino = watch_reads(at(f->top, "outside/secret"));
	/* the link itself is listed by no line, so it is unlisted too */
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 2);
	assert_issue(&f->issues[0], AP_MF_BADPATH, "dir/secret", 1);
	assert_issue(&f->issues[1], AP_MF_UNLISTED, "dir", 0);
	assert_never_read(ino, at(f->top, "outside/secret"));
}

static void unlisted_symlink_is_reported_unlisted(void **state)
{
	struct fixture *f = *state;
	put_sample_bundle(f->bundle);
	write_manifest(f->bundle);
	assert_int_equal(symlink("results.jsonl", at(f->bundle, "alias")), 0);
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 1);
	assert_issue(&f->issues[0], AP_MF_UNLISTED, "alias", 0);
}

static void malformed_lines_are_reported_with_their_line_numbers(void **state)
{
	struct fixture *f = *state;
	t_put(f->bundle, "a", "abc");
	put_manifest(f->bundle,
		     ABC_SHA256 "  a\n"
		     "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD  a\n"
		     ABC_SHA256 " a\n"
		     ABC_SHA256 " *a\n"
		     "ba7816bf  a\n"
		     ABC_SHA256 "  \n"
		     "\n"
		     ABC_SHA256 "  a");
	assert_int_equal(ap_manifest_verify(f->bundle, f->issues, MAX_ISSUES), 7);
	for (int i = 0; i < 7; i++) {
		assert_int_equal(f->issues[i].kind, AP_MF_MALFORMED);
		assert_int_equal(f->issues[i].line, i + 2);
	}
}

static void symlink_in_the_bundle_makes_write_fail_naming_it(void **state)
{
	struct fixture *f = *state;
	struct ap_buf err = { 0 };
	put_sample_bundle(f->bundle);
	assert_int_equal(symlink("../../results.jsonl", at(f->bundle, "env/sid/alias")), 0);
	assert_int_equal(ap_manifest_write(f->bundle, &err), -ELOOP);
	assert_non_null(strstr(ap_buf_str(&err), "env/sid/alias"));
	assert_int_equal(access(at(f->bundle, AP_MANIFEST_NAME), F_OK), -1);
	ap_buf_free(&err);
}

static void fifo_in_the_bundle_makes_write_fail_naming_it(void **state)
{
	struct fixture *f = *state;
	struct ap_buf err = { 0 };
	put_sample_bundle(f->bundle);
	assert_int_equal(mkfifo(at(f->bundle, "pipe"), 0644), 0);
	assert_int_equal(ap_manifest_write(f->bundle, &err), -EINVAL);
	assert_non_null(strstr(ap_buf_str(&err), "pipe"));
	ap_buf_free(&err);
}

static void path_is_safe_accepts_plain_relative_paths(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"a", "results.jsonl", "env/sid/fingerprint.json", ".hidden", "a..b", "...",
		"x/..y", "sp ace", "\xc3\xa9t\xc3\xa9",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_true(ap_path_is_safe(ok[i]));
}

static void path_is_safe_rejects_paths_that_could_leave_the_bundle(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "/", "/etc/passwd", "..", "../x", "a/..", "a/../b", ".", "./a",
		"a/./b", "a//b", "a/", "a\\b", "..\\x", "a\nb", "a\tb", "a\x7f", "a\x01",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(ap_path_is_safe(bad[i]));
}

static int list_into(void *ctx, const char *sha256, const char *rel)
{
	ap_buf_addf(ctx, "%s %s\n", sha256, rel);
	return 0;
}

static void list_gives_each_line_of_a_written_manifest_in_order(void **state)
{
	struct fixture *f = *state;
	struct ap_buf got = { 0 };
	t_put(f->bundle, "run.log", "abc");
	t_put(f->bundle, "empty", "");
	write_manifest(f->bundle);
	assert_int_equal(ap_manifest_list(f->bundle, list_into, &got), 0);
	assert_string_equal(ap_buf_str(&got), EMPTY_SHA256 " empty\n" ABC_SHA256 " run.log\n");
	ap_buf_free(&got);
}

static void list_skips_malformed_lines_and_paths_that_leave_the_bundle(void **state)
{
	struct fixture *f = *state;
	struct ap_buf got = { 0 };
	put_manifest(f->bundle, "nonsense\n" ABC_SHA256 "  ../../etc/passwd\n"
		     ABC_SHA256 "  /etc/passwd\n" ABC_SHA256 " one-space\n"
		     ABC_SHA256 "  run.log\n" ABC_SHA256 "  no-newline");
	assert_int_equal(ap_manifest_list(f->bundle, list_into, &got), 0);
	assert_string_equal(ap_buf_str(&got), ABC_SHA256 " run.log\n");
	ap_buf_free(&got);
}

static int list_stop(void *ctx, const char *sha256, const char *rel)
{
	(void)sha256, (void)rel;
	++*(int *)ctx;
	return -ECANCELED;
}

static void list_stops_at_the_first_callback_that_fails(void **state)
{
	struct fixture *f = *state;
	int calls = 0;
	put_manifest(f->bundle, ABC_SHA256 "  a\n" ABC_SHA256 "  b\n");
	assert_int_equal(ap_manifest_list(f->bundle, list_stop, &calls), -ECANCELED);
	assert_int_equal(calls, 1);
}

static void list_without_a_manifest_fails_with_enoent(void **state)
{
	struct fixture *f = *state;
	struct ap_buf got = { 0 };
	assert_int_equal(ap_manifest_list(f->bundle, list_into, &got), -ENOENT);
	assert_int_equal(got.len, 0);
}

#define T(name) cmocka_unit_test_setup_teardown(name, make_tempdir, remove_tempdir)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha256_of_abc_is_the_fips_test_vector),
		T(sha256_of_a_file_matches_sha256_of_its_bytes),
		T(sha256_of_a_missing_file_fails_with_enoent),
		T(written_manifest_verifies_with_no_issues),
		T(manifest_of_an_empty_bundle_is_empty_and_verifies),
		T(manifest_lines_are_sorted_by_byte_value_in_sha256sum_format),
		T(sha256sum_accepts_the_written_manifest),
		T(written_manifest_equals_what_sha256sum_writes),
		T(rewriting_replaces_the_manifest_and_leaves_no_temporary_file),
		T(one_changed_byte_is_one_mismatch_naming_the_file),
		T(extra_file_is_reported_unlisted),
		T(removed_file_is_reported_missing_with_its_line),
		T(path_listed_twice_is_a_duplicate_naming_its_second_line),
		T(signature_beside_the_manifest_is_neither_listed_nor_unlisted),
		T(manifest_names_below_the_top_are_listed_and_checked),
		T(missing_manifest_fails_with_enoent),
		T(issues_beyond_max_are_counted_but_not_stored),
		T(dotdot_path_is_badpath_and_the_file_outside_is_never_read),
		T(absolute_path_is_badpath),
		T(listed_symlink_out_of_the_bundle_is_badpath_and_never_followed),
		T(path_through_a_symlinked_directory_is_badpath_and_never_followed),
		T(unlisted_symlink_is_reported_unlisted),
		T(malformed_lines_are_reported_with_their_line_numbers),
		T(symlink_in_the_bundle_makes_write_fail_naming_it),
		T(fifo_in_the_bundle_makes_write_fail_naming_it),
		T(path_is_safe_accepts_plain_relative_paths),
		T(path_is_safe_rejects_paths_that_could_leave_the_bundle),
		T(list_gives_each_line_of_a_written_manifest_in_order),
		T(list_skips_malformed_lines_and_paths_that_leave_the_bundle),
		T(list_stops_at_the_first_callback_that_fails),
		T(list_without_a_manifest_fails_with_enoent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
