/* bundle.h - the evidence of one target in one environment, on disk.
 *
 *   DIR/bundle.json      every measurement and decision (schema below)
 *   DIR/run.log          the same as a readable transcript
 *   DIR/journal.jsonl    results as they arrived (see journal.h)
 *   DIR/MANIFEST.sha256  the sha256 of every other file
 *
 * bundle.json is an object with "schema": AP_BUNDLE_SCHEMA, tool {name,
 * version, commit}, target, env {name, label, device, where}, started_utc,
 * finished_utc, fingerprint, resolution, family, checks [{name, kind, status,
 * reason, says {en, zh}, trace [{step, value}], duration_ms, output,
 * device_trace}], device_trace, comparison {reference, differences}, verdict,
 * verdict_reasons, adaptation, error.
 */
#ifndef AP_BUNDLE_H
#define AP_BUNDLE_H

#include <jansson.h>

#include "base/buf.h"

#define AP_BUNDLE_SCHEMA "apiparity.bundle/1"

/* Writes bundle.json and run.log for b into dir, then the manifest over
 * everything in dir. 0 or -errno (-ENOSPC on a full disk) with err saying
 * which file; a file written before the failure stays. */
int ap_bundle_write(const char *dir, const json_t *b, struct ap_buf *err);

/* Renders b as the run.log transcript. */
void ap_runlog_render(const json_t *b, struct ap_buf *out);

#endif
