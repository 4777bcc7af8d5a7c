/* test-frame.c - unit tests for src/frame.h: length-prefixed frames of the
 * worker protocol, and how a reader tells complete from partial and oversized. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "env/frame.h"

static const char payload[] = "{\"op\":\"fingerprint\"}";
#define PAYLOAD_LEN (sizeof(payload) - 1)

static void encode_writes_a_big_endian_length_then_the_payload(void **state)
{
	(void)state;
	struct ap_buf out = { 0 };
	char body[258];
	memset(body, 'x', sizeof(body));
	assert_int_equal(ap_frame_encode(&out, body, sizeof(body)), 0);
	assert_int_equal(out.len, AP_FRAME_HEADER + sizeof(body));
	assert_memory_equal(out.data, "\x00\x00\x01\x02", 4);
	assert_memory_equal(out.data + 4, body, sizeof(body));
	ap_buf_free(&out);
}

static void encoded_frame_peeks_back_to_the_same_payload(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	const char *p = NULL;
	size_t len = 0, frame_len = 0;
	assert_int_equal(ap_frame_encode(&b, payload, PAYLOAD_LEN), 0);
	assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), 1);
	assert_int_equal(len, PAYLOAD_LEN);
	assert_int_equal(frame_len, AP_FRAME_HEADER + PAYLOAD_LEN);
	assert_ptr_equal(p, b.data + AP_FRAME_HEADER);
	assert_memory_equal(p, payload, PAYLOAD_LEN);
	ap_buf_free(&b);
}

static void empty_payload_round_trips_as_a_header_only_frame(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	const char *p = NULL;
	size_t len = 99, frame_len = 0;
	assert_int_equal(ap_frame_encode(&b, "", 0), 0);
	assert_int_equal(b.len, AP_FRAME_HEADER);
	assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), 1);
	assert_int_equal(len, 0);
	assert_int_equal(frame_len, AP_FRAME_HEADER);
	ap_buf_free(&b);
}

static void encode_appends_after_bytes_already_in_the_buffer(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	ap_buf_adds(&b, "old");
	assert_int_equal(ap_frame_encode(&b, "hi", 2), 0);
	assert_int_equal(b.len, 3 + AP_FRAME_HEADER + 2);
	assert_memory_equal(b.data, "old\x00\x00\x00\x02hi", 9);
	ap_buf_free(&b);
}

static void peek_on_a_partial_header_needs_more_bytes(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	const char *p = NULL;
	size_t len = 0, frame_len = 0;
	assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), 0);
	for (size_t n = 1; n < AP_FRAME_HEADER; n++) {
		ap_buf_reset(&b);
		ap_buf_add(&b, "\x00\x00\x00\x00", n);
		assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), 0);
	}
	assert_null(p);
	ap_buf_free(&b);
}

static void peek_on_a_partial_body_needs_more_bytes(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	const char *p = NULL;
	size_t len = 0, frame_len = 0;
	ap_frame_encode(&b, payload, PAYLOAD_LEN);
	b.len--;
	assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), 0);
	assert_null(p);
	ap_buf_free(&b);
}

static void frame_fed_one_byte_at_a_time_completes_only_at_its_last_byte(void **state)
{
	(void)state;
	struct ap_buf frame = { 0 }, in = { 0 };
	const char *p = NULL;
	size_t len = 0, frame_len = 0;
	ap_frame_encode(&frame, payload, PAYLOAD_LEN);
	for (size_t i = 0; i < frame.len; i++) {
		ap_buf_add(&in, frame.data + i, 1);
		int r = ap_frame_peek(&in, AP_FRAME_MAX, &p, &len, &frame_len);
		if (i + 1 < frame.len) {
			assert_int_equal(r, 0);
			continue;
		}
		assert_int_equal(r, 1);
		assert_int_equal(len, PAYLOAD_LEN);
		assert_int_equal(frame_len, frame.len);
		assert_memory_equal(p, payload, PAYLOAD_LEN);
	}
	ap_buf_free(&frame);
	ap_buf_free(&in);
}

static void two_frames_back_to_back_peek_in_order(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	const char *p = NULL;
	size_t len = 0, frame_len = 0;
	ap_frame_encode(&b, "first", 5);
	ap_frame_encode(&b, "second!", 7);
	assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), 1);
	assert_int_equal(len, 5);
	assert_memory_equal(p, "first", 5);
	assert_int_equal(frame_len, AP_FRAME_HEADER + 5);
	ap_buf_consume(&b, frame_len);
	assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), 1);
	assert_int_equal(len, 7);
	assert_memory_equal(p, "second!", 7);
	ap_buf_consume(&b, frame_len);
	assert_int_equal(b.len, 0);
	assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), 0);
	ap_buf_free(&b);
}

static void header_announcing_more_than_max_is_too_big_without_the_body(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	const char *p = NULL;
	size_t len = 0, frame_len = 0;
	ap_buf_add(&b, "\xff\xff\xff\xff", 4);
	assert_int_equal(ap_frame_peek(&b, AP_FRAME_MAX, &p, &len, &frame_len), -AP_ETOOBIG);
	ap_buf_reset(&b);
	ap_buf_add(&b, "\x00\x00\x01\x01", 4); /* 257 */
	assert_int_equal(ap_frame_peek(&b, 256, &p, &len, &frame_len), -AP_ETOOBIG);
	assert_null(p);
	ap_buf_free(&b);
}

static void frame_of_exactly_max_bytes_is_accepted(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	const char *p = NULL;
	size_t len = 0, frame_len = 0;
	ap_frame_encode(&b, "12345678", 8);
	assert_int_equal(ap_frame_peek(&b, 8, &p, &len, &frame_len), 1);
	assert_int_equal(len, 8);
	assert_int_equal(ap_frame_peek(&b, 7, &p, &len, &frame_len), -AP_ETOOBIG);
	ap_buf_free(&b);
}

static void truncation_of_a_cut_body_reports_bytes_got_and_announced(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	size_t got = 0, want = 0;
	ap_frame_encode(&b, payload, PAYLOAD_LEN);
	b.len = AP_FRAME_HEADER + 3;
	ap_frame_truncation(&b, &got, &want);
	assert_int_equal(got, AP_FRAME_HEADER + 3);
	assert_int_equal(want, AP_FRAME_HEADER + PAYLOAD_LEN);
	ap_buf_free(&b);
}

static void truncation_of_a_cut_header_reports_want_zero(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	size_t got = 0, want = 99;
	ap_buf_add(&b, "\x00\x00", 2);
	ap_frame_truncation(&b, &got, &want);
	assert_int_equal(got, 2);
	assert_int_equal(want, 0);
	ap_buf_free(&b);
}

static void encode_refuses_a_payload_over_the_frame_max_and_leaves_out_unchanged(void **state)
{
	(void)state;
	struct ap_buf b = { 0 };
	char small[1] = { 'x' };
	ap_buf_adds(&b, "keep");
	/* Refusal must come before any read of the payload: small is 1 byte. */
	assert_int_equal(ap_frame_encode(&b, small, (size_t)AP_FRAME_MAX + 1), -AP_ETOOBIG);
	assert_int_equal(b.len, 4);
	assert_string_equal(ap_buf_str(&b), "keep");
	ap_buf_free(&b);
}

static void json_payload_of_an_object_parses(void **state)
{
	(void)state;
	struct ap_buf why = { 0 };
	json_t *msg = NULL;
	static const char p[] = "{\"ok\":true,\"data\":{\"value\":{\"$bytes\":\"AA==\"}}}";
	assert_int_equal(ap_frame_json(p, sizeof(p) - 1, &msg, &why), 0);
	assert_true(json_is_object(msg));
	assert_int_equal(why.len, 0);
	json_decref(msg);
}

static void json_payload_with_a_nul_a_nan_or_bad_utf8_is_unreadable_with_a_reason(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"reason\":\"a\\u0000b\"}", "{\"v\":NaN}", "{\"v\":\"\xff\"}", "{\"v\":\"\\udc80\"}",
		"{\"v\":1", "[1]", "\"x\x1b[2J\"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ap_buf why = { 0 };
		json_t *msg = (json_t *)1;
		assert_int_equal(ap_frame_json(bad[i], strlen(bad[i]), &msg, &why), -AP_EPROTO);
		assert_null(msg);
		assert_true(why.len > 0);
		assert_null(strchr(ap_buf_str(&why), 0x1b)); /* the reason quotes no escape */
		ap_buf_free(&why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encode_writes_a_big_endian_length_then_the_payload),
		cmocka_unit_test(encoded_frame_peeks_back_to_the_same_payload),
		cmocka_unit_test(empty_payload_round_trips_as_a_header_only_frame),
		cmocka_unit_test(encode_appends_after_bytes_already_in_the_buffer),
		cmocka_unit_test(peek_on_a_partial_header_needs_more_bytes),
		cmocka_unit_test(peek_on_a_partial_body_needs_more_bytes),
		cmocka_unit_test(frame_fed_one_byte_at_a_time_completes_only_at_its_last_byte),
		cmocka_unit_test(two_frames_back_to_back_peek_in_order),
		cmocka_unit_test(header_announcing_more_than_max_is_too_big_without_the_body),
		cmocka_unit_test(frame_of_exactly_max_bytes_is_accepted),
		cmocka_unit_test(truncation_of_a_cut_body_reports_bytes_got_and_announced),
		cmocka_unit_test(truncation_of_a_cut_header_reports_want_zero),
		cmocka_unit_test(encode_refuses_a_payload_over_the_frame_max_and_leaves_out_unchanged),
		cmocka_unit_test(json_payload_of_an_object_parses),
		cmocka_unit_test(json_payload_with_a_nul_a_nan_or_bad_utf8_is_unreadable_with_a_reason),
	};
	return cmocka_run_group_tests_name("frame", tests, NULL, NULL);
}
