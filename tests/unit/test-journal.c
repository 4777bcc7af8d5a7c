/* test-journal.c - unit tests for src/journal.h: an append-only file of JSON
 * lines that survives a crash mid-append, and reads back a torn end as such. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/err.h"
#include "evidence/journal.h"
#include "testutil.h"

struct fixture {
	char dir[4096];
	char path[4096 + 32];
};

static int make_tempdir(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (t_tempdir(f->dir, sizeof(f->dir), "test-journal")) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/results.jsonl", f->dir);
	*state = f;
	return 0;
}

static int remove_tempdir(void **state)
{
	struct fixture *f = *state;
	unlink(f->path);
	int r = rmdir(f->dir);
	free(f);
	return r;
}

static json_t *record(int i)
{
	return json_pack("{s:i, s:s, s:[b,n]}", "i", i, "api", "torch.add\nline two", "ok",
			 i % 2);
}

static void append_records(const char *path, int from, int to)
{
	struct ap_journal *j = ap_journal_open(path);
	assert_non_null(j);
	for (int i = from; i < to; i++) {
		json_t *rec = record(i);
		assert_int_equal(ap_journal_append(j, rec), 0);
		json_decref(rec);
	}
	ap_journal_close(j);
}

/* Appends raw bytes with plain write(), as a crash mid-append would leave them. */
static void append_raw(const char *path, const char *bytes)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes, strlen(bytes)), (ssize_t)strlen(bytes));
	close(fd);
}

static void assert_records(const char *path, int n, int want_torn)
{
	struct ap_buf err = { 0 };
	json_t *recs = NULL;
	int torn = -1;
	assert_int_equal(ap_journal_read(path, &recs, &torn, &err), 0);
	assert_string_equal(ap_buf_str(&err), "");
	assert_int_equal(torn, want_torn);
	assert_int_equal(json_array_size(recs), n);
	for (int i = 0; i < n; i++) {
		json_t *want = record(i);
		assert_true(json_equal(json_array_get(recs, i), want));
		json_decref(want);
	}
	json_decref(recs);
}

static size_t count_lines(const char *path)
{
	char buf[8192];
	size_t lines = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf));
	assert_true(n >= 0);
	for (ssize_t i = 0; i < n; i++)
		lines += buf[i] == '\n';
	close(fd);
	return lines;
}

static void three_appended_records_read_back_in_order(void **state)
{
	struct fixture *f = *state;
	append_records(f->path, 0, 3);
	assert_records(f->path, 3, 0);
}

static void each_record_is_one_line_even_with_a_newline_inside_a_string(void **state)
{
	struct fixture *f = *state;
	append_records(f->path, 0, 3);
	assert_int_equal(count_lines(f->path), 3);
}

static void open_creates_a_missing_journal_empty(void **state)
{
	struct fixture *f = *state;
	struct ap_journal *j = ap_journal_open(f->path);
	assert_non_null(j);
	ap_journal_close(j);
	assert_records(f->path, 0, 0);
}

static void open_in_a_missing_directory_fails_with_errno(void **state)
{
	struct fixture *f = *state;
	char path[sizeof(f->dir) + 32];
	snprintf(path, sizeof(path), "%s/no-such-dir/results.jsonl", f->dir);
	errno = 0;
	assert_null(ap_journal_open(path));
	assert_int_equal(errno, ENOENT);
}

static void torn_last_line_is_dropped_and_reported(void **state)
{
	struct fixture *f = *state;
	append_records(f->path, 0, 2);
	append_raw(f->path, "{\"i\":2,\"api\":\"tor");
	assert_records(f->path, 2, 1);
}

static void complete_last_record_without_its_newline_counts_as_torn(void **state)
{
	struct fixture *f = *state;
	append_records(f->path, 0, 2);
	append_raw(f->path, "{\"i\":2}");
	assert_records(f->path, 2, 1);
}

static void unparsable_last_line_with_its_newline_counts_as_torn(void **state)
{
	struct fixture *f = *state;
	append_records(f->path, 0, 2);
	append_raw(f->path, "{\"i\":\n");
	assert_records(f->path, 2, 1);
}

static void bad_middle_line_is_an_error_naming_path_and_line(void **state)
{
	struct fixture *f = *state;
	struct ap_buf err = { 0 };
	json_t *recs = NULL;
	int torn = -1;
	char want[sizeof(f->path) + 8];

	append_records(f->path, 0, 1);
	append_raw(f->path, "not json\n{\"i\":1}\n");
	assert_int_equal(ap_journal_read(f->path, &recs, &torn, &err), -AP_EPROTO);
	assert_null(recs);
	assert_int_equal(torn, 0);
	snprintf(want, sizeof(want), "%s:2: ", f->path);
	assert_memory_equal(ap_buf_str(&err), want, strlen(want));
	assert_true(err.len > strlen(want));
	ap_buf_free(&err);
}

static void reading_a_missing_journal_fails_with_enoent(void **state)
{
	struct fixture *f = *state;
	struct ap_buf err = { 0 };
	json_t *recs = NULL;
	int torn = -1;
	assert_int_equal(ap_journal_read(f->path, &recs, &torn, &err), -ENOENT);
	assert_null(recs);
}

static void reopening_appends_after_existing_records(void **state)
{
	struct fixture *f = *state;
	append_records(f->path, 0, 2);
	append_records(f->path, 2, 4);
	assert_records(f->path, 4, 0);
}

static void reopening_after_a_torn_line_drops_it_so_new_records_read_back(void **state)
{
	struct fixture *f = *state;
	append_records(f->path, 0, 2);
	append_raw(f->path, "{\"i\":2,\"ap");
	append_records(f->path, 2, 4);
	assert_records(f->path, 4, 0);
}

static void reopening_after_an_unparsable_last_line_drops_it(void **state)
{
	struct fixture *f = *state;
	append_records(f->path, 0, 2);
	append_raw(f->path, "{\"i\":\n");
	append_records(f->path, 2, 3);
	assert_records(f->path, 3, 0);
}

static void append_to_a_full_disk_fails_with_enospc(void **state)
{
	(void)state;
	struct ap_journal *j = ap_journal_open("/dev/full");
	if (!j)
		skip();
	json_t *rec = record(0);
	assert_int_equal(ap_journal_append(j, rec), -ENOSPC);
	json_decref(rec);
	ap_journal_close(j);
}

/* A file size limit cuts the write short part-way through the record, as a
 * full disk can; the journal must not keep the part that got written. */
static void append_cut_short_leaves_only_whole_records(void **state)
{
	struct fixture *f = *state;
	struct rlimit old, lim;
	struct stat st;

	append_records(f->path, 0, 2);
	assert_int_equal(stat(f->path, &st), 0);
	struct ap_journal *j = ap_journal_open(f->path);
	assert_non_null(j);
	json_t *rec = record(2);
	void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size + 10;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	int r = ap_journal_append(j, rec);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_handler);
	json_decref(rec);
	ap_journal_close(j);

	assert_int_equal(r, -EFBIG);
	assert_records(f->path, 2, 0);
	append_records(f->path, 2, 3);
	assert_records(f->path, 3, 0);
}

/* --- reading a journal as evidence ----------------------------------------- */

static void append_json(const char *path, const char *text)
{
	struct ap_journal *j = ap_journal_open(path);
	json_t *rec = json_loads(text, 0, NULL);
	assert_non_null(j);
	assert_non_null(rec);
	assert_int_equal(ap_journal_append(j, rec), 0);
	json_decref(rec);
	ap_journal_close(j);
}

#define CHECK_REC "{\"type\":\"check\",\"data\":{\"name\":\"p\",\"kind\":\"probe\"," \
		  "\"status\":\"PASS\",\"reason\":null,\"trace\":[{\"step\":\"s\",\"value\":1}]}}"

static void validate_reads_the_records_a_run_writes(void **state)
{
	struct fixture *f = *state;
	json_t *recs, *problems;
	append_json(f->path, "{\"type\":\"start\",\"data\":{\"name\":\"trixie\"}}");
	append_json(f->path, CHECK_REC);
	append_json(f->path, "{\"type\":\"error\",\"data\":{\"message\":\"x\"}}");
	assert_int_equal(ap_journal_validate(f->path, &recs, &problems), 0);
	assert_int_equal(json_array_size(recs), 3);
	assert_int_equal(json_array_size(problems), 0);
	json_decref(recs);
	json_decref(problems);
}

static void journal_facts_count_each_type_and_keep_the_first(void **state)
{
	struct fixture *f = *state;
	json_t *recs, *problems;
	struct ap_journal_facts jf;
	append_json(f->path, "{\"type\":\"resolution\",\"data\":{\"target\":\"torch.add\"}}");
	append_json(f->path, CHECK_REC);
	append_json(f->path, "{\"type\":\"resolution\",\"data\":{\"target\":\"torch.sub\"}}");
	append_json(f->path, CHECK_REC);
	assert_int_equal(ap_journal_validate(f->path, &recs, &problems), 0);
	assert_int_equal(ap_journal_facts(recs, &jf), 0);
	assert_int_equal(jf.count[AP_RECORD_RESOLUTION], 2);
	assert_int_equal(jf.count[AP_RECORD_CHECK], 2);
	assert_int_equal(jf.count[AP_RECORD_START], 0);
	assert_null(jf.first[AP_RECORD_START]);
	assert_string_equal(jf.resolved_target, "torch.add");
	assert_int_equal(jf.nchecks, 2);
	assert_string_equal(jf.checks[1].name, "p");
	assert_int_equal(jf.checks[1].kind, AP_KIND_PROBE);
	assert_int_equal(jf.checks[1].status, AP_PASS);
	assert_ptr_equal(jf.checks[1].json, json_object_get(json_array_get(recs, 3), "data"));
	assert_int_equal(ap_record_type_parse("fingerprint"), AP_RECORD_FINGERPRINT);
	assert_int_equal(ap_record_type_parse("fingerprints"), AP_RECORD_UNKNOWN);
	assert_string_equal(ap_record_type_name(AP_RECORD_ERROR), "error");
	ap_journal_facts_free(&jf);
	json_decref(recs);
	json_decref(problems);
}

static const char *problem_at(const json_t *problems, size_t i)
{
	return json_string_value(json_array_get(problems, i));
}

static void validate_names_each_bad_line_and_keeps_the_good_ones(void **state)
{
	struct fixture *f = *state;
	json_t *recs, *problems;
	char deep[200] = "{\"type\":\"fingerprint\",\"data\":";
	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	for (int i = 0; i < 40; i++)
		strcat(deep, "]");
	strcat(deep, "}\n");
	append_json(f->path, CHECK_REC);
	append_raw(f->path, "garbage\n");
	append_raw(f->path, "{\"type\":\"verdict\",\"data\":\"consistent\"}\n");
	append_raw(f->path, "{\"type\":\"check\",\"data\":{\"name\":\"p\",\"kind\":\"probe\"}}\n");
	append_raw(f->path, deep);
	append_raw(f->path, "{\"type\":\"start\",\"data\":1,\"data\":2}\n");
	append_json(f->path, CHECK_REC);
	append_raw(f->path, "{\"type\":\"start\"");
	assert_int_equal(ap_journal_validate(f->path, &recs, &problems), 0);
	assert_int_equal(json_array_size(recs), 2);
	assert_int_equal(json_array_size(problems), 6);
	assert_non_null(strstr(problem_at(problems, 0), "line 2: "));
	assert_string_equal(problem_at(problems, 1), "line 3: unknown record type");
	assert_string_equal(problem_at(problems, 2),
			    "line 4: a check record needs a string name, kind and status");
	assert_string_equal(problem_at(problems, 3),
			    "line 5: nested deeper than the limit of a record");
	assert_non_null(strstr(problem_at(problems, 4), "line 6: duplicate object key"));
	assert_string_equal(problem_at(problems, 5),
			    "line 8: a record cut short (no newline at the end)");
	json_decref(recs);
	json_decref(problems);
}

static void validate_refuses_what_is_not_a_regular_file(void **state)
{
	struct fixture *f = *state;
	json_t *recs, *problems;
	assert_int_equal(mkfifo(f->path, 0600), 0);
	assert_int_equal(ap_journal_validate(f->path, &recs, &problems), -AP_ENOTREG);
	assert_null(recs);
	assert_null(problems);
}

#define T(name) cmocka_unit_test_setup_teardown(name, make_tempdir, remove_tempdir)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(three_appended_records_read_back_in_order),
		T(each_record_is_one_line_even_with_a_newline_inside_a_string),
		T(open_creates_a_missing_journal_empty),
		T(open_in_a_missing_directory_fails_with_errno),
		T(torn_last_line_is_dropped_and_reported),
		T(complete_last_record_without_its_newline_counts_as_torn),
		T(unparsable_last_line_with_its_newline_counts_as_torn),
		T(bad_middle_line_is_an_error_naming_path_and_line),
		T(reading_a_missing_journal_fails_with_enoent),
		T(reopening_appends_after_existing_records),
		T(reopening_after_a_torn_line_drops_it_so_new_records_read_back),
		T(reopening_after_an_unparsable_last_line_drops_it),
		T(append_to_a_full_disk_fails_with_enospc),
		T(append_cut_short_leaves_only_whole_records),
		T(validate_reads_the_records_a_run_writes),
		T(journal_facts_count_each_type_and_keep_the_first),
		T(validate_names_each_bad_line_and_keeps_the_good_ones),
		T(validate_refuses_what_is_not_a_regular_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
