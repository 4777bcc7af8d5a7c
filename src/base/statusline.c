#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/statusline.h"
#include "base/text.h"

struct status_row {
	struct ap_buf text;
	double start, end; /* end 0: still running */
};

struct ap_statusline {
	pthread_mutex_t lock;
	const char *const *names;
	struct status_row *rows;
	size_t n;
	FILE *out;
	int live;
	int drawn;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Cursor codes only where a terminal takes them: not in a pipe or a file,
 * nor where the user asked for none (NO_COLOR, no-color.org; TERM=dumb). */
static int wants_live(FILE *out, int flags)
{
	const char *term = getenv("TERM"), *nc = getenv("NO_COLOR");
	return !(flags & AP_STATUS_PLAIN) && isatty(fileno(out)) && !(nc && *nc) &&
	       !(term && !strcmp(term, "dumb"));
}

struct ap_statusline *ap_statusline_new(const char *const *names, size_t n, FILE *out,
					int flags)
{
	struct ap_statusline *s = calloc(1, sizeof(*s));
	if (!s || !(s->rows = calloc(n ? n : 1, sizeof(*s->rows)))) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->names = names;
	s->n = n;
	s->out = out;
	s->live = wants_live(out, flags);
	double t = now_s();
	for (size_t i = 0; i < n; i++)
		s->rows[i].start = t;
	return s;
}

int ap_statusline_live(const struct ap_statusline *s)
{
	return s && s->live;
}

/* The terminal's width; 80 when it does not say. */
static size_t term_cols(FILE *out)
{
	struct winsize w;
	return !ioctl(fileno(out), TIOCGWINSZ, &w) && w.ws_col >= 20 ? w.ws_col : 80;
}

/* Row i as the terminal shows it: name, text, seconds; one byte short of
 * the width, so that no line wraps and the cursor-up count stays true. */
static void row_line(const struct ap_statusline *s, size_t i, size_t cols, double t,
		     struct ap_buf *line)
{
	const struct status_row *r = &s->rows[i];
	char secs[32];
	snprintf(secs, sizeof(secs), " %6.1fs", (r->end ? r->end : t) - r->start);
	ap_buf_addf(line, "%-10s %s", s->names[i], ap_buf_str(&r->text));
	size_t room = cols - 1 > strlen(secs) ? cols - 1 - strlen(secs) : 0;
	if (line->len > room) {
		line->len = ap_utf8_prefix(line->data, room);
		line->data[line->len] = '\0';
	}
	ap_buf_addf(line, "%*s%s", (int)(room - ap_utf8_width(ap_buf_str(line))), "", secs);
}

static void status_redraw(struct ap_statusline *s)
{
	struct ap_buf line = { 0 };
	size_t cols = term_cols(s->out);
	double t = now_s();
	if (s->drawn)
		fprintf(s->out, "\033[%zuA", s->n);
	for (size_t i = 0; i < s->n; i++) {
		ap_buf_reset(&line);
		row_line(s, i, cols, t, &line);
		fprintf(s->out, "\r\033[K%s\n", ap_buf_str(&line));
	}
	s->drawn = 1;
	fflush(s->out);
	ap_buf_free(&line);
}

static void status_vset(struct ap_statusline *s, size_t i, int last, const char *fmt, va_list ap)
{
	if (!s || i >= s->n)
		return;
	pthread_mutex_lock(&s->lock);
	struct ap_buf raw = { 0 };
	ap_buf_vaddf(&raw, fmt, ap);
	/* A probe's name or a worker's message can hold terminal escapes. */
	ap_buf_reset(&s->rows[i].text);
	ap_text_term(&s->rows[i].text, raw.data ? raw.data : "", raw.len, AP_TEXT_LINE);
	ap_buf_free(&raw);
	if (last)
		s->rows[i].end = now_s();
	if (s->live)
		status_redraw(s);
	else {
		fprintf(s->out, "%s: %s\n", s->names[i], ap_buf_str(&s->rows[i].text));
		fflush(s->out);
	}
	pthread_mutex_unlock(&s->lock);
}

void ap_statusline_set(struct ap_statusline *s, size_t i, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	status_vset(s, i, 0, fmt, ap);
	va_end(ap);
}

void ap_statusline_finish(struct ap_statusline *s, size_t i, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	status_vset(s, i, 1, fmt, ap);
	va_end(ap);
}

void ap_statusline_free(struct ap_statusline *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		ap_buf_free(&s->rows[i].text);
	free(s->rows);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
