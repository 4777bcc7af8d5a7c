/* catalog.h - what a sweep walks (specs/catalog.txt), and which part of it one
 * shard of a cluster job walks.
 *
 * A catalog is lines "NAME WALK" (see specs/catalog.txt), read into entries
 * sorted by name, so that its digest and its split into shards do not depend
 * on the order or the comments of the file. The split is the one thing every
 * shard must agree on: entry k (in name order) belongs to shard k mod n, so
 * each shard holds whole entries, the shards are disjoint, and together they
 * hold the catalog.
 */
#ifndef AP_CATALOG_H
#define AP_CATALOG_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"

struct ap_catalog_entry {
	char *name;   /* dotted module or class path */
	char *walk;   /* "module" or "class" */
	int line;     /* in the catalog file */
};

struct ap_catalog {
	struct ap_catalog_entry *v;  /* sorted by name, no name twice */
	size_t n;
	char digest[65];             /* sha256 of the sorted "name walk\n" lines */
};

/* The most entries a catalog may hold, and a name's longest length. */
#define AP_CATALOG_MAX 4096
#define AP_CATALOG_NAME_MAX 200

/* Parses a catalog (text of len bytes; file names it in errors). A line is
 * blank, a comment (#), or a dotted Python name and a walk, separated by
 * blanks. 0, or -AP_ECONFIG with "file:line: why" in err (a bad name, an
 * unknown walk, a name twice, an empty catalog); c is then empty. */
int ap_catalog_parse(struct ap_catalog *c, const char *text, size_t len, const char *file,
		     struct ap_buf *err);

/* ap_catalog_parse() of the file at path, or of the built-in catalog (the
 * copy of specs/catalog.txt embedded at build time) when path is NULL. */
int ap_catalog_load(struct ap_catalog *c, const char *path, struct ap_buf *err);

void ap_catalog_free(struct ap_catalog *c);

/* The names of the catalog's entries under entry k (its name, a dot, more):
 * classes walked by an entry of their own, which entry k must not walk
 * again. A new array of strings. */
json_t *ap_catalog_exclude(const struct ap_catalog *c, size_t k);

/* --- shards ------------------------------------------------------------ */

struct ap_shard {
	unsigned index;  /* 0-based */
	unsigned count;  /* 0: no sharding, the whole catalog */
};

#define AP_SHARD_MAX 10000

/* Whether entry k of the catalog belongs to shard s. */
int ap_shard_has(struct ap_shard s, size_t k);

/* The shard a run is: opt ("I/N", from --shard) when given; else Slurm's
 * array variables (SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN, which
 * defaults to 0, of SLURM_ARRAY_TASK_COUNT); else a Kubernetes Indexed Job's
 * JOB_COMPLETION_INDEX of count_opt (--shard-count), or of
 * APIPARITY_SHARD_COUNT, since the job's completion count is not in the
 * pod's environment; else no sharding. 0, or -EINVAL with why in err (a
 * malformed or out-of-range index or count, an index without a count). */
int ap_shard_resolve(const char *opt, const char *count_opt, struct ap_shard *s,
		     struct ap_buf *err);

#endif
