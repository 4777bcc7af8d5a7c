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
#include "evidence/facts.h"

struct ap_journal;

/* Opens (creating if needed, appending otherwise) the journal at path.
 * Returns NULL and sets errno. */
struct ap_journal *ap_journal_open(const char *path);

/* Appends rec as one line (compact JSON, no newline inside) and fsyncs;
 * the journal keeps no reference to rec. 0 or -errno (-ENOSPC on a full disk:
 * the journal then holds every record before this one, whole). */
int ap_journal_append(struct ap_journal *j, const json_t *rec);

/* Appends every record of the array recs, each as one line, with one write
 * and one fsync: for results that arrive together (a sweep's entry), so that
 * thousands of them do not cost thousands of fsyncs. A crash mid-write leaves
 * whole lines and at most one torn last line, as a crash in
 * ap_journal_append() does. 0 or -errno; on failure none stays. */
int ap_journal_append_all(struct ap_journal *j, const json_t *recs);

void ap_journal_close(struct ap_journal *j);

/* Reads the journal at path into *records (a new JSON array of the records, in
 * order). A last line without its newline, or that is not valid JSON, is
 * dropped and *torn set to 1; a bad line anywhere else is an error. 0, or
 * -errno, or -AP_EPROTO with "path:line: why" in err. */
int ap_journal_read(const char *path, json_t **records, int *torn, struct ap_buf *err);

/* Limits of a journal read back as evidence from someone else. */
#define AP_JOURNAL_MAX_BYTES (256u << 20)
#define AP_JOURNAL_MAX_LINE (16u << 20)
#define AP_JOURNAL_MAX_DEPTH 32

/* Reads the journal at path strictly, as evidence someone handed in: a
 * regular file of at most AP_JOURNAL_MAX_BYTES in which every line ends in a
 * newline (a finished run leaves no torn record), holds at most
 * AP_JOURNAL_MAX_LINE bytes, parses as JSON nested at most
 * AP_JOURNAL_MAX_DEPTH deep, and is a record of the journal's schema:
 * {"type": "start" | "resolution" | "fingerprint" | "check" | "error",
 * "data": ...}, where the data of a check is an object with a string name,
 * kind and status, a string or null reason, and a trace of objects with a
 * string step. Good records go into *records (a new array), and each bad
 * line into *problems (a new array of "line N: why"). 0, or -errno when the
 * file cannot be read at all (-EINVAL: not a regular file; -EFBIG: too big);
 * both arrays are then NULL. */
int ap_journal_validate(const char *path, json_t **records, json_t **problems);

/* A record's type: what a run journals. */
enum ap_record_type {
	AP_RECORD_START,       /* the environment (name, label, device) */
	AP_RECORD_RESOLUTION,  /* the target's resolution */
	AP_RECORD_FINGERPRINT, /* the environment's fingerprint */
	AP_RECORD_CHECK,       /* one check, as measured */
	AP_RECORD_ERROR,       /* the error that stopped the run */
	AP_RECORD_COUNT,
	AP_RECORD_UNKNOWN = -1,
};

/* The type of the word ("start" ... "error"), AP_RECORD_UNKNOWN for another. */
enum ap_record_type ap_record_type_parse(const char *word);

/* The word of type; "?" for a value outside the enum. */
const char *ap_record_type_name(enum ap_record_type type);

/* What a validated journal (ap_journal_validate()'s records) says was
 * measured, typed. The data stay the journal's own JSON, for comparing with
 * what bundle.json says; every pointer points into the records, valid while
 * they are. */
struct ap_journal_facts {
	size_t count[AP_RECORD_COUNT];         /* the records of each type */
	const json_t *first[AP_RECORD_COUNT];  /* the data of the first of each type, NULL: none */
	const char *resolved_target;           /* the first resolution's target, NULL: none */
	struct ap_fact_check *checks;          /* the check records' data, in order */
	size_t nchecks;
};

/* Reads the array records into f. 0, or -ENOMEM with f emptied. */
int ap_journal_facts(const json_t *records, struct ap_journal_facts *f);

void ap_journal_facts_free(struct ap_journal_facts *f);

#endif
