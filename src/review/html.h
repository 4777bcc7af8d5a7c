/* html.h - report.html: the page a reviewer opens, rendered from the report
 * model alone (report.h), in the language of the Markdown report.
 *
 * One self-contained file under a strict Content-Security-Policy (nothing
 * loads, nothing runs: no script, no external resource), in this order:
 *   - the verdict banner (id "banner", class of the verdict's style);
 *   - the check matrix (table.matrix, id "matrix", in a figure.matrix-frame at
 *     most 60% of the window high that scrolls): a row per check whatever
 *     its kind (tr[data-kind][data-check]), a column per environment
 *     (th[data-env], the reference with class "ref"), a cell per check and
 *     environment (td.cell[data-env][data-status]) whose class is the
 *     status's style (svg.h): PASS green, unverified never green;
 *   - the sections of report.md, rendered: scope, a block per environment
 *     (section.env[data-env]) with its SVG evidence card, the signatures
 *     (a row per environment, tr.diff where it differs), the numeric checks
 *     (an SVG chart per environment of errors over tolerances, svg.h),
 *     backend adaptation, native API docs, conclusion;
 *   - the traces: per check a <details class="trace">, open when a step
 *     differs; per step a <details class="step">, open and of class "diff"
 *     when it differs from the reference, folded and of class "same" when
 *     every environment agrees.
 * Every string from data is escaped with ap_escape_xml (escape.h).
 */
#ifndef AP_HTML_H
#define AP_HTML_H

#include "base/buf.h"
#include "review/report.h"
#include "review/words.h"

void ap_report_html(const struct ap_report *r, enum ap_lang lang, struct ap_buf *out);

#endif
