/* protocol.h - the worker's operations: one table, a builder for each request,
 * readers for the replies callers take fields from.
 *
 * Every request frame apiparity sends is built here, and only here are the
 * operations' names and their fields spelled. The table says, for each
 * operation, the fields a request always carries and the limits (in seconds)
 * it carries: the worker sets no limit of its own, so a request without one
 * is a protocol error there. The worker dispatches on a table of its own,
 * OPS (worker/); tests/integration/t-protocol.sh fails when the two name
 * different operations.
 *
 * Ownership: a builder takes a `json_t *` argument (the request holds it,
 * even when building fails) and borrows a `const json_t *` one (the request
 * takes a reference of its own). Each builder returns a new reference, or
 * NULL when out of memory. A reader borrows the reply; what it returns lives
 * as long as the reply.
 */
#ifndef AP_PROTOCOL_H
#define AP_PROTOCOL_H

#include <jansson.h>

#include "base/buf.h"

/* The worker's operations. All but AP_OP_EXIT are in its OPS table; exit is
 * answered by its loop itself (it ends, with no reply). */
enum ap_op {
	AP_OP_FINGERPRINT,     /* what the environment is */
	AP_OP_RESOLVE,         /* where a target lives, and what it is */
	AP_OP_PROBE,           /* one probe's code, in a forked child */
	AP_OP_PACKAGE,         /* a Debian package's version, of the environment */
	AP_OP_TESTS_INDEX,     /* parses a test tree into a usage index */
	AP_OP_SAME_OBJECT,     /* which names are the target's own object */
	AP_OP_TESTS_PREFLIGHT, /* what an official test file needs; imports it */
	AP_OP_TESTS_IMPORT,    /* a preflight's import, waited for */
	AP_OP_TESTS_RUN,       /* runs official tests, each bounded */
	AP_OP_OPINFO,          /* the OpInfo entries of an operator */
	AP_OP_SAMPLES,         /* an operator's sample inputs */
	AP_OP_RUN,             /* runs samples on each device, a frame per sample */
	AP_OP_SWEEP_BEGIN,     /* readies a sweep's walk; what the plugins add */
	AP_OP_SWEEP_WALK,      /* the public APIs under one catalog entry */
	AP_OP_TESTS_GENERATED, /* the tests upstream generates for an operator */
	AP_OP_CASE_SAMPLES,    /* a traced program's cases, made again as samples */
	AP_OP_EXIT,            /* ends the worker */
	AP_OP_COUNT,
	AP_OP_UNKNOWN = -1,
};

/* op's name in the frames. */
const char *ap_op_name(enum ap_op op);

/* The operation named name, or AP_OP_UNKNOWN. */
enum ap_op ap_op_parse(const char *name);

/* Whether the worker's OPS table holds op (all but AP_OP_EXIT). */
int ap_op_dispatched(enum ap_op op);

/* The fields every request of op carries, besides "op" and its limits
 * (NULL-terminated; optional fields are not listed). */
const char *const *ap_op_fields(enum ap_op op);

/* The limits, in seconds, every request of op carries (NULL-terminated). */
const char *const *ap_op_limits(enum ap_op op);

/* Whether req is a request as the table describes it: a known op, each of
 * its fields present, each limit a positive integer. 0, or -AP_EPROTO with
 * what is wrong in why. */
int ap_proto_check(const json_t *req, struct ap_buf *why);

/* ------------------------------------------------------------- requests */

/* The fingerprint of the device backends and plugin modules named;
 * device_timeout_s bounds the worker's device query. */
json_t *ap_proto_fingerprint(json_t *backends, json_t *plugins, int device_timeout_s);

/* Resolves target after importing the plugin modules named. */
json_t *ap_proto_resolve(const char *target, json_t *plugins);

/* Runs probe name's code with bind, in a child killed after timeout_s. */
json_t *ap_proto_probe(const char *name, const char *code, const json_t *bind, int timeout_s);

/* The environment's version of the Debian package name. */
json_t *ap_proto_package(const char *name);

/* Parses the test tree at root (the worker's path) into an index file. */
json_t *ap_proto_tests_index(const char *root);

/* Which of names (dotted paths) are target's own object. */
json_t *ap_proto_same_object(const char *target, const json_t *names);

/* The tests that the decorated templates ([[file, class, test, decorator
 * source]]) generate for target on device, with each file's facts ({file:
 * {assigns, bindings, instantiated}}); and whether each of modules imports. */
json_t *ap_proto_tests_generated(const char *target, const char *device, const json_t *templates,
				 const json_t *facts, const json_t *modules);

/* A preflight of one official test file. */
struct ap_proto_preflight {
	const char *root, *file;  /* the test tree (the worker's path), a file in it */
	int try_import, keep;     /* import the file; keep a runner that imported it */
	int wait;                 /* answer after the import, not before */
	int timeout_s;            /* bounds the import */
	json_t *setenv;           /* taken: the environment the tests run in */
	const json_t *names;      /* [[class, test]] the run would take */
	const json_t *imports;    /* the file's imports from the index; NULL: null */
};
json_t *ap_proto_tests_preflight(const struct ap_proto_preflight *p);

/* The import answer of a preflight's runner. */
json_t *ap_proto_tests_import(const json_t *runner);

/* A run of official tests of one file: the nodes named, or those -k select
 * matches there. */
struct ap_proto_tests_run {
	const char *root, *file;
	json_t *nodes;          /* taken: [[class, test]]; NULL: select instead */
	const char *select;     /* a -k expression, when nodes is NULL */
	int timeout_s;          /* bounds each test */
	int deadline_s;         /* bounds the whole run */
	json_t *setenv;         /* taken; NULL: an empty one */
	const json_t *runner;   /* with nodes, a preflight's runner to run in
				 * (NULL: none, sent as null); not sent with select */
};
json_t *ap_proto_tests_run(const struct ap_proto_tests_run *t);

/* The OpInfo entries of target, their facts for devices. */
json_t *ap_proto_opinfo(const char *target, json_t *devices);

/* Up to max_samples sample inputs of target per dtype, drawn with seed. */
json_t *ap_proto_samples(const char *target, json_t *dtypes, int max_samples, long seed);

/* The samples of a traced program's cases of target (each {id, count, args,
 * kwargs}, evidence/cases.h), made again with seed: answered as
 * ap_proto_samples() is, each sample of kind "case". */
json_t *ap_proto_case_samples(const char *target, json_t *cases, long seed);

/* The limits of a run: each sample within timeout_s, and once the CPU
 * has run it, within floor_s + factor x the CPU's time (never more than
 * timeout_s); the devices' start within start_s. */
struct ap_proto_run_limits {
	int timeout_s, start_s, floor_s, factor;
};

/* Runs samples of target on devices, within lim. notrun (taken): for each
 * sample, an object naming the sides ("cpu" or a device) not to run it on,
 * each with the reason its part then gives. adapter: the name of what the
 * worker is to adapt in its runner (ap_numeric_adapter), or NULL (sent as
 * null). */
json_t *ap_proto_run(const char *target, const json_t *samples, json_t *devices,
		     json_t *notrun, const struct ap_proto_run_limits *lim, const char *adapter);

/* One catalog entry of a sweep_begin: what to walk, what not. */
json_t *ap_proto_sweep_entry(const char *name, const char *walk, json_t *exclude);

/* Readies a sweep's walk of entries (made by ap_proto_sweep_entry);
 * surface is what counts as API surface (check/surface.h), borrowed. */
json_t *ap_proto_sweep_begin(json_t *plugins, json_t *entries, const json_t *surface);

/* Walks one catalog entry to depth, leaving out exclude and the APIs of
 * skip (NULL: none); surface as for sweep_begin, borrowed. */
json_t *ap_proto_sweep_walk(const char *entry, const char *walk, json_t *exclude,
			    const json_t *skip, const char *depth, const json_t *surface);

/* Ends the worker. */
json_t *ap_proto_exit(void);

/* --------------------------------------------------------------- replies */

/* The worker's first frame: its hello. 0 with the worker's Python version in
 * *python, or -AP_EPROTO when msg is no hello. */
int ap_proto_hello(const json_t *msg, const char **python);

/* Whether a resolve reply found the target (a bundle's resolution is that
 * reply as it came). */
int ap_proto_resolve_found(const json_t *reply);

/* A package reply: whether the package is installed, its source package,
 * version and the release's codename, or why it was not found. Absent
 * fields are NULL. */
struct ap_proto_package {
	int found;
	const char *source, *version, *codename, *why;
};
void ap_proto_package_read(const json_t *reply, struct ap_proto_package *p);

/* A package reply's version, or NULL when the package is not installed. */
const char *ap_proto_package_version(const json_t *reply);

/* A tests_index reply's index file (the worker's path), or NULL. */
const char *ap_proto_tests_index_path(const json_t *reply);

/* Whether a same_object reply says the i-th name is the target's object. */
int ap_proto_same_object_is(const json_t *reply, size_t i);

/* A tests_generated reply: its error (NULL: none), the target's entries
 * (names, an array), and per template i: the tests ([[class, test, dtype or
 * null]], NULL when absent), the instantiation that leaves the device out
 * (or NULL) and the error evaluating it (or NULL). */
struct ap_proto_generated {
	const char *error;
	const json_t *ops, *templates, *present;
};
void ap_proto_tests_generated_read(const json_t *reply, struct ap_proto_generated *g);

struct ap_proto_generated_template {
	const json_t *names;
	const char *not_for_device, *error;
};
void ap_proto_generated_template(const struct ap_proto_generated *g, size_t i,
				 struct ap_proto_generated_template *t);

/* Whether the reply says module imports in the environment. */
int ap_proto_generated_present(const struct ap_proto_generated *g, const char *module);

/* ------------------------------------------------- official tests' replies */

/* One frame of a traceback. */
struct ap_proto_frame {
	const char *file, *function;
	long long line;
};

#define AP_PROTO_FRAMES 8 /* the last frames an exception's facts keep */

/* An exception as the worker saw it: known is 0 when the worker sent no
 * facts. type is type(e).__name__, qualname and module those of its type,
 * message str(e); notes its __notes__ (strings), the last frames innermost
 * last. message, module or notes are NULL where the worker could not read
 * them. */
struct ap_proto_exc {
	int known;
	const char *type, *qualname, *module, *message;
	const json_t *notes;
	size_t nframes;
	struct ap_proto_frame frames[AP_PROTO_FRAMES];
};

/* The i-th note of e, or NULL. */
const char *ap_proto_exc_note(const struct ap_proto_exc *e, size_t i);

/* A unittest TestResult's counts, the tracebacks of its last error and last
 * failure (NULL: none) with their exceptions' facts, its last skip's reason. */
struct ap_proto_unittest {
	long long tests_run, errors, failures, skipped, expected_failures,
		unexpected_successes;
	const char *error, *failure, *skip;
	struct ap_proto_exc error_exc, failure_exc;
};

/* What a module-level test function raised: raised is 0 when nothing;
 * assertion whether an AssertionError; text as the worker words it. */
struct ap_proto_raised {
	int raised, assertion;
	const char *type, *text;
	struct ap_proto_exc exc;
};

/* How the process of a test that reported no result ended: it passed its
 * timeout (timed_out, the timeout in seconds), a signal killed it (signal,
 * its name as the worker's Python knows it, or NULL), or it exited. */
struct ap_proto_died {
	int timed_out, signal, exit_status;
	double timeout_s;
	const char *signal_name;
};

/* What one result of tests_run holds, in the order it is judged. */
enum ap_proto_test_kind {
	AP_TEST_DIED,      /* its process reported nothing */
	AP_TEST_BROKEN,    /* the worker failed to run it; broken says why */
	AP_TEST_UNDEFINED, /* no such test after import */
	AP_TEST_FUNCTION,  /* a module-level test function ran */
	AP_TEST_UNITTEST,  /* a unittest TestCase ran */
	AP_TEST_NONE,      /* none of these */
};

/* One result of tests_run. cls is NULL for a module-level test; output NULL
 * when the result has none; duration_ms 0 unless has_duration. */
struct ap_proto_test {
	const char *cls, *test;
	enum ap_proto_test_kind kind;
	struct ap_proto_unittest unittest;
	struct ap_proto_raised function;
	struct ap_proto_died died;
	const char *broken;
	int has_duration;
	long long duration_ms;
	const char *output;
};
void ap_proto_test_read(const json_t *result, struct ap_proto_test *t);

/* A test file's import: present is 0 when the reply has none. error and
 * missing (the module an ImportError names) are NULL when absent; defined
 * what it defines of the names asked (see ap_proto_defined_class). */
struct ap_proto_import {
	int present, ok;
	long long ms;
	const char *error, *missing;
	const json_t *defined;
};
void ap_proto_import_read(const json_t *import, struct ap_proto_import *imp);

/* A class an import defines that could be node [cls, test]: its name,
 * whether test is its own, its methods (an array of strings). */
struct ap_proto_defined_class {
	const char *name;
	int own;
	const json_t *methods;
};

/* The k-th such class of defined (an import's) for [cls, test]: 0, or -1
 * when there is none. */
int ap_proto_defined_class(const json_t *defined, const char *cls, const char *test, size_t k,
			   struct ap_proto_defined_class *c);

/* One module a test file imports: where it comes from ("local",
 * "installed"), whether it is present, its path in the tree (NULL: none). */
struct ap_proto_module {
	const char *module, *where, *path;
	int present;
};

/* A tests_preflight reply: the file, whether it exists, its modules, the
 * import (when tried) and the runner kept for the run (NULL: none). */
struct ap_proto_preflighted {
	const char *file;
	int file_exists;
	size_t nmodules;
	const json_t *modules;
	struct ap_proto_import import;
	const json_t *runner;
};
void ap_proto_preflight_read(const json_t *reply, struct ap_proto_preflighted *p);

/* The i-th module of a preflight (i < p->nmodules). */
void ap_proto_preflight_module(const struct ap_proto_preflighted *p, size_t i,
			       struct ap_proto_module *m);

/* A tests_import reply into p: its import, and its runner (NULL when the
 * runner did not import and is gone). */
void ap_proto_tests_import_read(const json_t *reply, struct ap_proto_preflighted *p);

/* A tests_run reply: the import, the results, the runner's log. */
struct ap_proto_tests_ran {
	struct ap_proto_import import;
	size_t ntests;
	const json_t *tests;
	const char *log;
};
void ap_proto_tests_run_read(const json_t *reply, struct ap_proto_tests_ran *r);

/* The i-th result of a tests_run reply (i < r->ntests). */
void ap_proto_tests_ran_test(const struct ap_proto_tests_ran *r, size_t i, struct ap_proto_test *t);

/* A sweep_walk reply: its status word (the worker's, unchecked), the reason
 * of a failed walk, and the APIs found. Absent fields are NULL. */
struct ap_proto_walked {
	const char *status, *reason;
	const json_t *apis;
};
void ap_proto_sweep_walked(const json_t *reply, struct ap_proto_walked *w);

/* A sweep_begin reply: the torch version, and the plugins that loaded (an
 * array of names). Absent fields are NULL. */
struct ap_proto_begun {
	const char *torch;
	const json_t *plugins;
};
void ap_proto_sweep_begun(const json_t *reply, struct ap_proto_begun *b);

/* A numeric run's reply (its samples came as frames before it): what its
 * runner children wrote to stderr (a backend's abort message; NULL when the
 * reply has none). */
struct ap_proto_numeric_ran {
	const char *log;
};
void ap_proto_numeric_ran_read(const json_t *reply, struct ap_proto_numeric_ran *r);

/* One OpInfo (or ModuleInfo) entry of an opinfo reply: its name, variant
 * ("" when none) and the dtypes it supports by side ("cpu", each device):
 * dtypes_of gives them. */
struct ap_proto_opinfo_op {
	const char *name, *variant;
	const json_t *dtypes;
};

/* The number of entries of an opinfo reply (0: none stands for the target). */
size_t ap_proto_opinfo_count(const json_t *reply);

/* The i-th entry of an opinfo reply (i < ap_proto_opinfo_count). */
void ap_proto_opinfo_op(const json_t *reply, size_t i, struct ap_proto_opinfo_op *op);

/* Whether op claims dtype on side: 1, 0 (it names its dtypes there, and
 * not this one), or -1 (it says nothing of side). */
int ap_proto_opinfo_claims(const struct ap_proto_opinfo_op *op, const char *side,
			   const char *dtype);

/* How a child the worker supervised ended (a probe's, a numeric runner's):
 * facts, which the caller judges. At the limit (timed_out), by a signal
 * (its name as the worker's Python spells it, e.g. "SIGSEGV"), or by its
 * own exit (has_exit_status, exit_status); limit_s: the limit it ran
 * under. Nothing of it said: all 0 and NULL. */
struct ap_proto_ended {
	int timed_out;
	const char *signal;
	int has_exit_status;
	long long exit_status;
	double limit_s;
};
void ap_proto_ended_read(const json_t *ended, struct ap_proto_ended *e);

/* A numeric run's frame that says its sample was lost, as the worker's
 * facts: how the runner ended, during the sample or before its first
 * sample began (before_start; then under the devices' start limit), the
 * CPU's time when the limit was derived from it, and the device daemon
 * (a child of the runner when it was ready) that died, if one did: the
 * runner is stopped a second after. */
struct ap_proto_lost {
	int before_start;
	struct ap_proto_ended ended;
	int has_cpu_s;        /* the devices' limit was derived from the CPU's time */
	double cpu_s;
	int daemon_died;      /* a child of the runner (a device's daemon) died */
	long long daemon_pid;
	const char *daemon_signal; /* NULL: unknown, or it exited */
	int daemon_has_exit;
	long long daemon_exit;
};

/* 1 with l filled when frame says its sample was lost (as facts), else 0. */
int ap_proto_frame_lost(const json_t *frame, struct ap_proto_lost *l);

/* What a probe raised (the probe's result frame's "raised"): its type's
 * name, its message (msg_len bytes: it may hold a NUL), whether check()
 * raised it (the probe's own verdict), the traceback's tail (as JSON, NULL
 * when none). */
struct ap_proto_probe_raised {
	const char *type, *message;
	size_t message_len;
	int check;
	const json_t *traceback;
};

/* A probe reply: the child's result frame, if one came (has_result), or
 * what it streamed before it ended; how it ended; its time and output.
 * JSON values are NULL where absent. */
struct ap_proto_probe_reply {
	int has_result;
	int unreadable;              /* the result frame could not be read */
	const char *harness;         /* the harness failed in the child: why */
	int raised;                  /* the probe raised: exc says what */
	struct ap_proto_probe_raised exc;
	const json_t *trace;         /* the result's trace, or NULL */
	const json_t *device_trace;  /* the result's device trace, or NULL */
	const json_t *steps;         /* the steps streamed, or NULL */
	struct ap_proto_ended ended;
	const json_t *duration_ms, *output;
};
void ap_proto_probe_read(const json_t *reply, struct ap_proto_probe_reply *p);
/* One API of a sweep_walk reply's apis: its dotted path, its status word
 * (the worker's, unchecked), the class its checks are chosen by (depth probe
 * and numeric), and the object itself, whose other fields are a matrix
 * line's (evidence/matrix.h reads them). Absent fields are NULL. */
struct ap_proto_swept {
	const char *api, *status, *canonical;
	const json_t *fields;
};
void ap_proto_sweep_api(const json_t *api, struct ap_proto_swept *s);

/* ------------------------------------------------------ numeric replies */

/* The resolve reply: whether the target was found, its dotted path, and
 * (when found) its canonical name, the class owning it (a method's; NULL
 * when none), its kind ("function", "class", ...), where it is defined, its
 * signature's text and data, what a plugin changed of it (patch, as sent).
 * When not found: the deepest name that resolved, the missing one, the
 * nearest names (an array). cls is the class its checks are chosen by: its
 * owner, else its canonical name. Absent fields are NULL (line 0). */
struct ap_proto_resolution {
	int found;
	const char *target, *canonical, *owner, *kind, *module, *file, *signature, *cls;
	long long line;
	const char *deepest, *missing;
	const json_t *signature_data, *patch, *nearest;
};
void ap_proto_resolution_read(const json_t *reply, struct ap_proto_resolution *r);

/* The kinds of sample the worker makes: OpInfo's (or ModuleInfo's)
 * sample_inputs, reference_inputs, error_inputs. */
enum ap_proto_sample_kind {
	AP_SAMPLE_SAMPLE,
	AP_SAMPLE_REFERENCE,
	AP_SAMPLE_ERROR,
	AP_SAMPLE_DTYPE, /* a dtype the CPU's OpInfo does not claim: who accepts it */
	AP_SAMPLE_CASE,  /* a traced program's call, made again (check --cases) */
	AP_SAMPLE_KIND_COUNT,
	AP_SAMPLE_KIND_UNKNOWN = -1,
};

/* kind's word in the frames; the kind a word names, or ..._UNKNOWN. */
const char *ap_proto_sample_kind_name(enum ap_proto_sample_kind kind);
enum ap_proto_sample_kind ap_proto_sample_kind_parse(const char *word);

/* The form a sample calls its operator in (the worker's "form"): the call
 * the target names (no "form"), or another of its OpInfo entry's: the
 * function, the method, in place, the function with out=, or the target's
 * call on noncontiguous copies of its tensors. */
enum ap_proto_form {
	AP_FORM_TARGET,
	AP_FORM_FUNCTION,
	AP_FORM_METHOD,
	AP_FORM_INPLACE,
	AP_FORM_OUT,
	AP_FORM_NONCONTIGUOUS,
	AP_FORM_COUNT,
	AP_FORM_UNKNOWN = -1,
};

/* form's word in the frames ("" for the target's own); the form a word
 * names (NULL: the target's), or ..._UNKNOWN. */
const char *ap_proto_form_name(enum ap_proto_form form);
enum ap_proto_form ap_proto_form_parse(const char *word);

/* A samples reply: its samples (an array, NULL when it holds none), how
 * many, and those it skipped (as sent, NULL when absent). */
struct ap_proto_samples {
	const json_t *samples;
	size_t n;
	const json_t *skipped;
};
void ap_proto_samples_read(const json_t *reply, struct ap_proto_samples *r);

/* One sample, as the worker makes it (and as apiparity sends it back, with
 * its id and input digest added by ap_proto_sample_prepared): its OpInfo
 * entry's name and variant, its dtype (NULL for an error sample), its kind
 * (the word as sent, and parsed), its index among its kind, the exception
 * type an error sample expects, the sample itself (tagged inputs), its
 * form and the callable that form calls. ok says whether it is as the
 * worker makes samples (each field of its type; a null dtype only for an
 * error sample; a form the worker names). Absent fields are NULL (index 0). */
struct ap_proto_sample {
	int ok;
	const char *op, *variant, *dtype, *kind_word, *error_type;
	enum ap_proto_sample_kind kind;
	enum ap_proto_form form;
	const char *call; /* the callable of a form other than the target's */
	/* what the entry's OpInfo says of upstream's test_compare_cpu for this
	 * sample's dtype (a skip's reason), NULL when it runs it */
	const char *compare_skip;
	long long index;
	const json_t *input;
	const char *id, *input_digest;
};
void ap_proto_sample_read(const json_t *sample, struct ap_proto_sample *s);

/* A copy of sample with its id and input digest, as the run request sends
 * it; NULL when out of memory. */
json_t *ap_proto_sample_prepared(const json_t *sample, const char *id, const char *input_digest);

/* The status of one side's part of a run frame. */
enum ap_proto_part_status {
	AP_PART_OK,     /* it ran: outputs and grads */
	AP_PART_RAISED, /* the operator raised: exception, message */
	AP_PART_NOTRUN, /* apiparity said not to run it there: reason */
	AP_PART_ERROR,  /* the harness failed: reason */
	AP_PART_STATUS_COUNT,
	AP_PART_STATUS_UNKNOWN = -1,
};

/* status's word in the frames; the status a word names, or ..._UNKNOWN. */
const char *ap_proto_part_status_name(enum ap_proto_part_status status);
enum ap_proto_part_status ap_proto_part_status_parse(const char *word);

/* One side's part of a run frame: present is 0 when the frame has none (or
 * it is no object). status_word is the status as sent (NULL: none), status
 * it parsed. outputs and grads are arrays of tagged values (check/numeric.h
 * decodes a tensor's); device_trace as sent. Absent fields are NULL. */
struct ap_proto_part {
	int present;
	enum ap_proto_part_status status;
	const char *status_word, *exception, *message, *reason;
	const json_t *outputs, *grads, *device_trace;
	int has_alias, alias; /* in place and out=: whether it wrote into the tensor given */
};

/* A frame of the run's stream: the index of its sample (has_index 0 when
 * it says none), its parts by side, and whether it says its sample was
 * lost (lost: the field is there). A lost frame holds either the worker's
 * facts (ap_proto_frame_lost reads them) or, once judged here
 * (ap_proto_frame_set_lost), its status word and reason, read into
 * lost_status and lost_reason (NULL when absent). */
struct ap_proto_run_frame {
	int has_index;
	long long index;
	const json_t *parts;
	int lost;
	const char *lost_status, *lost_reason;
	long long lost_daemon_exit; /* the device's daemon exited with it; -1: not so */
};
void ap_proto_run_frame_read(const json_t *frame, struct ap_proto_run_frame *f);

/* The part of frame f for side ("cpu" or a device) into p. */
void ap_proto_run_frame_part(const struct ap_proto_run_frame *f, const char *side,
			     struct ap_proto_part *p);

/* The first aten operator name in part p's device trace ("randn.default")
 * for which pred is true, or NULL (none, or no trace). */
const char *ap_proto_part_op_where(const struct ap_proto_part *p, int (*pred)(const char *op));

/* Replaces what frame says of its loss with the judgement: status (a
 * status word) and reason (reason_len bytes), and the status the device's
 * daemon exited with (daemon_exit; -1: it did not exit of itself), which a
 * backend limit may excuse. 0, or -1 when out of memory. */
int ap_proto_frame_set_lost(json_t *frame, const char *status, const char *reason,
			    size_t reason_len, long long daemon_exit);

/* A frame for sample i that says it was lost, judged: status, reason. */
json_t *ap_proto_lost_frame(long long i, const char *status, const char *reason);

/* What a digest of frame's results keeps of side's part: its status,
 * exception and outputs as sent, and, where the side has no status, the
 * status of the frame's loss (judged: ap_numeric_frame_judge), never its
 * reason (each null when absent): nothing that changes from run to run.
 * A new object, or NULL when out of memory. */
json_t *ap_proto_frame_result(const json_t *frame, const char *side);

#endif
