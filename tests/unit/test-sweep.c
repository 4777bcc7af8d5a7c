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

static json_t *present(const char *env, const char *module, const char *api, const char *kind)
{
	json_t *l = ap_matrix_line(env, module, api, "present");
	json_object_set_new(l, "kind", json_string(kind));
	return l;
}

static const char *field(const json_t *lines, const char *env, const char *api, const char *key)
{
	size_t i;
	json_t *l;
	json_array_foreach(lines, i, l)
		if (!strcmp(json_string_value(json_object_get(l, "env")), env) &&
		    !strcmp(json_string_value(json_object_get(l, "api")), api))
			return json_string_value(json_object_get(l, key));
	return NULL;
}

static void missing_lines_are_absent_failed_or_error(void **state)
{
	(void)state;
	struct ap_env envs[3] = { { .name = "bookworm" }, { .name = "trixie" }, { .name = "sid" } };
	const char *names[3] = { "bookworm", "trixie", "sid" };
	struct ap_sweep_env e[3] = { { .env = &envs[0] }, { .env = &envs[1] }, { .env = &envs[2] } };
	for (int i = 0; i < 3; i++)
		e[i].lines = json_array();
	/* trixie has set_multithreading_enabled under grad_mode, bookworm not */
	json_array_append_new(e[0].lines, present("bookworm", "g", "g", "module"));
	json_array_append_new(e[1].lines, present("trixie", "g", "g", "module"));
	json_array_append_new(e[1].lines, present("trixie", "g", "g.set_multithreading_enabled", "class"));
	/* bookworm's walk of entry "t" crashed; trixie's found t.x */
	json_t *crash = ap_matrix_line("bookworm", "t", "t", "crash");
	json_object_set_new(crash, "reason", json_string("worker killed by SIGSEGV"));
	json_array_append_new(e[0].lines, crash);
	json_array_append_new(e[1].lines, present("trixie", "t", "t", "module"));
	json_array_append_new(e[1].lines, present("trixie", "t", "t.x", "function"));
	/* sid could not start at all */
	e[2].err = -AP_ENOPYTHON;
	ap_buf_adds(&e[2].detail, "no python3");
	json_t *m = ap_sweep_matrix(e, 3, names, NULL);
	assert_int_equal(json_array_size(m), 4 * 3);
	assert_string_equal(field(m, "bookworm", "g.set_multithreading_enabled", "status"), "absent");
	assert_string_equal(field(m, "bookworm", "g.set_multithreading_enabled", "verdict"), "absent");
	assert_string_equal(field(m, "trixie", "g.set_multithreading_enabled", "verdict"), "consistent");
	assert_string_equal(field(m, "bookworm", "t.x", "status"), "crash");
	assert_string_equal(field(m, "bookworm", "t.x", "verdict"), "not-run");
	assert_string_equal(field(m, "bookworm", "t.x", "reason"), "worker killed by SIGSEGV");
	assert_string_equal(field(m, "sid", "t.x", "status"), "error");
	assert_string_equal(field(m, "sid", "t.x", "reason"), "no python3");
	assert_string_equal(field(m, "sid", "g", "status"), "error");
	/* sorted: api, then --env order */
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "api")), "g");
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 2), "env")), "sid");
	json_decref(m);
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
