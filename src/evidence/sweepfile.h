/* sweepfile.h - what a sweep writes besides its matrix: its sweep.json and
 * the records of its journals (check/sweep.h), as C types.
 *
 * This module alone spells their keys: the sweep, merge and the pages work
 * on the structs below, so that a misspelt field is a compile error.
 *
 * sweep.json (AP_SWEEP_META_NAME), indented JSON, its keys in this order:
 *   {"schema": "apiparity.sweep/1",
 *    "tool": {"name", "version", "commit"},
 *    "envs": [{"name", "label"?, "torch"?, "plugins"?: [names],
 *              "adapter"?: the numeric runner's adapter (check/numeric.h)}],
 *    "depth", "catalog", "state": "running" | "complete" | "failed",
 *    "shard": {"index", "count"} | null,
 *    "samples": n}                 (depth numeric only)
 *
 * A journal's records, one compact JSON object a line:
 *   {"type": "sweep-start", "data": {"env", "catalog", "depth", "shard"?,
 *                                    "samples"?}}
 *   {"type": "api", "data": <a matrix line (matrix.h)>}
 *   {"type": "entry", "data": {"entry", "status", "reason"?, "apis"}}
 * where an entry's status is "ok" (its walk worked) or the line status of
 * its failure ("import-error", "error", "crash", "timeout"), or "absent"
 * (this torch has no such module or class).
 */
#ifndef AP_SWEEPFILE_H
#define AP_SWEEPFILE_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/outcome.h"
#include "evidence/matrix.h"

/* --- sweep.json ---------------------------------------------------------- */

/* How far a sweep got. */
enum ap_sweep_state { AP_SWEEP_RUNNING, AP_SWEEP_COMPLETE, AP_SWEEP_FAILED,
		      AP_SWEEP_STATE_UNKNOWN = -1 };

/* The word of a state ("running" ...); "?" outside the enum. */
const char *ap_sweep_state_name(enum ap_sweep_state s);

/* One environment of a sweep: every string owned, NULL when not known
 * (then left out of sweep.json); plugins set 0 when not known. */
struct ap_sweep_meta_env {
	char *name, *label, *torch;
	struct ap_matrix_strs plugins;
	char *adapter; /* what apiparity adapted in its numeric runner (its name), or NULL */
};

/* sweep.json (see above); every string owned, NULL for missing. */
struct ap_sweep_meta {
	char *tool, *version, *commit;
	struct ap_sweep_meta_env *envs;
	size_t nenvs;
	char *depth, *catalog;
	enum ap_sweep_state state;
	int sharded;                 /* shard is {index, count}, else null */
	long long index, count;
	int has_samples;
	long long samples;
};

/* Appends an environment to m, copying the strings (label, torch may be
 * NULL; plugins NULL: not known). 0 or -ENOMEM. */
int ap_sweep_meta_add_env(struct ap_sweep_meta *m, const char *name, const char *label,
			  const char *torch, const struct ap_matrix_strs *plugins);

/* Sets *dst to a copy of the string s (NULL stays NULL), freeing the old
 * one. 0 or -ENOMEM. */
int ap_sweep_meta_set(char **dst, const char *s);

/* Appends m as sweep.json's text (indented, a newline last). 0 or -ENOMEM. */
int ap_sweep_meta_render(const struct ap_sweep_meta *m, struct ap_buf *out);

/* Reads DIR/sweep.json (at most 1 MiB) into *m (zeroed before): 0, or
 * -errno / -AP_EPROTO with "path: why" in why (m empty). Fields of the
 * wrong type read as missing. */
int ap_sweep_meta_read(const char *dir, struct ap_sweep_meta *m, struct ap_buf *why);

void ap_sweep_meta_free(struct ap_sweep_meta *m);

/* --- journal records ----------------------------------------------------- */

/* What a journal is of: its first record. Strings borrowed; shard "I/N" or
 * NULL, samples when has_samples. */
struct ap_sweep_start {
	const char *env, *catalog, *depth, *shard;
	int has_samples;
	long long samples;
};

/* An entry done: status AP_LSTATUS_PRESENT for "ok", else its failure's.
 * Strings owned (reason NULL: none). */
struct ap_sweep_entry {
	char *entry;
	enum ap_line_status status;
	char *reason;
	size_t apis;
};

/* The word of an entry's status: "ok" for present, else the line status's. */
const char *ap_sweep_entry_status_name(enum ap_line_status s);

/* The records, as journaled (NULL when out of memory). */
json_t *ap_sweep_start_json(const struct ap_sweep_start *s);
json_t *ap_sweep_api_json(const struct ap_matrix_line *l);
json_t *ap_sweep_entry_json(const struct ap_sweep_entry *e);

enum ap_sweep_rec_type { AP_SWEEP_REC_API, AP_SWEEP_REC_ENTRY };

/* A record read back: line for an api, entry for an entry. */
struct ap_sweep_record {
	enum ap_sweep_rec_type type;
	struct ap_matrix_line line;
	struct ap_sweep_entry entry;
};

struct ap_sweep_records {
	struct ap_sweep_record *v;
	size_t n;
};

/* Reads the journal at path (ap_journal_read: a torn last record dropped)
 * into *out (empty before): its api and entry records in order, each one
 * that is not whole (an api whose line does not read, an entry without its
 * name) and any other record left out. *same says whether the journal is of
 * start: empty, or its first record start's own. 0, -ENOMEM, or
 * ap_journal_read's error with err saying why (out empty). */
int ap_sweep_journal_read(const char *path, const struct ap_sweep_start *start,
			  struct ap_sweep_records *out, int *same, struct ap_buf *err);

void ap_sweep_records_free(struct ap_sweep_records *r);

void ap_sweep_entry_free(struct ap_sweep_entry *e);

#endif
