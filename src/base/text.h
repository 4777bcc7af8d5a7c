/* text.h - strings from data, made safe to print on a terminal.
 *
 * Whatever an environment, a probe, a bundle or a file says may hold terminal
 * escapes (ESC [ 2 J clears the screen, OSC sequences retitle the window), C1
 * controls (U+009B is an 8-bit CSI), carriage returns that overwrite a line,
 * or bytes that are not UTF-8. ap_text_term() writes such a string so that
 * every byte a terminal would act on is visible instead: it can colour, move,
 * clear or hide nothing. The review layer has its own escapers for Markdown
 * and HTML (review/escape.h); this one is for the commands' own output.
 */
#ifndef AP_TEXT_H
#define AP_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "base/buf.h"

/* Flags of ap_text_term(). */
#define AP_TEXT_LINE 0   /* one line: '\n' and '\t' are escaped too */
#define AP_TEXT_BLOCK 1  /* a block of lines: '\n' and '\t' stay as they are */

/* The length of the well-formed UTF-8 sequence at s[0..n) (1 to 4; no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 if there is none. */
size_t ap_utf8_seq(const unsigned char *s, size_t n);

/* The length of s cut to at most max bytes, at the start of a UTF-8
 * character (never inside one). */
size_t ap_utf8_prefix(const char *s, size_t max);

/* Whether s holds a control byte (C0 or DEL): a value that would start
 * another line, or act on a terminal, where it is written. */
int ap_text_has_control(const char *s);

/* The characters of the UTF-8 string s (a continuation byte is not one):
 * its width on a terminal, wide characters aside. */
size_t ap_utf8_width(const char *s);

/* Appends s[0..n) to out with each control byte (C0, DEL), each C1 control
 * character and each byte that is not part of well-formed UTF-8 written as
 * the four characters \xNN (C1 controls as \u00NN). Everything else,
 * printable ASCII and well-formed UTF-8, is copied. 0 or -ENOMEM. */
int ap_text_term(struct ap_buf *out, const char *s, size_t n, int flags);

/* ap_text_term() of the NUL-terminated s (NULL reads as ""), as one line. */
int ap_text_line(struct ap_buf *out, const char *s);

/* Writes ap_text_term() of the NUL-terminated s to f. 0 or -ENOMEM. */
int ap_text_fputs(const char *s, int flags, FILE *f);

/* Whether s is a dotted Python name of at most max bytes: ASCII identifiers
 * (a letter or '_', then letters, digits, '_') joined by single dots, nothing
 * before the first or after the last. Such a name may be written into probe
 * code, paths and remote command lines as it is. */
int ap_dotted_name_ok(const char *s, size_t max);

/* Whether s is one word of a data file (an operator pattern, a device or
 * backend, an exception type): not empty, no space, no control byte. */
int ap_word_ok(const char *s);

#endif
