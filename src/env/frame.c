#include <errno.h>
#include <stdint.h>

#include "base/err.h"
#include "base/text.h"
#include "env/frame.h"

static uint32_t frame_frame_len(const unsigned char *h)
{
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

int ap_frame_encode(struct ap_buf *out, const char *payload, size_t len)
{
	if (len > AP_FRAME_MAX)
		return -AP_ETOOBIG;
	unsigned char h[AP_FRAME_HEADER] = {
		(unsigned char)(len >> 24), (unsigned char)(len >> 16),
		(unsigned char)(len >> 8), (unsigned char)len,
	};
	size_t old = out->len;
	if (ap_buf_add(out, h, sizeof(h)) || ap_buf_add(out, payload, len)) {
		out->len = old;
		return -ENOMEM;
	}
	return 0;
}

int ap_frame_peek(const struct ap_buf *in, size_t max, const char **payload,
		  size_t *len, size_t *frame_len)
{
	if (in->len < AP_FRAME_HEADER)
		return 0;
	uint32_t n = frame_frame_len((const unsigned char *)in->data);
	if (n > max)
		return -AP_ETOOBIG;
	if (in->len - AP_FRAME_HEADER < n)
		return 0;
	*payload = in->data + AP_FRAME_HEADER;
	*len = n;
	*frame_len = AP_FRAME_HEADER + (size_t)n;
	return 1;
}

void ap_frame_truncation(const struct ap_buf *in, size_t *got, size_t *want)
{
	*got = in->len;
	*want = in->len < AP_FRAME_HEADER ? 0
		: AP_FRAME_HEADER + (size_t)frame_frame_len((const unsigned char *)in->data);
}

int ap_frame_json(const char *payload, size_t len, json_t **msg, struct ap_buf *why)
{
	json_error_t je;
	*msg = json_loadb(payload, len, 0, &je);
	if (*msg && json_is_object(*msg))
		return 0;
	if (*msg)
		ap_buf_addf(why, "a JSON %s, not an object", json_is_array(*msg) ? "array" : "value");
	else {
		ap_text_line(why, je.text); /* it may quote the payload */
		ap_buf_addf(why, " at byte %d", je.position);
	}
	json_decref(*msg);
	*msg = NULL;
	return -AP_EPROTO;
}
