/* test-surface.c - unit tests for src/check/surface.h: the rules of what a
 * sweep counts as API surface, as the requests carry them (the worker
 * applies them as sent: tests/worker/test_sweep.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "check/surface.h"

static void the_rules_are_todays_in_one_object(void **state)
{
	(void)state;
	json_t *r = ap_surface_rules();
	assert_non_null(r);
	char *s = json_dumps(r, JSON_COMPACT);
	assert_string_equal(s, "{\"private\":[\"_\"],\"own\":[\"torch\"],"
			       "\"skip_metatypes\":[\"tensortype\"],\"skip_bases\":[\"torch.Tensor\"],"
			       "\"foreign_types\":[\"typing\",\"typing_extensions\",\"__future__\"]}");
	free(s);
	/* a new object each time: a request may take it */
	json_t *again = ap_surface_rules();
	assert_ptr_not_equal(r, again);
	assert_true(json_equal(r, again));
	json_decref(again);
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_rules_are_todays_in_one_object),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
