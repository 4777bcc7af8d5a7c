/* test-yamldoc.c - unit tests for src/yamldoc.h: YAML text to a jansson tree
 * in which every scalar is a string and every object knows its line, and
 * errors that say "name:line:column: problem". */
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

#include "base/buf.h"
#include "base/yamldoc.h"

/* Parses text as "t.yaml"; err receives the message of a failure. */
static json_t *parse(const char *text, struct ap_buf *err)
{
	return ap_yaml_parse(text, strlen(text), "t.yaml", err);
}

/* Asserts that text is refused with exactly the message want. */
static void assert_refused(const char *text, const char *want)
{
	struct ap_buf err = { 0 };
	json_t *j = parse(text, &err);
	assert_null(j);
	assert_string_equal(ap_buf_str(&err), want);
	ap_buf_free(&err);
}

static const char *str_at(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static void mapping_becomes_an_object_of_its_keys(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	json_t *j = parse("name: demo\nsummary: a family\n", &err);
	assert_non_null(j);
	assert_true(json_is_object(j));
	assert_string_equal(str_at(j, "name"), "demo");
	assert_string_equal(str_at(j, "summary"), "a family");
	assert_int_equal(json_object_size(j), 4); /* the two keys, __line__, __lines__ */
	assert_int_equal(err.len, 0);
	json_decref(j);
	ap_buf_free(&err);
}

static void each_object_records_the_line_its_mapping_starts_on(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	json_t *j = parse("# a comment\n"
			  "\n"
			  "top: 1\n"        /* 3: the document's mapping */
			  "nested:\n"
			  "  inner: x\n"    /* 5 */
			  "list:\n"
			  "  - class: a\n"  /* 7 */
			  "    more: b\n"
			  "  - class: c\n", /* 9 */
			  &err);
	assert_non_null(j);
	assert_int_equal(ap_yaml_line(j), 3);
	assert_int_equal(json_integer_value(json_object_get(j, "__line__")), 3);
	assert_int_equal(ap_yaml_line(json_object_get(j, "nested")), 5);
	const json_t *list = json_object_get(j, "list");
	assert_int_equal(ap_yaml_line(json_array_get(list, 0)), 7);
	assert_int_equal(ap_yaml_line(json_array_get(list, 1)), 9);
	/* and each key its own line; a key not there, its mapping's */
	assert_int_equal(ap_yaml_key_line(j, "top"), 3);
	assert_int_equal(ap_yaml_key_line(j, "nested"), 4);
	assert_int_equal(ap_yaml_key_line(j, "list"), 6);
	assert_int_equal(ap_yaml_key_line(json_array_get(list, 0), "more"), 8);
	assert_int_equal(ap_yaml_key_line(j, "nothing"), 3);
	assert_true(ap_yaml_meta("__line__") && ap_yaml_meta("__lines__") && !ap_yaml_meta("list"));
	json_decref(j);
	ap_buf_free(&err);
	/* the file's own key of the name ap_yaml_parse() adds is refused */
	assert_null(parse("__lines__: 1\n", &err));
	assert_string_equal(ap_buf_str(&err), "t.yaml:1:1: __line__ and __lines__ are keys "
			    "the reader keeps for itself");
	ap_buf_free(&err);
}

static void line_is_zero_for_what_is_not_a_parsed_mapping(void **state)
{
	(void)state;
	json_t *a = json_array(), *o = json_object();
	assert_int_equal(ap_yaml_line(a), 0);
	assert_int_equal(ap_yaml_line(o), 0);
	assert_int_equal(ap_yaml_line(NULL), 0);
	json_decref(a);
	json_decref(o);
}

static void sequences_become_arrays_in_order(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	json_t *j = parse("- first\n- second\n- [c, d]\n", &err);
	assert_non_null(j);
	assert_true(json_is_array(j));
	assert_int_equal(json_array_size(j), 3);
	assert_string_equal(json_string_value(json_array_get(j, 0)), "first");
	assert_string_equal(json_string_value(json_array_get(j, 1)), "second");
	const json_t *inner = json_array_get(j, 2);
	assert_true(json_is_array(inner));
	assert_int_equal(json_array_size(inner), 2);
	assert_string_equal(json_string_value(json_array_get(inner, 0)), "c");
	assert_string_equal(json_string_value(json_array_get(inner, 1)), "d");
	json_decref(j);
	ap_buf_free(&err);
}

static void every_scalar_stays_a_string(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	json_t *j = parse("a: no\nb: 3\nc: true\nd: ~\ne: 1.5\nf: null\ng:\nh: \"quoted\"\n",
			  &err);
	assert_non_null(j);
	assert_string_equal(str_at(j, "a"), "no");
	assert_string_equal(str_at(j, "b"), "3");
	assert_string_equal(str_at(j, "c"), "true");
	assert_string_equal(str_at(j, "d"), "~");
	assert_string_equal(str_at(j, "e"), "1.5");
	assert_string_equal(str_at(j, "f"), "null");
	assert_string_equal(str_at(j, "g"), "");
	assert_string_equal(str_at(j, "h"), "quoted");
	json_decref(j);
	ap_buf_free(&err);
}

static void block_scalar_keeps_newlines_and_indentation(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	json_t *j = parse("code: |\n"
			  "  for m in MODES:\n"
			  "      check(m)\n"
			  "\n"
			  "  done()\n"
			  "next: 1\n",
			  &err);
	assert_non_null(j);
	assert_string_equal(str_at(j, "code"), "for m in MODES:\n    check(m)\n\ndone()\n");
	assert_string_equal(str_at(j, "next"), "1");
	json_decref(j);
	ap_buf_free(&err);
}

static void duplicate_key_is_refused_at_the_repeated_key(void **state)
{
	(void)state;
	assert_refused("a: 1\nb: 2\na: 3\n", "t.yaml:3:1: duplicate key");
}

static void duplicate_key_in_a_nested_mapping_is_refused_at_the_key_not_its_block_value(void **state)
{
	(void)state;
	assert_refused("outer:\n  k: 1\n  k:\n    deep: 2\n", "t.yaml:3:3: duplicate key");
}

static void anchor_on_a_scalar_is_refused(void **state)
{
	(void)state;
	assert_refused("a: 1\nb: &x 2\n", "t.yaml:2:4: anchors and tags are not allowed");
}

static void anchor_on_a_mapping_or_sequence_is_refused(void **state)
{
	(void)state;
	assert_refused("a: &x\n  k: v\n", "t.yaml:1:4: anchors and tags are not allowed");
	assert_refused("a: &x [1, 2]\n", "t.yaml:1:4: anchors and tags are not allowed");
}

static void alias_is_refused(void **state)
{
	(void)state;
	assert_refused("a: 1\nb: *x\n", "t.yaml:2:4: aliases are not allowed");
}

static void explicit_tag_is_refused(void **state)
{
	(void)state;
	assert_refused("a: !!str x\n", "t.yaml:1:4: anchors and tags are not allowed");
	assert_refused("a: !!map {k: v}\n", "t.yaml:1:4: anchors and tags are not allowed");
}

static void second_document_is_refused_at_its_start(void **state)
{
	(void)state;
	assert_refused("a: 1\n---\nb: 2\n", "t.yaml:2:1: only one document per file");
}

static void syntax_error_names_line_column_and_problem(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	json_t *j = parse("a: [1, 2", &err);
	assert_null(j);
	int line = 0, col = 0, at = 0;
	assert_int_equal(sscanf(ap_buf_str(&err), "t.yaml:%d:%d: %n", &line, &col, &at), 2);
	/* libyaml notices the missing ']' at the end of the input */
	assert_true(line >= 1);
	assert_true(col >= 1);
	assert_true(at > 0);
	assert_non_null(strstr(ap_buf_str(&err) + at, "did not find expected ',' or ']'"));
	ap_buf_free(&err);
}

static void bad_indentation_is_a_syntax_error_on_its_line(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	json_t *j = parse("a: 1\nb:\n  c: 2\n d: 3\n", &err);
	assert_null(j);
	int line = 0, col = 0;
	assert_int_equal(sscanf(ap_buf_str(&err), "t.yaml:%d:%d: ", &line, &col), 2);
	assert_int_equal(line, 4);
	ap_buf_free(&err);
}

static void empty_document_is_refused(void **state)
{
	(void)state;
	assert_refused("", "t.yaml: empty document");
	assert_refused("# only a comment\n\n", "t.yaml: empty document");
}

static void mapping_key_that_is_not_a_scalar_is_refused(void **state)
{
	(void)state;
	assert_refused("? [a, b]\n: c\n", "t.yaml:1:3: a mapping key must be a plain scalar");
}

static void nesting_deeper_than_the_limit_is_refused(void **state)
{
	(void)state;
	char deep[256] = "", ok[256] = "";
	for (int i = 0; i < 65; i++)
		strcat(deep, "[");
	for (int i = 0; i < 65; i++)
		strcat(deep, "]");
	for (int i = 0; i < 64; i++)
		strcat(ok, "[");
	for (int i = 0; i < 64; i++)
		strcat(ok, "]");
	assert_refused(deep, "t.yaml:1:65: nested too deeply");
	struct ap_buf err = { 0 };
	json_t *j = parse(ok, &err);
	assert_non_null(j);
	json_decref(j);
	ap_buf_free(&err);
}

static void error_is_appended_to_what_err_holds(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	ap_buf_adds(&err, "loading: ");
	assert_null(parse("a: 1\na: 2\n", &err));
	assert_string_equal(ap_buf_str(&err), "loading: t.yaml:2:1: duplicate key");
	ap_buf_free(&err);
}

static void only_len_bytes_of_the_text_are_read(void **state)
{
	(void)state;
	struct ap_buf err = { 0 };
	const char *text = "a: 1\nb: 2\n";
	json_t *j = ap_yaml_parse(text, 5, "t.yaml", &err);
	assert_non_null(j);
	assert_string_equal(str_at(j, "a"), "1");
	assert_null(json_object_get(j, "b"));
	json_decref(j);
	ap_buf_free(&err);
}

static void load_reads_a_file_and_names_it_in_errors(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/test-yamldoc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "k: v\nk: w\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);

	struct ap_buf err = { 0 }, want = { 0 };
	assert_null(ap_yaml_load(path, &err));
	ap_buf_addf(&want, "%s:2:1: duplicate key", path);
	assert_string_equal(ap_buf_str(&err), ap_buf_str(&want));
	unlink(path);

	ap_buf_reset(&err);
	ap_buf_reset(&want);
	assert_null(ap_yaml_load(path, &err));
	ap_buf_addf(&want, "%s: %s", path, strerror(ENOENT));
	assert_string_equal(ap_buf_str(&err), ap_buf_str(&want));
	ap_buf_free(&err);
	ap_buf_free(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mapping_becomes_an_object_of_its_keys),
		cmocka_unit_test(each_object_records_the_line_its_mapping_starts_on),
		cmocka_unit_test(line_is_zero_for_what_is_not_a_parsed_mapping),
		cmocka_unit_test(sequences_become_arrays_in_order),
		cmocka_unit_test(every_scalar_stays_a_string),
		cmocka_unit_test(block_scalar_keeps_newlines_and_indentation),
		cmocka_unit_test(duplicate_key_is_refused_at_the_repeated_key),
		cmocka_unit_test(duplicate_key_in_a_nested_mapping_is_refused_at_the_key_not_its_block_value),
		cmocka_unit_test(anchor_on_a_scalar_is_refused),
		cmocka_unit_test(anchor_on_a_mapping_or_sequence_is_refused),
		cmocka_unit_test(alias_is_refused),
		cmocka_unit_test(explicit_tag_is_refused),
		cmocka_unit_test(second_document_is_refused_at_its_start),
		cmocka_unit_test(syntax_error_names_line_column_and_problem),
		cmocka_unit_test(bad_indentation_is_a_syntax_error_on_its_line),
		cmocka_unit_test(empty_document_is_refused),
		cmocka_unit_test(mapping_key_that_is_not_a_scalar_is_refused),
		cmocka_unit_test(nesting_deeper_than_the_limit_is_refused),
		cmocka_unit_test(error_is_appended_to_what_err_holds),
		cmocka_unit_test(only_len_bytes_of_the_text_are_read),
		cmocka_unit_test(load_reads_a_file_and_names_it_in_errors),
	};
	return cmocka_run_group_tests_name("yamldoc", tests, NULL, NULL);
}
