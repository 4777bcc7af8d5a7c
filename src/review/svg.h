/* svg.h - the pictures of a report, as SVG: an evidence card per environment
 * (what a terminal screenshot would show) and the check matrix; and the
 * palette that gives each status and verdict its class and colours.
 *
 * Both pictures are drawn from the report model alone (report.h), and every
 * string from data in them is escaped (ap_escape_xml), so an SVG is a
 * well-formed document whatever a bundle holds. report.html shows them inline;
 * png.h renders the same SVG to PNG. The palette is the one place that maps a
 * status to a colour: the page's stylesheet is generated from it, so the page
 * and the pictures agree. A status or verdict the palette does not know gets a
 * neutral grey, and "unverified" is never green.
 */
#ifndef AP_SVG_H
#define AP_SVG_H

#include <stddef.h>

#include "base/buf.h"
#include "base/outcome.h"
#include "review/report.h"
#include "review/words.h"

struct ap_style {
	const char *cls;   /* its CSS class ("st-pass", "v-unverified") */
	const char *fill;  /* background, #rrggbb */
	const char *ink;   /* text on that background, #rrggbb */
};

/* The style of a check status; an unknown status gets its own neutral
 * style. Never NULL. */
const struct ap_style *ap_status_style(enum ap_status s);

/* The style of a matrix cell: its status's, or a neutral one of its own
 * where the environment has no such check. Never NULL. */
const struct ap_style *ap_cell_style(const struct ap_report_cell *c);

/* The style of an environment's or the report's verdict. Never NULL. */
const struct ap_style *ap_verdict_style(enum ap_verdict v);

/* Every style of the palette: the statuses in enum ap_status order (so
 * style i is status i's, i < AP_STATUS_COUNT), their fallbacks, then the
 * verdicts; *n is their count. */
const struct ap_style *ap_palette(size_t *n);

/* The lines of an evidence card. */
#define AP_CARD_LINES 7

/* The lines of environment env's evidence card, in order: the command, the
 * versions, the OS, the devices, the probe counts and exit code, the verdict,
 * the run log's sha256; appended to lines[0..AP_CARD_LINES) (unescaped
 * text, UTF-8). */
void ap_card_lines(const struct ap_report *r, const struct ap_report_env *env,
		   struct ap_buf lines[AP_CARD_LINES]);

/* Environment env's evidence card: a standalone SVG document (also valid
 * inline in HTML). Its verdict is drawn as rectangles of class "verdict" in
 * the verdict's fill colour, so the colour can be checked in a rendering. */
void ap_svg_card(const struct ap_report *r, const struct ap_report_env *env, struct ap_buf *out);

/* The check matrix as a standalone SVG: a row per check of any kind, a column
 * per environment (the reference marked), each cell its status in the
 * status's colours; headings in language l. */
void ap_svg_matrix(const struct ap_report *r, enum ap_lang l, struct ap_buf *out);

/* Environment env's numeric checks as a chart (class "numeric"): a bar per
 * row of env.numeric (operator, dtype, comparison) giving its worst error
 * over its tolerance on a log scale from 1e-6 to 1e2, the tolerance a dashed
 * red line at 1, a row with a failed sample in red. Nothing when env has no
 * numeric rows. */
void ap_svg_numeric(const struct ap_report_env *env, struct ap_buf *out);

#endif
