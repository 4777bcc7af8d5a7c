/* test-opts.c - unit tests for src/base/opts.h: one table parses argv (values
 * where the table says, getopt's errors as one message each), and renders the
 * usage line, the synopsis, --help and the option list from the same entries. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/opts.h"

struct t_opts {
	const char *out, *select;
	int json, timeout_s, nenvs;
	const char *envs[4];
};

static int add_env(void *opts, const struct ap_opt *o, const char *arg, struct ap_buf *err)
{
	struct t_opts *t = opts;
	(void)o;
	if (t->nenvs == 4) {
		ap_buf_adds(err, "t: at most 4 environments");
		return -EINVAL;
	}
	t->envs[t->nenvs++] = arg;
	return 0;
}

#define AT(field) offsetof(struct t_opts, field)
static const struct ap_opt t_table[] = {
	{ "env", "NAME", "an environment", 0, add_env, AP_OPT_REPEAT },
	{ "out", "DIR", "where it goes", AT(out), NULL, AP_OPT_REQUIRED },
	{ "json", NULL, "as JSON", AT(json), NULL, 0 },
	{ "timeout", "S", "seconds", AT(timeout_s), ap_opt_seconds, 0 },
	{ "k", "REGEX", "only the matching ones", AT(select), NULL, 0 },
};
#undef AT
static const struct ap_optset t_set = { "t run", "FILE", "runs a file", AP_OPTS(t_table) };

/* Parses the words (argv[0] is the verb) into *o; returns ap_opts_parse's. */
static int parse(struct t_opts *o, struct ap_buf *err, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	ap_buf_reset(err);
	return ap_opts_parse(&t_set, argc, argv, o, err);
}

/* Parses the words given (NULL-terminated) after the verb. */
static int parse_words(struct t_opts *o, struct ap_buf *err, ...)
{
	static char *argv[16];
	va_list ap;
	int argc = 0;
	argv[argc++] = "run";
	va_start(ap, err);
	for (char *w; argc < 15 && (w = va_arg(ap, char *));)
		argv[argc++] = w;
	va_end(ap);
	argv[argc] = NULL;
	return parse(o, err, argc, argv);
}

#define PARSE(o, err, ...) parse_words((o), (err), __VA_ARGS__, (char *)NULL)

static void values_land_in_their_fields_and_operands_come_last(void **state)
{
	(void)state;
	struct t_opts o;
	struct ap_buf err = { 0 };
	char *argv[] = { "run", "--env", "a", "x.py", "--json", "--env=b", "--out", "d",
			 "-k", "re", "--timeout", "7", NULL };
	assert_int_equal(parse(&o, &err, 12, argv), 0);
	assert_int_equal(o.nenvs, 2);
	assert_string_equal(o.envs[0], "a");
	assert_string_equal(o.envs[1], "b");
	assert_string_equal(o.out, "d");
	assert_string_equal(o.select, "re");
	assert_int_equal(o.json, 1);
	assert_int_equal(o.timeout_s, 7);
	assert_int_equal(optind, 11);
	assert_string_equal(argv[optind], "x.py");
	ap_buf_free(&err);
}

static void a_missing_value_and_an_unknown_option_are_named(void **state)
{
	(void)state;
	struct t_opts o;
	struct ap_buf err = { 0 };
	assert_int_equal(PARSE(&o, &err, "x.py", "--out"), -EINVAL);
	assert_string_equal(ap_buf_str(&err), "t run: option '--out' needs a value");
	assert_int_equal(PARSE(&o, &err, "x.py", "-k"), -EINVAL);
	assert_string_equal(ap_buf_str(&err), "t run: option '-k' needs a value");
	assert_int_equal(PARSE(&o, &err, "--colour", "x.py"), -EINVAL);
	assert_string_equal(ap_buf_str(&err), "t run: unknown option '--colour'");
	assert_int_equal(PARSE(&o, &err, "-xk", "re"), -EINVAL);
	assert_string_equal(ap_buf_str(&err), "t run: unknown option '-x'");
	assert_int_equal(PARSE(&o, &err, "--json=1"), -EINVAL);
	assert_string_equal(ap_buf_str(&err), "t run: unknown option '--json=1'");
	ap_buf_free(&err);
}

static void a_setter_refuses_with_its_own_message(void **state)
{
	(void)state;
	struct t_opts o;
	struct ap_buf err = { 0 };
	assert_int_equal(PARSE(&o, &err, "--timeout", "0"), -EINVAL);
	assert_string_equal(ap_buf_str(&err),
			    "--timeout wants a positive number of seconds (at most 86400), not '0'");
	assert_int_equal(PARSE(&o, &err, "--timeout", "86401"), -EINVAL);
	assert_int_equal(PARSE(&o, &err, "--timeout", "86400"), 0);
	assert_int_equal(o.timeout_s, 86400);
	assert_int_equal(PARSE(&o, &err, "--env", "a", "--env", "b", "--env", "c", "--env", "d",
			       "--env", "e"), -EINVAL);
	assert_string_equal(ap_buf_str(&err), "t: at most 4 environments");
	ap_buf_free(&err);
}

static void help_is_asked_by_long_or_short_name_and_a_double_dash_ends_options(void **state)
{
	(void)state;
	struct t_opts o;
	struct ap_buf err = { 0 };
	assert_int_equal(PARSE(&o, &err, "x.py", "--help"), AP_OPTS_HELP);
	assert_int_equal(PARSE(&o, &err, "-h"), AP_OPTS_HELP);
	char *argv[] = { "run", "--json", "--", "--out", NULL };
	assert_int_equal(parse(&o, &err, 4, argv), 0);
	assert_null(o.out);
	assert_string_equal(argv[optind], "--out");
	ap_buf_free(&err);
}

static void usage_shows_each_entry_as_its_flags_say(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	ap_opts_usage(&t_set, &out);
	assert_string_equal(ap_buf_str(&out),
			    "usage: apiparity t run FILE [--env NAME]... --out DIR [--json] "
			    "[--timeout S]\n"
			    "                       [-k REGEX]\n");
	ap_buf_free(&out);
}

static void synopsis_puts_the_summary_in_its_column(void **state)
{
	(void)state;
	static const struct ap_optset short_set = { "diff", "A B", "what changed", NULL, 0 };
	struct ap_buf out = { 0 };
	ap_opts_synopsis(&short_set, &out);
	assert_string_equal(ap_buf_str(&out), "  diff A B" "                                      "
			    "what changed\n");
	ap_buf_free(&out);
}

static void help_has_a_line_per_option_and_help_last(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	ap_opts_help(&t_set, &out);
	const char *s = ap_buf_str(&out);
	assert_non_null(strstr(s, "\nruns a file\n"));
	assert_non_null(strstr(s, "\n  --env NAME            an environment\n"));
	assert_non_null(strstr(s, "\n  --json                as JSON\n"));
	assert_non_null(strstr(s, "\n  -k REGEX              only the matching ones\n"));
	assert_non_null(strstr(s, "\n  --help                prints this help\n"));
	assert_string_equal(s + strlen(s) - strlen("prints this help\n"), "prints this help\n");
	ap_buf_free(&out);
}

static void list_names_every_option_as_typed(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	ap_opts_list(&t_set, &out);
	assert_string_equal(ap_buf_str(&out), "t run\t--env --out --json --timeout -k\n");
	ap_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_land_in_their_fields_and_operands_come_last),
		cmocka_unit_test(a_missing_value_and_an_unknown_option_are_named),
		cmocka_unit_test(a_setter_refuses_with_its_own_message),
		cmocka_unit_test(help_is_asked_by_long_or_short_name_and_a_double_dash_ends_options),
		cmocka_unit_test(usage_shows_each_entry_as_its_flags_say),
		cmocka_unit_test(synopsis_puts_the_summary_in_its_column),
		cmocka_unit_test(help_has_a_line_per_option_and_help_last),
		cmocka_unit_test(list_names_every_option_as_typed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
