/* test-spawn.c - unit tests for src/env/spawn.h: how a child's end is seen,
 * that a child does not outlive the thread that spawned it, and what a
 * remote shell receives. */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"

#include <cmocka.h>

#include "env/spawn.h"

static struct ap_proc start(const char *script)
{
	struct ap_env env = { .name = "local" };
	struct ap_argv cmd = { 0 };
	struct ap_buf err = { 0 };
	struct ap_proc p;
	assert_int_equal(ap_argv_push(&cmd, "sh"), 0);
	assert_int_equal(ap_argv_push(&cmd, "-c"), 0);
	assert_int_equal(ap_argv_push(&cmd, script), 0);
	assert_int_equal(ap_spawn(&env, &cmd, AP_SPAWN_MERGE_ERR, &p, &err), 0);
	ap_argv_free(&cmd);
	ap_buf_free(&err);
	return p;
}

static void pidfd_tells_the_end_while_a_grandchild_holds_the_pipe(void **state)
{
	(void)state;
	struct ap_proc p = start("sleep 30 & exit 3");
	if (p.pidfd < 0) {
		ap_proc_kill(&p);
		ap_proc_wait(&p, &(int){ 0 });
		skip(); /* a kernel before 5.3 */
	}
	struct pollfd pid = { p.pidfd, POLLIN, 0 }, out = { p.out, POLLIN, 0 };
	assert_int_equal(poll(&pid, 1, 5000), 1);
	assert_int_equal(poll(&out, 1, 0), 0); /* no EOF: the sleeper holds it */
	ap_proc_kill(&p);
	int status = 0;
	assert_int_equal(ap_proc_wait(&p, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	assert_int_equal(p.pidfd, -1);
}

static void *spawn_and_leave(void *arg)
{
	*(struct ap_proc *)arg = start("sleep 5");
	return NULL;
}

static void child_dies_with_the_thread_that_spawned_it(void **state)
{
	(void)state;
	struct ap_proc p;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, spawn_and_leave, &p), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	int status = 0;
	assert_int_equal(ap_proc_wait(&p, &status), 0);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void collect(void *ctx, const char *line)
{
	struct ap_buf *b = ctx;
	ap_buf_addf(b, "%s%s", b->len ? "\n" : "", line);
}

/* A prefix that does with its arguments what ssh does: joins them with
 * blanks into one command line for a shell (`sh -c 'eval "$*"'`). Every word
 * apiparity adds, and the setenv values, come out the far side as written,
 * and nothing in them runs. */
static void words_and_setenv_pass_a_remote_shell_unchanged(void **state)
{
	(void)state;
	const char *hostile = "sp  ace 'sq' \"dq\" $HOME `touch /nonexistent/c` $(touch "
			      "/nonexistent/c); touch /nonexistent/c | & < > * ? ~ \\ é 中\nline 2";
	struct ap_env env = { .name = "remote", .remote_shell = 1 };
	struct ap_argv cmd = { 0 };
	struct ap_buf err = { 0 }, got = { 0 }, want = { 0 }, var = { 0 };
	const char *prefix[] = { "sh", "-c", "eval \"$*\"", "ssh-like" };
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(ap_argv_push(&env.exec, prefix[i]), 0);
	assert_int_equal(ap_buf_addf(&var, "AP_Q=%s", hostile), 0);
	assert_int_equal(ap_argv_push(&env.setenv, ap_buf_str(&var)), 0);
	const char *words[] = { "sh", "-c", "printf '%s|%s|%s' \"$AP_Q\" \"$1\" \"$2\"", "x", hostile, "" };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(ap_argv_push(&cmd, words[i]), 0);
	int status = ap_spawn_run(&env, &cmd, collect, &got, &err);
	assert_int_equal(status, 0);
	ap_buf_addf(&want, "%s|%s|", hostile, hostile);
	assert_string_equal(ap_buf_str(&got), ap_buf_str(&want));
	assert_int_equal(access("/nonexistent/c", F_OK), -1);
	ap_argv_free(&env.exec);
	ap_argv_free(&env.setenv);
	ap_argv_free(&cmd);
	ap_buf_free(&err);
	ap_buf_free(&got);
	ap_buf_free(&want);
	ap_buf_free(&var);
}

/* Behind a remote shell, setenv is for the far side: the prefix itself
 * (ssh) runs with this process's environment. */
static void setenv_of_a_remote_environment_is_not_set_for_the_prefix(void **state)
{
	(void)state;
	struct ap_env env = { .name = "remote", .remote_shell = 1 };
	struct ap_argv cmd = { 0 };
	struct ap_buf err = { 0 }, got = { 0 };
	const char *prefix[] = { "sh", "-c", "printf 'prefix sees [%s] ' \"$AP_R\"; eval \"$*\"", "ssh-like" };
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(ap_argv_push(&env.exec, prefix[i]), 0);
	assert_int_equal(ap_argv_push(&env.setenv, "AP_R=far"), 0);
	const char *words[] = { "sh", "-c", "printf 'far side sees [%s]' \"$AP_R\"" };
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(ap_argv_push(&cmd, words[i]), 0);
	assert_int_equal(ap_spawn_run(&env, &cmd, collect, &got, &err), 0);
	assert_string_equal(ap_buf_str(&got), "prefix sees [] far side sees [far]");
	ap_argv_free(&env.exec);
	ap_argv_free(&env.setenv);
	ap_argv_free(&cmd);
	ap_buf_free(&err);
	ap_buf_free(&got);
}

int main(void)
{
	/* It waits for children: one that never ends (a mutant's) is this
	 * binary's failure (SIGALRM), not a run that never ends. */
	alarm(120);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pidfd_tells_the_end_while_a_grandchild_holds_the_pipe),
		cmocka_unit_test(child_dies_with_the_thread_that_spawned_it),
		cmocka_unit_test(words_and_setenv_pass_a_remote_shell_unchanged),
		cmocka_unit_test(setenv_of_a_remote_environment_is_not_set_for_the_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
