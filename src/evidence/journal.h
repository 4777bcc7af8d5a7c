/* journal.h - append-only record of results, safe against a crash mid-run.
 *
 * A journal is one file of JSON lines. Each ap_journal_append() is written and
 * fsync'd before it returns, so what was measured survives a kill -9 of
 * apiparity. Reading a journal back ignores a torn last line (a record cut by
 * the crash) and reports that it did.
 */
#ifndef AP_JOURNAL_H
#define AP_JOURNAL_H

#include <jansson.h>

#include "base/buf.h"

struct ap_journal;

/* Opens (creating if needed, appending otherwise) the journal at path.
 * Returns NULL and sets errno. */
struct ap_journal *ap_journal_open(const char *path);

/* Appends rec as one line (compact JSON, no newline inside) and fsyncs;
 * the journal keeps no reference to rec. 0 or -errno (-ENOSPC on a full disk:
 * the journal then holds every record before this one, whole). */
int ap_journal_append(struct ap_journal *j, const json_t *rec);

void ap_journal_close(struct ap_journal *j);

/* Reads the journal at path into *records (a new JSON array of the records, in
 * order). A last line without its newline, or that is not valid JSON, is
 * dropped and *torn set to 1; a bad line anywhere else is an error. 0, or
 * -errno, or -AP_EPROTO with "path:line: why" in err. */
int ap_journal_read(const char *path, json_t **records, int *torn, struct ap_buf *err);

#endif
