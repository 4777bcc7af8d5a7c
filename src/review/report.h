/* report.h - the acceptance report, from a submission's bundles.
 *
 * Every sentence of a report comes from data in the bundles (and the docs
 * entry, when given): versions from fingerprints, results from checks,
 * evidence hashes from the files. Sections follow the outline that backend
 * projects use: title, scope, one block per environment, backend adaptation
 * conclusion, native API documentation, conclusion.
 *
 * The model also holds the overview the page and the pictures draw (html.h,
 * svg.h): "matrix" (a column per environment, a row per check of any kind,
 * a cell per check and environment with its status, null where that
 * environment has no such check) and "traces" (per check, each step with every
 * environment's value and whether it differs from the reference's).
 */
#ifndef AP_REPORT_H
#define AP_REPORT_H

#include <jansson.h>

#include "base/buf.h"
#include "evidence/submission.h"
#include "review/escape.h"
#include "review/words.h"

/* The report's model: everything the renderers show, derived once from the
 * submission (and docs: the parsed docs entries, or NULL when not given).
 * A new object, the content of report.json. */
json_t *ap_report_model(const struct ap_submission *s, const json_t *docs);

void ap_report_markdown(const json_t *model, enum ap_lang lang, struct ap_buf *out);
void ap_report_junit(const json_t *model, struct ap_buf *out);

#endif
