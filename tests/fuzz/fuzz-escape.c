/* fuzz-escape - the escapers of every output format on arbitrary bytes, with
 * their contracts checked on each output: Markdown stays on one line and holds
 * no markup, XML opens no tag, terminal text holds no control byte, and all of
 * them are well-formed UTF-8. A broken contract aborts (a finding). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "review/escape.h"

static void utf8_or_abort(const struct ap_buf *b)
{
	const unsigned char *s = (const unsigned char *)ap_buf_str(b);
	for (size_t i = 0, k; i < b->len; i += k)
		if (!(k = ap_utf8_seq(s + i, b->len - i)))
			abort();
}

/* Whether s, where a block can start (after "- " of a list item), would
 * open one: a heading, quote, list item, fence, HTML block, table row, break. */
static int starts_block(const char *s)
{
	size_t d = strspn(s, "0123456789");
	if (d && (s[d] == '.' || s[d] == ')') && (s[d + 1] == ' ' || !s[d + 1]))
		return 1;
	if (s[0] && strchr("-+*_", s[0]) && (s[1] == ' ' || !s[1] || s[1] == s[0]))
		return 1;
	return s[0] && strchr("#>`~<|= \t", s[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	struct ap_buf md = { 0 }, code = { 0 }, xml = { 0 }, term = { 0 };
	ap_escape_md(s, &md);
	ap_escape_md_code(s, &code);
	ap_escape_xml(s, &xml);
	ap_text_term(&term, s, size, AP_TEXT_LINE);
	if (strpbrk(ap_buf_str(&md), "\n\r<>") || strpbrk(ap_buf_str(&code), "\n\r") ||
	    strpbrk(ap_buf_str(&xml), "<>\"\r"))
		abort();
	if (starts_block(ap_buf_str(&md)))
		abort();
	for (size_t i = 0; i < term.len; i++)
		if ((unsigned char)term.data[i] < 0x20 || term.data[i] == 0x7f)
			abort();
	utf8_or_abort(&md);
	utf8_or_abort(&code);
	utf8_or_abort(&xml);
	utf8_or_abort(&term);
	ap_buf_free(&md);
	ap_buf_free(&code);
	ap_buf_free(&xml);
	ap_buf_free(&term);
	free(s);
	return 0;
}
