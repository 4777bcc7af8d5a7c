#include <errno.h>
#include <string.h>

#include "base/text.h"

size_t ap_utf8_seq(const unsigned char *s, size_t n)
{
	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	/* The well-formed sequences of Unicode's Table 3-7: the second byte's
	 * range depends on the first, which rules out overlong forms,
	 * surrogates and code points above U+10FFFF. */
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		lo = s[0] == 0xE0 ? 0xA0 : 0x80;
		hi = s[0] == 0xED ? 0x9F : 0xBF;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		lo = s[0] == 0xF0 ? 0x90 : 0x80;
		hi = s[0] == 0xF4 ? 0x8F : 0xBF;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

int ap_text_term(struct ap_buf *out, const char *s, size_t n, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	int r = 0;
	for (size_t i = 0; !r && i < n;) {
		size_t k = ap_utf8_seq(p + i, n - i);
		int keep = (flags & AP_TEXT_BLOCK) && (p[i] == '\n' || p[i] == '\t');
		if (k == 1 && (keep || (p[i] >= 0x20 && p[i] != 0x7F)))
			r = ap_buf_add(out, p + i, 1);
		else if (k == 1 || k == 0)
			r = ap_buf_addf(out, "\\x%02x", p[i]);
		else if (k == 2 && p[i] == 0xC2 && p[i + 1] < 0xA0)
			r = ap_buf_addf(out, "\\u%04x", p[i + 1]); /* C1: U+0080..U+009F */
		else
			r = ap_buf_add(out, p + i, k);
		i += k ? k : 1;
	}
	return r;
}

int ap_text_line(struct ap_buf *out, const char *s)
{
	return s ? ap_text_term(out, s, strlen(s), AP_TEXT_LINE) : 0;
}

int ap_text_fputs(const char *s, int flags, FILE *f)
{
	struct ap_buf b = { 0 };
	int r = s ? ap_text_term(&b, s, strlen(s), flags) : 0;
	fputs(ap_buf_str(&b), f);
	ap_buf_free(&b);
	return r;
}

int ap_dotted_name_ok(const char *s, size_t max)
{
	int start = 1;
	if (!*s || strlen(s) > max)
		return 0;
	for (const char *p = s; *p; p++) {
		int alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';
		int digit = *p >= '0' && *p <= '9';
		if (*p == '.' && !start && p[1])
			start = 1;
		else if (alpha || (digit && !start))
			start = 0;
		else
			return 0;
	}
	return 1;
}

int ap_word_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

size_t ap_utf8_prefix(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	while (n && s[n] && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

size_t ap_utf8_width(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

int ap_text_has_control(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}
