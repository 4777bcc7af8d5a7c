/* official.h - the policy for upstream's own tests: which tests exercise a
 * target, whether a claimed node id exists, whether a test can start, and how
 * a test's outcome becomes a check.
 *
 * The worker only reports what it finds (mentions of the target in the test
 * tree, the nodes of a file, the modules a file imports, outcomes); every
 * decision here is made from that data.
 */
#ifndef AP_OFFICIAL_H
#define AP_OFFICIAL_H

#include <jansson.h>

#include "base/buf.h"
#include "base/outcome.h"
#include "check/testindex.h"
#include "env/protocol.h"

#define AP_OFFICIAL_MAX 10   /* official tests a check runs, at most */
#define AP_SCORE_RUN 3       /* the least score of a test that check runs */
#define AP_IMPORT_TRY_S 120  /* importing a test file to see that it can start */
#define AP_RUN_IMPORT_S 300  /* the runner's import, in a test run's deadline */
#define AP_TEST_SLACK_S 5    /* forking and reporting one test, beyond its timeout */
#define AP_SELECT_MAX 10000  /* tests a -k selection may run, for its deadline */
#define AP_ANSWER_MARGIN_S 30 /* waiting for a test run's answer, beyond its deadline */
/* How the worker isolates official tests, as bundle.json states it: a child
 * per test file, forked from the runner that imported the file once, runs
 * its tests one after another (what one leaves, the next sees, as under
 * upstream's own runner); a test that crashes or passes its timeout costs
 * only itself, and a fresh child runs the tests that remain. */
#define AP_OFFICIAL_ISOLATION "per-file, re-forked after crash/timeout"

/* A node id: "test/test_autograd.py::Class::test" or "test/x.py::test". */
struct ap_nodeid {
	char file[256];
	char cls[128];  /* "" for a module-level test */
	char test[128];
};

/* 0, or -EINVAL for something that is not a node id. */
int ap_nodeid_parse(const char *s, struct ap_nodeid *n);

/* "file::cls::test" (or "file::test") into out. */
void ap_nodeid_format(const char *file, const char *cls, const char *test, struct ap_buf *out);

/* A line of a test that mentions the target: how it names it (a word that
 * stays valid: "qualified", "alias" or "name") and its text (owned). */
struct ap_official_match {
	long long line;
	const char *how;
	char *text;
};

/* A test that mentions the target: its file, class (NULL: a module-level
 * test), name and line, the first lines that mention it, and whether it also
 * uses the method's name (uses_leaf). ap_official_rank sets node and score.
 * The strings and matches are owned. */
struct ap_official_hit {
	char *file, *cls, *test, *node;
	long long line;
	size_t nmatches;
	struct ap_official_match *matches;
	int uses_leaf, score;
	size_t order; /* its place among the hits before ranking, for ties */
	int generated; /* made by a generator (check/testgen.h): score preset */
	char *notrun;  /* why it cannot run in this environment (owned; NULL: it can) */
	char *generic; /* a generated test's id on no device: its template's class,
			* its name without the device ("test/test_ops.py::TestCommon::
			* test_out_nn_functional_gelu_float32"), the same in every
			* environment (owned; NULL: not generated) */
};

/* The tests found, in order (the test tree's, or best first once ranked). */
struct ap_official_found {
	size_t n;
	struct ap_official_hit *hits;
};

void ap_official_found_free(struct ap_official_found *f);

/* The ranked tests as the bundle's official.found holds them: a new array
 * of {file, class, test, line, matches: [{line, how, text}], uses_leaf,
 * node, score}, or NULL when out of memory. */
json_t *ap_official_found_json(const struct ap_official_found *f);

/* The tests that mention a class (cls_path, its "u" entries of the usage
 * index), with the lines that do and whether they also use the attribute
 * leaf (may be NULL), into *out (release with ap_official_found_free()). how
 * is "qualified" (the class's own path), "alias" (an import of it, or another
 * name the worker finds is the same object), or "name" (only the same
 * name). At most eight matches a test, one per line and how, by line. 0 or
 * -EBADMSG (a damaged index), -ENOMEM or a worker error (then *out is
 * empty). */
int ap_official_find(struct ap_worker *w, struct ap_testindex *ix, const char *cls_path,
		     const char *leaf, struct ap_official_found *out);

/* Ranks ap_official_find's results in place, each with its node id and
 * score set, best first. A mention by the target's own path or an alias of
 * the same object scores above a mention of the bare name; a test whose name
 * contains name (the class's), and one that also uses the method's name,
 * score higher. Ties go by node id, then by the order found. 0 or
 * -ENOMEM. */
int ap_official_rank(struct ap_official_found *f, const char *name);

/* A test of the index, as a claimed node id is checked against: its file,
 * class (NULL: module-level) and name (borrowed). */
struct ap_official_node {
	const char *file, *cls, *test;
};

/* A claimed node id against the n tests of its test name: a new check
 * object (kind "claim"): PASS when it exists, else WARN naming the node ids
 * with the same test name that do exist. */
json_t *ap_claim_check(const char *claimed, const struct ap_official_node *nodes, size_t n,
		       const char *version);

/* Whether claimed is the node id of one of the n nodes. */
int ap_claim_exists(const char *claimed, const struct ap_official_node *nodes, size_t n);

/* Whether a preflight (a tests_preflight reply, its import's answer in)
 * lets the file start: NULL when ready, else a new string
 * "missing-fixture: ..." naming what is missing, or "import-failed: ...". */
char *ap_preflight_reason(const struct ap_proto_preflighted *pre);

/* The status and reason of one result of tests_run. The worker reports what
 * it saw: a unittest TestResult's counts and its last error and failure (the
 * exception's facts and traceback), what a module-level test raised, that no
 * such test exists after import, how a test process that reported nothing
 * ended (TIMEOUT when it passed its timeout, else CRASH: the signal, or the
 * exit status), or that it failed to run the test (ERROR). An error or
 * failure is worded by the line Python ends its traceback with that names
 * an exception, built from the facts: "module.Type: message" (see
 * exc_reason in official.c for when the traceback's text words it
 * instead). Fills reason (empty for none) and returns the status. */
enum ap_status ap_official_outcome(const struct ap_proto_test *result, struct ap_buf *reason);

/* A check object (kind "official") for one result of tests_run, its status
 * and reason from ap_official_outcome(). */
json_t *ap_official_check(const char *file, const struct ap_proto_test *result);

/* A selected test of a file: its class (NULL: module-level) and name,
 * owned. */
struct ap_official_ref {
	char *cls, *test;
};

/* The selected tests of one file, in rank order. */
struct ap_official_group {
	char *file;
	size_t n, cap;
	struct ap_official_ref *refs;
};

/* The tests to run for the n selected nodes, from what the import of their
 * file defines (the "defined" of a tests_preflight import): the node itself
 * when its class defines the test, else every test of a class named like the
 * node's class plus a suffix (a device-generic class instantiated per device,
 * TestFooCPU) named like the test or like the test plus "_" and a suffix
 * (parametrized). A node of which nothing is defined stays as it is (the run
 * then reports it not defined). A new array [[class, test]...], as a
 * tests_run request carries it. */
json_t *ap_official_expand(const struct ap_official_ref *nodes, size_t n, const json_t *defined);

/* How long a test run of ntests tests of timeout_s each may take in all,
 * in seconds: the runner's import and each test with its slack. */
int ap_official_deadline_s(size_t ntests, int timeout_s);

/* The variable that asks the worker's test runner for the PrivateUse1
 * adapter (worker/testrun.py, _privateuse1_adapter). */
#define AP_ADAPTER_ENV "APIPARITY_TEST_ADAPTER"

/* Running them, for check and for `apiparity tests`. */
struct ap_worker;
struct ap_env;


/* The same, of a resolve reply already read. */
const char *ap_resolution_class(const struct ap_proto_resolution *res);

/* Asks the worker for the torch package of its environment (the "package"
 * answer: found, source, version, codename) into *pkg. 0 or a worker error. */
int ap_official_package(struct ap_worker *w, json_t **pkg);

/* env as it must start to see the test trees: for a chroot, the test cache
 * (when it exists) and torch_src (when given) bound under /run/apiparity.
 * dst shares env's strings; release with ap_env_extra_free(). 0 or -errno. */
int ap_official_env(const struct ap_env *env, const char *torch_src, struct ap_env *dst);

/* Where the environment sees the test tree for torch package version pkgver
 * (from the worker's "package" answer; NULL when torch is not a Debian
 * package) or torch_src: fills root, and tree with the host path of its
 * test/ directory, and returns 1; or returns 0 with why (NOTRUN reason
 * "no-test-source: ...") filled. An environment behind a remote shell sees
 * the trees under its tests_root, and without one sees none. */
int ap_official_root(const struct ap_env *env, const char *torch_src, const char *pkgver,
		     struct ap_buf *root, struct ap_buf *tree, struct ap_buf *why);

struct ap_official_opts {
	const char *root;       /* the test tree, as the environment sees it */
	const char *tree;       /* its test/ directory, as this machine sees it */
	struct ap_buf *warn;    /* lines for the user (a rebuilt usage index) */
	const char *version;    /* for messages: the torch version */
	const char *claimed;    /* a claimed node id, or NULL */
	const char *device;     /* the environment's device, or NULL */
	int timeout_s;          /* per test */
	int run;                /* 0: find and validate only */
};

/* Finds the tests that exercise the resolved target (res), validates the
 * claimed node id, preflights each file and runs the selected tests.
 * Appends check objects (kinds "claim", "official") to checks, the ranked
 * tests to *found (new array), the run log to log. 0, or a worker error. */
int ap_official_run(struct ap_worker *w, const json_t *res, const struct ap_official_opts *o,
		    json_t *checks, json_t **found, struct ap_buf *log);

/* ap_official_run in two steps, so that the first test file is imported
 * while the caller does other work with the same worker (probes): start
 * finds the tests and starts a runner importing the first file (with
 * o->run), finish takes its import's answer and runs the tests, then does
 * the other files in turn. o must stay the same for both, and
 * ap_official_plan_free() releases the plan whatever happened. */
struct ap_official_plan {
	struct ap_testindex ix;
	json_t *checks;       /* the claim's check, added by finish */
	struct ap_official_found found;     /* the ranked tests */
	size_t nselected;
	struct ap_official_group *selected; /* the selection, by file in rank order */
	int started;          /* start started the first file's runner */
	json_t *pre;          /* its preflight, the import's answer pending */
	struct ap_buf log;    /* the run log so far */
};

/* 0, or a worker error (then finish must not be called). */
int ap_official_start(struct ap_worker *w, const json_t *res, const struct ap_official_opts *o,
		      struct ap_official_plan *p);

/* Appends the checks to checks, the ranked tests to *found (new array) and
 * the run log to log, as ap_official_run. 0, or a worker error. */
int ap_official_finish(struct ap_worker *w, const struct ap_official_opts *o,
		       struct ap_official_plan *p, json_t *checks, json_t **found,
		       struct ap_buf *log);

void ap_official_plan_free(struct ap_official_plan *p);

/* What apiparity adds to the environment's device module so that
 * upstream's device tests are instantiated for it, as the bundle states it
 * (official.adapter): a new object, or NULL where the device needs none
 * (cpu, or a device type upstream's tests know by name). */
json_t *ap_official_adapter(const struct ap_official_opts *o);

#endif
