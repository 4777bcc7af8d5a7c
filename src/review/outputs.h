/* outputs.h - what `report` writes at the top of a submission, beside the
 * environments' directories: report.md, report.en.md, report.html,
 * report.json, junit.xml, matrix.png, card-<env>.png for each environment,
 * and MANIFEST.sha256 listing those of them that are there.
 *
 * Each environment's own MANIFEST.sha256 (manifest.h) covers its evidence and
 * may be signed, so the report's files are never added to it; the top-level
 * manifest lists them instead, in sha256sum(1)'s format, so that
 * `cd DIR && sha256sum -c MANIFEST.sha256` checks the report and its
 * pictures, and verify checks it when it is there.
 */
#ifndef AP_OUTPUTS_H
#define AP_OUTPUTS_H

#include <jansson.h>

#include "base/buf.h"
#include "evidence/submission.h"

/* The file name of environment env's PNG card ("card-<env>.png") in out. */
void ap_output_card_name(const char *env, struct ap_buf *out);

/* Whether name is a report output of submission s (its cards are those of
 * its environments, readable or broken); the top-level manifest is not. */
int ap_output_known(const char *name, const struct ap_submission *s);

/* Writes DIR/MANIFEST.sha256 (atomically) listing every report output of s
 * present at DIR's top level as a regular file, sorted by name. 0 or -errno
 * with err set. */
int ap_output_manifest(const char *dir, const struct ap_submission *s, struct ap_buf *err);

/* Checks DIR/MANIFEST.sha256 when there is one: every line names a report
 * output that is there with that sha256, and every report output there is
 * listed; each problem is a reason (a string) appended to reasons. */
void ap_output_verify(const char *dir, const struct ap_submission *s, json_t *reasons);

#endif
