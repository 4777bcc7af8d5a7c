/* test-signature.c - unit tests for src/check/signature.h: the differences of
 * two signatures, and the signature check a bundle gets against the
 * reference's, on signature data shaped as the worker sends it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/signature.h"
#include "check/verdict.h"
#include "evidence/bundle.h"

/* Signature data from one inspect overload; params as JSON text. */
static json_t *sig_of(const char *source, const char *params)
{
	json_error_t e;
	json_t *p = json_loads(params, 0, &e);
	assert_non_null(p);
	json_t *s = json_pack("{s:b, s:s, s:n, s:n, s:[{s:s, s:s, s:o, s:n}]}", "callable", 1,
			      "source", source, "why", "op", "overloads", "name", "", "text",
			      "f(...)", "params", p, "returns");
	assert_non_null(s);
	return s;
}

static json_t *sig(const char *params)
{
	return sig_of("inspect", params);
}

#define P(name, kind) "{\"name\": \"" name "\", \"kind\": \"" kind "\", \"annotation\": null}"
#define PD(name, kind, def) "{\"name\": \"" name "\", \"kind\": \"" kind "\", \"annotation\": null, " \
			    "\"default\": " def "}"
#define POK "positional-or-keyword"
#define KW "keyword-only"

/* The texts of the differences, joined by " | ". */
static char *texts(json_t *diffs)
{
	static char buf[2048];
	size_t i;
	json_t *d;
	buf[0] = '\0';
	json_array_foreach(diffs, i, d) {
		if (i)
			strncat(buf, " | ", sizeof(buf) - strlen(buf) - 1);
		strncat(buf, json_string_value(json_object_get(d, "text")), sizeof(buf) - strlen(buf) - 1);
	}
	return buf;
}

static char *diff_texts(json_t *ref, json_t *s)
{
	json_t *d = ap_signature_diff(ref, s);
	assert_non_null(d);
	char *t = texts(d);
	json_decref(d);
	json_decref(ref);
	json_decref(s);
	return t;
}

static void same_signature_has_no_difference(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[" P("input", POK) "," PD("inplace", POK, "false") "]"),
				       sig("[" P("input", POK) "," PD("inplace", POK, "false") "]")), "");
}

static void changed_default_names_parameter_and_values(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[" P("input", POK) "," PD("max_val", POK, "1.0") "]"),
				       sig("[" P("input", POK) "," PD("max_val", POK, "2.0") "]")),
			    "default of 'max_val' changed: 1.0 -> 2.0");
}

static void default_value_types_and_none_are_told_apart(void **state)
{
	(void)state;
	/* 1 and 1.0, None and no default: a caller sees each change. */
	assert_string_equal(diff_texts(sig("[" PD("a", POK, "1") "," PD("b", POK, "null") "]"),
				       sig("[" PD("a", POK, "1.0") "," P("b", POK) "]")),
			    "default of 'a' changed: 1 -> 1.0 | default of 'b' changed: null -> (none)");
}

static void tagged_defaults_compare_as_values(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[" PD("eps", POK, "{\"$float\": \"nan\"}") "]"),
				       sig("[" PD("eps", POK, "{\"$float\": \"nan\"}") "]")), "");
	assert_string_equal(diff_texts(sig("[" PD("eps", POK, "{\"$float\": \"nan\"}") "]"),
				       sig("[" PD("eps", POK, "{\"$float\": \"inf\"}") "]")),
			    "default of 'eps' changed: {\"$float\":\"nan\"} -> {\"$float\":\"inf\"}");
}

static void repr_defaults_compare_as_text_and_never_equal_a_value(void **state)
{
	(void)state;
	const char *strided = "[{\"name\": \"layout\", \"kind\": \"keyword-only\", \"annotation\": null, "
			      "\"default_repr\": \"torch.strided\"}]";
	const char *sparse = "[{\"name\": \"layout\", \"kind\": \"keyword-only\", \"annotation\": null, "
			     "\"default_repr\": \"torch.sparse_coo\"}]";
	assert_string_equal(diff_texts(sig(strided), sig(strided)), "");
	assert_string_equal(diff_texts(sig(strided), sig(sparse)),
			    "default of 'layout' changed: torch.strided -> torch.sparse_coo");
	assert_string_equal(diff_texts(sig(strided), sig("[" PD("layout", KW, "\"torch.strided\"") "]")),
			    "default of 'layout' changed: torch.strided -> \"torch.strided\"");
}

static void renamed_parameter_is_one_rename(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[" P("input", POK) "," PD("negative_slope", POK, "0.01") "]"),
				       sig("[" P("input", POK) "," PD("slope", POK, "0.01") "]")),
			    "parameter 'negative_slope' renamed to 'slope'");
}

static void rename_needs_the_same_position_and_kind(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[" P("input", POK) "," PD("a", POK, "1") "]"),
				       sig("[" P("input", POK) "," PD("b", KW, "1") "]")),
			    "parameter 'a' removed | parameter 'b' added (keyword-only, default 1)");
	/* nor is a parameter the reference has elsewhere a new name: b is
	 * removed, not renamed to a */
	assert_string_equal(diff_texts(sig("[" P("a", POK) "," P("b", POK) "]"),
				       sig("[" P("c", POK) "," P("a", POK) "]")),
			    "parameter 'b' removed | parameter 'c' added (positional-or-keyword at "
			    "position 1, default (none))");
}

static void added_and_removed_parameters_are_named(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[" P("x", POK) "," P("old", KW) "]"),
				       sig("[" P("x", POK) "," P("y", POK) "]")),
			    "parameter 'old' removed | parameter 'y' added (positional-or-keyword at "
			    "position 2, default (none))");
	assert_string_equal(diff_texts(sig("[" P("num_groups", POK) "]"),
				       sig("[" P("num_groups", POK) "," PD("bias", KW, "true") "]")),
			    "parameter 'bias' added (keyword-only, default true)");
}

static void kind_change_is_named(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[" P("x", POK) "," PD("dim", POK, "null") "]"),
				       sig("[" P("x", POK) "," PD("dim", KW, "null") "]")),
			    "parameter 'dim' changed kind: positional-or-keyword -> keyword-only");
}

static void reordered_positional_parameters_are_one_difference(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[" P("a", POK) "," P("b", POK) "]"),
				       sig("[" P("b", POK) "," P("a", POK) "]")),
			    "positional parameters reordered: (a, b) -> (b, a)");
}

static void annotations_are_not_compared(void **state)
{
	(void)state;
	assert_string_equal(diff_texts(sig("[{\"name\": \"dim\", \"kind\": \"" POK "\", "
					   "\"annotation\": \"Optional[int]\", \"default\": null}]"),
				       sig("[{\"name\": \"dim\", \"kind\": \"" POK "\", "
					   "\"annotation\": \"int | None\", \"default\": null}]")), "");
}

static void another_source_is_one_difference(void **state)
{
	(void)state;
	json_t *s = sig_of("schema", "[" P("self", POK) "]");
	assert_string_equal(diff_texts(sig("[" P("input", POK) "]"), s),
			    "the signature comes from schema here, from inspect in the reference");
}

static json_t *schema_sig(const char *const *names, size_t n)
{
	json_t *s = json_pack("{s:b, s:s, s:n, s:s, s:[]}", "callable", 1, "source", "schema",
			      "why", "op", "aten::add", "overloads");
	for (size_t i = 0; i < n; i++) {
		char text[64];
		snprintf(text, sizeof(text), "aten::add.%s(Tensor self)", names[i]);
		json_array_append_new(json_object_get(s, "overloads"), json_pack(
			"{s:s, s:s, s:[{s:s, s:s, s:s}], s:s}", "name", names[i], "text", text, "params",
			"name", "self", "kind", POK, "annotation", "Tensor", "returns", "Tensor"));
	}
	return s;
}

static void overloads_are_matched_by_name(void **state)
{
	(void)state;
	const char *ref[] = { "Tensor", "Scalar", "out" }, *now[] = { "out", "Tensor", "int" };
	assert_string_equal(diff_texts(schema_sig(ref, 3), schema_sig(now, 3)),
			    "overload aten::add.Scalar(Tensor self) removed | overload "
			    "aten::add.int(Tensor self) added");
}

static void difference_in_an_overload_names_it(void **state)
{
	(void)state;
	const char *names[] = { "Tensor" };
	json_t *a = schema_sig(names, 1), *b = schema_sig(names, 1);
	json_t *p = json_array_get(json_object_get(json_array_get(json_object_get(b, "overloads"), 0),
						   "params"), 0);
	json_object_set_new(p, "name", json_string("input"));
	json_t *d = ap_signature_diff(a, b);
	assert_string_equal(texts(d), "overload Tensor: parameter 'self' renamed to 'input'");
	assert_string_equal(json_string_value(json_object_get(json_array_get(d, 0), "overload")), "Tensor");
	assert_string_equal(json_string_value(json_object_get(json_array_get(d, 0), "what")), "renamed");
	json_decref(d);
	json_decref(a);
	json_decref(b);
}

static void unparsed_docstrings_compare_by_text(void **state)
{
	(void)state;
	json_t *a = sig_of("docstring", "[]"), *b = sig_of("docstring", "[]");
	json_t *oa = json_array_get(json_object_get(a, "overloads"), 0);
	json_t *ob = json_array_get(json_object_get(b, "overloads"), 0);
	json_object_set_new(oa, "params", json_null());
	json_object_set_new(ob, "params", json_null());
	json_object_set_new(oa, "text", json_string("zeros(*size, *, out=None)"));
	json_object_set_new(ob, "text", json_string("zeros(*size, *, out=None, pin=False)"));
	assert_string_equal(diff_texts(a, b), "signature changed: zeros(*size, *, out=None) -> "
			    "zeros(*size, *, out=None, pin=False)");
}

/* --- the check ----------------------------------------------------------- */

/* A bundle of env name at torch version, the target found with signature s
 * (stolen; NULL: not resolved). */
static json_t *bundle(const char *name, const char *torch, json_t *s)
{
	json_t *b = json_pack("{s:{s:s}, s:{s:{s:s}}, s:{s:b, s:o?}, s:n, s:[]}", "env", "name", name,
			      "fingerprint", "torch", "version", torch, "resolution", "found", s != NULL,
			      "signature_data", s, "error", "checks");
	assert_non_null(b);
	return b;
}

static const char *status_of(const json_t *c)
{
	return json_string_value(json_object_get(c, "status"));
}

static const char *reason_of(const json_t *c)
{
	return json_string_value(json_object_get(c, "reason"));
}

static void same_release_difference_fails_naming_the_parameter(void **state)
{
	(void)state;
	json_t *b[2] = { bundle("trixie", "2.6.0+debian", sig("[" PD("max_val", POK, "1.0") "]")),
			 bundle("plugin", "2.6.0+cpu", sig("[" PD("max_val", POK, "2.0") "]")) };
	json_t *c = ap_signature_check(b, 2, 1, 0);
	assert_string_equal(status_of(c), "FAIL");
	assert_string_equal(reason_of(c), "differs from trixie's at the same torch release (2.6.0+cpu "
			    "here): default of 'max_val' changed: 1.0 -> 2.0");
	assert_true(json_is_true(json_object_get(json_object_get(c, "signature"), "same_torch")));
	json_decref(c);
	c = ap_signature_check(b, 2, 0, 0);
	assert_string_equal(status_of(c), "PASS");
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(c,
				"signature"), "compared"), 0)), "plugin");
	json_decref(c);
	json_decref(b[0]);
	json_decref(b[1]);
}

static void other_release_difference_is_a_warning(void **state)
{
	(void)state;
	json_t *b[2] = { bundle("trixie", "2.6.0+debian", sig("[" P("num_groups", POK) "]")),
			 bundle("sid", "2.14.1+debian", sig("[" P("num_groups", POK) ","
							       PD("bias", KW, "true") "]")) };
	json_t *c = ap_signature_check(b, 2, 1, 0);
	assert_string_equal(status_of(c), "WARN");
	assert_string_equal(reason_of(c), "differs from trixie's at another torch release (2.14.1+debian "
			    "here): parameter 'bias' added (keyword-only, default true)");
	json_decref(c);
	json_decref(b[0]);
	json_decref(b[1]);
}

static void agreeing_signature_passes(void **state)
{
	(void)state;
	json_t *b[2] = { bundle("trixie", "2.6.0+debian", sig("[]")),
			 bundle("sid", "2.14.1+debian", sig("[]")) };
	json_t *c = ap_signature_check(b, 2, 1, 0);
	assert_string_equal(status_of(c), "PASS");
	assert_null(reason_of(c));
	assert_int_equal(json_array_size(json_object_get(json_object_get(c, "signature"), "differences")), 0);
	json_decref(c);
	json_decref(b[0]);
	json_decref(b[1]);
}

static void reference_alone_is_not_compared(void **state)
{
	(void)state;
	json_t *b[2] = { bundle("trixie", "2.6.0+debian", sig("[]")),
			 bundle("bookworm", "1.13.0", NULL) };
	assert_null(ap_signature_check(b, 2, 0, 0));
	assert_null(ap_signature_check(b, 1, 0, 0));
	assert_null(ap_signature_check(b, 2, 1, 0)); /* absent there: no check */
	json_decref(b[0]);
	json_decref(b[1]);
}

static void no_signature_anywhere_is_notrun_with_the_workers_reason(void **state)
{
	(void)state;
	json_t *none = json_pack("{s:b, s:n, s:s, s:n, s:[]}", "callable", 1, "source", "why",
				 "no Python signature", "op", "overloads");
	json_t *b[2] = { bundle("trixie", "2.6.0", json_deep_copy(none)), bundle("sid", "2.14.1", none) };
	json_t *c = ap_signature_check(b, 2, 1, 0);
	assert_string_equal(status_of(c), "NOTRUN");
	assert_string_equal(reason_of(c), "no-signature: no Python signature");
	json_decref(c);
	json_decref(b[0]);
	json_decref(b[1]);
}

static void not_callable_gets_no_check(void **state)
{
	(void)state;
	json_t *mod = json_pack("{s:b, s:n, s:s, s:n, s:[]}", "callable", 0, "source", "why",
				"not callable (module)", "op", "overloads");
	json_t *b[2] = { bundle("trixie", "2.6.0", json_deep_copy(mod)), bundle("sid", "2.14.1", mod) };
	assert_null(ap_signature_check(b, 2, 0, 0));
	assert_null(ap_signature_check(b, 2, 1, 0));
	json_decref(b[0]);
	json_decref(b[1]);
}

/* The verdict rules (verdict.c) over the judged checks. */
static void judged_verdicts_follow_the_signature_rules(void **state)
{
	(void)state;
	json_t *b[3] = { bundle("trixie", "2.6.0+debian", sig("[" PD("max_val", POK, "1.0") "]")),
			 bundle("plugin", "2.6.0+debian", sig("[" PD("max_val", POK, "2.0") "]")),
			 bundle("sid", "2.14.1+debian", sig("[" PD("max_val", POK, "1.0") ","
							       PD("extra", KW, "0") "]")) };
	ap_verdict_judge(b, 3, NULL);
	assert_string_equal(json_string_value(json_object_get(b[0], "verdict")), "consistent");
	assert_string_equal(json_string_value(json_object_get(b[1], "verdict")), "inconsistent");
	assert_string_equal(json_string_value(json_array_get(json_object_get(b[1], "verdict_reasons"), 0)),
			    "check signature: FAIL: differs from trixie's at the same torch release "
			    "(2.6.0+debian here): default of 'max_val' changed: 1.0 -> 2.0");
	assert_string_equal(json_string_value(json_object_get(b[2], "verdict")), "consistent-with-limits");
	assert_string_equal(json_string_value(json_array_get(json_object_get(b[2], "verdict_reasons"), 0)),
			    "signature: differs from trixie's at another torch release (2.14.1+debian "
			    "here): parameter 'extra' added (keyword-only, default 0) "
			    "(a limit: another torch release)");
	for (int i = 0; i < 3; i++)
		json_decref(b[i]);
}

static void many_differences_are_counted_in_the_reason(void **state)
{
	(void)state;
	json_t *b[2] = { bundle("trixie", "2.6.0", sig("[" P("a", POK) "," P("b", POK) "," P("c", POK)
						       "," P("d", POK) "," P("e", POK) "]")),
			 bundle("sid", "2.14.1", sig("[]")) };
	json_t *c = ap_signature_check(b, 2, 1, 0);
	assert_string_equal(reason_of(c), "differs from trixie's at another torch release (2.14.1 here): "
			    "parameter 'a' removed; parameter 'b' removed; parameter 'c' "
			    "removed; and 2 more");
	assert_int_equal(json_array_size(json_object_get(json_object_get(c, "signature"), "differences")), 5);
	json_decref(c);
	json_decref(b[0]);
	json_decref(b[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_signature_has_no_difference),
		cmocka_unit_test(changed_default_names_parameter_and_values),
		cmocka_unit_test(default_value_types_and_none_are_told_apart),
		cmocka_unit_test(tagged_defaults_compare_as_values),
		cmocka_unit_test(repr_defaults_compare_as_text_and_never_equal_a_value),
		cmocka_unit_test(renamed_parameter_is_one_rename),
		cmocka_unit_test(rename_needs_the_same_position_and_kind),
		cmocka_unit_test(added_and_removed_parameters_are_named),
		cmocka_unit_test(kind_change_is_named),
		cmocka_unit_test(reordered_positional_parameters_are_one_difference),
		cmocka_unit_test(annotations_are_not_compared),
		cmocka_unit_test(another_source_is_one_difference),
		cmocka_unit_test(overloads_are_matched_by_name),
		cmocka_unit_test(difference_in_an_overload_names_it),
		cmocka_unit_test(unparsed_docstrings_compare_by_text),
		cmocka_unit_test(same_release_difference_fails_naming_the_parameter),
		cmocka_unit_test(other_release_difference_is_a_warning),
		cmocka_unit_test(agreeing_signature_passes),
		cmocka_unit_test(reference_alone_is_not_compared),
		cmocka_unit_test(no_signature_anywhere_is_notrun_with_the_workers_reason),
		cmocka_unit_test(not_callable_gets_no_check),
		cmocka_unit_test(judged_verdicts_follow_the_signature_rules),
		cmocka_unit_test(many_differences_are_counted_in_the_reason),
	};
	return cmocka_run_group_tests_name("signature", tests, NULL, NULL);
}
