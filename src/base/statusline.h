/* statusline.h - one live status line per environment while work runs.
 *
 * On a terminal the lines are redrawn in place; otherwise each change is one
 * plain line ("trixie: probe nested-contexts PASS"), which logs read well.
 * Safe to call from several threads.
 */
#ifndef AP_STATUSLINE_H
#define AP_STATUSLINE_H

#include <stddef.h>
#include <stdio.h>

struct ap_statusline;

/* n lines, headed by names (kept by reference). NULL when out of memory. */
struct ap_statusline *ap_statusline_new(const char *const *names, size_t n, FILE *out);

void ap_statusline_set(struct ap_statusline *s, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void ap_statusline_free(struct ap_statusline *s);

#endif
