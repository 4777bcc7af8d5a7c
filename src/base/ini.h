/* ini.h - the INI dialect of apiparity's data files (environments,
 * tolerances), parsed line by line so that a line of any length is read whole
 * and every error names the line it is about.
 *
 * As inih and Python's configparser read it: [section] headers, key = value
 * (or key: value), comments from ';' or '#' at the start of a line or ' ;'
 * after a value, an indented line continuing the key above it (passed on as
 * that key again), a UTF-8 BOM ignored; a NUL byte is an error.
 */
#ifndef AP_INI_H
#define AP_INI_H

#include <stddef.h>

#include "base/buf.h"

/* One key = value line, as the callback sees it. */
struct ap_ini_key {
	const char *section;  /* the latest [section], "" before the first */
	int section_line;     /* where its header is (0: none) */
	const char *key, *value; /* both trimmed; value may be "" */
	int line;
	int err_line;         /* the line an error is about: line unless the
			       * callback points elsewhere (its section_line) */
};

/* Called for each key; 0 to go on, or nonzero with the reason in err (no
 * file or line: ap_ini_parse adds them). */
typedef int ap_ini_fn(void *ctx, struct ap_ini_key *k, struct ap_buf *err);

/* Adds the reason to err and returns -1: `return ap_ini_fail(err, ...)` in
 * an ap_ini_fn, or wherever a reason is due. */
__attribute__((format(printf, 2, 3)))
int ap_ini_fail(struct ap_buf *err, const char *fmt, ...);

/* The index of k's key in keys (NULL-terminated), marked in *seen (a bit
 * per index); -1 with the reason in err when it is none of them ("unknown
 * key 'x' (known: a, b, ...)") or *seen already has it (given twice in its
 * section). */
int ap_ini_key_index(const char *const *keys, const struct ap_ini_key *k, unsigned *seen,
		     struct ap_buf *err);

/* Parses the len bytes at text (changed in place; text[len] must be NUL),
 * calling fn for each key in order. 0, or -AP_ECONFIG with
 * "file:line: why" in err (file as named); err is replaced, not appended to. */
int ap_ini_parse(char *text, size_t len, const char *file, ap_ini_fn *fn, void *ctx,
		 struct ap_buf *err);

/* --- a file of records: one [section] each, its keys mandatory ------------ */

/* The first member of a record: its section's name, where it is, and which
 * of its keys were given. */
struct ap_ini_record {
	char *name;      /* the section */
	char *where;     /* "FILE:LINE" of its header */
	int line;
	unsigned seen;   /* its keys, a bit each (keys[] order) */
};

/* What a file of records is and where they go. */
struct ap_ini_records {
	const char *what;             /* a record, in messages: "limit", "plugin" */
	const char *const *keys;      /* NULL-ended; every one mandatory */
	const char *const *hints;     /* NULL, or per key what to say when it is
				       * missing (NULL: nothing) */
	size_t size;                  /* bytes of one record (struct ap_ini_record first) */
	/* sets key (its index in keys) of record rec to val (trimmed, maybe "");
	 * 0, or -1 with the reason in err */
	int (*set)(void *rec, int key, const char *val, struct ap_buf *err);
	void *v;                      /* the records read, n of them */
	size_t n;
};

/* Reads the len bytes at text (file names them in errors) as records into
 * r->v (r->v, r->n zero before): a record per section, each key through
 * r->set; then every record must have every key and a name of its own.
 * 0, or -AP_ECONFIG with "file:line: why" in err, or -ENOMEM. On failure
 * the records read so far stay in r->v (each struct ap_ini_record's
 * strings too) for the caller to free with what else they hold. */
int ap_ini_records_parse(struct ap_ini_records *r, const char *text, size_t len, const char *file,
			 struct ap_buf *err);

/* Frees the struct ap_ini_record strings of record rec. */
void ap_ini_record_free(struct ap_ini_record *rec);

/* Parses the len bytes at text, named name in its errors, into out. */
typedef int ap_ini_parse_fn(void *out, const char *text, size_t len, const char *name,
			    struct ap_buf *err);

/* A data file of apiparity's own (tolerances, limits, plugin APIs) through
 * parse into out: path NULL or "-" is the built-in text (builtin, len,
 * named builtin_name); any other path must be a regular file of at most
 * 1 MiB. 0, what parse returned, -AP_ECONFIG with "path: why" in err (too
 * large: "larger than 1 MiB, not a WHAT"), or -ENOMEM. */
int ap_ini_load(const char *path, const char *what, const char *builtin, size_t len,
		const char *builtin_name, ap_ini_parse_fn *parse, void *out, struct ap_buf *err);

#endif
