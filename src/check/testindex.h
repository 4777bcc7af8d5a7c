/* testindex.h - the usage index of a test tree: which tests mention which
 * names, parsed once per tree and kept next to it.
 *
 * Finding the tests that use an API meant parsing every file of the tree on
 * every call. The index is that parse done once, by the worker in the
 * environment's Python (its tests_index op), stored as "KEY<tab>JSON" lines
 * sorted by key under one header line:
 *
 *   apiparity-usage-index INDEXER TREE-SUM BODY-BYTES BODY-SUM
 *
 * INDEXER names this apiparity's indexer (the format and the worker's
 * indexer code, ap_testindex_indexer), TREE-SUM the tree's test files (ap_testindex_tree_sum). An index
 * whose header names another tree or another indexer is rebuilt, never
 * trusted; one that does not parse, or whose body's bytes are not those
 * BODY-SUM (its SHA-256) names, is rebuilt with a warning. Hashing 80 MiB
 * takes most of a second, so once a file's body was seen to match, a stamp
 * beside it (usage.idx.ok: the file's device, inode, size, mtime and ctime)
 * spares it until any of those change: a byte written changes its ctime. A lookup is a
 * binary search of the mapped file. The file is written through a unique
 * temporary file and a rename, under a lock beside it, so concurrent checks
 * build it once and never see half of it.
 *
 * Keys (see the worker): "F" (the files, by id), "f FILE" ({tests, imports,
 * bindings} or {error}), "t NAME" ([file id, test index] of each test of that
 * name), "u NAME" ([file id, test index, line, dotted, text] of each mention
 * of NAME in a test, as a Name or an attribute chain), "D" (the test
 * templates an @ops or @modules decorator generates tests from: struct
 * ap_index_gen), "G FID" (what file FID's decorators refer to).
 */
#ifndef AP_TESTINDEX_H
#define AP_TESTINDEX_H

#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/sha256.h"

/* An indexer's name, "FORMAT.HEX16" (ap_testindex_indexer), and its NUL,
 * with room. */
#define AP_INDEXER_SIZE 32

#define AP_TESTINDEX_NAME "usage.idx" /* beside a cached tree's test/ */

struct ap_worker;

struct ap_testindex {
	char body_sum[AP_SHA256_HEX_SIZE]; /* its header's BODY-SUM */
	char *map;        /* the whole file (mapped, or malloc'd when not stored) */
	size_t len;
	int mapped;
	size_t body;      /* offset of the first key line */
	json_t *files;    /* the "F" array, loaded on first use */
};

/* The checksum of a test tree (the host path of its test/ directory): of the
 * relative path, size and modification time of every test*.py under it, the
 * files the index is made of; for a fetched tree, which a new fetch replaces
 * whole, of its stamp (content, inode and time). 0 or -errno. */
int ap_testindex_tree_sum(const char *tree, char hex[AP_SHA256_HEX_SIZE]);

/* Where the index of tree is kept: TESTS_ROOT/<version>/usage.idx for a
 * cached tree (TESTS_ROOT/<version>/test), else TESTS_ROOT/.index/<hash of
 * the tree's path>.idx. */
void ap_testindex_path(const char *tree, struct ap_buf *out);

/* The name of the indexer of worker source src (len bytes), as an index's
 * header gives it: "FORMAT.HASH", HASH the start of the SHA-256 of the
 * worker's indexer code, the lines from "# apiparity-indexer: begin" to
 * "# apiparity-indexer: end" (of the whole source where either is missing),
 * so that an edit of the worker outside them keeps every index. */
void ap_testindex_indexer(const char *src, size_t len, char out[AP_INDEXER_SIZE]);

/* Appends the header line of this indexer's index of a tree with sum sum
 * and the body body[0..body_len). 0 or -ENOMEM. */
int ap_testindex_header(const char *sum, const char *body, size_t body_len, struct ap_buf *out);

/* Opens the index at path when it is this indexer's index of a tree whose
 * sum is sum. 0; -ENOENT: there is none; -ESTALE: it is another tree's or
 * another indexer's; -EBADMSG: it is damaged; other -errno. */
int ap_testindex_open(const char *path, const char *sum, struct ap_testindex *ix);

/* The value of key: 0 with *out a new reference, or NULL when the index has
 * no such key; -EBADMSG when its line does not parse. */
int ap_testindex_get(struct ap_testindex *ix, const char *key, json_t **out);

/* The file name of file id fid ("test/test_x.py"), or NULL. */
const char *ap_testindex_file(struct ap_testindex *ix, json_int_t fid);

/* The index's records as C types, read here and nowhere else. An entry not
 * shaped as the worker writes it makes the record damaged (-EBADMSG). The
 * strings of a record live until it is released with ap_index_rec_free(). */

/* One test of a file: its class (NULL: a module-level test), name and line. */
struct ap_index_test {
	const char *cls, *name;
	long long line;
};

/* What an import of a file binds: its kind ("from", "import"), the local
 * name and the dotted name it stands for. */
struct ap_index_binding {
	const char *kind, *local, *full;
};

/* A test of a name ("t NAME"): its file id and its index among the file's
 * tests. */
struct ap_index_def {
	long long fid, ti;
};

/* A mention of a name in a test ("u NAME"): the test (file id, test
 * index), the line, the dotted name as written and the line's text. */
struct ap_index_use {
	long long fid, ti, line;
	const char *dotted, *text;
};

/* A test template a generator decorates ("D"): its file id and test index,
 * the decorator's line, the generator as the file calls it ("ops",
 * "modules" or a name bound to them), the decorator's source (NULL: too
 * long to keep) and its device decorators' sources (an array of strings). */
struct ap_index_gen {
	long long fid, ti, line;
	const char *generator, *source;
	const json_t *devices;
};

/* A record: whether the index has it, and its arrays. A file record ("f
 * FILE") has tests, bindings and imports (the file's imports as the index
 * holds them, for a preflight request to carry; NULL: none), or error (the
 * worker could not parse the file). A name's record has defs ("t") or uses
 * ("u"), the tree's templates gens ("D"). Bindings that are not three
 * strings are left out. */
struct ap_index_rec {
	int found;
	const char *error;
	size_t ntests, nbindings, ndefs, nuses;
	struct ap_index_test *tests;
	struct ap_index_binding *bindings;
	struct ap_index_def *defs;
	struct ap_index_use *uses;
	size_t ngens;
	struct ap_index_gen *gens;
	const json_t *imports;
	json_t *doc; /* the parsed line, which the strings point into */
};

/* The record of file ("f FILE") into *rec. 0 (rec->found 0 when the index
 * has none), -EBADMSG or -ENOMEM. Release *rec whatever is returned. */
int ap_testindex_file_rec(struct ap_testindex *ix, const char *file, struct ap_index_rec *rec);

/* The tests named name ("t NAME") into *rec, as ap_testindex_file_rec. */
int ap_testindex_defs(struct ap_testindex *ix, const char *name, struct ap_index_rec *rec);

/* The mentions of name ("u NAME") into *rec, as ap_testindex_file_rec. */
int ap_testindex_uses(struct ap_testindex *ix, const char *name, struct ap_index_rec *rec);

/* Every decorated template of the tree ("D") into *rec (gens), as
 * ap_testindex_file_rec. */
int ap_testindex_gens(struct ap_testindex *ix, struct ap_index_rec *rec);

/* What file fid's decorators refer to ("G FID": {assigns, instantiated}),
 * as rec->doc (found 0: none), for the worker to evaluate them with. 0,
 * -EBADMSG or -ENOMEM. */
int ap_testindex_gen_facts(struct ap_testindex *ix, long long fid, struct ap_index_rec *rec);

void ap_index_rec_free(struct ap_index_rec *rec);

/* The index of the tree that the worker sees at root and this machine at
 * tree: opened when current, else built by the worker and stored (rebuilt
 * even when current if force is set). A damaged index, or one that cannot
 * be stored, adds a line to warn and is still answered from. 0, a worker
 * error, or -errno (detail says what failed). */
int ap_testindex_load(struct ap_worker *w, const char *root, const char *tree, int force,
		      struct ap_testindex *ix, struct ap_buf *warn, struct ap_buf *detail);

void ap_testindex_close(struct ap_testindex *ix);

#endif
