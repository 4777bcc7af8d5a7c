#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

/* A buffer's first allocation, doubled as it grows: most strings apiparity
 * builds (a path, a line, a name) fit. */
#define AP_BUF_ROOM 64

static int buf_grow(struct ap_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : AP_BUF_ROOM;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int ap_buf_add(struct ap_buf *b, const void *data, size_t len)
{
	if (buf_grow(b, len))
		return -ENOMEM;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int ap_buf_adds(struct ap_buf *b, const char *s)
{
	return ap_buf_add(b, s, strlen(s));
}

int ap_buf_vaddf(struct ap_buf *b, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0 || buf_grow(b, (size_t)n)) {
		va_end(again);
		return n < 0 ? -EINVAL : -ENOMEM;
	}
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
	va_end(again);
	b->len += (size_t)n;
	return 0;
}

int ap_buf_addf(struct ap_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = ap_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

void ap_buf_consume(struct ap_buf *b, size_t n)
{
	if (n >= b->len) {
		ap_buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

void ap_buf_keep_tail(struct ap_buf *b, size_t max)
{
	if (b->len > max)
		ap_buf_consume(b, b->len - max);
}

const char *ap_buf_str(const struct ap_buf *b)
{
	return b->data ? b->data : "";
}

void ap_buf_reset(struct ap_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void ap_buf_free(struct ap_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
