#include <errno.h>
#include <stdint.h>

#include "base/base64.h"

/* The value of c in the alphabet, or -1. */
static int sextet(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* The number of '=' that end the quad q (0 to 2), or -1 if padding is
 * misplaced in it. */
static int quad_pad(const char *q)
{
	if (q[0] == '=' || q[1] == '=')
		return -1;
	if (q[2] == '=')
		return q[3] == '=' ? 2 : -1;
	return q[3] == '=';
}

int ap_base64_decode(const char *s, size_t len, size_t max, struct ap_buf *out)
{
	if (len % 4)
		return -EINVAL;
	size_t n = len / 4 * 3;
	if (len && s[len - 1] == '=')
		n -= s[len - 2] == '=' ? 2 : 1;
	if (n > max)
		return -EFBIG;
	size_t start = out->len;
	for (size_t i = 0; i < len; i += 4) {
		int pad = quad_pad(s + i);
		if (pad < 0 || (pad && i + 4 != len))
			goto bad;
		uint32_t v = 0;
		for (int k = 0; k < 4 - pad; k++) {
			int x = sextet((unsigned char)s[i + k]);
			if (x < 0)
				goto bad;
			v |= (uint32_t)x << (18 - 6 * k);
		}
		/* Canonical: the bits padding leaves over must be zero. */
		if ((pad == 2 && (v & 0xffff)) || (pad == 1 && (v & 0xff)))
			goto bad;
		unsigned char b[3] = { (unsigned char)(v >> 16), (unsigned char)(v >> 8),
				       (unsigned char)v };
		if (ap_buf_add(out, b, (size_t)(3 - pad))) {
			out->len = start;
			return -ENOMEM;
		}
	}
	return 0;
bad:
	out->len = start;
	if (out->data)
		out->data[start] = '\0';
	return -EINVAL;
}
