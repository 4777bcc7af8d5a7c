#include <ctype.h>
#include <string.h>

#include "base/text.h"
#include "review/escape.h"

/* What the byte at s[i] begins: a printable character of k bytes (k > 0), or
 * 0 for a control character or a byte that is not well-formed UTF-8, in which
 * case *k is how many bytes it covers. */
static int escape_printable(const unsigned char *s, size_t n, size_t *k)
{
	*k = ap_utf8_seq(s, n);
	if (*k == 0) {
		*k = 1;
		return 0;
	}
	if (*k == 1)
		return s[0] >= 0x20 && s[0] != 0x7F;
	if (*k == 2 && s[0] == 0xC2 && s[1] < 0xA0)
		return 0; /* C1 controls */
	/* U+FFFE and U+FFFF are not characters (and not allowed in XML) */
	return !(*k == 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] >= 0xBE);
}

/* A control byte or a bad byte in Markdown: visible, and never a line break. */
static void md_unprintable(const unsigned char *s, size_t k, struct ap_buf *out)
{
	if (k == 1 && s[0] == '\n')
		ap_buf_adds(out, "\\n");
	else if (k == 1)
		ap_buf_addf(out, "\\x%02x", s[0]);
	else if (k == 2 && s[0] == 0xC2)
		ap_buf_addf(out, "\\u%04x", s[1]); /* a C1 control */
	else
		ap_buf_adds(out, "\xEF\xBF\xBD"); /* U+FFFE, U+FFFF */
}

/* Whether s[i] ends a list marker: a blank or the end must follow it. */
static int md_marker_end(const char *s, size_t i)
{
	return s[i] == '\0' || s[i] == ' ' || s[i] == '\t';
}

/* The index of the '.' or ')' of an ordered list marker at the start of s
 * ("1. ", "12) "), or 0 if s starts with none. */
static size_t md_ordinal(const char *s)
{
	size_t d = strspn(s, "0123456789");
	return d && (s[d] == '.' || s[d] == ')') && md_marker_end(s, d + 1) ? d : 0;
}

/* Whether s starts like a bullet list item or a thematic break ("- x",
 * "+", "---"): what the value's first character would begin where it
 * opens a block, after a list marker of the template. ('=' of a setext
 * underline and '*', '_' of a break are escaped wherever they are.) */
static int md_bullet(const char *s)
{
	return (s[0] == '-' || s[0] == '+') && (md_marker_end(s, 1) || s[1] == s[0]);
}

static int alnum(const unsigned char *s, size_t i, size_t n)
{
	return i < n && isalnum(s[i]);
}

void ap_escape_md(const char *str, struct ap_buf *out)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s), k, ord = md_ordinal((const char *)s);
	for (size_t i = 0; i < n; i += k) {
		if (!escape_printable(s + i, n - i, &k)) {
			md_unprintable(s + i, k, out);
			continue;
		}
		int c = k == 1 ? s[i] : 0;
		if (c == '<' || c == '>' || c == '&')
			ap_buf_adds(out, c == '<' ? "&lt;" : c == '>' ? "&gt;" : "&amp;");
		else if (c && strchr("\\`*[]|~#!{}", c))
			ap_buf_addf(out, "\\%c", c);
		else if (c == '_' && !(i && alnum(s, i - 1, n) && alnum(s, i + 1, n)))
			ap_buf_adds(out, "\\_"); /* intraword '_' emphasises nothing */
		else if (i == 0 && c == ' ')
			ap_buf_adds(out, "&#32;"); /* no indented code, no blank start */
		else if (i == 0 && (c == '=' || md_bullet((const char *)s)))
			ap_buf_addf(out, "\\%c", c);
		else if (ord && i == ord)
			ap_buf_addf(out, "\\%c", c);
		else
			ap_buf_add(out, s + i, k);
	}
}

void ap_escape_md_code(const char *str, struct ap_buf *out)
{
	const char *s = str ? str : "";
	size_t run = 0, longest = 0, n = strlen(s), k;
	for (size_t i = 0; i < n; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	/* A space inside the fence lets the span start or end with a backquote. */
	int pad = n && (s[0] == '`' || s[n - 1] == '`');
	for (size_t i = 0; i <= longest; i++)
		ap_buf_adds(out, "`");
	ap_buf_adds(out, pad ? " " : "");
	for (size_t i = 0; i < n; i += k) {
		if (escape_printable((const unsigned char *)s + i, n - i, &k))
			ap_buf_add(out, s + i, k);
		else
			md_unprintable((const unsigned char *)s + i, k, out);
	}
	ap_buf_adds(out, pad ? " " : "");
	for (size_t i = 0; i <= longest; i++)
		ap_buf_adds(out, "`");
}

void ap_escape_xml(const char *str, struct ap_buf *out)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s), k;
	for (size_t i = 0; i < n; i += k) {
		int ok = escape_printable(s + i, n - i, &k);
		switch (ok && k == 1 ? s[i] : 0) {
		case '<': ap_buf_adds(out, "&lt;"); break;
		case '>': ap_buf_adds(out, "&gt;"); break;
		case '&': ap_buf_adds(out, "&amp;"); break;
		case '"': ap_buf_adds(out, "&quot;"); break;
		case '\'': ap_buf_adds(out, "&#39;"); break;
		default:
			/* XML 1.0 allows no control character but tab and newline
			 * (and CR, which a parser would turn into a newline). */
			if (ok || (k == 1 && (s[i] == '\n' || s[i] == '\t')))
				ap_buf_add(out, s + i, k);
			else
				ap_buf_adds(out, "&#xFFFD;");
		}
	}
}

void ap_escape_list(const char *const *v, size_t n, void (*esc)(const char *s, struct ap_buf *out),
		    const char *none, struct ap_buf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			ap_buf_adds(out, ", ");
		esc(v[i], out);
	}
	if (!n)
		ap_buf_adds(out, none);
}

void ap_escape_fill(const char *fmt, const char *s, void (*esc)(const char *s, struct ap_buf *out),
		    struct ap_buf *out)
{
	struct ap_buf e = { 0 };
	esc(s, &e);
	ap_buf_addf(out, fmt, ap_buf_str(&e));
	ap_buf_free(&e);
}
