/* test-sweep.c - unit tests for src/check/sweep.h's joining of environments'
 * walks into the matrix (no worker runs here): an API one environment lacks
 * is absent there, or that entry's failure where its walk failed, or an
 * error where the environment failed as a whole; the result sorted and
 * judged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "check/sweep.h"
#include "evidence/matrix.h"

static void present(struct ap_sweep_env *e, const char *module, const char *api, const char *kind)
{
	struct ap_matrix_line l;
	assert_int_equal(ap_matrix_line_init(&l, e->env->name, module, api, AP_LSTATUS_PRESENT), 0);
	l.kind = strdup(kind);
	assert_int_equal(ap_matrix_add(&e->lines, &l), 0);
}

static const struct ap_matrix_line *find(const struct ap_matrix *m, const char *env,
					 const char *api)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].env, env) && !strcmp(m->v[i].api, api))
			return &m->v[i];
	fail_msg("no line of %s in %s", api, env);
	return NULL;
}

static const char *status(const struct ap_matrix *m, const char *env, const char *api)
{
	return ap_line_status_name(find(m, env, api)->status);
}

static const char *verdict(const struct ap_matrix *m, const char *env, const char *api)
{
	return ap_line_verdict_name(find(m, env, api)->verdict);
}

static void missing_lines_are_absent_failed_or_error(void **state)
{
	(void)state;
	struct ap_env envs[3] = { { .name = "bookworm" }, { .name = "trixie" }, { .name = "sid" } };
	const char *names[3] = { "bookworm", "trixie", "sid" };
	struct ap_sweep_env e[3] = { { .env = &envs[0] }, { .env = &envs[1] }, { .env = &envs[2] } };
	/* trixie has set_multithreading_enabled under grad_mode, bookworm not */
	present(&e[0], "g", "g", "module");
	present(&e[1], "g", "g", "module");
	present(&e[1], "g", "g.set_multithreading_enabled", "class");
	/* bookworm's walk of entry "t" crashed; trixie's found t.x */
	struct ap_matrix_line crash;
	assert_int_equal(ap_matrix_line_init(&crash, "bookworm", "t", "t", AP_LSTATUS_CRASH), 0);
	crash.reason = strdup("worker killed by SIGSEGV");
	assert_int_equal(ap_matrix_add(&e[0].lines, &crash), 0);
	present(&e[1], "t", "t", "module");
	present(&e[1], "t", "t.x", "function");
	/* sid could not start at all */
	e[2].err = -AP_ENOPYTHON;
	ap_buf_adds(&e[2].detail, "no python3");
	struct ap_matrix m = { 0 };
	assert_int_equal(ap_sweep_matrix(e, 3, names, NULL, &m), 0);
	assert_int_equal(m.n, 4 * 3);
	assert_string_equal(status(&m, "bookworm", "g.set_multithreading_enabled"), "absent");
	assert_string_equal(verdict(&m, "bookworm", "g.set_multithreading_enabled"), "absent");
	assert_string_equal(verdict(&m, "trixie", "g.set_multithreading_enabled"), "consistent");
	assert_string_equal(status(&m, "bookworm", "t.x"), "crash");
	assert_string_equal(verdict(&m, "bookworm", "t.x"), "not-run");
	assert_string_equal(find(&m, "bookworm", "t.x")->reason, "worker killed by SIGSEGV");
	assert_string_equal(status(&m, "sid", "t.x"), "error");
	assert_string_equal(find(&m, "sid", "t.x")->reason, "no python3");
	assert_string_equal(status(&m, "sid", "g"), "error");
	/* sorted: api, then --env order */
	assert_string_equal(m.v[0].api, "g");
	assert_string_equal(m.v[2].env, "sid");
	ap_matrix_free(&m);
	for (int i = 0; i < 3; i++)
		ap_sweep_env_free(&e[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_lines_are_absent_failed_or_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
