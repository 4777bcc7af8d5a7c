/* buf.h - a growable byte buffer, always NUL-terminated (git's strbuf, small).
 *
 * A zeroed struct ap_buf is a valid empty buffer. Functions that grow the buffer
 * return 0 or -ENOMEM and leave the buffer as it was on failure.
 */
#ifndef AP_BUF_H
#define AP_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct ap_buf {
	char *data; /* NULL while empty and never grown */
	size_t len;
	size_t cap;
};

int ap_buf_add(struct ap_buf *b, const void *data, size_t len);
int ap_buf_adds(struct ap_buf *b, const char *s);
int ap_buf_addf(struct ap_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int ap_buf_vaddf(struct ap_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Drops the first n bytes (n <= len). */
void ap_buf_consume(struct ap_buf *b, size_t n);

/* Keeps only the last max bytes; for bounded logs of a child's stderr. */
void ap_buf_keep_tail(struct ap_buf *b, size_t max);

/* The contents as a string: "" when empty, never NULL. Owned by b. */
const char *ap_buf_str(const struct ap_buf *b);

void ap_buf_reset(struct ap_buf *b);
void ap_buf_free(struct ap_buf *b);

#endif
