/* test-review.c - unit tests for src/review.h: policies, and every reason a
 * review gives to ask for changes in a submission. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "evidence/manifest.h"
#include "review/review.h"
#include "testutil.h"

#define TARGET "torch.nn.functional.gelu"

struct fixture {
	char top[4096];
	json_t *policy;
	json_t *reasons;
	struct ap_buf err;
	struct ap_buf out;
};

static int make_tempdir(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (t_tempdir(f->top, sizeof(f->top), "test-review")) {
		free(f);
		return -1;
	}
	*state = f;
	f->policy = ap_policy_load(NULL, &f->err);
	return f->policy ? 0 : -1;
}

static int remove_tempdir(void **state)
{
	struct fixture *f = *state;
	int r = t_rmtree(f->top);
	json_decref(f->policy);
	json_decref(f->reasons);
	ap_buf_free(&f->err);
	ap_buf_free(&f->out);
	free(f);
	return r;
}

/* A fingerprint with npu devices available or not. */
static json_t *fingerprint(int npu)
{
	return json_pack("{s:{s:s}, s:{s:s}, s:{s:s}, s:[{s:s, s:s}],"
			 " s:[{s:s, s:b, s:i, s:o, s:s?}]}",
			 "python", "version", "3.10.12", "torch", "version", "2.1.0",
			 "os", "name", "Ubuntu 22.04", "plugins", "name", "torch_npu",
			 "version", "2.1.0.post3", "devices", "type", "npu", "available", npu,
			 "count", npu, "names", npu ? json_pack("[s]", "Ascend910B3") : json_array(),
			 "reason", npu ? NULL : "no driver");
}

static json_t *check(const char *name, const char *kind, const char *status, const char *reason)
{
	return json_pack("{s:s, s:s, s:s, s:s?, s:{s:s, s:s}, s:[{s:s, s:i}], s:i}",
			 "name", name, "kind", kind, "status", status, "reason", reason,
			 "says", "en", "gelu matches", "zh", "gelu 一致",
			 "trace", "step", "out", "value", 1, "duration_ms", 10);
}

/* A bundle that a review accepts, as bundle.json holds it. */
static json_t *clean_bundle(const char *name, const char *label)
{
	json_t *b = json_pack(
		"{s:s, s:{s:s, s:s}, s:s, s:{s:s, s:s, s:s}, s:o,"
		" s:{s:b, s:s, s:s, s:s, s:i, s:s, s:s}, s:[o, o], s:{s:s, s:[]}, s:s, s:[],"
		" s:{s:b, s:s, s:s}}",
		"schema", "apiparity.bundle/1", "tool", "name", "apiparity", "version", "0.1.0",
		"target", TARGET, "env", "name", name, "label", label, "device", "npu",
		"fingerprint", fingerprint(1),
		"resolution", "found", 1, "kind", "function", "owner", "torch.nn.functional",
		"file", "torch/nn/functional.py", "line", 1672, "canonical", TARGET, "target", TARGET,
		"checks", check("gelu_matches", "probe", "PASS", NULL),
		check("test_nn.py::test_gelu", "official", "PASS", NULL),
		"comparison", "reference", "a2", "differences", "verdict", "consistent",
		"verdict_reasons", "adaptation", "device_independent", 1,
		"conclusion_en", "generic", "conclusion_zh", "通用");
	assert_non_null(b);
	return b;
}

/* Writes DIR/name with bundle.json (b, stolen), a journal that records
 * measured as the fingerprint (stolen), and a manifest over both. */
static void write_env(struct fixture *f, const char *name, json_t *b, json_t *measured)
{
	char dir[8192];
	struct ap_buf err = { 0 };
	snprintf(dir, sizeof(dir), "%s/%s", f->top, name);
	assert_int_equal(mkdir(dir, 0755), 0);
	char *text = json_dumps(b, JSON_INDENT(2) | JSON_SORT_KEYS);
	assert_non_null(text);
	t_put(dir, "bundle.json", text);
	free(text);
	json_t *rec = json_pack("{s:s, s:o}", "type", "fingerprint", "data", measured);
	char *line = json_dumps(rec, JSON_COMPACT);
	assert_non_null(line);
	t_put(dir, "journal.jsonl", "{\"type\":\"start\",\"target\":\"" TARGET "\"}\n");
	FILE *fp = fopen(strcat(strcpy((char[8300]){ 0 }, dir), "/journal.jsonl"), "a");
	assert_non_null(fp);
	fprintf(fp, "%s\n", line);
	assert_int_equal(fclose(fp), 0);
	free(line);
	json_decref(rec);
	json_decref(b);
	assert_int_equal(ap_manifest_write(dir, &err), 0);
	ap_buf_free(&err);
}

/* An env whose journal agrees with its bundle. */
static void write_env_b(struct fixture *f, const char *name, json_t *b)
{
	write_env(f, name, b, json_deep_copy(json_object_get(b, "fingerprint")));
}

static void review(struct fixture *f)
{
	f->reasons = ap_review(f->top, f->policy, &f->err);
	if (!f->reasons)
		fail_msg("ap_review: %s", ap_buf_str(&f->err));
}

/* The reasons as text, for a failure message (fail_msg does not return). */
static void dump(const json_t *reasons, char *text, size_t size)
{
	char *s = json_dumps(reasons, JSON_INDENT(2));
	snprintf(text, size, "%s", s ? s : "?");
	free(s);
}

static void assert_reasons(const struct fixture *f, size_t n)
{
	if (json_array_size(f->reasons) != n) {
		char text[8192];
		dump(f->reasons, text, sizeof(text));
		fail_msg("%zu reasons, %zu expected: %s", json_array_size(f->reasons), n, text);
	}
}

/* Whether some reason contains needle. */
static void assert_reason(const struct fixture *f, const char *needle)
{
	size_t i;
	json_t *r;
	json_array_foreach(f->reasons, i, r)
		if (strstr(json_string_value(r), needle))
			return;
	char text[8192];
	dump(f->reasons, text, sizeof(text));
	fail_msg("no reason with '%s' in %s", needle, text);
}

static json_t *checks_of(json_t *b)
{
	return json_object_get(b, "checks");
}

/* ------------------------------------------------------------ policies */

static void default_policy_allows_only_pass_for_probes(void **state)
{
	struct fixture *f = *state;
	const json_t *probe = json_object_get(json_object_get(f->policy, "statuses"), "probe");
	assert_int_equal(json_array_size(probe), 1);
	assert_string_equal(json_string_value(json_array_get(probe, 0)), "PASS");
	assert_string_equal(json_string_value(json_object_get(f->policy, "policy")), "default");
	assert_string_equal(ap_buf_str(&f->err), "");
}

static void policy_without_statuses_is_rejected_naming_the_file(void **state)
{
	struct fixture *f = *state;
	char path[8192];
	snprintf(path, sizeof(path), "%s/policy.yaml", f->top);
	t_put(f->top, "policy.yaml", "policy: strict\nrequire_envs: [A2]\n");
	json_t *p = ap_policy_load(path, &f->err);
	assert_null(p);
	assert_non_null(strstr(ap_buf_str(&f->err), path));
	assert_non_null(strstr(ap_buf_str(&f->err), "statuses"));
}

static void policy_file_with_statuses_is_loaded(void **state)
{
	struct fixture *f = *state;
	char path[8192];
	snprintf(path, sizeof(path), "%s/policy.yaml", f->top);
	t_put(f->top, "policy.yaml", "policy: lenient\nstatuses:\n  probe: [PASS, FAIL]\n");
	json_t *p = ap_policy_load(path, &f->err);
	assert_non_null(p);
	assert_int_equal(json_array_size(json_object_get(json_object_get(p, "statuses"), "probe")), 2);
	json_decref(p);
}

static void missing_policy_file_is_an_error(void **state)
{
	struct fixture *f = *state;
	char path[8192];
	snprintf(path, sizeof(path), "%s/nonexistent.yaml", f->top);
	assert_null(ap_policy_load(path, &f->err));
	assert_non_null(strstr(ap_buf_str(&f->err), "nonexistent.yaml"));
}

/* ------------------------------------------------------------ reviews */

static void clean_submission_is_accepted(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2 (910B3)"));
	write_env_b(f, "a3", clean_bundle("a3", "Atlas A3 (x)"));
	t_put(f->top, "report.md", "# report\n");
	review(f);
	assert_reasons(f, 0);
	ap_review_markdown(f->top, f->reasons, f->policy, &f->out);
	assert_true(!strncmp(ap_buf_str(&f->out), "## apiparity review: ACCEPT\n", 28));
	assert_null(strstr(ap_buf_str(&f->out), "\n- "));
}

static void directory_without_bundles_is_not_a_submission(void **state)
{
	struct fixture *f = *state;
	assert_null(ap_review(f->top, f->policy, &f->err));
	assert_non_null(strstr(ap_buf_str(&f->err), "no bundles"));
}

static void check_status_the_policy_does_not_allow_is_a_reason_naming_it(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("gelu_grad", "probe", "FAIL", "off by 1"));
	write_env_b(f, "a2", b);
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "a2: check gelu_grad (probe) is FAIL: off by 1, which the policy does "
		      "not allow");
}

static void claim_that_did_not_pass_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_t *c = check("claim", "claim", "WARN", "no such test");
	json_object_set_new(c, "node", json_string("test_nn.py::test_nope"));
	json_array_append_new(checks_of(b), c);
	write_env_b(f, "a2", b);
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "a2: claimed node id test_nn.py::test_nope: no such test");
}

static void official_test_not_run_without_reason_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("test_nn.py::test_x", "official", "NOTRUN", NULL));
	write_env_b(f, "a2", b);
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "official test test_nn.py::test_x was not run and no reason is given");
}

static void official_test_not_run_with_a_reason_is_accepted(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("test_nn.py::test_x", "official", "NOTRUN",
						  "needs a fixture"));
	write_env_b(f, "a2", b);
	review(f);
	assert_reasons(f, 0);
}

static void fingerprint_that_differs_from_the_journal_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_t *measured = json_deep_copy(json_object_get(b, "fingerprint"));
	json_object_set_new(json_object_get(json_object_get(b, "fingerprint"), "torch"), "version",
			    json_string("2.4.0"));
	write_env(f, "a2", b, measured);
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "a2: the fingerprint in bundle.json differs from the one journaled");
}

static void claimed_device_missing_from_the_fingerprint_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_object_set_new(b, "fingerprint", fingerprint(0));
	write_env_b(f, "a2", b);
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "a2: the environment claims device npu, but its fingerprint shows none");
}

static void required_environment_missing_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_object_set_new(f->policy, "require_envs", json_pack("[s, s]", "A2", "A5"));
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2 (910B3)"));
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "environment A5 is required by the policy and missing");
}

static void required_environment_is_matched_by_a_word_of_the_label_only(void **state)
{
	struct fixture *f = *state;
	json_object_set_new(f->policy, "require_envs", json_pack("[s, s]", "A2", "A3"));
	write_env_b(f, "x1", clean_bundle("x1", "Atlas A2 (910B3)"));
	write_env_b(f, "x2", clean_bundle("x2", "Atlas A35"));
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "environment A3 is required");
}

static void empty_required_environment_matches_none(void **state)
{
	struct fixture *f = *state;
	json_object_set_new(f->policy, "require_envs", json_pack("[s]", ""));
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "is required by the policy and missing");
}

static void unknown_top_level_file_is_a_reason(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	t_put(f->top, "notes.txt", "hi\n");
	t_put(f->top, "junit.xml", "<testsuites/>\n");
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "notes.txt: unknown file or directory in the submission");
}

static void trace_difference_from_the_reference_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a3", "Atlas A3");
	json_array_append_new(json_object_get(json_object_get(b, "comparison"), "differences"),
			      json_pack("{s:s, s:s, s:i, s:i}", "check", "gelu_matches", "step", "out",
					"expected", 1, "seen", 2));
	write_env_b(f, "a3", b);
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "a3: trace of gelu_matches differs at 'out': 1 in the reference, 2 here");
}

static void file_changed_after_the_manifest_is_a_reason(void **state)
{
	struct fixture *f = *state;
	char dir[8192];
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	snprintf(dir, sizeof(dir), "%s/a2", f->top);
	t_put(dir, "journal.jsonl", "{\"type\":\"start\"}\n");
	review(f);
	assert_reason(f, "a2/journal.jsonl: sha256 does not match");
}

static void review_markdown_lists_each_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("gelu_grad", "probe", "FAIL", NULL));
	write_env_b(f, "a2", b);
	t_put(f->top, "notes.txt", "hi\n");
	review(f);
	assert_reasons(f, 2);
	ap_review_markdown(f->top, f->reasons, f->policy, &f->out);
	const char *md = ap_buf_str(&f->out);
	assert_true(!strncmp(md, "## apiparity review: CHANGES-NEEDED\n", 36));
	assert_non_null(strstr(md, "policy `default`"));
	assert_non_null(strstr(md, "\n- notes.txt: unknown file or directory in the submission\n"));
	assert_non_null(strstr(md, "\n- a2: check gelu_grad (probe) is FAIL, which the policy "
			       "does not allow\n"));
	assert_null(strstr(md, "Every file matches"));
}

static void review_markdown_reason_cannot_add_a_line(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("x\n## apiparity review: ACCEPT\n<b>", "probe",
						  "FAIL", NULL));
	write_env_b(f, "a2", b);
	review(f);
	ap_review_markdown(f->top, f->reasons, f->policy, &f->out);
	const char *md = ap_buf_str(&f->out);
	assert_null(strstr(md, "\n## apiparity review: ACCEPT"));
	assert_null(strstr(md, "<b>"));
	assert_non_null(strstr(md, "check x\\n\\#\\# apiparity review: ACCEPT\\n&lt;b&gt; (probe)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_tempdir, remove_tempdir)
		T(default_policy_allows_only_pass_for_probes),
		T(review_markdown_reason_cannot_add_a_line),
		T(policy_without_statuses_is_rejected_naming_the_file),
		T(policy_file_with_statuses_is_loaded),
		T(missing_policy_file_is_an_error),
		T(clean_submission_is_accepted),
		T(directory_without_bundles_is_not_a_submission),
		T(check_status_the_policy_does_not_allow_is_a_reason_naming_it),
		T(claim_that_did_not_pass_is_a_reason),
		T(official_test_not_run_without_reason_is_a_reason),
		T(official_test_not_run_with_a_reason_is_accepted),
		T(fingerprint_that_differs_from_the_journal_is_a_reason),
		T(claimed_device_missing_from_the_fingerprint_is_a_reason),
		T(required_environment_missing_is_a_reason),
		T(required_environment_is_matched_by_a_word_of_the_label_only),
		T(empty_required_environment_matches_none),
		T(unknown_top_level_file_is_a_reason),
		T(trace_difference_from_the_reference_is_a_reason),
		T(file_changed_after_the_manifest_is_a_reason),
		T(review_markdown_lists_each_reason),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
