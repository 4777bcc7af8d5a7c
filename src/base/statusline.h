/* statusline.h - one live status line per environment while work runs.
 *
 * On a terminal the lines are redrawn in place, each cut to the terminal's
 * width and ending in the seconds since its environment started, so the
 * screen holds one line per environment however much happens; otherwise
 * (a pipe, a log, NO_COLOR, TERM=dumb, or AP_STATUS_PLAIN: -v) each change
 * is one plain line ("trixie: probe 3/10 nested-contexts PASS"), which logs
 * read well. Safe to call from several threads.
 */
#ifndef AP_STATUSLINE_H
#define AP_STATUSLINE_H

#include <stddef.h>
#include <stdio.h>

struct ap_statusline;

/* Flags of ap_statusline_new(). */
#define AP_STATUS_PLAIN 1 /* plain lines even on a terminal (the transcript) */

/* n lines, headed by names (kept by reference). NULL when out of memory. */
struct ap_statusline *ap_statusline_new(const char *const *names, size_t n, FILE *out,
					int flags);

/* Whether s redraws in place (a terminal that takes cursor codes). */
int ap_statusline_live(const struct ap_statusline *s);

void ap_statusline_set(struct ap_statusline *s, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* As ap_statusline_set(), the line's last: its seconds stop there. */
void ap_statusline_finish(struct ap_statusline *s, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void ap_statusline_free(struct ap_statusline *s);

#endif
