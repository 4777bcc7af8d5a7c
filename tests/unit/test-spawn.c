/* test-spawn.c - unit tests for src/env/spawn.h: how a child's end is seen,
 * and that a child does not outlive the thread that spawned it. */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pidfd_tells_the_end_while_a_grandchild_holds_the_pipe),
		cmocka_unit_test(child_dies_with_the_thread_that_spawned_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
