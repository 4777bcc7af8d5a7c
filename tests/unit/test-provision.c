/* test-provision.c - unit tests for the pure part of src/env/provision.h:
 * which upstream test tree (and which suite's `tests fetch`) a backend is
 * built from, with the suite optional, and nothing for a backend apiparity
 * does not know. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "env/provision.h"

static void a_known_backend_names_its_tree_and_suite_and_the_suite_is_optional(void **state)
{
	(void)state;
	const char *suite = NULL;
	const char *tree = ap_provision_backend_tree("openreg", &suite);
	assert_non_null(tree);
	assert_non_null(suite);
	assert_string_equal(suite, "trixie");
	/* a caller that wants the tree alone passes no suite */
	assert_string_equal(ap_provision_backend_tree("openreg", NULL), tree);
	/* an unknown backend: no tree, and the suite is left as it was */
	const char *left = "unchanged";
	assert_null(ap_provision_backend_tree("npu", &left));
	assert_string_equal(left, "unchanged");
	assert_non_null(strstr(ap_provision_backends(), "openreg"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_known_backend_names_its_tree_and_suite_and_the_suite_is_optional),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
