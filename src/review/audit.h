/* audit.h - a backend's support pages against a measured support matrix:
 * pages generated from the matrix, and hand-written pages audited by it.
 *
 * A product of the pages is an environment whose label (its name when it
 * has none) is that product's name. Names on the pages are resolved as a
 * reader would: Markdown escapes dropped (`torch.\_\_config\_\_.show`), a
 * trailing "()" dropped, then the exact api of a matrix line, else the
 * class-relative key the matrix gives a member (`Tensor.abs`,
 * `FunctionCtx.save_for_backward`), else an api that ends with the name
 * (`profile.key_averages`); among several, the shortest api, then the first
 * in order.
 */
#ifndef AP_AUDIT_H
#define AP_AUDIT_H

#include <jansson.h>

#include "base/buf.h"
#include "evidence/matrix.h"

/* The pages of a matrix: {"PAGE.md": text} (a new object), one page per
 * catalog entry (its name with '.' as '-'), a `### ` block per API present
 * somewhere, classes followed by their members' sub-entries, in format
 * "table" or "list" (docs.h). products: per environment of meta.envs, its
 * label, supported when the API's verdict there is consistent, unsupported
 * when inconsistent, left out when absent or not run (not measured is not
 * claimed). An API with no product is left out. */
json_t *ap_docs_generate(const json_t *meta, const struct ap_matrix *lines, const char *format);

/* Audits entries (ap_docs_load()) against a matrix. Returns a new array of
 * findings, sorted by file and line:
 *   {"file", "line", "api" (as the page wrote it), "resolved" (matrix api or
 *    null), "class", "detail"}
 * Every entry gets exactly one finding of these classes, in this order of
 * precedence:
 *   unreadable          its support could not be read
 *   optional-dependency what it is under does not import (import-error)
 *   instance-attribute  a member no class of the matrix carries, its class
 *                       present
 *   absent              not in the measured torch of any environment
 *   not-measured        the walk that would have measured it failed
 *   not-swept           nothing of the catalog covers it
 *   plugin-added        it exists only once a plugin loads
 *   unbacked            none of its products is a measured environment
 *   contradicted        a product's claim differs from the measurement (✔
 *                       and inconsistent or absent there; ✘ and consistent)
 *   backed              every product that was measured agrees
 * and, in the other direction, one finding of class "missing-sub-entry" at a
 * class's entry for each member the matrix has for that class, consistent
 * in some environment, that the pages give no sub-entry (the README's
 * set_multithreading_enabled and its clone()). */
json_t *ap_docs_audit(const json_t *entries, const json_t *meta, const struct ap_matrix *lines);

/* Findings as text: "FILE:LINE: CLASS: API: DETAIL" a line, then one count
 * line per class. Values escaped for a terminal. */
void ap_docs_audit_text(const json_t *findings, struct ap_buf *out);

/* Which formats each page was read in (ap_docs_load_pages()), a line per page:
 * "FILE: formats: table 46, unreadable 2", or "FILE: formats: none (...)"
 * for a page with no entry in a format the parser knows. Escaped for a
 * terminal. */
void ap_docs_pages_text(const json_t *pages, struct ap_buf *out);

#endif
