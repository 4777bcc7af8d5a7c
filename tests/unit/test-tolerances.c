/* test-tolerances.c - unit tests for src/check/tolerances.h: overrides of
 * assert_close's default tolerances, looked up by op, dtype and device type,
 * each with the file, line and reason it comes from; malformed files refused
 * with file:line. */
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

#include "check/tolerances.h"
#include "base/err.h"

static const char good[] =
	"; a comment\n"
	"[gelu-bf16-openreg]\n"                    /* line 2 */
	"op = torch.nn.functional.gelu\n"
	"dtype = bfloat16\n"
	"device = openreg\n"
	"rtol = 2e-2\n"
	"atol = 1e-4\n"
	"reason = openreg computes gelu in float32 then rounds\n"
	"\n"
	"[any-op-bf16]\n"                          /* line 10 */
	"op = *\n"
	"dtype = torch.bfloat16\n"
	"device = *\n"
	"rtol = 0.03\n"
	"reason = a looser bfloat16 everywhere\n"
	"[matmul-f32-any-device]\n"                /* line 16 */
	"op = torch.matmul\n"
	"dtype = *\n"
	"device = *\n"
	"atol = 1e-3\n"
	"equal_nan = no\n"
	"reason = blocked accumulation order\n"
	"[any-xpu]\n"                             /* line 23 */
	"op = *\n"
	"dtype = *\n"
	"device = xpu\n"
	"rtol = 0.05\n"
	"reason = a looser xpu for every op\n";

static void parse(const char *text, struct ap_tolerances *t, struct ap_buf *err, int want)
{
	int r = ap_tolerances_parse(t, text, strlen(text), "tol.ini", err);
	if (r != want)
		fail_msg("parse returned %d, not %d: %s", r, want, ap_buf_str(err));
}

static void overrides_are_found_with_their_reason(void **state)
{
	(void)state;
	struct ap_tolerances t;
	struct ap_buf err = { 0 };
	const char *where;
	parse(good, &t, &err, 0);
	assert_int_equal(t.n, 4);

	struct ap_tolerance tol = ap_tolerance_for(&t, "torch.nn.functional.gelu",
						   AP_DT_BFLOAT16, "openreg:0", &where);
	assert_true(tol.rtol == 2e-2 && tol.atol == 1e-4 && tol.equal_nan);
	assert_string_equal(where, "tol.ini:2: openreg computes gelu in float32 then rounds");

	/* the same op on CPU: the wildcard bfloat16 override, atol its default */
	tol = ap_tolerance_for(&t, "torch.nn.functional.gelu", AP_DT_BFLOAT16, "cpu", &where);
	assert_true(tol.rtol == 0.03 && tol.atol == 1e-5);
	assert_string_equal(where, "tol.ini:10: a looser bfloat16 everywhere");

	/* a named op beats a named dtype */
	tol = ap_tolerance_for(&t, "torch.matmul", AP_DT_BFLOAT16, "cpu", &where);
	assert_true(tol.atol == 1e-3 && tol.rtol == 1.6e-2 && !tol.equal_nan);
	assert_string_equal(where, "tol.ini:16: blocked accumulation order");

	/* a named dtype beats a named device, which beats nothing named */
	tol = ap_tolerance_for(&t, "torch.add", AP_DT_BFLOAT16, "xpu:0", &where);
	assert_true(tol.rtol == 0.03);
	assert_string_equal(where, "tol.ini:10: a looser bfloat16 everywhere");
	tol = ap_tolerance_for(&t, "torch.add", AP_DT_FLOAT32, "xpu:0", &where);
	assert_true(tol.rtol == 0.05 && tol.atol == 1e-5);
	assert_string_equal(where, "tol.ini:23: a looser xpu for every op");
	/* and a named op beats a named device */
	tol = ap_tolerance_for(&t, "torch.matmul", AP_DT_FLOAT32, "xpu", &where);
	assert_string_equal(where, "tol.ini:16: blocked accumulation order");

	/* nothing matches: assert_close's default */
	tol = ap_tolerance_for(&t, "torch.add", AP_DT_FLOAT32, "openreg", &where);
	assert_true(tol.rtol == 1.3e-6 && tol.atol == 1e-5 && tol.equal_nan);
	assert_string_equal(where, "default");
	/* "openreg" does not match a device type that only starts with it */
	tol = ap_tolerance_for(&t, "torch.nn.functional.gelu", AP_DT_FLOAT16, "openregx",
			       &where);
	assert_string_equal(where, "default");
	tol = ap_tolerance_for(NULL, "torch.matmul", AP_DT_FLOAT64, "cpu", &where);
	assert_true(tol.rtol == 1e-7);
	assert_string_equal(where, "default");
	ap_tolerances_free(&t);
	ap_buf_free(&err);
}

/* Each malformed file is refused with the file and line at fault. */
static void malformed_files_name_the_line(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "[a]\nop = x\ndtype = float32\ndevice = *\nrtol = 1\n",
		  "tol.ini:1: [a] has no reason (every override says why)" },
		{ "[a]\nop = x\ndtype = float32\ndevice = *\nrtol = 1\nreason =\n",
		  "tol.ini:6: reason: empty" },
		{ "[a]\nop = x\ndtype = float32\ndevice = *\nrtol = 1e-3x\n",
		  "tol.ini:5: rtol: '1e-3x' is not a number >= 0" },
		{ "[a]\natol = -1\n", "tol.ini:2: atol: '-1' is not a number >= 0" },
		{ "[a]\natol = nan\n", "tol.ini:2: atol: 'nan' is not a number >= 0" },
		{ "[a]\natol = inf\n", "tol.ini:2: atol: 'inf' is not a number >= 0" },
		{ "[a]\nrtol =\n", "tol.ini:2: rtol: '' is not a number >= 0" },
		{ "[a]\ndtype = float8\n", "tol.ini:2: dtype: unknown dtype 'float8'" },
		{ "[a]\ncolour = red\n", "tol.ini:2: unknown key 'colour'" },
		{ "[a]\nop = x\nop = y\n", "tol.ini:3: key 'op' given twice in [a]" },
		{ "op = x\n", "tol.ini:1: 'op' outside of any [override]" },
		{ "[a]\nequal_nan = maybe\n", "tol.ini:2: equal_nan: must be yes or no" },
		{ "[a]\nop = x\ndtype = *\ndevice = cpu\nreason = r\n",
		  "tol.ini:1: [a] sets neither rtol nor atol" },
		{ "[a]\nop = x\ndtype = float32\nreason = r\natol = 1\n",
		  "tol.ini:1: [a] has no device" },
		{ "[a]\nop = x\ndtype = *\ndevice = cpu\natol = 1\nreason = r\n"
		  "[b]\nop = x\ndtype = *\ndevice = cpu\natol = 2\nreason = s\n",
		  "tol.ini:7: [b] overrides the same op, dtype and device as [a] (line 1)" },
		{ "[a]\nop = x\ndtype = float32\ndevice = cpu\natol = 1\nreason = r\n"
		  "[b]\nop = x\ndtype = float32\ndevice = cpu\natol = 2\nreason = s\n",
		  "tol.ini:7: [b] overrides the same op, dtype and device as [a] (line 1)" },
		{ "[a\n", "tol.ini:1: not an INI line" },
		{ "[a]\nop = two words\n", "tol.ini:2: op: 'two words' is not a name" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ap_tolerances t;
		struct ap_buf err = { 0 };
		parse(bad[i].text, &t, &err, -AP_ECONFIG);
		if (strncmp(ap_buf_str(&err), bad[i].want, strlen(bad[i].want)))
			fail_msg("case %zu: '%s', not '%s...'", i, ap_buf_str(&err), bad[i].want);
		assert_int_equal(t.n, 0);
		assert_null(t.v);
		ap_buf_free(&err);
	}
}

static void a_directory_is_not_a_tolerances_file(void **state)
{
	(void)state;
	struct ap_tolerances t;
	struct ap_buf err = { 0 };
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/test-tol-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(ap_tolerances_load(&t, dir, &err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&err), dir));
	assert_non_null(strstr(ap_buf_str(&err), ap_strerror(-EISDIR)));
	ap_buf_reset(&err);

	char path[4200];
	snprintf(path, sizeof(path), "%s/t.ini", dir);
	assert_int_equal(ap_tolerances_load(&t, path, &err), -AP_ECONFIG); /* missing */
	ap_buf_reset(&err);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(good, f);
	fclose(f);
	assert_int_equal(ap_tolerances_load(&t, path, &err), 0);
	const char *where;
	ap_tolerance_for(&t, "torch.matmul", AP_DT_FLOAT32, "cuda", &where);
	assert_true(!strncmp(where, path, strlen(path)) && !strcmp(where + strlen(path),
		    ":16: blocked accumulation order"));
	ap_tolerances_free(&t);
	unlink(path);
	rmdir(dir);
	ap_buf_free(&err);
}

static void the_built_in_file_loads(void **state)
{
	(void)state;
	struct ap_tolerances t;
	struct ap_buf err = { 0 };
	if (ap_tolerances_load(&t, NULL, &err))
		fail_msg("%s", ap_buf_str(&err));
	const char *where;
	struct ap_tolerance tol = ap_tolerance_for(&t, "torch.add", AP_DT_FLOAT32, "cpu", &where);
	assert_true(tol.rtol == 1.3e-6);
	ap_tolerances_free(&t);
	ap_buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(overrides_are_found_with_their_reason),
		cmocka_unit_test(malformed_files_name_the_line),
		cmocka_unit_test(a_directory_is_not_a_tolerances_file),
		cmocka_unit_test(the_built_in_file_loads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
