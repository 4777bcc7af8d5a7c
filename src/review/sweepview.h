/* sweepview.h - what a reader sees of a support matrix (evidence/matrix.h):
 * matrix.md, the static matrix.html, and the differences of two matrices.
 *
 * Both pages summarise per catalog entry (module) and per environment the
 * lines' verdicts: consistent, inconsistent, not run, absent (at depth probe
 * and numeric, a present API whose checks did not run is counted as not
 * run); then list every
 * API that is not consistent everywhere, with its reason. matrix.html is one
 * file, no script, a Content-Security-Policy that allows nothing but its own
 * inline style, an SVG bar per module; every value is escaped for the format
 * it lands in (review/escape.h).
 */
#ifndef AP_SWEEPVIEW_H
#define AP_SWEEPVIEW_H

#include <jansson.h>

#include "base/buf.h"

/* meta is the sweep's sweep.json (envs [{name, label, torch}], depth); lines
 * the matrix. Appends the page to out. */
void ap_sweepview_md(const json_t *meta, const json_t *lines, struct ap_buf *out);
void ap_sweepview_html(const json_t *meta, const json_t *lines, struct ap_buf *out);

/* Writes a sweep's outputs into dir: matrix.jsonl, matrix.md, matrix.html,
 * sweep.json (meta, indented), each atomically, then MANIFEST.sha256 over
 * everything in dir. 0 or -errno with err saying which file. */
int ap_sweepview_write(const char *dir, const json_t *meta, const json_t *lines,
		       struct ap_buf *err);

/* The differences from matrix a's environment ea to matrix b's eb, as
 * {"added": [line of b], "removed": [line of a], "signature": [{api, module,
 * kind, a, b}], "kind": [{api, module, a, b}], "behaviour": [{api, module,
 * a, b, reason}]}: an API present in one and not the other (absent, or no
 * line at all); a kind that changed, else a signature that changed, else a
 * verdict that changed (consistent to inconsistent, ...). APIs are (module, api) pairs, in the
 * matrices' order. A new object. */
json_t *ap_matrix_diff(const json_t *a, const char *ea, const json_t *b, const char *eb);

/* diff as text lines: "added     API  (kind)", "removed ...", "signature
 * API: A -> B", "kind ...", "behaviour API: A -> B", then a count line.
 * Values escaped for a terminal. */
void ap_matrix_diff_text(const json_t *diff, struct ap_buf *out);

#endif
