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
#include "review/report.h"
#include "review/words.h"

/* The file name of environment env's PNG card ("card-<env>.png") in out. */
void ap_output_card_name(const char *env, struct ap_buf *out);

/* Whether name is a report output of submission s (its cards are those of
 * its environments, readable or broken); the top-level manifest is not. */
int ap_output_known(const char *name, const struct ap_submission *s);

/* Writes DIR/MANIFEST.sha256 (atomically) listing every report output of s
 * present at DIR's top level as a regular file, sorted by name. 0 or -errno
 * with err set. */
int ap_output_manifest(const char *dir, const struct ap_submission *s, struct ap_buf *err);

/* The report output name rendered from model, as `report` writes it, into
 * out: report.md and report.html in language l, report.en.md in English,
 * report.json, junit.xml, matrix.png (in l), card-ENV.png of each
 * environment of the model. 0; -ENOENT when name is none of them; -ENOMEM;
 * another -errno, with err set, when a picture cannot be drawn. */
int ap_output_render(const struct ap_report *model, enum ap_lang l, const char *name,
		     struct ap_buf *out, struct ap_buf *err);

/* Checks the report outputs at DIR's top: every one is listed in
 * DIR/MANIFEST.sha256 with its sha256 (an output with no manifest at all
 * was written after the run, or cut short), every line of the manifest
 * names one that is there, and each is what its bundles give: rendered
 * again from the submission (report.md, report.html and matrix.png in
 * either language; a report made with --docs from the docs entry its
 * report.json records), byte for byte. Each problem is a reason (a string)
 * appended to reasons. */
void ap_output_verify(const char *dir, const struct ap_submission *s, json_t *reasons);

#endif
