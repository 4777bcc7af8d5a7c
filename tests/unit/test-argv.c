/* test-argv.c - unit tests for src/argv.h: NULL-terminated vectors, the
 * shell-like (but expansion-free) splitting of exec prefixes, and the quoting
 * of words for a remote shell (read back by real shells). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/argv.h"

/* Checks that a holds exactly the n words of want, and is NULL-terminated. */
static void check_words(const struct ap_argv *a, const char *const *want, size_t n,
			const char *file, int line)
{
	if (a->n != n) {
		print_error("%zu words, wanted %zu\n", a->n, n);
		_fail(file, line);
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(a->v[i], want[i])) {
			print_error("word %zu is '%s', wanted '%s'\n", i, a->v[i], want[i]);
			_fail(file, line);
		}
	if (n && a->v[n] != NULL) {
		print_error("argv is not NULL-terminated\n");
		_fail(file, line);
	}
}

#define assert_words(a, ...)                                                          \
	do {                                                                          \
		const char *const want_[] = { __VA_ARGS__ };                          \
		check_words((a), want_, sizeof(want_) / sizeof(want_[0]), __FILE__, __LINE__); \
	} while (0)

/* Splits s into a fresh argv, expecting success. */
static void split_ok(struct ap_argv *a, const char *s)
{
	memset(a, 0, sizeof(*a));
	assert_int_equal(ap_argv_split(a, s), 0);
}

static void push_copies_the_string_and_keeps_the_vector_null_terminated(void **state)
{
	(void)state;
	struct ap_argv a = { 0 };
	char word[] = "ssh";
	assert_int_equal(ap_argv_push(&a, word), 0);
	word[0] = 'X';
	assert_int_equal(a.n, 1);
	assert_string_equal(a.v[0], "ssh");
	assert_ptr_not_equal(a.v[0], word);
	assert_null(a.v[1]);
	assert_int_equal(ap_argv_push(&a, "host"), 0);
	assert_words(&a, "ssh", "host");
	assert_null(a.v[2]);
	ap_argv_free(&a);
}

static void push_of_an_empty_string_adds_an_empty_word(void **state)
{
	(void)state;
	struct ap_argv a = { 0 };
	assert_int_equal(ap_argv_push(&a, ""), 0);
	assert_words(&a, "");
	ap_argv_free(&a);
}

static void extend_appends_copies_of_every_word(void **state)
{
	(void)state;
	struct ap_argv a = { 0 }, src = { 0 };
	ap_argv_push(&a, "ssh");
	ap_argv_push(&src, "a2-host");
	ap_argv_push(&src, "--");
	assert_int_equal(ap_argv_extend(&a, &src), 0);
	assert_words(&a, "ssh", "a2-host", "--");
	assert_ptr_not_equal(a.v[1], src.v[0]);
	ap_argv_free(&src);
	assert_words(&a, "ssh", "a2-host", "--");
	ap_argv_free(&a);
}

static void extend_with_an_empty_source_leaves_the_argv_unchanged(void **state)
{
	(void)state;
	struct ap_argv a = { 0 }, empty = { 0 };
	assert_int_equal(ap_argv_extend(&a, &empty), 0);
	assert_int_equal(a.n, 0);
	ap_argv_push(&a, "python3");
	assert_int_equal(ap_argv_extend(&a, &empty), 0);
	assert_words(&a, "python3");
	ap_argv_free(&a);
}

static void free_leaves_an_empty_argv(void **state)
{
	(void)state;
	struct ap_argv a = { 0 };
	ap_argv_push(&a, "x");
	ap_argv_free(&a);
	assert_null(a.v);
	assert_int_equal(a.n, 0);
	ap_argv_free(&a);
	assert_int_equal(a.n, 0);
}

static void split_separates_words_on_runs_of_blanks(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "  ssh\t a2-host \n--\r\n ");
	assert_words(&a, "ssh", "a2-host", "--");
	ap_argv_free(&a);
}

static void split_of_a_blank_string_gives_no_words(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "");
	assert_int_equal(a.n, 0);
	split_ok(&a, " \t\n ");
	assert_int_equal(a.n, 0);
	ap_argv_free(&a);
}

static void single_quotes_group_blanks_and_keep_backslashes_literally(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "sh -c 'echo  a\\b \"x\"'");
	assert_words(&a, "sh", "-c", "echo  a\\b \"x\"");
	ap_argv_free(&a);
}

static void double_quotes_group_blanks_and_unescape_quote_and_backslash(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "say \"a \\\"b\\\" c\\\\d\" 'it''s'");
	assert_words(&a, "say", "a \"b\" c\\d", "its");
	ap_argv_free(&a);
}

static void double_quotes_keep_a_backslash_before_other_characters(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "\"C:\\temp\\n\"");
	assert_words(&a, "C:\\temp\\n");
	ap_argv_free(&a);
}

static void backslash_outside_quotes_escapes_blanks_and_quotes(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "my\\ file \\'x \\\"y \\\\z \\q");
	assert_words(&a, "my file", "'x", "\"y", "\\z", "q");
	ap_argv_free(&a);
}

static void empty_quotes_give_an_empty_word(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "a '' \"\" b");
	assert_words(&a, "a", "", "", "b");
	ap_argv_free(&a);
}

static void quotes_join_adjacent_text_into_one_word(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "pre\"fix mid\"'dle 'post");
	assert_words(&a, "prefix middle post");
	ap_argv_free(&a);
}

static void split_expands_nothing(void **state)
{
	(void)state;
	struct ap_argv a;
	split_ok(&a, "$HOME ~ *.py `id` $(id) a;b a|b");
	assert_words(&a, "$HOME", "~", "*.py", "`id`", "$(id)", "a;b", "a|b");
	ap_argv_free(&a);
}

static void unterminated_single_quote_is_rejected_and_leaves_argv_empty(void **state)
{
	(void)state;
	struct ap_argv a = { 0 };
	assert_int_equal(ap_argv_split(&a, "ssh host 'echo hi"), -EINVAL);
	assert_int_equal(a.n, 0);
	assert_null(a.v);
}

static void unterminated_double_quote_is_rejected_and_leaves_argv_empty(void **state)
{
	(void)state;
	struct ap_argv a = { 0 };
	assert_int_equal(ap_argv_split(&a, "ssh \"a --"), -EINVAL);
	assert_int_equal(a.n, 0);
	assert_null(a.v);
}

static void escaped_closing_double_quote_leaves_the_quote_unterminated(void **state)
{
	(void)state;
	struct ap_argv a = { 0 };
	assert_int_equal(ap_argv_split(&a, "\"abc\\\""), -EINVAL);
	assert_int_equal(a.n, 0);
	assert_int_equal(ap_argv_split(&a, "\"abc\\"), -EINVAL);
	assert_int_equal(a.n, 0);
}

static void trailing_backslash_is_rejected_and_leaves_argv_empty(void **state)
{
	(void)state;
	struct ap_argv a = { 0 };
	assert_int_equal(ap_argv_split(&a, "ssh host \\"), -EINVAL);
	assert_int_equal(a.n, 0);
	assert_null(a.v);
}

static void failed_split_empties_words_already_in_the_argv(void **state)
{
	(void)state;
	struct ap_argv a = { 0 };
	ap_argv_push(&a, "old");
	assert_int_equal(ap_argv_split(&a, "new 'oops"), -EINVAL);
	assert_int_equal(a.n, 0);
	assert_null(a.v);
}

/* What a POSIX shell makes of the quoted word: `SHELL -c 'printf %s WORD'`,
 * read back byte for byte. */
static void shell_reads_back(const char *shell, const char *word)
{
	struct ap_buf cmd = { 0 }, got = { 0 };
	char chunk[256];
	assert_int_equal(ap_buf_adds(&cmd, "printf %s "), 0);
	assert_int_equal(ap_shell_quote(&cmd, word), 0);
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		execl(shell, shell, "-c", ap_buf_str(&cmd), (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	ssize_t n;
	while ((n = read(fd[0], chunk, sizeof(chunk))) > 0)
		ap_buf_add(&got, chunk, (size_t)n);
	close(fd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || got.len != strlen(word) ||
	    (got.len && memcmp(got.data, word, got.len))) {
		print_error("%s read '%s' back as '%.*s' (status %d)\n", shell, ap_buf_str(&cmd),
			    (int)got.len, got.data ? got.data : "", status);
		fail();
	}
	ap_buf_free(&cmd);
	ap_buf_free(&got);
}

static const char *const hostile_words[] = {
	"", "plain", "two words", " lead and trail ", "it's", "''", "'", "\"dq\" and \\\"",
	"$HOME ${PATH} $(touch /nonexistent/canary) $$ $1 $@", "`touch /nonexistent/canary`",
	"a; touch /nonexistent/canary", "a && b || c | d & e", "< in > out 2>&1",
	"* ? [a] ~ ~root #comment", "back\\slash \\n \\\\", "line one\nline two\n", "\ttab\r\n",
	"é ü 中文 \xf0\x9f\x98\x80", "\xff\xfe not UTF-8", "!history !! ^a^b", "-n", "--", "=x",
};

static void quoted_word_reaches_dash_unchanged(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hostile_words) / sizeof(hostile_words[0]); i++)
		shell_reads_back("/bin/sh", hostile_words[i]);
}

static void quoted_word_reaches_bash_unchanged(void **state)
{
	(void)state;
	if (access("/bin/bash", X_OK))
		skip();
	for (size_t i = 0; i < sizeof(hostile_words) / sizeof(hostile_words[0]); i++)
		shell_reads_back("/bin/bash", hostile_words[i]);
}

static void quoting_is_single_quotes_with_each_quote_closed_escaped_and_reopened(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_shell_quote(&b, "it's $x"), 0);
	assert_string_equal(ap_buf_str(&b), "'it'\\''s $x'");
	ap_buf_reset(&b);
	assert_int_equal(ap_shell_quote(&b, ""), 0);
	assert_string_equal(ap_buf_str(&b), "''");
	ap_buf_free(&b);
}

static void quoting_appends_to_what_the_buffer_holds(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_buf_adds(&b, "echo "), 0);
	assert_int_equal(ap_shell_quote(&b, "a b"), 0);
	assert_string_equal(ap_buf_str(&b), "echo 'a b'");
	ap_buf_free(&b);
}

int main(void)
{
	/* It waits for children: one that never ends (a mutant's) is this
	 * binary's failure (SIGALRM), not a run that never ends. */
	alarm(120);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(push_copies_the_string_and_keeps_the_vector_null_terminated),
		cmocka_unit_test(push_of_an_empty_string_adds_an_empty_word),
		cmocka_unit_test(extend_appends_copies_of_every_word),
		cmocka_unit_test(extend_with_an_empty_source_leaves_the_argv_unchanged),
		cmocka_unit_test(free_leaves_an_empty_argv),
		cmocka_unit_test(split_separates_words_on_runs_of_blanks),
		cmocka_unit_test(split_of_a_blank_string_gives_no_words),
		cmocka_unit_test(single_quotes_group_blanks_and_keep_backslashes_literally),
		cmocka_unit_test(double_quotes_group_blanks_and_unescape_quote_and_backslash),
		cmocka_unit_test(double_quotes_keep_a_backslash_before_other_characters),
		cmocka_unit_test(backslash_outside_quotes_escapes_blanks_and_quotes),
		cmocka_unit_test(empty_quotes_give_an_empty_word),
		cmocka_unit_test(quotes_join_adjacent_text_into_one_word),
		cmocka_unit_test(split_expands_nothing),
		cmocka_unit_test(unterminated_single_quote_is_rejected_and_leaves_argv_empty),
		cmocka_unit_test(unterminated_double_quote_is_rejected_and_leaves_argv_empty),
		cmocka_unit_test(escaped_closing_double_quote_leaves_the_quote_unterminated),
		cmocka_unit_test(trailing_backslash_is_rejected_and_leaves_argv_empty),
		cmocka_unit_test(failed_split_empties_words_already_in_the_argv),
		cmocka_unit_test(quoted_word_reaches_dash_unchanged),
		cmocka_unit_test(quoted_word_reaches_bash_unchanged),
		cmocka_unit_test(quoting_is_single_quotes_with_each_quote_closed_escaped_and_reopened),
		cmocka_unit_test(quoting_appends_to_what_the_buffer_holds),
	};
	return cmocka_run_group_tests_name("argv", tests, NULL, NULL);
}
