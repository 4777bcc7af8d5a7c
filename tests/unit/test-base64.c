/* test-base64.c - unit tests for src/base/base64.h: strict decoding. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/base64.h"

static void decodes_every_padding_length(void **state)
{
	(void)state;
	static const struct { const char *in, *out; } v[] = {
		{ "", "" }, { "Zg==", "f" }, { "Zm8=", "fo" }, { "Zm9v", "foo" },
		{ "Zm9vYg==", "foob" }, { "Zm9vYmE=", "fooba" }, { "Zm9vYmFy", "foobar" },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct ap_buf b = { 0 };
		assert_int_equal(ap_base64_decode(v[i].in, strlen(v[i].in), 64, &b), 0);
		assert_int_equal(b.len, strlen(v[i].out));
		assert_memory_equal(ap_buf_str(&b), v[i].out, b.len);
		ap_buf_free(&b);
	}
}

static void keeps_nul_and_high_bytes(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_base64_decode("AP8A/w==", 8, 64, &b), 0);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.data, "\x00\xff\x00\xff", 4);
	ap_buf_free(&b);
}

static void refuses_what_is_not_canonical_base64(void **state)
{
	(void)state;
	static const char *const bad[] = { "Zg=", "Zg", "Z===", "=Zg=", "Zg==Zg==", "Zm9v\n",
					   "Zm-v", "Zh==", "Zm9=", "Zm\0v" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ap_buf b = { 0 };
		ap_buf_adds(&b, "kept");
		size_t n = i == 9 ? 4 : strlen(bad[i]);
		assert_int_equal(ap_base64_decode(bad[i], n, 64, &b), -EINVAL);
		assert_string_equal(ap_buf_str(&b), "kept");
		ap_buf_free(&b);
	}
}

static void refuses_more_than_the_limit(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	assert_int_equal(ap_base64_decode("Zm9vYmFy", 8, 5, &b), -EFBIG);
	assert_int_equal(b.len, 0);
	assert_int_equal(ap_base64_decode("Zm9vYmFy", 8, 6, &b), 0);
	/* padded: the limit is the decoded length, one or two bytes less */
	ap_buf_reset(&b);
	assert_int_equal(ap_base64_decode("Zm9vYg==", 8, 4, &b), 0);   /* "foob" */
	assert_int_equal(ap_base64_decode("Zm9vYg==", 8, 3, &b), -EFBIG);
	ap_buf_reset(&b);
	assert_int_equal(ap_base64_decode("Zm9vYmE=", 8, 5, &b), 0);   /* "fooba" */
	assert_int_equal(ap_base64_decode("Zm9vYmE=", 8, 4, &b), -EFBIG);
	ap_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_every_padding_length),
		cmocka_unit_test(keeps_nul_and_high_bytes),
		cmocka_unit_test(refuses_what_is_not_canonical_base64),
		cmocka_unit_test(refuses_more_than_the_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
