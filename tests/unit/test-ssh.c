/* test-ssh.c - unit tests for src/env/ssh.h: the options apiparity adds to an
 * ssh prefix, those it leaves to the user, and a master that cannot connect. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/err.h"
#include "env/ssh.h"

/* The prefix ap_ssh_prefix() makes of the words of exec, joined by blanks. */
static char *prefix_of(const char *exec)
{
	struct ap_env env = { .name = "e", .remote_shell = 1 };
	struct ap_argv out = { 0 };
	struct ap_buf err = { 0 }, joined = { 0 };
	assert_int_equal(ap_argv_split(&env.exec, exec), 0);
	assert_int_equal(ap_ssh_prefix(&env, &out, &err), 0);
	for (size_t i = 0; i < out.n; i++)
		ap_buf_addf(&joined, "%s%s", i ? " " : "", out.v[i]);
	ap_argv_free(&env.exec);
	ap_argv_free(&out);
	ap_buf_free(&err);
	return joined.data;
}

#define KEEPALIVE "-o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=5 " \
		  "-o ServerAliveCountMax=3"

static void keepalive_options_go_right_after_ssh(void **state)
{
	(void)state;
	/* ControlMaster=no: the user's own choice, so no master is started here. */
	char *p = prefix_of("/usr/bin/ssh -o ControlMaster=no a2-host -- conda run -n x");
	assert_string_equal(p, "/usr/bin/ssh " KEEPALIVE
			    " -o ControlMaster=no a2-host -- conda run -n x");
	free(p);
}

static void an_option_the_user_set_is_left_as_set(void **state)
{
	(void)state;
	char *p = prefix_of("ssh -oServerAliveInterval=60 -o 'serveralivecountmax 9' "
			    "-o batchmode=no -o ConnectTimeout=3 -S /s host --");
	assert_string_equal(p, "ssh -oServerAliveInterval=60 -o serveralivecountmax 9 "
			    "-o batchmode=no -o ConnectTimeout=3 -S /s host --");
	free(p);
}

static void words_of_the_remote_command_are_not_options(void **state)
{
	(void)state;
	char *p = prefix_of("ssh -M host -- tool -o BatchMode=no");
	assert_string_equal(p, "ssh " KEEPALIVE " -M host -- tool -o BatchMode=no");
	free(p);
	p = prefix_of("ssh -S /s host tool -o ConnectTimeout=1");
	assert_string_equal(p, "ssh " KEEPALIVE " -S /s host tool -o ConnectTimeout=1");
	free(p);
}

static void an_option_after_the_host_still_counts(void **state)
{
	(void)state;
	char *p = prefix_of("ssh -o ControlPath=none host -o ServerAliveInterval=1 --");
	assert_string_equal(p, "ssh -o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveCountMax=3 "
			    "-o ControlPath=none host -o ServerAliveInterval=1 --");
	free(p);
}

static void argument_of_another_option_is_not_read_as_one(void **state)
{
	(void)state;
	/* -i's argument is a file name, even one spelled like an option. */
	char *p = prefix_of("ssh -i -oBatchMode=no -Snone host");
	assert_string_equal(p, "ssh " KEEPALIVE " -i -oBatchMode=no -Snone host");
	free(p);
}

static void a_prefix_that_is_not_ssh_is_left_alone(void **state)
{
	(void)state;
	char *p = prefix_of("conda run -n x");
	assert_string_equal(p, "conda run -n x");
	free(p);
	p = prefix_of("/opt/sshpass ssh host");
	assert_string_equal(p, "/opt/sshpass ssh host");
	free(p);
}

/* A host that refuses: the master is tried once, and what ssh said is the
 * error, in the form the worker gives; nothing is left behind. */
static void master_that_cannot_connect_is_unreachable_with_ssh_s_words(void **state)
{
	(void)state;
	char tmp[] = "/tmp/test-ssh-XXXXXX";
	assert_non_null(mkdtemp(tmp));
	setenv("TMPDIR", tmp, 1);
	struct ap_env env = { .name = "e", .remote_shell = 1 };
	struct ap_argv out = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(ap_argv_split(&env.exec, "ssh -F /dev/null -p 1 root@127.0.0.1 --"), 0);
	if (access("/usr/bin/ssh", X_OK))
		skip();
	assert_int_equal(ap_ssh_prefix(&env, &out, &err), -AP_EUNREACHABLE);
	assert_string_equal(ap_buf_str(&err), "exec prefix 'ssh' exited with status 255 before "
			    "python answered: ssh: connect to host 127.0.0.1 port 1: Connection refused");
	/* Asked again in the same run, it answers from what it saw. */
	ap_buf_reset(&err);
	assert_int_equal(ap_ssh_prefix(&env, &out, &err), -AP_EUNREACHABLE);
	assert_int_equal(out.n, 0);
	ap_ssh_close_all();
	assert_int_equal(rmdir(tmp), 0); /* empty: the control directory is gone */
	unsetenv("TMPDIR");
	ap_argv_free(&env.exec);
	ap_buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keepalive_options_go_right_after_ssh),
		cmocka_unit_test(an_option_the_user_set_is_left_as_set),
		cmocka_unit_test(words_of_the_remote_command_are_not_options),
		cmocka_unit_test(an_option_after_the_host_still_counts),
		cmocka_unit_test(argument_of_another_option_is_not_read_as_one),
		cmocka_unit_test(a_prefix_that_is_not_ssh_is_left_alone),
		cmocka_unit_test(master_that_cannot_connect_is_unreachable_with_ssh_s_words),
	};
	return cmocka_run_group_tests_name("ssh", tests, NULL, NULL);
}
