/* test-official.c - unit tests for src/official.h: node ids, the ranking of the
 * tests that mention a target, claimed node ids, preflight reasons and the
 * check object of one official test, all on data shaped like the worker's
 * answers (tests_find, tests_nodes, tests_preflight, tests_run). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "base/fsutil.h"
#include "check/official.h"
#include "env/envs.h"

#define AUTOGRAD "test/test_autograd.py"

/* ---- ap_nodeid_parse / ap_nodeid_format ---- */

static void class_node_id_parses_into_file_class_and_test(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse(AUTOGRAD "::TestMultithreadAutograd::test_x", &n), 0);
	assert_string_equal(n.file, AUTOGRAD);
	assert_string_equal(n.cls, "TestMultithreadAutograd");
	assert_string_equal(n.test, "test_x");
}

static void module_level_node_id_parses_with_empty_class(void **state)
{
	(void)state;
	struct ap_nodeid n;
	memset(&n, 'x', sizeof(n));
	assert_int_equal(ap_nodeid_parse("test/x.py::test_fn", &n), 0);
	assert_string_equal(n.file, "test/x.py");
	assert_string_equal(n.cls, "");
	assert_string_equal(n.test, "test_fn");
}

static void node_id_without_separator_is_rejected(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse(AUTOGRAD, &n), -EINVAL);
	assert_int_equal(ap_nodeid_parse("test_x", &n), -EINVAL);
}

static void node_id_with_empty_test_is_rejected(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse("test/x.py::", &n), -EINVAL);
	assert_int_equal(ap_nodeid_parse("test/x.py::A::", &n), -EINVAL);
}

static void node_id_with_empty_file_is_rejected(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse("::A::test_x", &n), -EINVAL);
}

static void absolute_path_is_rejected(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse("/etc/x.py::A::b", &n), -EINVAL);
}

static void parent_directory_in_path_is_rejected(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse("test/../../etc/x.py::A::b", &n), -EINVAL);
	assert_int_equal(ap_nodeid_parse("../x.py::test_b", &n), -EINVAL);
}

static void non_python_file_is_rejected(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse("test/x.txt::A::b", &n), -EINVAL);
	assert_int_equal(ap_nodeid_parse("test/x.pyc::A::b", &n), -EINVAL);
	assert_int_equal(ap_nodeid_parse(".py::test_b", &n), -EINVAL);
}

static void too_many_parts_are_rejected(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse("test/x.py::A::B::test_b", &n), -EINVAL);
}

static void empty_class_is_rejected(void **state)
{
	(void)state;
	struct ap_nodeid n;
	assert_int_equal(ap_nodeid_parse("test/x.py::::t", &n), -EINVAL);
}

static void overlong_part_is_rejected_not_truncated(void **state)
{
	(void)state;
	struct ap_nodeid n;
	char id[512];
	snprintf(id, sizeof(id), "test/x.py::A::test_%0200d", 0);
	assert_int_equal(ap_nodeid_parse(id, &n), -EINVAL);
}

static void node_id_formats_with_class(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_nodeid_format(AUTOGRAD, "TestAutograd", "test_x", &b);
	assert_string_equal(ap_buf_str(&b), AUTOGRAD "::TestAutograd::test_x");
	ap_buf_free(&b);
}

static void node_id_formats_without_class_for_null_or_empty_class(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_nodeid_format("test/x.py", NULL, "test_fn", &b);
	assert_string_equal(ap_buf_str(&b), "test/x.py::test_fn");
	ap_buf_reset(&b);
	ap_nodeid_format("test/x.py", "", "test_fn", &b);
	assert_string_equal(ap_buf_str(&b), "test/x.py::test_fn");
	ap_buf_free(&b);
}

static void formatted_node_id_parses_back(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	struct ap_nodeid n;
	ap_nodeid_format(AUTOGRAD, "TestAutograd", "test_grad_mode", &b);
	assert_int_equal(ap_nodeid_parse(ap_buf_str(&b), &n), 0);
	assert_string_equal(n.file, AUTOGRAD);
	assert_string_equal(n.cls, "TestAutograd");
	assert_string_equal(n.test, "test_grad_mode");
	ap_buf_free(&b);
}

/* ---- ap_official_rank ---- */

#define CLS "set_multithreading_enabled"
#define TEXT "with torch.autograd.set_multithreading_enabled(False):"
#define MAXM 4

/* One found test, as ap_official_find gives it: file, class (NULL:
 * module-level), test, the hows of its matches (lines 1, 2, ...) and
 * whether it uses the leaf. */
struct hit_spec {
	const char *file, *cls, *test;
	const char *hows[MAXM];
	int uses_leaf;
};

static char *dupstr(const char *s)
{
	char *d = s ? strdup(s) : NULL;
	assert_true(!s || d);
	return d;
}

static struct ap_official_found found_of(const struct hit_spec *s, size_t n)
{
	struct ap_official_found f = { n, calloc(n ? n : 1, sizeof(struct ap_official_hit)) };
	assert_non_null(f.hits);
	for (size_t i = 0; i < n; i++) {
		struct ap_official_hit *h = &f.hits[i];
		h->file = dupstr(s[i].file);
		h->cls = dupstr(s[i].cls);
		h->test = dupstr(s[i].test);
		h->line = 42;
		h->uses_leaf = s[i].uses_leaf;
		h->matches = calloc(MAXM, sizeof(*h->matches));
		assert_non_null(h->matches);
		for (size_t k = 0; k < MAXM && s[i].hows[k]; k++)
			h->matches[h->nmatches++] = (struct ap_official_match){ (long long)k + 1,
										s[i].hows[k], dupstr(TEXT) };
	}
	return f;
}

/* Ranks the n specs into *f. */
static void rank(const struct hit_spec *s, size_t n, struct ap_official_found *f)
{
	*f = found_of(s, n);
	assert_int_equal(ap_official_rank(f, CLS), 0);
}

/* The one ranked entry whose node is node. */
static const struct ap_official_hit *ranked(const struct ap_official_found *f, const char *node)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->hits[i].node, node))
			return &f->hits[i];
	fail_msg("no ranked entry %s", node);
	return NULL;
}

static int score_of(const struct ap_official_found *f, const char *node)
{
	return ranked(f, node)->score;
}

static void ranked_tests_get_node_ids_with_and_without_class(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ AUTOGRAD, "TestMultithreadAutograd", "test_a", { "qualified" }, 0 },
		{ "test/test_x.py", NULL, "test_b", { "qualified" }, 0 },
	};
	struct ap_official_found r;
	rank(s, 2, &r);
	assert_int_equal(r.n, 2);
	assert_non_null(ranked(&r, AUTOGRAD "::TestMultithreadAutograd::test_a"));
	assert_non_null(ranked(&r, "test/test_x.py::test_b"));
	ap_official_found_free(&r);
}

static void qualified_mention_scores_4_alias_3_bare_name_1(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ AUTOGRAD, "A", "test_q", { "qualified" }, 0 },
		{ AUTOGRAD, "A", "test_a", { "alias" }, 0 },
		{ AUTOGRAD, "A", "test_n", { "name" }, 0 },
	};
	struct ap_official_found r;
	rank(s, 3, &r);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_q"), 4);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_a"), 3);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_n"), 1);
	ap_official_found_free(&r);
}

static void score_is_the_best_of_a_tests_matches(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ AUTOGRAD, "A", "test_mixed", { "name", "qualified", "alias" }, 0 },
		{ AUTOGRAD, "A", "test_names", { "name", "alias" }, 0 },
	};
	struct ap_official_found r;
	rank(s, 2, &r);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_mixed"), 4);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_names"), 3);
	ap_official_found_free(&r);
}

static void test_named_after_the_class_scores_2_more(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ AUTOGRAD, "A", "test_" CLS "_clone", { "name" }, 0 },
		{ AUTOGRAD, "A", "test_other", { "name" }, 0 },
	};
	struct ap_official_found r;
	rank(s, 2, &r);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_" CLS "_clone"), 3);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_other"), 1);
	ap_official_found_free(&r);
}

static void test_using_the_leaf_scores_1_more(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ AUTOGRAD, "A", "test_leaf", { "alias" }, 1 },
		{ AUTOGRAD, "A", "test_noleaf", { "alias" }, 0 },
	};
	struct ap_official_found r;
	rank(s, 2, &r);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_leaf"), 4);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_noleaf"), 3);
	ap_official_found_free(&r);
}

static void all_bonuses_add_up(void **state)
{
	(void)state;
	const struct hit_spec s[] = { { AUTOGRAD, "A", "test_" CLS, { "qualified" }, 1 } };
	struct ap_official_found r;
	rank(s, 1, &r);
	assert_int_equal(score_of(&r, AUTOGRAD "::A::test_" CLS), 4 + 2 + 1);
	ap_official_found_free(&r);
}

static void ranking_is_by_score_descending_then_node_ascending(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ "test/a.py", "A", "test_a", { "name" }, 0 },
		{ "test/z.py", "Z", "test_z", { "qualified" }, 0 },
		{ "test/m.py", NULL, "test_m", { "alias" }, 0 },
		{ "test/b.py", "B", "test_b", { "qualified" }, 0 },
		{ "test/c.py", "C", "test_c", { "name" }, 1 },
	};
	const char *want[] = { "test/b.py::B::test_b", "test/z.py::Z::test_z", "test/m.py::test_m",
			       "test/c.py::C::test_c", "test/a.py::A::test_a" };
	struct ap_official_found r;
	rank(s, 5, &r);
	assert_int_equal(r.n, 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(r.hits[i].node, want[i]);
	ap_official_found_free(&r);
}

/* Two tests of one node id (a test defined twice in its class) keep the
 * order they were found in. */
static void ties_of_score_and_node_keep_the_order_found(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ "test/b.py", "B", "test_b", { "name" }, 0 },
		{ "test/a.py", "A", "test_a", { "alias" }, 0 },
		{ "test/a.py", "A", "test_a", { "alias", "alias" }, 0 },
		{ "test/a.py", "A", "test_a", { "alias" }, 0 },
	};
	struct ap_official_found r;
	rank(s, 4, &r);
	assert_int_equal(r.hits[0].nmatches, 1);
	assert_int_equal(r.hits[1].nmatches, 2);
	assert_int_equal(r.hits[2].nmatches, 1);
	assert_string_equal(r.hits[3].node, "test/b.py::B::test_b");
	ap_official_found_free(&r);
}

static void ranking_keeps_what_was_found(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ "test/a.py", "A", "test_a", { "name" }, 0 },
		{ "test/b.py", "B", "test_b", { "qualified" }, 1 },
	};
	struct ap_official_found r;
	rank(s, 2, &r);
	const struct ap_official_hit *b = ranked(&r, "test/b.py::B::test_b");
	assert_int_equal(b->line, 42);
	assert_true(b->uses_leaf);
	assert_int_equal(b->nmatches, 1);
	assert_string_equal(b->matches[0].text, TEXT);
	assert_string_equal(b->file, "test/b.py");
	ap_official_found_free(&r);
}

static void ranking_nothing_gives_nothing(void **state)
{
	(void)state;
	struct ap_official_found r;
	rank(NULL, 0, &r);
	assert_int_equal(r.n, 0);
	json_t *j = ap_official_found_json(&r);
	assert_true(json_is_array(j));
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	ap_official_found_free(&r);
}

/* The bundle's official.found: each ranked test's fields, in this order,
 * a module-level test's class null. */
static void ranked_tests_serialize_as_the_bundle_holds_them(void **state)
{
	(void)state;
	const struct hit_spec s[] = {
		{ "test/m.py", NULL, "test_m", { "alias" }, 0 },
		{ "test/b.py", "B", "test_b", { "qualified", "name" }, 1 },
	};
	struct ap_official_found r;
	rank(s, 2, &r);
	json_t *j = ap_official_found_json(&r);
	char *txt = json_dumps(j, JSON_COMPACT);
	assert_string_equal(txt,
		"[{\"file\":\"test/b.py\",\"class\":\"B\",\"test\":\"test_b\",\"line\":42,"
		"\"matches\":[{\"line\":1,\"how\":\"qualified\",\"text\":\"" TEXT "\"},"
		"{\"line\":2,\"how\":\"name\",\"text\":\"" TEXT "\"}],\"uses_leaf\":true,"
		"\"node\":\"test/b.py::B::test_b\",\"score\":5,\"generated\":false,\"notrun\":null,\"generic\":null},"
		"{\"file\":\"test/m.py\",\"class\":null,\"test\":\"test_m\",\"line\":42,"
		"\"matches\":[{\"line\":1,\"how\":\"alias\",\"text\":\"" TEXT "\"}],"
		"\"uses_leaf\":false,\"node\":\"test/m.py::test_m\",\"score\":3,"
		"\"generated\":false,\"notrun\":null,\"generic\":null}]");
	free(txt);
	json_decref(j);
	ap_official_found_free(&r);
}

/* ---- ap_claim_check ---- */

#define CLAIMED AUTOGRAD "::TestMultithreadAutograd::test_x"

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	assert_non_null(s);
	return s;
}

static void existing_claimed_node_passes_without_reason(void **state)
{
	(void)state;
	const struct ap_official_node nodes[] = { { "test/test_other.py", "Other", "test_x" },
						  { AUTOGRAD, "TestMultithreadAutograd", "test_x" } };
	json_t *c = ap_claim_check(CLAIMED, nodes, 2, "2.6.0");
	assert_non_null(c);
	assert_true(ap_claim_exists(CLAIMED, nodes, 2));
	assert_string_equal(str(c, "kind"), "claim");
	assert_string_equal(str(c, "status"), "PASS");
	assert_string_equal(str(c, "node"), CLAIMED);
	assert_string_equal(str(c, "name"), "claimed:" CLAIMED);
	assert_true(json_is_true(json_object_get(c, "exists")));
	assert_false(json_is_string(json_object_get(c, "reason")));
	assert_null(json_object_get(c, "suggestions"));
	assert_true(json_is_array(json_object_get(c, "trace")));
	json_decref(c);
}

static void existing_module_level_node_passes(void **state)
{
	(void)state;
	const struct ap_official_node nodes[] = { { "test/x.py", NULL, "test_fn" } };
	json_t *c = ap_claim_check("test/x.py::test_fn", nodes, 1, "2.6.0");
	assert_string_equal(str(c, "status"), "PASS");
	assert_true(json_is_true(json_object_get(c, "exists")));
	json_decref(c);
}

static void claim_in_the_wrong_class_warns_naming_where_the_test_is(void **state)
{
	(void)state;
	const struct ap_official_node nodes[] = { { AUTOGRAD, "TestAutograd", "test_x" },
						  { "test/test_other.py", NULL, "test_x" } };
	json_t *c = ap_claim_check(CLAIMED, nodes, 2, "2.6.0");
	assert_false(ap_claim_exists(CLAIMED, nodes, 2));
	assert_string_equal(str(c, "kind"), "claim");
	assert_string_equal(str(c, "status"), "WARN");
	assert_false(json_is_true(json_object_get(c, "exists")));
	assert_true(json_is_false(json_object_get(c, "exists")));
	assert_string_equal(str(c, "reason"),
			    "no such test at torch 2.6.0; the same test name exists as "
			    AUTOGRAD "::TestAutograd::test_x, test/test_other.py::test_x");
	assert_string_equal(str(c, "suggestions"),
			    AUTOGRAD "::TestAutograd::test_x, test/test_other.py::test_x");
	json_decref(c);
}

static void claim_of_a_name_no_test_has_warns_so(void **state)
{
	(void)state;
	json_t *c = ap_claim_check(CLAIMED, NULL, 0, "2.5.1");
	assert_string_equal(str(c, "status"), "WARN");
	assert_true(json_is_false(json_object_get(c, "exists")));
	assert_string_equal(str(c, "reason"), "no such test at torch 2.5.1; no test has that name");
	json_decref(c);
}

/* ---- ap_preflight_reason ---- */

static json_t *module(const char *name, int present, const char *path)
{
	json_t *m = json_pack("{s:s, s:s, s:b}", "module", name, "where",
			      path ? "local" : "installed", "present", present);
	if (path)
		json_object_set_new(m, "path", json_string(path));
	return m;
}

/* ap_preflight_reason of a tests_preflight reply given as JSON. */
static char *reason_of(const json_t *reply)
{
	struct ap_proto_preflighted p;
	ap_proto_preflight_read(reply, &p);
	return ap_preflight_reason(&p);
}

static void missing_test_file_is_a_missing_fixture(void **state)
{
	(void)state;
	json_t *pre = json_pack("{s:s, s:b, s:[]}", "file", AUTOGRAD, "file_exists", 0, "modules");
	char *why = reason_of(pre);
	assert_non_null(why);
	assert_string_equal(why, "missing-fixture: " AUTOGRAD " (the test file itself)");
	free(why);
	json_decref(pre);
}

static void missing_local_modules_are_named_by_path_in_order(void **state)
{
	(void)state;
	json_t *pre = json_pack("{s:s, s:b, s:[o, o, o]}", "file", AUTOGRAD, "file_exists", 1,
				"modules", module("autograd.test_complex", 0,
						  "test/autograd/test_complex.py"),
				module("torch", 1, NULL),
				module("autograd.test_functional", 0,
				       "test/autograd/test_functional.py"));
	char *why = reason_of(pre);
	assert_non_null(why);
	assert_string_equal(why, "missing-fixture: test/autograd/test_complex.py (imported by "
			    "test_autograd.py), test/autograd/test_functional.py (imported by "
			    "test_autograd.py)");
	free(why);
	json_decref(pre);
}

static void missing_installed_module_is_named_by_module(void **state)
{
	(void)state;
	json_t *pre = json_pack("{s:s, s:b, s:[o, o]}", "file", AUTOGRAD, "file_exists", 1,
				"modules", module("torch", 1, NULL), module("hypothesis", 0, NULL));
	char *why = reason_of(pre);
	assert_non_null(why);
	assert_string_equal(why, "missing-fixture: hypothesis (imported by test_autograd.py)");
	free(why);
	json_decref(pre);
}

static void everything_present_and_importable_is_ready(void **state)
{
	(void)state;
	json_t *pre = json_pack("{s:s, s:b, s:[o, o], s:{s:b, s:i}}", "file", AUTOGRAD,
				"file_exists", 1, "modules", module("torch", 1, NULL),
				module("common_utils", 1, NULL), "import", "ok", 1, "ms", 812);
	assert_null(reason_of(pre));
	json_decref(pre);
}

static void present_modules_without_an_import_try_are_ready(void **state)
{
	(void)state;
	json_t *pre = json_pack("{s:s, s:b, s:[o]}", "file", AUTOGRAD, "file_exists", 1,
				"modules", module("torch", 1, NULL));
	assert_null(reason_of(pre));
	json_decref(pre);
}

static void import_missing_a_module_is_a_missing_fixture_naming_it(void **state)
{
	(void)state;
	json_t *pre = json_pack("{s:s, s:b, s:[o], s:{s:b, s:s, s:s, s:i}}", "file", AUTOGRAD,
				"file_exists", 1, "modules", module("torch", 1, NULL), "import",
				"ok", 0, "error", "ModuleNotFoundError: No module named 'expecttest'",
				"missing", "expecttest", "ms", 90);
	char *why = reason_of(pre);
	assert_non_null(why);
	assert_string_equal(why,
			    "missing-fixture: module expecttest (needed to import test_autograd.py)");
	free(why);
	json_decref(pre);
}

static void import_failing_otherwise_is_import_failed_with_the_error(void **state)
{
	(void)state;
	json_t *pre = json_pack("{s:s, s:b, s:[o], s:{s:b, s:s, s:n, s:i}}", "file", AUTOGRAD,
				"file_exists", 1, "modules", module("torch", 1, NULL), "import",
				"ok", 0, "error", "RuntimeError: CUDA not available", "missing",
				"ms", 90);
	char *why = reason_of(pre);
	assert_non_null(why);
	assert_string_equal(why, "import-failed: RuntimeError: CUDA not available");
	free(why);
	json_decref(pre);
}

/* ---- ap_official_check ---- */

/* ap_official_check of a tests_run result given as JSON. */
static json_t *check_of(const char *file, const json_t *res)
{
	struct ap_proto_test t;
	ap_proto_test_read(res, &t);
	return ap_official_check(file, &t);
}

static void test_result_becomes_an_official_check(void **state)
{
	(void)state;
	json_t *res = json_pack("{s:s, s:s, s:s, s:{s:i, s:i, s:s}, s:i, s:s}", "type", "test",
				"class", "TestMultithreadAutograd", "test", "test_x", "unittest",
				"tests_run", 1, "failures", 1, "failure",
				"Traceback\n  x\nAssertionError: 1 != 2\n", "duration_ms", 37,
				"output", "F\n======\nFAIL: test_x\n");
	json_t *c = check_of(AUTOGRAD, res);
	assert_non_null(c);
	assert_string_equal(str(c, "name"), CLAIMED);
	assert_string_equal(str(c, "kind"), "official");
	assert_string_equal(str(c, "status"), "FAIL");
	assert_string_equal(str(c, "reason"), "AssertionError: 1 != 2");
	assert_int_equal(json_integer_value(json_object_get(c, "duration_ms")), 37);
	assert_string_equal(str(c, "output"), "F\n======\nFAIL: test_x\n");
	assert_true(json_is_array(json_object_get(c, "trace")));
	assert_int_equal(json_array_size(json_object_get(c, "trace")), 0);
	json_decref(c);
	json_decref(res);
}

static void module_level_result_is_named_without_class(void **state)
{
	(void)state;
	json_t *res = json_pack("{s:n, s:s, s:{s:n}, s:i, s:s}", "class", "test", "test_fn",
				"function", "raised", "duration_ms", 4, "output", "");
	json_t *c = check_of("test/x.py", res);
	assert_non_null(c);
	assert_string_equal(str(c, "name"), "test/x.py::test_fn");
	assert_string_equal(str(c, "status"), "PASS");
	json_decref(c);
	json_decref(res);
}

static void result_without_output_or_reason_still_gives_a_check(void **state)
{
	(void)state;
	json_t *res = json_pack("{s:s, s:s, s:{s:i}, s:i}", "class", "A", "test", "test_y",
				"unittest", "tests_run", 1, "duration_ms", 2);
	json_t *c = check_of(AUTOGRAD, res);
	assert_non_null(c);
	assert_true(json_is_object(c));
	assert_string_equal(str(c, "name"), AUTOGRAD "::A::test_y");
	assert_string_equal(str(c, "kind"), "official");
	assert_string_equal(str(c, "status"), "PASS");
	assert_false(json_is_string(json_object_get(c, "reason")));
	assert_false(json_is_string(json_object_get(c, "output")));
	json_decref(c);
	json_decref(res);
}

/* ---- ap_official_outcome: the worker reports, C judges ---- */

/* The status of a tests_run result given as JSON text; its reason in why. */
static const char *outcome(const char *result_json, char *why, size_t n)
{
	static char status[16];
	struct ap_buf reason = { 0 };
	json_t *res = json_loads(result_json, 0, NULL);
	assert_non_null(res);
	struct ap_proto_test t;
	ap_proto_test_read(res, &t);
	snprintf(status, sizeof(status), "%s", ap_status_name(ap_official_outcome(&t, &reason)));
	snprintf(why, n, "%s", ap_buf_str(&reason));
	ap_buf_free(&reason);
	json_decref(res);
	return status;
}

#define UT(fields) "{\"class\": \"A\", \"test\": \"test_x\", \"unittest\": {" fields "}}"
#define COUNTS "\"tests_run\": 1, \"errors\": 0, \"failures\": 0, \"skipped\": 0, " \
	"\"expected_failures\": 0, \"unexpected_successes\": 0"

static void unittest_pass_is_pass_without_reason(void **state)
{
	(void)state;
	char why[256];
	assert_string_equal(outcome(UT(COUNTS), why, sizeof(why)), "PASS");
	assert_string_equal(why, "");
}

static void unittest_error_is_error_with_the_last_line_naming_an_exception(void **state)
{
	(void)state;
	char why[256];
	const char *res = UT(COUNTS ", \"errors\": 1, \"failures\": 1, \"failure\": \"x\", "
			     "\"error\": \"Traceback (most recent call last):\\n  File \\\"t.py\\\", "
			     "line 3\\n    f()\\nRuntimeError: boom\\n\\nHint: try again\\n\"");
	assert_string_equal(outcome(res, why, sizeof(why)), "ERROR");
	assert_string_equal(why, "RuntimeError: boom");
}

static void unittest_failure_names_a_dotted_exception(void **state)
{
	(void)state;
	char why[256];
	const char *res = UT(COUNTS ", \"failures\": 1, \"failure\": "
			     "\"Traceback\\n  x\\nunittest.case.FailureException: 1 != 2\\n  \"");
	assert_string_equal(outcome(res, why, sizeof(why)), "FAIL");
	assert_string_equal(why, "unittest.case.FailureException: 1 != 2");
}

static void traceback_naming_no_exception_gives_its_last_line(void **state)
{
	(void)state;
	char why[256];
	const char *res = UT(COUNTS ", \"failures\": 1, \"failure\": "
			     "\"first\\n  ErrorsSoFar: not a name ending in Error\\nlast words  \\n\\n\"");
	assert_string_equal(outcome(res, why, sizeof(why)), "FAIL");
	assert_string_equal(why, "last words");
	res = UT(COUNTS ", \"failures\": 1, \"failure\": \" \\n \"");
	assert_string_equal(outcome(res, why, sizeof(why)), "FAIL");
	assert_string_equal(why, "?");
	res = UT(COUNTS ", \"errors\": 1, \"error\": \"Error\\nMyError.x: a\\nAssertionErrorX\"");
	assert_string_equal(outcome(res, why, sizeof(why)), "ERROR");
	assert_string_equal(why, "MyError.x: a");
	/* a Python name never starts with a digit, whatever follows it */
	res = UT(COUNTS ", \"errors\": 1, \"error\": \"RuntimeError: real\\n1.ValueError: listed\"");
	assert_string_equal(outcome(res, why, sizeof(why)), "ERROR");
	assert_string_equal(why, "RuntimeError: real");
}

/* An exception's facts, as the worker sends them (notes: a JSON array). */
#define EXC(module, qualname, message, notes) "{\"type\": \"" qualname "\", \"qualname\": \"" \
	qualname "\", \"module\": \"" module "\", \"message\": \"" message "\", \"notes\": " \
	notes ", \"frames\": [{\"file\": \"t.py\", \"line\": 3, \"function\": \"test_x\"}]}"

static void unittest_error_is_worded_from_its_exceptions_facts(void **state)
{
	(void)state;
	char why[256];
	/* no traceback text: the facts alone, the type by its module */
	assert_string_equal(outcome(UT(COUNTS ", \"errors\": 1, \"error_exception\": "
				       EXC("torch._dynamo.exc", "InternalTorchDynamoError", "boom",
					   "[]")), why, sizeof(why)), "ERROR");
	assert_string_equal(why, "torch._dynamo.exc.InternalTorchDynamoError: boom");
	/* builtins and __main__ go unqualified; no message, no ": " */
	assert_string_equal(outcome(UT(COUNTS ", \"failures\": 1, \"failure_exception\": "
				       EXC("builtins", "AssertionError", "", "[]")), why,
				    sizeof(why)), "FAIL");
	assert_string_equal(why, "AssertionError");
	assert_string_equal(outcome(UT(COUNTS ", \"errors\": 1, \"error_exception\": "
				       EXC("__main__", "MyError", "m", "[]")), why, sizeof(why)),
			    "ERROR");
	assert_string_equal(why, "MyError: m");
	/* the last line naming an exception, a note's too; a hint after it is not */
	assert_string_equal(outcome(UT(COUNTS ", \"errors\": 1, \"error_exception\": "
				       EXC("__main__", "MyError", "a\\nline two",
					   "[\"ValueError: the note\", \"hint: run again\"]")), why,
				    sizeof(why)), "ERROR");
	assert_string_equal(why, "ValueError: the note");
	/* naming none: the facts' last line */
	assert_string_equal(outcome(UT(COUNTS ", \"errors\": 1, \"error_exception\": "
				       EXC("torch._dynamo.exc", "Unsupported", "x", "[\"hint\"]")),
				    why, sizeof(why)), "ERROR");
	assert_string_equal(why, "hint");
}

static void facts_the_traceback_does_not_end_with_leave_the_traceback_to_word_it(void **state)
{
	(void)state;
	char why[256];
	/* the error's facts, not the failure's, word an error */
	assert_string_equal(outcome(UT(COUNTS ", \"errors\": 1, \"failures\": 1, "
				       "\"error\": \"Traceback\\nmod.KeyError: 'k'\\n\", "
				       "\"error_exception\": " EXC("mod", "KeyError", "'k'", "[]") ", "
				       "\"failure\": \"x\", \"failure_exception\": "
				       EXC("builtins", "AssertionError", "no", "[]")), why, sizeof(why)),
			    "ERROR");
	assert_string_equal(why, "mod.KeyError: 'k'");
	/* Python added a suggestion to the message: the traceback's line */
	assert_string_equal(outcome(UT(COUNTS ", \"errors\": 1, \"error\": \"Traceback\\n"
				       "AttributeError: no y. Did you mean: 'x'?\\n\", "
				       "\"error_exception\": " EXC("builtins", "AttributeError", "no y",
								   "[]")), why, sizeof(why)), "ERROR");
	assert_string_equal(why, "AttributeError: no y. Did you mean: 'x'?");
	/* the facts name no exception: the cause above them, as the text has it */
	assert_string_equal(outcome(UT(COUNTS ", \"errors\": 1, \"error\": \"Traceback\\n"
				       "KeyError: 'k'\\n\\nThe above...\\nTraceback\\nexc.Unsupported: x\\n\", "
				       "\"error_exception\": " EXC("exc", "Unsupported", "x", "[]")),
				    why, sizeof(why)), "ERROR");
	assert_string_equal(why, "KeyError: 'k'");
	/* facts the worker could not read (notes: null): the traceback's line */
	assert_string_equal(outcome(UT(COUNTS ", \"errors\": 1, \"error\": \"Traceback\\n"
				       "RuntimeError: seen\\n\", \"error_exception\": "
				       EXC("builtins", "RuntimeError", "other", "null")), why,
				    sizeof(why)), "ERROR");
	assert_string_equal(why, "RuntimeError: seen");
}

static void module_level_function_is_worded_type_and_message_from_its_facts(void **state)
{
	(void)state;
	char why[256];
	assert_string_equal(outcome("{\"function\": {\"raised\": {\"type\": \"KeyError\", "
				    "\"assertion\": false, \"text\": \"stale\", \"exception\": "
				    EXC("builtins", "KeyError", "'k'", "[]") "}}}", why, sizeof(why)),
			    "ERROR");
	assert_string_equal(why, "KeyError: 'k'");
}

static void unittest_other_outcomes_map_in_unittests_order(void **state)
{
	(void)state;
	char why[256];
	assert_string_equal(outcome(UT(COUNTS ", \"unexpected_successes\": 1, \"skipped\": 1"),
				    why, sizeof(why)), "FAIL");
	assert_string_equal(why, "unexpected success");
	assert_string_equal(outcome(UT(COUNTS ", \"skipped\": 1, \"skip\": \"needs cuda\", "
				       "\"expected_failures\": 1"), why, sizeof(why)), "SKIP");
	assert_string_equal(why, "needs cuda");
	assert_string_equal(outcome(UT(COUNTS ", \"expected_failures\": 1"), why, sizeof(why)),
			    "PASS");
	assert_string_equal(why, "expected failure");
	assert_string_equal(outcome(UT(COUNTS ", \"tests_run\": 0"), why, sizeof(why)), "NOTRUN");
	assert_string_equal(why, "no test ran");
}

static void module_level_function_outcome_follows_what_it_raised(void **state)
{
	(void)state;
	char why[256];
	assert_string_equal(outcome("{\"function\": {\"raised\": null}}", why, sizeof(why)),
			    "PASS");
	assert_string_equal(why, "");
	assert_string_equal(outcome("{\"function\": {\"raised\": {\"type\": \"MyCheck\", "
				    "\"assertion\": true, \"text\": \"MyCheck: no\"}}}", why,
				    sizeof(why)), "FAIL");
	assert_string_equal(why, "MyCheck: no");
	assert_string_equal(outcome("{\"function\": {\"raised\": {\"type\": \"SkipTest\", "
				    "\"assertion\": false, \"text\": \"SkipTest: later\"}}}", why,
				    sizeof(why)), "SKIP");
	assert_string_equal(outcome("{\"function\": {\"raised\": {\"type\": \"Skipped\", "
				    "\"assertion\": false, \"text\": \"Skipped: x\"}}}", why,
				    sizeof(why)), "SKIP");
	assert_string_equal(outcome("{\"function\": {\"raised\": {\"type\": \"KeyError\", "
				    "\"assertion\": false, \"text\": \"KeyError: 'k'\"}}}", why,
				    sizeof(why)), "ERROR");
	assert_string_equal(why, "KeyError: 'k'");
}

static void undefined_test_is_notrun_naming_it(void **state)
{
	(void)state;
	char why[256];
	assert_string_equal(outcome("{\"class\": \"TestA\", \"test\": \"test_b\", "
				    "\"defined\": false}", why, sizeof(why)), "NOTRUN");
	assert_string_equal(why, "not-defined: TestA.test_b does not exist after import (a "
			    "conditional or generated test)");
}

static void process_that_reported_nothing_is_judged_by_how_it_ended(void **state)
{
	(void)state;
	char why[256];
	assert_string_equal(outcome("{\"died\": {\"timeout_s\": 3}}", why, sizeof(why)), "TIMEOUT");
	assert_string_equal(why, "no result within 3 s");
	assert_string_equal(outcome("{\"died\": {\"timeout_s\": 1.5}}", why, sizeof(why)),
			    "TIMEOUT");
	assert_string_equal(why, "no result within 1.5 s");
	assert_string_equal(outcome("{\"died\": {\"signal\": 11, \"signal_name\": \"SIGSEGV\"}}",
				    why, sizeof(why)), "CRASH");
	assert_string_equal(why, "SIGSEGV");
	assert_string_equal(outcome("{\"died\": {\"signal\": 40, \"signal_name\": null}}", why,
				    sizeof(why)), "CRASH");
	assert_string_equal(why, "signal 40");
	/* SIGKILL too is a crash: the worker reports a timeout as one */
	assert_string_equal(outcome("{\"died\": {\"signal\": 9, \"signal_name\": \"SIGKILL\"}}",
				    why, sizeof(why)), "CRASH");
	assert_string_equal(why, "SIGKILL");
	assert_string_equal(outcome("{\"died\": {\"exit_status\": 3}}", why, sizeof(why)), "CRASH");
	assert_string_equal(why, "the test process exited with status 3 during the test");
	assert_string_equal(outcome("{\"died\": {\"exit_status\": 0}, \"unittest\": {\"tests_run\": "
				    "1}}", why, sizeof(why)), "CRASH");
	assert_string_equal(outcome("{\"broken\": \"unreadable result frame\"}", why, sizeof(why)),
			    "ERROR");
	assert_string_equal(why, "unreadable result frame");
	assert_string_equal(outcome("{\"class\": \"A\"}", why, sizeof(why)), "ERROR");
	assert_string_equal(why, "the worker reported no outcome");
}

/* ---- ap_official_expand: which instantiations run ---- */

static json_t *defined_for(const char *cls, const char *test, json_t *classes)
{
	return json_pack("[{s:s, s:s, s:o}]", "class", cls, "test", test, "classes", classes);
}

static void node_its_class_defines_runs_alone(void **state)
{
	(void)state;
	struct ap_official_ref nodes[] = { { "TestA", "test_x" } };
	json_t *def = defined_for("TestA", "test_x", json_pack(
		"[{s:s, s:b, s:[s,s]}, {s:s, s:b, s:[s]}]", "name", "TestA", "own", 1, "methods",
		"test_x", "test_x_float", "name", "TestACPU", "own", 0, "methods", "test_x_cpu"));
	json_t *run = ap_official_expand(nodes, sizeof(nodes) / sizeof(*nodes), def);
	char *txt = json_dumps(run, JSON_COMPACT);
	assert_string_equal(txt, "[[\"TestA\",\"test_x\"]]");
	free(txt);
	json_decref(run);
	json_decref(def);
}

static void device_generic_node_runs_every_instantiation_and_parametrization(void **state)
{
	(void)state;
	struct ap_official_ref nodes[] = { { "TestA", "test_x" } };
	json_t *def = defined_for("TestA", "test_x", json_pack(
		"[{s:s, s:b, s:[]}, {s:s, s:b, s:[s,s,s]}, {s:s, s:b, s:[s]}]",
		"name", "TestA", "own", 0, "methods",
		"name", "TestACPU", "own", 0, "methods", "test_x_cpu", "test_x_float_cpu", "test_xy_cpu",
		"name", "TestAMeta", "own", 0, "methods", "test_x"));
	json_t *run = ap_official_expand(nodes, sizeof(nodes) / sizeof(*nodes), def);
	char *txt = json_dumps(run, JSON_COMPACT);
	assert_string_equal(txt, "[[\"TestACPU\",\"test_x_cpu\"],[\"TestACPU\",\"test_x_float_cpu\"],"
			    "[\"TestAMeta\",\"test_x\"]]");
	free(txt);
	json_decref(run);
	json_decref(def);
}

static void node_nothing_matches_and_module_level_node_stay_as_they_are(void **state)
{
	(void)state;
	struct ap_official_ref nodes[] = { { "TestA", "test_x" }, { NULL, "test_fn" },
					   { "TestB", "test_y" } };
	json_t *want = json_pack("[[s,s], [n,s], [s,s]]", "TestA", "test_x", "test_fn", "TestB",
				 "test_y");
	json_t *def = defined_for("TestA", "test_x", json_pack("[{s:s, s:b, s:[s]}]", "name",
				  "TestA", "own", 0, "methods", "test_xy"));
	json_t *run = ap_official_expand(nodes, sizeof(nodes) / sizeof(*nodes), def);
	assert_true(json_equal(run, want));
	json_decref(run);
	json_decref(def);
	json_decref(want);
}

static void deadline_covers_the_import_and_each_test_with_its_slack(void **state)
{
	(void)state;
	assert_int_equal(ap_official_deadline_s(0, 30), AP_RUN_IMPORT_S);
	assert_int_equal(ap_official_deadline_s(3, 30), AP_RUN_IMPORT_S + 3 * (30 + AP_TEST_SLACK_S));
}

/* --torch-src names a source tree (its test/ is the test tree) or the test
 * tree itself: a path whose last part is "test" is taken as it is, even
 * one that holds a test/ of its own, the relative "test" too. */
static void torch_src_names_a_tree_or_its_test_directory(void **state)
{
	(void)state;
	static const struct {
		const char *src, *tree;
	} cases[] = {
		{ "src", "src/test" }, { "src/", "src/test" }, { "src/test", "src/test" },
		{ "test", "test" }, { "test/", "test" }, { "latest", "latest/test" },
	};
	char dir[256], cwd[4096];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/test-official.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	static const char *const dirs[] = { "src", "src/test", "test", "test/test", "latest",
					    "latest/test" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		assert_int_equal(mkdir(dirs[i], 0755), 0);
	struct ap_env env;
	memset(&env, 0, sizeof(env));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ap_buf root = { 0 }, tree = { 0 }, why = { 0 };
		assert_int_equal(ap_official_root(&env, cases[i].src, NULL, &root, &tree, &why), 1);
		assert_string_equal(ap_buf_str(&tree), cases[i].tree);
		assert_string_equal(ap_buf_str(&root), cases[i].src);
		ap_buf_free(&root);
		ap_buf_free(&tree);
		ap_buf_free(&why);
	}
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(ap_rm_tree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(torch_src_names_a_tree_or_its_test_directory),
		cmocka_unit_test(class_node_id_parses_into_file_class_and_test),
		cmocka_unit_test(module_level_node_id_parses_with_empty_class),
		cmocka_unit_test(node_id_without_separator_is_rejected),
		cmocka_unit_test(node_id_with_empty_test_is_rejected),
		cmocka_unit_test(node_id_with_empty_file_is_rejected),
		cmocka_unit_test(absolute_path_is_rejected),
		cmocka_unit_test(parent_directory_in_path_is_rejected),
		cmocka_unit_test(non_python_file_is_rejected),
		cmocka_unit_test(too_many_parts_are_rejected),
		cmocka_unit_test(empty_class_is_rejected),
		cmocka_unit_test(overlong_part_is_rejected_not_truncated),
		cmocka_unit_test(node_id_formats_with_class),
		cmocka_unit_test(node_id_formats_without_class_for_null_or_empty_class),
		cmocka_unit_test(formatted_node_id_parses_back),
		cmocka_unit_test(ranked_tests_get_node_ids_with_and_without_class),
		cmocka_unit_test(qualified_mention_scores_4_alias_3_bare_name_1),
		cmocka_unit_test(score_is_the_best_of_a_tests_matches),
		cmocka_unit_test(test_named_after_the_class_scores_2_more),
		cmocka_unit_test(test_using_the_leaf_scores_1_more),
		cmocka_unit_test(all_bonuses_add_up),
		cmocka_unit_test(ranking_is_by_score_descending_then_node_ascending),
		cmocka_unit_test(ties_of_score_and_node_keep_the_order_found),
		cmocka_unit_test(ranking_keeps_what_was_found),
		cmocka_unit_test(ranking_nothing_gives_nothing),
		cmocka_unit_test(ranked_tests_serialize_as_the_bundle_holds_them),
		cmocka_unit_test(existing_claimed_node_passes_without_reason),
		cmocka_unit_test(existing_module_level_node_passes),
		cmocka_unit_test(claim_in_the_wrong_class_warns_naming_where_the_test_is),
		cmocka_unit_test(claim_of_a_name_no_test_has_warns_so),
		cmocka_unit_test(missing_test_file_is_a_missing_fixture),
		cmocka_unit_test(missing_local_modules_are_named_by_path_in_order),
		cmocka_unit_test(missing_installed_module_is_named_by_module),
		cmocka_unit_test(everything_present_and_importable_is_ready),
		cmocka_unit_test(present_modules_without_an_import_try_are_ready),
		cmocka_unit_test(import_missing_a_module_is_a_missing_fixture_naming_it),
		cmocka_unit_test(import_failing_otherwise_is_import_failed_with_the_error),
		cmocka_unit_test(test_result_becomes_an_official_check),
		cmocka_unit_test(module_level_result_is_named_without_class),
		cmocka_unit_test(result_without_output_or_reason_still_gives_a_check),
		cmocka_unit_test(unittest_pass_is_pass_without_reason),
		cmocka_unit_test(unittest_error_is_error_with_the_last_line_naming_an_exception),
		cmocka_unit_test(unittest_failure_names_a_dotted_exception),
		cmocka_unit_test(traceback_naming_no_exception_gives_its_last_line),
		cmocka_unit_test(unittest_error_is_worded_from_its_exceptions_facts),
		cmocka_unit_test(facts_the_traceback_does_not_end_with_leave_the_traceback_to_word_it),
		cmocka_unit_test(module_level_function_is_worded_type_and_message_from_its_facts),
		cmocka_unit_test(unittest_other_outcomes_map_in_unittests_order),
		cmocka_unit_test(module_level_function_outcome_follows_what_it_raised),
		cmocka_unit_test(undefined_test_is_notrun_naming_it),
		cmocka_unit_test(process_that_reported_nothing_is_judged_by_how_it_ended),
		cmocka_unit_test(node_its_class_defines_runs_alone),
		cmocka_unit_test(device_generic_node_runs_every_instantiation_and_parametrization),
		cmocka_unit_test(node_nothing_matches_and_module_level_node_stay_as_they_are),
		cmocka_unit_test(deadline_covers_the_import_and_each_test_with_its_slack),
	};
	return cmocka_run_group_tests_name("official", tests, NULL, NULL);
}
