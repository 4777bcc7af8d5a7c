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

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "check/verdict.h"
#include "evidence/manifest.h"
#include "evidence/sign.h"
#include "review/docs.h"
#include "review/outputs.h"
#include "review/review.h"
#include "testutil.h"

#define TARGET "torch.nn.functional.gelu"

struct fixture {
	char top[4096];
	struct ap_policy *policy;
	json_t *reasons;
	struct ap_buf err;
	struct ap_buf out;
	char ref[64];         /* the first environment written: the reference */
	json_t *ref_checks;
	struct ap_signer *signer;  /* when set, write_env signs */
	struct ap_trust *trust;
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

static const char *trust_file(const struct fixture *f);

static int remove_tempdir(void **state)
{
	struct fixture *f = *state;
	int r = t_rmtree(f->top);
	unlink(trust_file(f));
	ap_policy_free(f->policy);
	json_decref(f->reasons);
	json_decref(f->ref_checks);
	ap_signer_free(f->signer);
	ap_trust_free(f->trust);
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

static json_t *checks_of(json_t *b)
{
	return json_object_get(b, "checks");
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

static const char *env_dir(const struct fixture *f, const char *name)
{
	static char dir[2][8192];
	static int which;
	which = !which;
	snprintf(dir[which], sizeof(dir[which]), "%s/%s", f->top, name);
	return dir[which];
}

static void put_json_line(FILE *fp, const char *type, const json_t *data)
{
	json_t *rec = json_pack("{s:s, s:O}", "type", type, "data", data ? data : json_null());
	char *line = json_dumps(rec, JSON_COMPACT);
	assert_non_null(line);
	fprintf(fp, "%s\n", line);
	free(line);
	json_decref(rec);
}

/* The journal check writes while it measures b: the start, the resolution,
 * measured as the fingerprint, each check, the error. And official.log with
 * the end of each official test that ran. */
static void put_journal(const char *dir, const json_t *b, const json_t *measured)
{
	char path[8300];
	size_t i;
	json_t *c;
	snprintf(path, sizeof(path), "%s/journal.jsonl", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	put_json_line(fp, "start", json_object_get(b, "env"));
	put_json_line(fp, "resolution", json_object_get(b, "resolution"));
	put_json_line(fp, "fingerprint", measured);
	json_array_foreach(json_object_get(b, "checks"), i, c)
		put_json_line(fp, "check", c);
	if (json_object_get(b, "error") && !json_is_null(json_object_get(b, "error")))
		put_json_line(fp, "error", json_object_get(b, "error"));
	assert_int_equal(fclose(fp), 0);
	snprintf(path, sizeof(path), "%s/official.log", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		const char *st = json_string_value(json_object_get(c, "status"));
		if (!strcmp(json_string_value(json_object_get(c, "kind")), "official") &&
		    strcmp(st, "NOTRUN"))
			fprintf(fp, "=== begin %s\nok\n=== end %s: %s\n", name, name, st);
	}
	assert_int_equal(fclose(fp), 0);
}

/* Judges b as check does: the first environment written is the reference. */
static void judge(struct fixture *f, const char *name, json_t *b)
{
	json_t *cmp = json_object();
	if (!*f->ref) {
		snprintf(f->ref, sizeof(f->ref), "%s", name);
		f->ref_checks = json_deep_copy(checks_of(b));
	}
	if (json_is_true(json_object_get(json_object_get(b, "resolution"), "found"))) {
		json_object_set_new(cmp, "reference", json_string(f->ref));
		json_object_set_new(cmp, "differences", ap_trace_diff(f->ref_checks, checks_of(b)));
		ap_official_compare(f->ref_checks, checks_of(b));
	}
	json_object_set_new(b, "comparison", cmp);
	ap_adaptation_decide(b);
	ap_verdict_decide(b);
}

static void put_bundle(const char *dir, const json_t *b)
{
	char *text = json_dumps(b, JSON_INDENT(2) | JSON_SORT_KEYS);
	assert_non_null(text);
	t_put(dir, "bundle.json", text);
	free(text);
}

/* Writes the manifest of dir again, as a forger who edited a file would. */
static void reseal(const char *dir)
{
	struct ap_buf err = { 0 };
	assert_int_equal(ap_manifest_write(dir, &err), 0);
	ap_buf_free(&err);
}

/* Writes DIR/name as check would: the journal of b, with measured (stolen)
 * as the fingerprint journaled, then bundle.json (b, stolen) judged, then the
 * manifest, signed when f->signer is set. */
static void write_env(struct fixture *f, const char *name, json_t *b, json_t *measured)
{
	const char *dir = env_dir(f, name);
	struct ap_buf err = { 0 };
	assert_int_equal(mkdir(dir, 0755), 0);
	put_journal(dir, b, measured);
	judge(f, name, b);
	if (f->signer)
		json_object_set_new(b, "signer", json_pack("{s:s, s:s}", "algorithm", "ed25519",
							   "key", ap_signer_fpr(f->signer)));
	put_bundle(dir, b);
	reseal(dir);
	if (f->signer)
		assert_int_equal(ap_sign_manifest(f->signer, dir, &err), 0);
	json_decref(measured);
	json_decref(b);
	ap_buf_free(&err);
}

/* An env whose journal agrees with its bundle. */
static void write_env_b(struct fixture *f, const char *name, json_t *b)
{
	write_env(f, name, b, json_deep_copy(json_object_get(b, "fingerprint")));
}

/* bundle.json of environment name, to forge. */
static json_t *bundle_of(struct fixture *f, const char *name)
{
	char path[8300];
	snprintf(path, sizeof(path), "%s/bundle.json", env_dir(f, name));
	json_t *b = json_load_file(path, 0, NULL);
	assert_non_null(b);
	return b;
}

/* Replaces bundle.json of name with b (stolen) and reseals the manifest. */
static void forge(struct fixture *f, const char *name, json_t *b)
{
	put_bundle(env_dir(f, name), b);
	reseal(env_dir(f, name));
	json_decref(b);
}

static void append_to(struct fixture *f, const char *name, const char *file, const char *text)
{
	char path[8300];
	snprintf(path, sizeof(path), "%s/%s", env_dir(f, name), file);
	FILE *fp = fopen(path, "a");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static json_t *check_named(json_t *b, const char *name)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(b, "checks"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")), name))
			return c;
	fail_msg("no check %s", name);
	return NULL;
}

static void review(struct fixture *f)
{
	struct ap_review_opts o = { f->policy, f->trust, NULL };
	json_decref(f->reasons);
	f->reasons = ap_review(f->top, &o, &f->err);
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

/* ------------------------------------------------------------ policies */

/* The built-in policy with its line "KEY: ..." replaced by line (KEY: what
 * line has before its colon). */
static void policy_with(struct fixture *f, const char *line)
{
	size_t klen = strcspn(line, ":") + 1;
	struct ap_buf t = { 0 };
	for (const char *p = ap_default_policy, *end = p + ap_default_policy_len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (!strncmp(p, line, klen))
			ap_buf_addf(&t, "%s\n", line);
		else
			ap_buf_add(&t, p, n);
		p += n;
	}
	ap_policy_free(f->policy);
	f->policy = ap_policy_parse(ap_buf_str(&t), t.len, "policy.yaml", &f->err);
	ap_buf_free(&t);
	assert_non_null(f->policy);
}

static void default_policy_allows_only_pass_for_probes(void **state)
{
	struct fixture *f = *state;
	assert_true(ap_policy_allows(f->policy, "probe", "PASS"));
	assert_false(ap_policy_allows(f->policy, "probe", "FAIL"));
	assert_false(ap_policy_allows(f->policy, "probe", "NOTRUN"));
	assert_true(ap_policy_allows(f->policy, "official", "NOTRUN"));
	assert_false(ap_policy_allows(f->policy, "nonesuch", "PASS"));
	assert_string_equal(f->policy->name, "default");
	assert_int_equal(f->policy->nrequire_kinds, 1);
	assert_string_equal(f->policy->require_kinds[0], "probe|numeric");
	assert_true(f->policy->require_official);
	assert_true(f->policy->traces_agree);
	assert_false(f->policy->require_signature);
	assert_string_equal(ap_buf_str(&f->err), "");
}

/* A policy fails closed: every key it does not know (a misspelling too),
 * and every key with a value of another shape or word, is refused with the
 * file, the key's line and what it takes; nothing reads as "no". */
static void policy_refuses_every_key_it_does_not_know_and_every_wrong_value(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "require_signature: YES", "require_signature: \"yes\" or \"no\", not 'YES'" },
		{ "require_signature: on", "require_signature: \"yes\" or \"no\", not 'on'" },
		{ "require_signature: 1", "require_signature: \"yes\" or \"no\", not '1'" },
		{ "require_signature: maybe", "require_signature: \"yes\" or \"no\", not 'maybe'" },
		{ "require_signature: [yes]", "require_signature: \"yes\" or \"no\", not a list" },
		{ "require_official: {a: b}", "require_official: \"yes\" or \"no\", not a mapping" },
		{ "traces_agree: \"on\"", "traces_agree: \"yes\" or \"no\", not 'on'" },
		{ "require_envs: A2", "require_envs: a list of a name, not 'A2'" },
		{ "require_envs: [\"\"]", "require_envs: '' is not a name" },
		{ "require_envs: [[A2]]", "require_envs: a list is not a name" },
		{ "require_kinds: [probe, {a: b}]", "require_kinds: a mapping is not kinds of check (probe, \"probe|numeric\")" },
		{ "require_kinds: [prob]", "require_kinds: 'prob' is not kinds of check (probe, \"probe|numeric\")" },
		{ "require_kinds: [\"probe|\"]", "require_kinds: 'probe|' is not kinds of check (probe, \"probe|numeric\")" },
		{ "policy: [a]", "policy: a name, not a list" },
		{ "policy: \"\"", "policy: a name, not ''" },
		{ "require_facts: [{env: A2, colour: red}]", "colour: not a fact a requirement names "
		  "(env, device, devices, torch, plugin)" },
		{ "require_facts: [{device: npu, devices: \"0\"}]",
		  "devices: a count of 1 or more, not '0'" },
		{ "require_facts: [{devices: 8x}]", "devices: a count of 1 or more, not '8x'" },
		{ "require_facts: [{torch: 2.x}]", "torch: a version (2.6, 2.6.0), not '2.x'" },
		{ "require_facts: [{plugin: [a]}]", "plugin: a name, not a list" },
		{ "require_facts: [{}]", "require_facts: a requirement names at least one fact "
		  "(env, device, devices, torch, plugin)" },
		{ "require_facts: [A2]", "require_facts: 'A2' is not a mapping of facts" },
		{ "require_facts: {env: A2}", "require_facts: a list of mappings (env, device, devices, "
		  "torch, plugin), not a mapping" },
		{ "accept_tolerances: [{op: \"*\", dtype: \"*\", device: \"*\", rtol: \"-1\", atol: \"0\"}]",
		  "rtol: a number of 0 or more, not '-1'" },
		{ "accept_tolerances: [{op: \"*\", dtype: \"*\", device: \"*\", rtol: \"1\", atol: inf}]",
		  "atol: a number of 0 or more, not 'inf'" },
		{ "accept_tolerances: [{op: \"*\", dtype: float33, device: \"*\", rtol: \"1\", atol: \"1\"}]",
		  "dtype: a dtype (float32, bfloat16, ...) or *, not 'float33'" },
		{ "accept_tolerances: [{op: torch.abs}]", "dtype: missing from an entry that has op" },
		{ "accept_tolerances: [torch.abs]", "accept_tolerances: 'torch.abs' is not a mapping" },
		{ "accept_limits: [{backend: openreg, op: \"*\", raises: RuntimeError}]",
		  "raises: TYPE: TEXT (the exception type the device raises and text of its message), "
		  "not 'RuntimeError'" },
		{ "accept_limits: [{backend: openreg, op: \"*\", raises: \"E: x\", what: y}]",
		  "what: not a key of this entry (known: backend, op, raises)" },
		{ "accept_limits: yes", "accept_limits: a list of mappings, not 'yes'" },
		{ "require_signatures: \"yes\"", "require_signatures: not a key of a policy (known: "
		  "policy, require_envs, statuses, require_kinds, require_official, traces_agree, "
		  "require_signature, require_facts, accept_tolerances, accept_limits)" },
	};
	char path[8192];
	snprintf(path, sizeof(path), "%s/policy.yaml", f->top);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ap_buf text = { 0 }, want = { 0 };
		ap_buf_addf(&text, "# a policy\nstatuses:\n  probe: [PASS]\n%s\n", bad[i].line);
		t_put(f->top, "policy.yaml", ap_buf_str(&text));
		ap_buf_reset(&f->err);
		assert_null(ap_policy_load(path, &f->err));
		ap_buf_addf(&want, "%s:4: %s", path, bad[i].why);
		assert_string_equal(ap_buf_str(&f->err), ap_buf_str(&want));
		ap_buf_free(&text);
		ap_buf_free(&want);
	}
	/* inside statuses: a kind that is none, a status that is none */
	static const struct {
		const char *text, *why;
	} st[] = {
		{ "statuses:\n  probe: [PASS]\n  probes: [PASS]\n",
		  ":3: probes: not a kind of check (probe, script, numeric, official, claim, "
		  "signature, resolution, plan)" },
		{ "statuses:\n  probe: [PASS, pass]\n",
		  ":2: probe: 'pass' is not a status (PASS, FAIL, ERROR, CRASH, TIMEOUT, WARN, "
		  "NOTRUN, SKIP)" },
		{ "statuses:\n  numeric: PASS\n", ":2: numeric: a list of a status (PASS, FAIL, "
		  "ERROR, CRASH, TIMEOUT, WARN, NOTRUN, SKIP), not 'PASS'" },
	};
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		struct ap_buf want = { 0 };
		t_put(f->top, "policy.yaml", st[i].text);
		ap_buf_reset(&f->err);
		assert_null(ap_policy_load(path, &f->err));
		ap_buf_addf(&want, "%s%s", path, st[i].why);
		assert_string_equal(ap_buf_str(&f->err), ap_buf_str(&want));
		ap_buf_free(&want);
	}
	/* the words it does know, each read as it says */
	static const char good[] = "statuses:\n  probe: [PASS]\nrequire_signature: \"true\"\n"
				   "traces_agree: \"no\"\nrequire_official: \"false\"\n"
				   "require_kinds: [\"probe|numeric\", official]\n";
	ap_buf_reset(&f->err);
	struct ap_policy *p = ap_policy_parse(good, sizeof(good) - 1, "good.yaml", &f->err);
	assert_non_null(p);
	assert_true(p->require_signature);
	assert_false(p->traces_agree);
	assert_false(p->require_official);
	assert_int_equal(p->nrequire_kinds, 2);
	assert_int_equal(p->nkinds, 1);
	ap_policy_free(p);
}

static void policy_without_statuses_is_rejected_naming_the_file(void **state)
{
	struct fixture *f = *state;
	char path[8192];
	snprintf(path, sizeof(path), "%s/policy.yaml", f->top);
	t_put(f->top, "policy.yaml", "policy: strict\nrequire_envs: [A2]\n");
	struct ap_policy *p = ap_policy_load(path, &f->err);
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
	struct ap_policy *p = ap_policy_load(path, &f->err);
	assert_non_null(p);
	assert_string_equal(p->name, "lenient");
	assert_true(ap_policy_allows(p, "probe", "PASS"));
	assert_true(ap_policy_allows(p, "probe", "FAIL"));
	assert_false(ap_policy_allows(p, "probe", "ERROR"));
	assert_false(p->traces_agree);
	ap_policy_free(p);
}

static void missing_policy_file_is_an_error(void **state)
{
	struct fixture *f = *state;
	char path[8192];
	snprintf(path, sizeof(path), "%s/nonexistent.yaml", f->top);
	assert_null(ap_policy_load(path, &f->err));
	assert_non_null(strstr(ap_buf_str(&f->err), "nonexistent.yaml"));
}

/* Writes the report of the submission as `report` would: the outputs
 * named (report.md in lang), then the top manifest; docs, when not NULL,
 * the backend's page to compare with. */
static void write_report(struct fixture *f, const char *const *names, enum ap_lang lang,
			 const char *docs)
{
	struct ap_submission s;
	struct ap_buf err = { 0 };
	struct ap_docs_entries entries = { 0 };
	assert_int_equal(ap_submission_load(&s, f->top, &err), 0);
	if (docs)
		assert_int_equal(ap_docs_parse(docs, strlen(docs), "torch-nn-functional.md", &entries), 0);
	struct ap_report *model = ap_report_model(&s, docs ? &entries : NULL);
	assert_non_null(model);
	for (size_t i = 0; names[i]; i++) {
		struct ap_buf out = { 0 }, path = { 0 };
		assert_int_equal(ap_output_render(model, lang, names[i], &out, &err), 0);
		ap_buf_addf(&path, "%s/%s", f->top, names[i]);
		assert_int_equal(ap_write_atomic(ap_buf_str(&path), out.data, out.len), 0);
		ap_buf_free(&out);
		ap_buf_free(&path);
	}
	assert_int_equal(ap_output_manifest(f->top, &s, &err), 0);
	ap_report_free(model);
	ap_docs_entries_free(&entries);
	ap_submission_free(&s);
	ap_buf_free(&err);
}

/* The number of reasons that name a report output as not what the bundles
 * give. */
static size_t not_rendered(const struct fixture *f)
{
	size_t i, n = 0;
	json_t *r;
	json_array_foreach(f->reasons, i, r)
		n += strstr(json_string_value(r), ": is not the report its bundles give") != NULL;
	return n;
}

/* ------------------------------------------------------------ reviews */

static void clean_submission_is_accepted(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2 (910B3)"));
	write_env_b(f, "a3", clean_bundle("a3", "Atlas A3 (x)"));
	write_report(f, (const char *const[]){ "report.md", NULL }, AP_LANG_ZH, NULL);
	review(f);
	assert_reasons(f, 0);
	struct ap_review_opts o = { f->policy, f->trust, NULL };
	ap_review_markdown(f->top, f->reasons, &o, &f->out);
	assert_true(!strncmp(ap_buf_str(&f->out), "## apiparity review: ACCEPT\n", 28));
	assert_null(strstr(ap_buf_str(&f->out), "\n- "));
	/* what the policy asked, said once */
	assert_non_null(strstr(ap_buf_str(&f->out), "\nPolicy: 0 environments required by name or "
			       "label and 0 by facts of their evidence; signatures not required; 0 "
			       "tolerance overrides and 0 backend limits accepted beyond the built-in "
			       "ones (any other the submitter chose is a reason).\n"));
}

static void directory_without_bundles_is_not_a_submission(void **state)
{
	struct fixture *f = *state;
	struct ap_review_opts o = { f->policy, NULL, NULL };
	assert_null(ap_review(f->top, &o, &f->err));
	assert_non_null(strstr(ap_buf_str(&f->err), "no bundles"));
}

static void unreadable_bundle_is_a_reason_and_the_rest_is_reviewed(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2 (910B3)"));
	t_put(f->top, "a3/bundle.json", "{ not json");
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "a3: the bundle cannot be read, so nothing of this environment can be checked");
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
	policy_with(f, "require_envs: [A2, A5]");
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2 (910B3)"));
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "environment A5 is required by the policy and missing");
}

static void required_environment_is_matched_by_a_word_of_the_label_only(void **state)
{
	struct fixture *f = *state;
	policy_with(f, "require_envs: [A2, A3]");
	write_env_b(f, "x1", clean_bundle("x1", "Atlas A2 (910B3)"));
	write_env_b(f, "x2", clean_bundle("x2", "Atlas A35"));
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "environment A3 is required");
}

/* An environment is what its evidence says: a folder renamed to another
 * environment's name is a reason, and does not satisfy a policy that
 * requires that name. */
static void a_renamed_folder_is_not_the_environment_it_is_named_after(void **state)
{
	struct fixture *f = *state;
	policy_with(f, "require_envs: [bookworm]");
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	write_env_b(f, "bookworm", clean_bundle("sid", "Debian sid"));
	review(f);
	assert_reason(f, "bookworm: the folder is named bookworm, but its bundle is of environment "
		      "sid: an environment is what its evidence says, not its folder's name");
	assert_reason(f, "environment bookworm is required by the policy and missing");
	/* the folder named as its bundle says: neither reason */
	policy_with(f, "require_envs: [a2]");
	review(f);
	assert_reason(f, "bookworm: the folder is named bookworm");
	for (size_t i = 0; i < json_array_size(f->reasons); i++)
		assert_null(strstr(json_string_value(json_array_get(f->reasons, i)),
				   "environment a2 is required"));
}

/* A policy requires facts of the evidence: a label cannot stand in for the
 * hardware its fingerprint lacks; what is met is said, with the fields. */
static void required_facts_are_met_by_evidence_not_labels(void **state)
{
	struct fixture *f = *state;
	policy_with(f, "require_facts: [{env: A2, device: npu, devices: \"8\"}, "
		       "{torch: \"2.1\", plugin: torch_npu}, {env: A3}]");
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2 (910B3)"));
	json_t *met = json_array();
	struct ap_review_opts o = { f->policy, NULL, met };
	json_decref(f->reasons);
	f->reasons = ap_review(f->top, &o, &f->err);
	assert_non_null(f->reasons);
	assert_reason(f, "the policy requires an environment with {env A2, device npu, devices 8} "
		      "(line 17), and none has it: a2: bundle env a2, label 'Atlas A2 (910B3)'; but "
		      "its fingerprint shows no 8 npu devices available");
	assert_reason(f, "the policy requires an environment with {env A3} (line 17), and none has "
		      "it: a2: its bundle names it a2, label 'Atlas A2 (910B3)'");
	assert_int_equal(json_array_size(met), 1);
	assert_string_equal(json_string_value(json_array_get(met, 0)),
			    "requirement {torch 2.1, plugin torch_npu} (policy line 17): met by a2 "
			    "(fingerprint torch 2.1.0, fingerprint plugin torch_npu)");
	/* the same label on a CPU-only fingerprint meets no device requirement */
	policy_with(f, "require_facts: [{env: A2, device: npu}, {torch: \"2.10\"}]");
	json_t *b = clean_bundle("a2", "Atlas A2 (910B3)");
	json_object_set_new(b, "fingerprint", fingerprint(0));
	assert_int_equal(t_rmtree(env_dir(f, "a2")), 0);
	write_env_b(f, "a2", b);
	json_array_clear(met);
	o.policy = f->policy;
	json_decref(f->reasons);
	f->reasons = ap_review(f->top, &o, &f->err);
	assert_reason(f, "(line 17), and none has it: a2: bundle env a2, label 'Atlas A2 (910B3)'; "
		      "but its fingerprint shows no 1 npu device available");
	assert_reason(f, "{torch 2.10} (line 17), and none has it: a2: its fingerprint shows torch 2.1.0");
	assert_int_equal(json_array_size(met), 0);
	json_decref(met);
}

/* The report is part of the evidence: verify renders it again from the
 * bundles (in either language; with --docs, from the docs entry report.json
 * records) and a page edited and resealed, or left from other bundles, is
 * a reason, whatever the top manifest says. */
static void reports_are_rendered_again_and_must_match(void **state)
{
	AP_PNG_SKIP(); /* the pictures are among the outputs */
	struct fixture *f = *state;
	static const char *const all[] = { "report.md", "report.en.md", "report.html", "report.json",
					   "junit.xml", "card-a2.png", "matrix.png", NULL };
	static const char *const md[] = { "report.md", "report.json", NULL };
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	write_report(f, all, AP_LANG_ZH, NULL);
	review(f);
	assert_reasons(f, 0);
	/* English is a language report.md may be in */
	write_report(f, md, AP_LANG_EN, NULL);
	review(f);
	assert_reasons(f, 0);
	/* edited, the top manifest sealed again */
	char path[8300];
	snprintf(path, sizeof(path), "%s/report.en.md", f->top);
	FILE *fp = fopen(path, "a");
	assert_non_null(fp);
	fputs("\nEverything is consistent.\n", fp);
	assert_int_equal(fclose(fp), 0);
	struct ap_submission s;
	struct ap_buf err = { 0 };
	assert_int_equal(ap_submission_load(&s, f->top, &err), 0);
	assert_int_equal(ap_output_manifest(f->top, &s, &err), 0);
	ap_submission_free(&s);
	review(f);
	assert_reason(f, "report.en.md: is not the report its bundles give (edited after it was "
		      "written, or written from other evidence): write it again with `apiparity report`");
	assert_int_equal(not_rendered(f), 1);
	/* one byte of a picture changed, its size kept */
	snprintf(path, sizeof(path), "%s/card-a2.png", f->top);
	fp = fopen(path, "r+");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, -20, SEEK_END), 0);
	int c = fgetc(fp);
	assert_int_equal(fseek(fp, -20, SEEK_END), 0);
	fputc(c ^ 1, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(ap_submission_load(&s, f->top, &err), 0);
	assert_int_equal(ap_output_manifest(f->top, &s, &err), 0);
	ap_submission_free(&s);
	review(f);
	assert_reason(f, "card-a2.png: is not the report its bundles give");
	assert_int_equal(not_rendered(f), 2);
	/* from other bundles: the report stays, an environment is added */
	write_report(f, all, AP_LANG_ZH, NULL);
	write_env_b(f, "a3", clean_bundle("a3", "Atlas A3"));
	review(f);
	assert_reason(f, "report.md: is not the report its bundles give");
	assert_reason(f, "matrix.png: is not the report its bundles give");
	ap_buf_free(&err);
}

/* A report made with --docs renders again from the docs entry report.json
 * records; that entry changed (and resealed) leaves the pages that quote it
 * unmatched. */
static void a_report_with_docs_renders_again_from_what_report_json_records(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = { "report.md", "report.json", NULL };
	static const char page[] = "# torch.nn.functional\n\n### " TARGET "\n\n"
				   "**是否支持**：是\n\n**限制与说明**：-\n";
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	write_report(f, names, AP_LANG_ZH, page);
	review(f);
	assert_reasons(f, 0);
	char path[8300];
	snprintf(path, sizeof(path), "%s/report.json", f->top);
	json_t *j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	json_t *entry = json_object_get(json_object_get(j, "docs"), "entry");
	assert_non_null(entry);
	json_object_set_new(entry, "line", json_integer(99));
	char *text = json_dumps(j, JSON_INDENT(2));
	assert_non_null(text);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%s\n", text);
	assert_int_equal(fclose(fp), 0);
	free(text);
	json_decref(j);
	struct ap_submission s;
	struct ap_buf err = { 0 };
	assert_int_equal(ap_submission_load(&s, f->top, &err), 0);
	assert_int_equal(ap_output_manifest(f->top, &s, &err), 0);
	ap_submission_free(&s);
	ap_buf_free(&err);
	review(f);
	assert_reason(f, "report.md: is not the report its bundles give, with the docs entry "
		      "report.json records");
	/* report.json itself renders again from what it records: the docs
	 * entry is the page's word, not evidence */
	assert_int_equal(not_rendered(f), 1);
}

/* A numeric check of TARGET on device npu, float32, judged with rtol and
 * atol, with what the default gives (mismatches, worst); a limit excused it
 * when limit is not NULL (then NOTRUN, raised with message). */
static json_t *numeric_check(double rtol, double atol, int mismatches, const char *limit,
			     const char *raised, const char *message)
{
	json_t *c = check("gelu float32 sample#0 npu vs cpu", "numeric", limit ? "NOTRUN" : "PASS",
			  limit ? "known limit" : NULL);
	json_t *numeric = json_pack("{s:s, s:s, s:s, s:s, s:n, s:[{s:s, s:f, s:f, s:s, s:{s:f, s:f, s:i, s:f}}]}",
		"op", "nn.functional.gelu", "dtype", "float32", "device", "npu", "against", "cpu",
		"across", "measurements", "output", "out[0]", "rtol", rtol, "atol", atol,
		"tol_source", "mine.ini:1: it fails otherwise", "default", "rtol", 1.3e-6, "atol", 1e-5,
		"mismatches", mismatches, "worst_ratio", mismatches ? 205.0 : 0.0);
	json_object_update(c, numeric);
	json_decref(numeric);
	if (limit)
		json_object_set_new(c, "limit", json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
			"name", limit, "backend", "npu", "what", "w", "reason", "r", "where",
			"mine.ini:3", "seen", "s", "raised", raised, "message", message));
	return c;
}

/* What the submitter relaxed is judged by the policy: a looser tolerance
 * than the built-in one and every one the policy accepts is a reason with
 * what the default gives; accepted by value, none; a limit of the
 * submitter's a reason with the failure it hid; accepted by the policy's
 * limits, none. */
static void relaxed_tolerances_and_limits_are_the_policys_to_accept(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(json_object_get(b, "checks"), numeric_check(1e300, 1e300, 3, NULL, NULL, NULL));
	json_array_append_new(json_object_get(b, "checks"),
			      numeric_check(1.3e-6, 1e-5, 0, "mine", "RuntimeError", "no float32 gelu"));
	write_env_b(f, "a2", b);
	review(f);
	assert_reason(f, "a2: 1 measurement judged with rtol 1e+300 atol 1e+300 (mine.ini:1: it fails "
		      "otherwise), looser than the built-in tolerance and than any the policy accepts; "
		      "under the dtype's default, 1 FAIL: gelu float32 sample#0 npu vs cpu out[0] (3 "
		      "elements, 205x the allowance)");
	assert_reason(f, "a2: check gelu float32 sample#0 npu vs cpu: excused as NOTRUN by limit mine "
		      "(mine.ini:3), which neither the built-in limits nor the policy accept; without it "
		      "the check FAILs: npu raised RuntimeError (no float32 gelu) where the CPU raised "
		      "nothing");
	assert_reasons(f, 2);
	/* a policy that accepts less than was used: still a reason */
	policy_with(f, "accept_tolerances: [{op: " TARGET ", dtype: float32, device: npu, rtol: \"1e-3\", atol: \"1e300\"}]");
	review(f);
	assert_reason(f, "a2: 1 measurement judged with rtol 1e+300 atol 1e+300");
	/* by value, for this op, dtype and device; the limit by its failure */
	policy_with(f, "accept_tolerances: [{op: " TARGET ", dtype: float32, device: npu, rtol: \"1e300\", atol: \"1e300\"}]");
	review(f);
	assert_reasons(f, 1);
	policy_with(f, "accept_limits: [{backend: npu, op: " TARGET ", raises: \"RuntimeError: no float32\"}]");
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "a2: 1 measurement judged with rtol 1e+300 atol 1e+300");
	policy_with(f, "accept_limits: [{backend: npu, op: " TARGET ", raises: \"TypeError: no float32\"}]");
	review(f);
	assert_reasons(f, 2);
}

static void unknown_top_level_file_is_a_reason(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	t_put(f->top, "notes.txt", "hi\n");
	write_report(f, (const char *const[]){ "junit.xml", NULL }, AP_LANG_ZH, NULL);
	review(f);
	assert_reasons(f, 1);
	assert_reason(f, "notes.txt: unknown file or directory in the submission");
}

static void trace_difference_from_the_reference_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a3", "Atlas A3");
	json_object_set_new(json_array_get(json_object_get(check_named(b, "gelu_matches"), "trace"),
					   0), "value", json_integer(2));
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
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

/* ------------------------------------------------- forged and resealed */

static void check_edited_in_the_bundle_alone_is_a_reason_naming_it(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("gelu_grad", "probe", "FAIL", "off by 1"));
	write_env_b(f, "a2", b);
	b = bundle_of(f, "a2");
	json_t *c = check_named(b, "gelu_grad");
	json_object_set_new(c, "status", json_string("PASS"));
	json_object_del(c, "reason");
	json_object_set_new(b, "verdict", json_string("consistent"));
	json_object_set_new(b, "verdict_reasons", json_array());
	forge(f, "a2", b);
	review(f);
	assert_reason(f, "a2: check gelu_grad (probe) in bundle.json is not as journal.jsonl "
		      "recorded it when measured: status \"PASS\" here, measured \"FAIL\"; "
		      "reason (none) here, measured \"off by 1\"");
	assert_reason(f, "a2: the verdict in bundle.json is consistent, but its measured checks "
		      "make it inconsistent");
	assert_reasons(f, 2);
}

static void official_result_added_to_the_bundle_alone_is_a_reason(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	json_t *b = bundle_of(f, "a2");
	json_array_append_new(checks_of(b), check("test_nn.py::test_new", "official", "PASS", NULL));
	forge(f, "a2", b);
	review(f);
	assert_reason(f, "a2: check test_nn.py::test_new (official) is PASS in bundle.json, but "
		      "journal.jsonl has no record of it: it was never measured");
	assert_reason(f, "a2: official test test_nn.py::test_new is PASS in bundle.json, but "
		      "official.log does not record it ending so");
	assert_reasons(f, 2);
}

static void official_result_needs_official_log(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	char path[8300];
	snprintf(path, sizeof(path), "%s/official.log", env_dir(f, "a2"));
	assert_int_equal(unlink(path), 0);
	reseal(env_dir(f, "a2"));
	review(f);
	assert_reason(f, "a2: official test test_nn.py::test_gelu is PASS, but there is no readable "
		      "official.log to show that it ran");
	assert_reasons(f, 1);
}

static void unmeasured_notrun_decisions_need_no_journal_record(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	json_t *b = bundle_of(f, "a2");
	json_t *c = check("official", "official", "NOTRUN", "no-test-source: no upstream tests");
	json_object_set_new(c, "reference_status", json_string("NOTRUN"));
	json_array_append_new(checks_of(b), c);
	forge(f, "a2", b);
	review(f);
	assert_reasons(f, 0);
}

static void journaled_check_dropped_from_the_bundle_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("gelu_grad", "probe", "CRASH", "SIGSEGV"));
	write_env_b(f, "a2", b);
	b = bundle_of(f, "a2");
	json_array_remove(checks_of(b), 2);
	json_object_set_new(b, "verdict", json_string("consistent"));
	json_object_set_new(b, "verdict_reasons", json_array());
	forge(f, "a2", b);
	review(f);
	assert_reason(f, "a2: check gelu_grad (probe) was measured CRASH (journal.jsonl) but is "
		      "missing from bundle.json");
	assert_reason(f, "make it inconsistent");
	assert_reasons(f, 2);
}

static void verdict_edited_alone_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("test_nn.py::test_y", "official", "FAIL", "no"));
	write_env_b(f, "a2", b);
	b = bundle_of(f, "a2");
	json_object_set_new(b, "verdict", json_string("consistent"));
	forge(f, "a2", b);
	review(f);
	assert_reason(f, "a2: the verdict in bundle.json is consistent, but its measured checks "
		      "make it consistent-with-limits");
	assert_reason(f, "a2: check test_nn.py::test_y (official) is FAIL: no, which the policy");
	assert_reasons(f, 2);
}

static void trace_differences_removed_from_the_bundle_are_found_again(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a3", "Atlas A3");
	json_object_set_new(json_array_get(json_object_get(check_named(b, "gelu_matches"), "trace"),
					   0), "value", json_integer(2));
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	write_env_b(f, "a3", b);
	b = bundle_of(f, "a3");
	json_object_set_new(json_object_get(b, "comparison"), "differences", json_array());
	json_object_set_new(b, "verdict", json_string("consistent"));
	json_object_set_new(b, "verdict_reasons", json_array());
	forge(f, "a3", b);
	review(f);
	assert_reason(f, "a3: trace of gelu_matches differs at 'out': 1 in the reference, 2 here");
	assert_reason(f, "a3: the trace comparison in bundle.json is not the one its measured "
		      "checks give against a2");
	assert_reason(f, "a3: the verdict in bundle.json is consistent, but");
	assert_reasons(f, 3);
}

static void environment_compared_with_itself_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a3", "Atlas A3");
	json_object_set_new(json_array_get(json_object_get(check_named(b, "gelu_matches"), "trace"),
					   0), "value", json_integer(2));
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	write_env_b(f, "a3", b);
	b = bundle_of(f, "a3");
	json_object_set_new(b, "comparison", json_pack("{s:s, s:[]}", "reference", "a3",
						       "differences"));
	forge(f, "a3", b);
	review(f);
	assert_reason(f, "the environments were compared with different references");
	assert_reason(f, "a3: trace of gelu_matches differs at 'out'");
}

static void label_edited_in_the_bundle_alone_is_a_reason(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	json_t *b = bundle_of(f, "a2");
	json_object_set_new(json_object_get(b, "env"), "label", json_string("Atlas A3"));
	forge(f, "a2", b);
	review(f);
	assert_reason(f, "a2: the environment (name, label, device) in bundle.json differs from "
		      "journal.jsonl, as measured");
	assert_reasons(f, 1);
}

static void target_edited_in_the_bundle_alone_is_a_reason(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	json_t *b = bundle_of(f, "a2");
	json_object_set_new(b, "target", json_string("torch.nn.functional.silu"));
	forge(f, "a2", b);
	review(f);
	assert_reason(f, "a2: bundle.json is about torch.nn.functional.silu, but the journal "
		      "resolved " TARGET);
	assert_reasons(f, 1);
}

static void official_outcome_in_the_reference_edited_alone_is_a_reason(void **state)
{
	struct fixture *f = *state;
	json_t *b = clean_bundle("a3", "Atlas A3");
	json_object_set_new(check_named(b, "test_nn.py::test_gelu"), "status", json_string("FAIL"));
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	write_env_b(f, "a3", b);
	b = bundle_of(f, "a2");
	json_object_set_new(check_named(b, "test_nn.py::test_gelu"), "reference_status",
			    json_string("FAIL"));
	forge(f, "a2", b);
	review(f);
	assert_reason(f, "a2: official test test_nn.py::test_gelu: its outcome in the reference is "
		      "not the one bundle.json gives");
	assert_reasons(f, 2);
}

static void journal_line_that_does_not_parse_is_a_reason(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	append_to(f, "a2", "journal.jsonl", "garbage\n");
	reseal(env_dir(f, "a2"));
	review(f);
	assert_reason(f, "a2/journal.jsonl: line 6: ");
	assert_reasons(f, 1);
}

static void manifest_line_listed_twice_is_a_reason(void **state)
{
	struct fixture *f = *state;
	char path[8300], line[200];
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	snprintf(path, sizeof(path), "%s/%s", env_dir(f, "a2"), AP_MANIFEST_NAME);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(line, sizeof(line), fp));
	fclose(fp);
	append_to(f, "a2", AP_MANIFEST_NAME, line);
	review(f);
	assert_reason(f, "a2/MANIFEST.sha256:4: bundle.json is listed a second time");
	assert_reasons(f, 1);
}

/* ------------------------------------------------------------ signatures */

/* The trust file, beside the submission (not in it). */
static const char *trust_file(const struct fixture *f)
{
	static char path[8300];
	snprintf(path, sizeof(path), "%s.trusted.pem", f->top);
	return path;
}

/* A fresh Ed25519 key that signs what write_env writes from now on; its
 * public key is appended to the trust file when trusted. */
static void new_signer(struct fixture *f, int trusted)
{
	char priv[8300];
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	assert_non_null(k);
	snprintf(priv, sizeof(priv), "%s.key.pem", f->top);
	FILE *fp = fopen(priv, "w"), *pub = fopen(trust_file(f), "a");
	assert_non_null(fp);
	assert_non_null(pub);
	assert_int_equal(PEM_write_PrivateKey(fp, k, NULL, NULL, 0, NULL, NULL), 1);
	if (trusted)
		assert_int_equal(PEM_write_PUBKEY(pub, k), 1);
	fclose(fp);
	fclose(pub);
	EVP_PKEY_free(k);
	ap_signer_free(f->signer);
	f->signer = NULL;
	assert_int_equal(ap_signer_load(priv, &f->signer, &f->err), 0);
	assert_int_equal(unlink(priv), 0);
}

static void trust(struct fixture *f)
{
	ap_trust_free(f->trust);
	f->trust = NULL;
	assert_int_equal(ap_trust_load(trust_file(f), &f->trust, &f->err), 0);
}

static void signed_submission_is_accepted_with_trust(void **state)
{
	struct fixture *f = *state;
	new_signer(f, 1);
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	write_env_b(f, "a3", clean_bundle("a3", "Atlas A3"));
	trust(f);
	review(f);
	assert_reasons(f, 0);
	struct ap_review_opts o = { f->policy, f->trust, NULL };
	ap_review_markdown(f->top, f->reasons, &o, &f->out);
	assert_non_null(strstr(ap_buf_str(&f->out), "signed by a trusted key (1 in the trust list)"));
}

/* What no consistency check can see: the bundle and the journal edited
 * together, and resealed. Only the signature catches it. */
static void bundle_and_journal_edited_together_are_caught_only_by_a_signature(void **state)
{
	struct fixture *f = *state;
	new_signer(f, 1);
	json_t *b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("gelu_grad", "probe", "FAIL", "off by 1"));
	write_env_b(f, "a2", b);
	/* the forger writes the run they wanted, journal and all */
	b = clean_bundle("a2", "Atlas A2");
	json_array_append_new(checks_of(b), check("gelu_grad", "probe", "PASS", NULL));
	const char *dir = env_dir(f, "a2");
	put_journal(dir, b, json_object_get(b, "fingerprint"));
	f->ref[0] = '\0';  /* a2 is its own reference, as measured now */
	json_decref(f->ref_checks);
	judge(f, "a2", b);
	json_object_set_new(b, "signer", json_pack("{s:s, s:s}", "algorithm", "ed25519",
						   "key", ap_signer_fpr(f->signer)));
	forge(f, "a2", b);
	review(f);
	assert_reasons(f, 0);
	trust(f);
	review(f);
	assert_reason(f, "a2: MANIFEST.sha256.sig is not a valid signature of MANIFEST.sha256 by "
		      "trusted key sha256:");
	assert_reason(f, "the evidence changed after it was signed");
	assert_reasons(f, 1);
}

static void unsigned_or_untrusted_environment_is_refused_with_trust(void **state)
{
	struct fixture *f = *state;
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	new_signer(f, 0);
	write_env_b(f, "a3", clean_bundle("a3", "Atlas A3"));
	new_signer(f, 1);
	trust(f);
	review(f);
	assert_reason(f, "a2: not signed (no MANIFEST.sha256.sig): only evidence signed by a "
		      "trusted key is accepted");
	assert_reason(f, "a3: MANIFEST.sha256.sig was not made by a trusted key (bundle.json names "
		      "the signer sha256:");
	assert_reasons(f, 2);
}

static void policy_requiring_signatures_refuses_a_review_without_trust(void **state)
{
	struct fixture *f = *state;
	policy_with(f, "require_signature: \"yes\"");
	new_signer(f, 1);
	write_env_b(f, "a2", clean_bundle("a2", "Atlas A2"));
	review(f);
	assert_reason(f, "the policy requires evidence signed by a trusted key: give the trusted "
		      "public keys with --trust FILE");
	assert_reasons(f, 1);
	trust(f);
	review(f);
	assert_reasons(f, 0);
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
	struct ap_review_opts o = { f->policy, f->trust, NULL };
	ap_review_markdown(f->top, f->reasons, &o, &f->out);
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
	struct ap_review_opts o = { f->policy, NULL, NULL };
	ap_review_markdown(f->top, f->reasons, &o, &f->out);
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
		T(policy_refuses_every_key_it_does_not_know_and_every_wrong_value),
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
		T(a_renamed_folder_is_not_the_environment_it_is_named_after),
		T(required_facts_are_met_by_evidence_not_labels),
		T(reports_are_rendered_again_and_must_match),
		T(a_report_with_docs_renders_again_from_what_report_json_records),
		T(relaxed_tolerances_and_limits_are_the_policys_to_accept),
		T(unknown_top_level_file_is_a_reason),
		T(trace_difference_from_the_reference_is_a_reason),
		T(file_changed_after_the_manifest_is_a_reason),
		T(check_edited_in_the_bundle_alone_is_a_reason_naming_it),
		T(official_result_added_to_the_bundle_alone_is_a_reason),
		T(official_result_needs_official_log),
		T(unmeasured_notrun_decisions_need_no_journal_record),
		T(journaled_check_dropped_from_the_bundle_is_a_reason),
		T(verdict_edited_alone_is_a_reason),
		T(trace_differences_removed_from_the_bundle_are_found_again),
		T(environment_compared_with_itself_is_a_reason),
		T(label_edited_in_the_bundle_alone_is_a_reason),
		T(target_edited_in_the_bundle_alone_is_a_reason),
		T(official_outcome_in_the_reference_edited_alone_is_a_reason),
		T(journal_line_that_does_not_parse_is_a_reason),
		T(manifest_line_listed_twice_is_a_reason),
		T(signed_submission_is_accepted_with_trust),
		T(bundle_and_journal_edited_together_are_caught_only_by_a_signature),
		T(unsigned_or_untrusted_environment_is_refused_with_trust),
		T(policy_requiring_signatures_refuses_a_review_without_trust),
		T(review_markdown_lists_each_reason),
		T(unreadable_bundle_is_a_reason_and_the_rest_is_reviewed),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
