/* test-spec.c - unit tests for src/spec.h: family specs as data, validated
 * whole with errors that name file:line, member lookup, bindings and traits,
 * and the built-in specs agreeing with specs/. */
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
#include "base/err.h"
#include "check/spec.h"
#include "testutil.h"

/* A minimal valid family; the comments give each line's number. */
static const char demo[] =
	"family: demo\n"                              /* 1 */
	"summary:\n"
	"  en: a demo family\n"
	"  zh: 演示\n"
	"bind:\n"                                     /* 5 */
	"  ZED: resolve(\"{class}\")\n"
	"  ALPHA: \"lambda: {state} + {state}\"\n"
	"  MID: \"{make}\"\n"
	"members:\n"
	"  - class: pkg.mod.First\n"                  /* 10 */
	"    state: first_state()\n"
	"    make: CTX(1)\n"
	"    traits: clone decorator\n"
	"  - class: pkg.mod.Second\n"                 /* 14 */
	"    state: second_state()\n"
	"    make: CTX()\n"
	"    traits: \"  thread-local\\tclone  \"\n"
	"  - class: pkg.mod.Third\n"                  /* 18 */
	"    state: s()\n"
	"    make: m()\n"
	"probes:\n"
	"  - name: probe-one\n"
	"    needs: clone\n"
	"    says:\n"
	"      en: checks one thing\n"
	"      zh: 检查一件事\n"
	"    code: |\n"
	"      x = 1\n"
	"      if x:\n"
	"          check(x == 1, \"one\")\n"
	"  - name: probe-2\n"
	"    says:\n"
	"      en: checks another\n"
	"    code: pass\n";

/* Pieces of a small spec for the error cases, with the lines they take. */
#define HEAD "# a spec with an error\n"                           /* 1 */ \
	     "family: demo\n"                                      /* 2 */ \
	     "bind:\n"                                             /* 3 */ \
	     "  X: \"{class}.{state}\"\n"                          /* 4 */
#define MEMBERS "members:\n"                                       /* 5 */ \
		"  - class: a.B\n"                                 /* 6 */ \
		"    state: s()\n"                                 /* 7 */
#define PROBES "probes:\n"                                         /* 8 */ \
	       "  - name: p\n"                                     /* 9 */ \
	       "    says:\n"                                       /* 10 */ \
	       "      en: says p\n"                                /* 11 */ \
	       "    code: pass\n"                                  /* 12 */
/* PROBES followed by a second probe: that probe's line */
#define SECOND_PROBE 13

static int add(struct ap_specs *s, const char *text, const char *name, struct ap_buf *err)
{
	return ap_specs_add(s, text, strlen(text), name, err);
}

/* Asserts that text is refused as "bad.yaml:line: what" and adds nothing. */
static void assert_refused(const char *text, int line, const char *what)
{
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 }, want = { 0 };
	assert_int_equal(add(&s, text, "bad.yaml", &err), -AP_ECONFIG);
	assert_int_equal(s.n, 0);
	ap_buf_addf(&want, "bad.yaml:%d: %s", line, what);
	assert_string_equal(ap_buf_str(&err), ap_buf_str(&want));
	ap_specs_free(&s);
	ap_buf_free(&err);
	ap_buf_free(&want);
}

static void minimal_family_loads_with_its_members_and_probes(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(add(&s, demo, "demo.yaml", &err), 0);
	assert_int_equal(err.len, 0);
	assert_int_equal(s.n, 1);
	const struct ap_family *f = &s.v[0];
	assert_string_equal(f->name, "demo");
	assert_string_equal(f->file, "demo.yaml");
	assert_string_equal(f->summary_en, "a demo family");
	assert_string_equal(f->summary_zh, "演示");
	assert_int_equal(f->nmembers, 3);
	assert_string_equal(f->members[0].cls, "pkg.mod.First");
	assert_int_equal(f->members[0].line, 10);
	assert_string_equal(f->members[1].cls, "pkg.mod.Second");
	assert_int_equal(f->members[1].line, 14);
	assert_int_equal(f->members[2].line, 18);
	assert_string_equal(json_string_value(json_object_get(f->members[0].fields, "state")),
			    "first_state()");
	assert_null(json_object_get(f->members[0].fields, "__line__"));
	assert_null(json_object_get(f->bind, "__line__"));
	assert_int_equal(f->nprobes, 2);
	assert_string_equal(f->probes[0].name, "probe-one");
	assert_string_equal(f->probes[0].needs, "clone");
	assert_string_equal(f->probes[0].says_en, "checks one thing");
	assert_string_equal(f->probes[0].says_zh, "检查一件事");
	assert_string_equal(f->probes[0].code, "x = 1\nif x:\n    check(x == 1, \"one\")\n");
	assert_string_equal(f->probes[1].name, "probe-2");
	assert_null(f->probes[1].needs);
	assert_string_equal(f->probes[1].code, "pass");
	ap_specs_free(&s);
	assert_null(s.v);
	assert_int_equal(s.n, 0);
	ap_buf_free(&err);
}

static void probe_without_chinese_text_says_the_english_one(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(add(&s, demo, "demo.yaml", &err), 0);
	assert_string_equal(s.v[0].probes[1].says_zh, "checks another");
	ap_specs_free(&s);
	ap_buf_free(&err);
}

/* A summary's Chinese text is optional, as a probe's is; its English one
 * is not. */
static void summary_without_chinese_text_loads(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	char *text = strdup(demo);
	assert_non_null(text);
	char *zh = strstr(text, "  zh: 演示\n");
	assert_non_null(zh);
	memmove(zh, zh + strlen("  zh: 演示\n"), strlen(zh + strlen("  zh: 演示\n")) + 1);
	assert_int_equal(add(&s, text, "demo.yaml", &err), 0);
	assert_string_equal(s.v[0].summary_en, "a demo family");
	assert_null(s.v[0].summary_zh);
	ap_specs_free(&s);
	ap_buf_free(&err);
	free(text);
}

static void find_gives_the_family_and_member_of_a_class(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	const struct ap_member *m = NULL;
	assert_int_equal(add(&s, demo, "demo.yaml", &err), 0);
	assert_int_equal(add(&s, "family: other\nbind:\n  A: \"{class}\"\n"
			     "members:\n  - class: other.Thing\n"
			     "probes:\n  - name: p\n    says: {en: p}\n    code: pass\n",
			     "other.yaml", &err), 0);
	assert_int_equal(s.n, 2);

	assert_ptr_equal(ap_specs_find(&s, "pkg.mod.Second", &m), &s.v[0]);
	assert_ptr_equal(m, &s.v[0].members[1]);
	assert_ptr_equal(ap_specs_find(&s, "other.Thing", &m), &s.v[1]);
	assert_ptr_equal(m, &s.v[1].members[0]);

	assert_null(ap_specs_find(&s, "pkg.mod", &m));
	assert_null(m);
	m = &s.v[0].members[0];
	assert_null(ap_specs_find(&s, "pkg.mod.First.extra", &m));
	assert_null(m);
	m = &s.v[0].members[0];
	assert_null(ap_specs_find(&s, NULL, &m));
	assert_null(m);
	ap_specs_free(&s);
	ap_buf_free(&err);
}

static void bind_expands_fields_in_the_order_of_the_bind_mapping(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(add(&s, demo, "demo.yaml", &err), 0);
	const struct ap_family *f = &s.v[0];

	json_t *got = ap_member_bind(f, &f->members[0]);
	json_t *want = json_pack("[[s,s],[s,s],[s,s]]",
				 "ZED", "resolve(\"pkg.mod.First\")",
				 "ALPHA", "lambda: first_state() + first_state()",
				 "MID", "CTX(1)");
	assert_true(json_equal(got, want));
	json_decref(got);
	json_decref(want);

	got = ap_member_bind(f, &f->members[1]);
	want = json_pack("[[s,s],[s,s],[s,s]]",
			 "ZED", "resolve(\"pkg.mod.Second\")",
			 "ALPHA", "lambda: second_state() + second_state()",
			 "MID", "CTX()");
	assert_true(json_equal(got, want));
	json_decref(got);
	json_decref(want);
	ap_specs_free(&s);
	ap_buf_free(&err);
}

static void has_trait_matches_whole_blank_separated_words(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(add(&s, demo, "demo.yaml", &err), 0);
	const struct ap_member *first = &s.v[0].members[0], *second = &s.v[0].members[1];
	const struct ap_member *third = &s.v[0].members[2];

	assert_true(ap_member_has_trait(first, "clone"));
	assert_true(ap_member_has_trait(first, "decorator"));
	assert_false(ap_member_has_trait(first, "clon"));
	assert_false(ap_member_has_trait(first, "decor"));
	assert_false(ap_member_has_trait(first, "clone decorator"));
	assert_false(ap_member_has_trait(first, "thread-local"));

	/* leading, trailing and tab blanks */
	assert_true(ap_member_has_trait(second, "thread-local"));
	assert_true(ap_member_has_trait(second, "clone"));
	assert_false(ap_member_has_trait(second, "decorator"));

	/* no traits field at all */
	assert_false(ap_member_has_trait(third, "clone"));
	ap_specs_free(&s);
	ap_buf_free(&err);
}

static void unknown_top_level_key_is_refused_at_the_spec_line(void **state)
{
	(void)state;
	assert_refused(HEAD "colour: red\n" MEMBERS PROBES, 2, "unknown key 'colour'");
}

static void unknown_probe_key_is_refused_at_the_probe_line(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS PROBES
		       "  - name: q\n    says:\n      en: q\n    code: pass\n    timeout: 5\n",
		       SECOND_PROBE, "unknown key 'timeout'");
}

static void probe_without_code_is_refused_at_the_probe_line(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS PROBES "  - name: q\n    says:\n      en: q\n",
		       SECOND_PROBE, "'code' is missing");
}

static void probe_name_with_capitals_is_refused_at_the_probe_line(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS PROBES
		       "  - name: Clone\n    says:\n      en: q\n    code: pass\n",
		       SECOND_PROBE, "probe name 'Clone' must be [a-z0-9-]+");
}

static void probe_name_with_spaces_is_refused_at_the_probe_line(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS PROBES
		       "  - name: clone it\n    says:\n      en: q\n    code: pass\n",
		       SECOND_PROBE, "probe name 'clone it' must be [a-z0-9-]+");
}

static void duplicate_probe_name_is_refused_at_the_second_probe(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS PROBES
		       "  - name: p\n    says:\n      en: again\n    code: pass\n",
		       SECOND_PROBE, "probe 'p' defined twice");
}

static void member_lacking_a_bound_field_is_refused_at_that_member(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS "  - class: a.C\n    other: x\n" PROBES, 8,
		       "member lacks field 'state' that the bindings use");
}

static void member_field_that_is_a_list_is_refused_at_that_member(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS "  - class: a.C\n    state: [x, y]\n" PROBES, 8,
		       "member field 'state' must be text");
}

static void probe_says_without_english_is_refused_at_its_says(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS PROBES
		       "  - name: q\n    says:\n      zh: 只有中文\n    code: pass\n",
		       SECOND_PROBE + 2, "'en' is missing");
}

static void probe_without_says_is_refused_at_the_probe_line(void **state)
{
	(void)state;
	assert_refused(HEAD MEMBERS PROBES "  - name: q\n    code: pass\n",
		       SECOND_PROBE, "'says' (en, zh) is missing");
}

static void empty_members_list_is_refused_at_the_spec_line(void **state)
{
	(void)state;
	assert_refused(HEAD "members: []\n" PROBES, 2, "'members' must list at least one class");
}

static void yaml_error_in_a_spec_is_refused_naming_line_and_column(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(add(&s, HEAD MEMBERS "members:\n  - class: x\n" PROBES, "bad.yaml", &err),
			 -AP_ECONFIG);
	assert_int_equal(s.n, 0);
	assert_string_equal(ap_buf_str(&err), "bad.yaml:8:1: duplicate key");
	ap_specs_free(&s);
	ap_buf_free(&err);
}

static void family_defined_twice_is_refused_and_the_first_kept(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	const struct ap_member *m;
	assert_int_equal(add(&s, HEAD MEMBERS PROBES, "one.yaml", &err), 0);
	assert_int_equal(add(&s, "# the same family again\n# in a second file\n"
			     "family: demo\nbind:\n  X: \"{class}\"\n"
			     "members:\n  - class: z.Z\nprobes:\n  - name: p\n"
			     "    says: {en: p}\n    code: pass\n",
			     "two.yaml", &err), -AP_ECONFIG);
	assert_string_equal(ap_buf_str(&err), "two.yaml:3: family 'demo' is defined twice");
	assert_int_equal(s.n, 1);
	assert_string_equal(s.v[0].file, "one.yaml");
	assert_non_null(ap_specs_find(&s, "a.B", &m));
	assert_null(ap_specs_find(&s, "z.Z", &m));
	ap_specs_free(&s);
	ap_buf_free(&err);
}

static const struct ap_family *family_named(const struct ap_specs *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

static void builtin_mode_context_family_has_every_mode_class(void **state)
{
	(void)state;
	static const char *const classes[] = {
		"torch.autograd.grad_mode.set_multithreading_enabled",
		"torch.autograd.grad_mode.set_grad_enabled",
		"torch.autograd.grad_mode.inference_mode",
		"torch.autograd.grad_mode.no_grad",
		"torch.autograd.grad_mode.enable_grad",
		"torch.autograd.anomaly_mode.set_detect_anomaly",
	};
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(ap_specs_load(&s, NULL, &err), 0);
	assert_int_equal(err.len, 0);
	const struct ap_family *f = family_named(&s, "mode-context");
	assert_non_null(f);
	for (size_t i = 0; i < sizeof(classes) / sizeof(*classes); i++) {
		const struct ap_member *m = NULL;
		assert_ptr_equal(ap_specs_find(&s, classes[i], &m), f);
		assert_non_null(m);
		assert_string_equal(m->cls, classes[i]);
		json_t *b = ap_member_bind(f, m);
		assert_non_null(b);
		assert_int_equal(json_array_size(b), json_object_size(f->bind));
		json_decref(b);
	}
	ap_specs_free(&s);
	ap_buf_free(&err);
}

static void every_builtin_probe_says_what_it_checks_in_english_and_chinese(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	size_t probes = 0;
	assert_int_equal(ap_specs_load(&s, NULL, &err), 0);
	for (size_t i = 0; i < s.n; i++)
		for (size_t k = 0; k < s.v[i].nprobes; k++, probes++) {
			const struct ap_probe *p = &s.v[i].probes[k];
			assert_true(p->says_en && *p->says_en);
			assert_true(p->says_zh && *p->says_zh);
			/* a missing zh would have been filled with the en text */
			assert_string_not_equal(p->says_zh, p->says_en);
		}
	assert_true(probes > 0);
	ap_specs_free(&s);
	ap_buf_free(&err);
}

static size_t count_probes(const struct ap_specs *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += s->v[i].nprobes;
	return n;
}

static void builtin_specs_match_the_specs_dir(void **state)
{
	(void)state;
	struct ap_specs builtin = { 0 }, dir = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(ap_specs_load(&builtin, NULL, &err), 0);
	assert_int_equal(ap_specs_load(&dir, "specs", &err), 0);
	assert_int_equal(err.len, 0);
	assert_int_equal(dir.n, builtin.n);
	assert_int_equal(count_probes(&dir), count_probes(&builtin));
	for (size_t i = 0; i < dir.n; i++) {
		const struct ap_family *b = family_named(&builtin, dir.v[i].name);
		assert_non_null(b);
		assert_int_equal(dir.v[i].nmembers, b->nmembers);
	}
	ap_specs_free(&builtin);
	ap_specs_free(&dir);
	ap_buf_free(&err);
}

static void loading_a_missing_dir_is_a_config_error(void **state)
{
	(void)state;
	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 };
	assert_int_equal(ap_specs_load(&s, "no/such/specs-dir", &err), -AP_ECONFIG);
	assert_int_equal(s.n, 0);
	assert_null(s.v);
	assert_non_null(strstr(ap_buf_str(&err), "no/such/specs-dir"));
	ap_buf_free(&err);
}

static void malformed_file_in_a_dir_fails_the_whole_load_naming_it(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/test-spec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	t_put(dir, "a-good.yaml", HEAD MEMBERS PROBES);
	t_put(dir, "b-bad.yaml", HEAD "members: []\n" PROBES);
	t_put(dir, "c-not-a-spec.txt", "not: [yaml");

	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 }, want = { 0 };
	assert_int_equal(ap_specs_load(&s, dir, &err), -AP_ECONFIG);
	assert_int_equal(s.n, 0);
	assert_null(s.v);
	ap_buf_addf(&want, "%s/b-bad.yaml:2: 'members' must list at least one class", dir);
	assert_string_equal(ap_buf_str(&err), ap_buf_str(&want));

	/* without the bad file, the good one loads and the .txt is ignored */
	ap_buf_reset(&err);
	ap_buf_reset(&want);
	ap_buf_addf(&want, "%s/b-bad.yaml", dir);
	assert_int_equal(unlink(ap_buf_str(&want)), 0);
	assert_int_equal(ap_specs_load(&s, dir, &err), 0);
	assert_int_equal(s.n, 1);
	ap_buf_reset(&want);
	ap_buf_addf(&want, "%s/a-good.yaml", dir);
	assert_string_equal(s.v[0].file, ap_buf_str(&want));
	ap_specs_free(&s);
	ap_buf_free(&err);
	ap_buf_free(&want);
	assert_int_equal(t_rmtree(dir), 0);
}

static void dir_without_spec_files_is_a_config_error(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/test-spec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	t_put(dir, ".hidden.yaml", HEAD MEMBERS PROBES);

	struct ap_specs s = { 0 };
	struct ap_buf err = { 0 }, want = { 0 };
	assert_int_equal(ap_specs_load(&s, dir, &err), -AP_ECONFIG);
	assert_int_equal(s.n, 0);
	ap_buf_addf(&want, "%s: no *.yaml spec files", dir);
	assert_string_equal(ap_buf_str(&err), ap_buf_str(&want));
	ap_buf_free(&err);
	ap_buf_free(&want);
	assert_int_equal(t_rmtree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(minimal_family_loads_with_its_members_and_probes),
		cmocka_unit_test(probe_without_chinese_text_says_the_english_one),
		cmocka_unit_test(summary_without_chinese_text_loads),
		cmocka_unit_test(find_gives_the_family_and_member_of_a_class),
		cmocka_unit_test(bind_expands_fields_in_the_order_of_the_bind_mapping),
		cmocka_unit_test(has_trait_matches_whole_blank_separated_words),
		cmocka_unit_test(unknown_top_level_key_is_refused_at_the_spec_line),
		cmocka_unit_test(unknown_probe_key_is_refused_at_the_probe_line),
		cmocka_unit_test(probe_without_code_is_refused_at_the_probe_line),
		cmocka_unit_test(probe_name_with_capitals_is_refused_at_the_probe_line),
		cmocka_unit_test(probe_name_with_spaces_is_refused_at_the_probe_line),
		cmocka_unit_test(duplicate_probe_name_is_refused_at_the_second_probe),
		cmocka_unit_test(member_lacking_a_bound_field_is_refused_at_that_member),
		cmocka_unit_test(member_field_that_is_a_list_is_refused_at_that_member),
		cmocka_unit_test(probe_says_without_english_is_refused_at_its_says),
		cmocka_unit_test(probe_without_says_is_refused_at_the_probe_line),
		cmocka_unit_test(empty_members_list_is_refused_at_the_spec_line),
		cmocka_unit_test(yaml_error_in_a_spec_is_refused_naming_line_and_column),
		cmocka_unit_test(family_defined_twice_is_refused_and_the_first_kept),
		cmocka_unit_test(builtin_mode_context_family_has_every_mode_class),
		cmocka_unit_test(every_builtin_probe_says_what_it_checks_in_english_and_chinese),
		cmocka_unit_test(builtin_specs_match_the_specs_dir),
		cmocka_unit_test(loading_a_missing_dir_is_a_config_error),
		cmocka_unit_test(malformed_file_in_a_dir_fails_the_whole_load_naming_it),
		cmocka_unit_test(dir_without_spec_files_is_a_config_error),
	};
	return cmocka_run_group_tests_name("spec", tests, NULL, NULL);
}
