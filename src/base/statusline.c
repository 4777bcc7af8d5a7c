#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/statusline.h"
#include "base/text.h"

struct ap_statusline {
	pthread_mutex_t lock;
	const char *const *names;
	struct ap_buf *lines;
	size_t n;
	FILE *out;
	int tty;
	int drawn;
};

struct ap_statusline *ap_statusline_new(const char *const *names, size_t n, FILE *out)
{
	struct ap_statusline *s = calloc(1, sizeof(*s));
	if (!s || !(s->lines = calloc(n ? n : 1, sizeof(*s->lines)))) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->names = names;
	s->n = n;
	s->out = out;
	s->tty = isatty(fileno(out));
	return s;
}

static void status_redraw(struct ap_statusline *s)
{
	if (s->drawn)
		fprintf(s->out, "\033[%zuA", s->n);
	for (size_t i = 0; i < s->n; i++)
		fprintf(s->out, "\r\033[K%-10s %.100s\n", s->names[i], ap_buf_str(&s->lines[i]));
	s->drawn = 1;
	fflush(s->out);
}

void ap_statusline_set(struct ap_statusline *s, size_t i, const char *fmt, ...)
{
	va_list ap;
	if (!s || i >= s->n)
		return;
	pthread_mutex_lock(&s->lock);
	struct ap_buf raw = { 0 };
	va_start(ap, fmt);
	ap_buf_vaddf(&raw, fmt, ap);
	va_end(ap);
	/* A probe's name or a worker's message can hold terminal escapes. */
	ap_buf_reset(&s->lines[i]);
	ap_text_term(&s->lines[i], raw.data ? raw.data : "", raw.len, AP_TEXT_LINE);
	ap_buf_free(&raw);
	if (s->tty)
		status_redraw(s);
	else {
		fprintf(s->out, "%s: %s\n", s->names[i], ap_buf_str(&s->lines[i]));
		fflush(s->out);
	}
	pthread_mutex_unlock(&s->lock);
}

void ap_statusline_free(struct ap_statusline *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		ap_buf_free(&s->lines[i]);
	free(s->lines);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
