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

#include "base/buf.h"
#include "evidence/matrix.h"
#include "evidence/sweepfile.h"

/* meta is the sweep's sweep.json (its envs' name, label, torch, and its
 * depth shown); lines the matrix. Appends the page to out. */
void ap_sweepview_md(const struct ap_sweep_meta *meta, const struct ap_matrix *lines,
		     struct ap_buf *out);
void ap_sweepview_html(const struct ap_sweep_meta *meta, const struct ap_matrix *lines,
		       struct ap_buf *out);

/* Writes a sweep's outputs into dir: matrix.jsonl, matrix.md, matrix.html,
 * sweep.json (meta, indented), each atomically, then MANIFEST.sha256 over
 * everything in dir. 0 or -errno with err saying which file. */
int ap_sweepview_write(const char *dir, const struct ap_sweep_meta *meta, const struct ap_matrix *lines,
		       struct ap_buf *err);

/* The parts of a diff, in the order they are listed. */
enum ap_diff_part { AP_DIFF_ADDED, AP_DIFF_REMOVED, AP_DIFF_MOVED, AP_DIFF_UNLISTED,
		    AP_DIFF_SIGNATURE, AP_DIFF_KIND, AP_DIFF_BEHAVIOUR, AP_DIFF_NPARTS };

/* One change: the API's line in a and in b (added: a is NULL; removed: b
 * is NULL; moved: b is the line at its new path; unlisted: b is the line of
 * its module or class in b), borrowed from the matrices. */
struct ap_matrix_change {
	const struct ap_matrix_line *a, *b;
};

struct ap_matrix_changes {
	struct ap_matrix_change *v;
	size_t n, cap;
};

struct ap_matrix_diff {
	struct ap_matrix_changes part[AP_DIFF_NPARTS];
	int signatures;   /* both sides were swept with signatures: compared */
	size_t uncompared; /* present on one side, whose catalog entry the
			    * other side did not walk at all: not compared */
};

/* The differences from matrix a's environment ea to matrix b's eb, into *d:
 * added (present in b, absent or without a line in a), moved (present in a,
 * no line in b, and b has the same class, by where it is defined, at
 * another path: the class, or its member of the same name; that path is
 * not also added), removed (present in
 * a, and in b neither a line nor reached: its module's or class's line in b
 * does not list it among what getattr reaches there, and that module serves
 * no names through a module-level __getattr__), unlisted (no line in b, but
 * reached there: inherited from a base now, or possibly served by
 * __getattr__; not a removal), and for an API present in both a kind that
 * changed, else a signature that changed (only when both sides were swept
 * at depth signature or deeper: signatures set 1; a side without them has
 * nothing to compare), else a verdict that changed (consistent to
 * inconsistent, ...). An API whose catalog entry one side did not walk at
 * all (another catalog, a shard) is neither added nor removed: only
 * counted, uncompared. APIs are (module, api) pairs, in the matrices' order.
 * d borrows the lines: a and b must outlive it. 0 or -ENOMEM. */
int ap_matrix_diff(const struct ap_matrix *a, const char *ea, const struct ap_matrix *b,
		   const char *eb, struct ap_matrix_diff *d);

void ap_matrix_diff_free(struct ap_matrix_diff *d);

/* diff as text lines: "added     API  (kind)", "removed ...", "unlisted
 * API: reached through X", "signature API: A -> B", "kind ...", "behaviour
 * API: A -> B", "moved API -> NEW", then a count line, and lines saying how many were not
 * compared and that signatures were not, when so.
 * Values escaped for a terminal. */
void ap_matrix_diff_text(const struct ap_matrix_diff *diff, struct ap_buf *out);

#endif
