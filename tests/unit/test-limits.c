/* test-limits.c - unit tests for src/check/limits.h: known limits of a
 * backend, matched by device type, target (a name or a pattern), exception
 * type and message text, never by less; malformed files refused with
 * file:line, a missing reason first among them. */
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

#include "check/limits.h"
#include "base/err.h"

static const char good[] =
	"; a comment\n"
	"[openreg-str]\n"                                  /* line 2 */
	"backend = openreg\n"
	"op = *\n"
	"what = str arguments\n"
	"raises = RuntimeError: Cannot send object of type <class 'str'>\n"
	"reason = the daemon takes tensors, ints and floats\n"
	"\n"
	"[npu-linear]\n"                                   /* line 9 */
	"backend = npu\n"
	"op = torch.nn.Lin*\n"
	"what = bias gradients\n"
	"raises = NotImplementedError: aten::sum.dim_IntList\n"
	"reason = no reduction kernel\n";

static void parse(const char *text, struct ap_limits *l, struct ap_buf *err, int want)
{
	int r = ap_limits_parse(l, text, strlen(text), "lim.ini", err);
	if (r != want)
		fail_msg("parse returned %d, not %d: %s", r, want, ap_buf_str(err));
}

static void limits_match_backend_op_type_and_message(void **state)
{
	(void)state;
	struct ap_limits l;
	struct ap_buf err = { 0 };
	parse(good, &l, &err, 0);
	assert_int_equal(l.n, 2);
	const char *msg = "Cannot send object of type <class 'str'> over openreg device pipe.";
	const struct ap_limit *x = ap_limit_match(&l, "openreg", "torch.nn.functional.gelu",
						  "RuntimeError", msg);
	assert_non_null(x);
	assert_string_equal(x->name, "openreg-str");
	assert_string_equal(x->backend, "openreg");
	assert_string_equal(x->what, "str arguments");
	assert_string_equal(x->reason, "the daemon takes tensors, ints and floats");
	assert_string_equal(x->where, "lim.ini:2");
	/* a device of that type, any operator (op = *) */
	assert_ptr_equal(ap_limit_match(&l, "openreg:1", "torch.matmul", "RuntimeError", msg), x);
	/* another backend, a backend that only starts with it, the CPU */
	assert_null(ap_limit_match(&l, "cuda", "torch.matmul", "RuntimeError", msg));
	assert_null(ap_limit_match(&l, "openregx", "torch.matmul", "RuntimeError", msg));
	assert_null(ap_limit_match(&l, "cpu", "torch.matmul", "RuntimeError", msg));
	/* a type the backend's name starts with; one of the same length */
	assert_null(ap_limit_match(&l, "open:0", "torch.matmul", "RuntimeError", msg));
	assert_null(ap_limit_match(&l, "openrex", "torch.matmul", "RuntimeError", msg));
	/* another exception type, another message: not this limit */
	assert_null(ap_limit_match(&l, "openreg", "torch.matmul", "TypeError", msg));
	assert_null(ap_limit_match(&l, "openreg", "torch.matmul", "RuntimeError",
				   "Cannot send object of type <class 'bool'> over openreg device pipe."));
	assert_null(ap_limit_match(&l, "openreg", "torch.matmul", "RuntimeError", ""));
	assert_null(ap_limit_match(&l, "openreg", "torch.matmul", "RuntimeError", NULL));
	/* the device raised nothing (it computed a wrong value): never excused */
	assert_null(ap_limit_match(&l, "openreg", "torch.matmul", NULL, msg));

	/* a pattern of the target: only the targets it names */
	const char *sum = "aten::sum.dim_IntList is not implemented for npu";
	x = ap_limit_match(&l, "npu:0", "torch.nn.Linear", "NotImplementedError", sum);
	assert_non_null(x);
	assert_string_equal(x->where, "lim.ini:9");
	assert_null(ap_limit_match(&l, "npu:0", "torch.nn.GELU", "NotImplementedError", sum));
	assert_null(ap_limit_match(&l, "npu:0", "torch.sum", "NotImplementedError", sum));
	assert_null(ap_limit_match(&l, "npu:0", NULL, "NotImplementedError", sum));
	/* no limits at all */
	assert_null(ap_limit_match(NULL, "openreg", "torch.matmul", "RuntimeError", msg));
	ap_limits_free(&l);
	ap_buf_free(&err);
}

/* Each malformed file is refused with the file and line at fault. */
static void malformed_files_name_the_line(void **state)
{
	(void)state;
#define WHOLE "backend = b\nop = *\nwhat = w\nraises = E: m\n"
	static const char whole[] = WHOLE;
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "[a]\n" WHOLE, "lim.ini:1: [a] has no reason (every limit says why it is the backend's)" },
		{ "[a]\nbackend = b\nop = *\nwhat = w\nraises = E: m\nreason =\n",
		  "lim.ini:6: reason: empty (say why it is the backend's limit)" },
		{ "[a]\nop = *\nwhat = w\nraises = E: m\nreason = r\n", "lim.ini:1: [a] has no backend" },
		{ "[a]\nbackend = b\nwhat = w\nraises = E: m\nreason = r\n", "lim.ini:1: [a] has no op" },
		{ "[a]\nbackend = b\nop = *\nraises = E: m\nreason = r\n", "lim.ini:1: [a] has no what" },
		{ "[a]\nbackend = b\nop = *\nwhat = w\nreason = r\n", "lim.ini:1: [a] has no raises" },
		{ "[a]\nraises = RuntimeError\n", "lim.ini:2: raises: 'RuntimeError' is not TYPE: TEXT" },
		{ "[a]\nraises = RuntimeError:   \n", "lim.ini:2: raises: 'RuntimeError:' is not TYPE: TEXT" },
		{ "[a]\nraises = : text\n", "lim.ini:2: raises: ': text' is not TYPE: TEXT" },
		{ "[a]\nbackend = two words\n", "lim.ini:2: backend: 'two words' is not a name" },
		{ "[a]\nop =\n", "lim.ini:2: op: empty" },
		{ "[a]\ncolour = red\n", "lim.ini:2: unknown key 'colour'" },
		{ "[a]\nop = x\nop = y\n", "lim.ini:3: key 'op' given twice in [a]" },
		{ "op = x\n", "lim.ini:1: 'op' outside of any [limit]" },
		{ "[a\n", "lim.ini:1: not an INI line" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ap_limits l;
		struct ap_buf err = { 0 };
		parse(bad[i].text, &l, &err, -AP_ECONFIG);
		if (strncmp(ap_buf_str(&err), bad[i].want, strlen(bad[i].want)))
			fail_msg("case %zu: '%s', not '%s...'", i, ap_buf_str(&err), bad[i].want);
		assert_int_equal(l.n, 0);
		assert_null(l.v);
		ap_buf_free(&err);
	}
	/* two limits of one name */
	struct ap_limits l;
	struct ap_buf err = { 0 }, text = { 0 };
	ap_buf_addf(&text, "[a]\n%sreason = r\n[a]\n%sreason = s\n", whole, whole);
	parse(ap_buf_str(&text), &l, &err, -AP_ECONFIG);
	assert_string_equal(ap_buf_str(&err), "lim.ini:7: [a] is named as the limit at line 1");
	ap_buf_free(&err);
	ap_buf_free(&text);
}

static void a_directory_is_not_a_limits_file(void **state)
{
	(void)state;
	struct ap_limits l;
	struct ap_buf err = { 0 };
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/test-lim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(ap_limits_load(&l, dir, &err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&err), ap_strerror(-EISDIR)));
	assert_int_equal(l.n, 0);
	ap_buf_free(&err);
	assert_int_equal(rmdir(dir), 0);
}

/* The built-in file loads, and its limits are each as narrow as a limit
 * must be: a named backend, an exception type and text of its message. */
static void the_built_in_file_loads(void **state)
{
	(void)state;
	struct ap_limits l;
	struct ap_buf err = { 0 };
	if (ap_limits_load(&l, NULL, &err))
		fail_msg("%s", ap_buf_str(&err));
	assert_true(l.n >= 1);
	for (size_t i = 0; i < l.n; i++) {
		assert_true(strcmp(l.v[i].backend, "*") && strcmp(l.v[i].backend, "cpu"));
		assert_true(strlen(l.v[i].message) >= 16);
		assert_true(!strncmp(l.v[i].where, "specs/backend-limits.ini:", 25));
	}
	assert_non_null(ap_limit_match(&l, "openreg", "torch.nn.functional.gelu", "RuntimeError",
		"Cannot send object of type <class 'str'> over openreg device pipe."));
	ap_limits_free(&l);
	ap_buf_free(&err);
}

/* A check object for ap_limits_applied: status, and the limit that excused
 * it (NULL: none). */
static json_t *excused_check(const char *status, const char *limit)
{
	json_t *c = json_pack("{s:s, s:s, s:s}", "name", "s#0 openreg vs cpu", "kind", "numeric",
			      "status", status);
	if (limit)
		json_object_set_new(c, "limit", json_pack("{s:s, s:s, s:s, s:s, s:s}", "name",
							  limit, "backend", "openreg", "what",
							  "str arguments", "reason", "why",
							  "where", "x.py"));
	return c;
}

static void limits_applied_count_each_limits_notrun_samples_in_order(void **state)
{
	(void)state;
	json_t *checks = json_pack("[o, o, o, o, o]", excused_check("NOTRUN", "b-second"),
				   excused_check("NOTRUN", "a-first"), excused_check("FAIL", "a-first"),
				   excused_check("NOTRUN", "b-second"), excused_check("NOTRUN", NULL));
	struct ap_fact_check *v;
	struct ap_limit_applied *rows;
	size_t n, nrows;
	assert_int_equal(ap_checks_facts(checks, &v, &n), 0);
	assert_int_equal(ap_limits_applied(v, n, &rows, &nrows), 0);
	assert_int_equal(nrows, 2);
	assert_string_equal(rows[0].name, "b-second");
	assert_int_equal(rows[0].samples, 2);
	assert_string_equal(rows[1].name, "a-first");
	assert_int_equal(rows[1].samples, 1); /* the FAIL is not excused */
	assert_string_equal(rows[1].backend, "openreg");
	assert_string_equal(rows[1].what, "str arguments");
	free(rows);
	ap_checks_facts_free(v, n);
	json_decref(checks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(limits_match_backend_op_type_and_message),
		cmocka_unit_test(malformed_files_name_the_line),
		cmocka_unit_test(a_directory_is_not_a_limits_file),
		cmocka_unit_test(the_built_in_file_loads),
		cmocka_unit_test(limits_applied_count_each_limits_notrun_samples_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
