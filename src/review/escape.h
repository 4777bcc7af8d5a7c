/* escape.h - one escaper per report format, for every string that comes from
 * data (labels, names, reasons, trace values, anything read from a bundle).
 *
 * The invariant: no value can change the structure of the document it lands
 * in. In Markdown a value can start no line, hence no block (heading, list,
 * quote, table row, code fence, HTML block), and holds no raw HTML, link or
 * emphasis; in HTML and XML it can open no tag and leave no attribute, and the
 * document stays well-formed. Bytes that are not well-formed UTF-8 and control
 * characters become U+FFFD (XML) or a visible \xNN, \u00NN (Markdown), so the
 * output is always valid UTF-8. NULL reads as "".
 */
#ifndef AP_ESCAPE_H
#define AP_ESCAPE_H

#include <stddef.h>

#include "base/buf.h"

/* Markdown inline text: on one line ('\n' shows as \n, other control bytes
 * as \xNN), Markdown punctuation backslash-escaped, '<', '>' and '&' as
 * entities, and a start that could open a block (a list marker, an ordered
 * list number, leading blanks) neutralised as well. */
void ap_escape_md(const char *s, struct ap_buf *out);

/* A Markdown code span holding s literally: fenced with more backquotes than
 * any run in s, control bytes and bad UTF-8 shown as in ap_escape_md(). */
void ap_escape_md_code(const char *s, struct ap_buf *out);

/* HTML and XML text and attribute values (double- or single-quoted). */
void ap_escape_xml(const char *s, struct ap_buf *out);

/* The n strings of v, each escaped by esc (one of the above), joined by
 * ", "; none (the caller's own words, not escaped) when n is 0. */
void ap_escape_list(const char *const *v, size_t n, void (*esc)(const char *s, struct ap_buf *out),
		    const char *none, struct ap_buf *out);

/* Appends fmt, a printf format whose one conversion is %s, with s escaped
 * by esc in its place. */
void ap_escape_fill(const char *fmt, const char *s, void (*esc)(const char *s, struct ap_buf *out),
		    struct ap_buf *out);

#endif
