/* cases.h - a traced workload as cases: what `apiparity trace` writes and
 * `apiparity check --cases` replays.
 *
 * A case is one public API call as a program made it, its arguments
 * described (never stored): identical calls are one case with a count. The
 * tracer inside the program (worker/trace/sitecustomize.py) sends journal
 * lines, applied here one by one (ap_trace_apply) as they arrive, so that a
 * program that dies keeps every case it made:
 *   {"t": "case", "id": N, "api", "kind": "function" | "module", "args",
 *    "kwargs"}                    a case, when first seen (count 1);
 *   {"t": "counts", "counts": [N by id], "over": {API: N},
 *    "aten": [[names] by id]}     the counts so far (a later line wins).
 * The file cases.jsonl (ap_trace_write, ap_trace_load) is one header line,
 *   {"format": AP_CASES_FORMAT, "about": ..., "command": [argv], "env",
 *    "exit": "exited with status 0" | "killed by SIGSEGV" | null,
 *    "returncode": N | null (negative: the signal), "limited": bool,
 *    "torch": bool (the program imported torch), "fingerprint": {...} | null,
 *    "max_cases": N, "over": {API: calls past max_cases}}
 * then one line per case, {"id", "api", "kind", "count", "args", "kwargs",
 * "aten"}. Arguments are tagged values as the worker's numeric samples
 * have them (numeric_tags.py), each tensor {"$desc": {dtype, shape, strides,
 * device, requires_grad, min, max[, values]}}, a value the tracer could not
 * describe {"$opaque": TYPE}.
 *
 * Everything read (a journal line, a file) is data from a program: a line
 * that is not a record is counted and skipped, never trusted.
 */
#ifndef AP_CASES_H
#define AP_CASES_H

#include <jansson.h>

#include "base/argv.h"
#include "base/buf.h"

#define AP_CASES_FORMAT "apiparity-cases/1"
#define AP_CASES_MAX 100000      /* cases in one trace */
#define AP_CASES_MAX_BYTES (256u << 20)

enum ap_case_kind {
	AP_CASE_FUNCTION,  /* a torch function or Tensor method */
	AP_CASE_MODULE,    /* an nn.Module call: listed, replayed through its functions */
	AP_CASE_KIND_COUNT,
	AP_CASE_KIND_UNKNOWN = -1
};

struct ap_case {
	long id;
	char *api;               /* the name a user writes: torch.nn.functional.conv2d */
	enum ap_case_kind kind;
	long count;              /* identical calls */
	json_t *args;            /* array of described values */
	json_t *kwargs;          /* object */
	json_t *aten;            /* array of aten operator names under it */
};

struct ap_trace {
	struct ap_argv command;  /* what ran */
	char *env;               /* where */
	int has_returncode;      /* the program's end is known ... */
	int returncode;          /* ... its status, or -signal */
	int limited;             /* stopped at --limit-seconds */
	int torch;               /* the tracer started: the program imported torch */
	json_t *fingerprint;     /* the environment's, or NULL */
	long max_cases;
	struct ap_case *v;       /* by id */
	size_t n, cap;
	json_t *over;            /* object: API -> calls past max_cases */
	long bad_lines;          /* journal lines that were not records */
};

/* Applies one journal line (len bytes, no newline) to t. A line that is not
 * a record, a case whose id is not the next one, or one past AP_CASES_MAX
 * cases counts in bad_lines. 0 or -ENOMEM. */
int ap_trace_apply(struct ap_trace *t, const char *line, size_t len);

/* Writes t to path as cases.jsonl, atomically. 0 or -errno. */
int ap_trace_write(const struct ap_trace *t, const char *path);

/* Reads cases.jsonl at path (a regular file of at most AP_CASES_MAX_BYTES)
 * into t. 0; -errno when it cannot be read (path in err); -AP_EINPUT when it
 * is not a regular file of that size ("path: why") or not a trace
 * ("path:line: why"). */
int ap_trace_load(struct ap_trace *t, const char *path, struct ap_buf *err);

void ap_trace_free(struct ap_trace *t);

/* Every call the trace counted, past max_cases too. */
long ap_trace_calls(const struct ap_trace *t);

/* One API of a trace, its cases together. */
struct ap_trace_api {
	const char *api;
	enum ap_case_kind kind;
	long calls;              /* of its cases, and past max_cases */
	size_t ncases;
	size_t first;            /* the index of its first case */
};

/* The APIs of t, most called first (then by name), in a new array *v of *n
 * (free() it). 0 or -ENOMEM. */
int ap_trace_apis(const struct ap_trace *t, struct ap_trace_api **v, size_t *n);

/* Whether c can be replayed on a device: a function call, by a dotted name,
 * with a positional argument and a tensor among its arguments, every
 * argument described (no $opaque, no tensor of another layout), and no
 * random operator under it (its values are the generator's, not the
 * kernel's). 1, or 0 with why in why. */
int ap_case_replayable(const struct ap_case *c, struct ap_buf *why);

/* One thing of a case's described arguments, as ap_case_desc_foreach()
 * walks them: a tensor (name: its dtype or NULL; layout: NULL when strided,
 * else the layout it was described with, "?" when none; its first
 * AP_DESC_DIMS_MAX dimensions), a value the tracer could not describe (name:
 * its type), or nesting past the walk's bound. */
#define AP_DESC_DIMS_MAX 64
enum ap_desc_kind { AP_DESC_TENSOR, AP_DESC_OPAQUE, AP_DESC_TOO_DEEP };
struct ap_desc_item {
	enum ap_desc_kind kind;
	const char *name;
	const char *layout;
	size_t ndim;
	long long dims[AP_DESC_DIMS_MAX];
};
typedef void ap_desc_fn(void *ctx, const struct ap_desc_item *it);

/* Gives fn each tensor and opaque value of c's positional arguments (and
 * keyword arguments, with kwargs), in order: the one walk of a case's
 * descriptions, for what is replayed, its size and its summary. */
void ap_case_desc_foreach(const struct ap_case *c, int kwargs, ap_desc_fn *fn, void *ctx);

/* The bytes c's tensors hold (each its elements times its dtype's size; a
 * dtype not known counts 8): what replaying it sends, before base64. */
double ap_case_tensor_bytes(const struct ap_case *c);

/* The most tensor bytes one API's replayed cases may hold together: they
 * travel in one frame each way (env/frame.h: 64 MiB), as base64. */
#define AP_CASES_REPLAY_BYTES (16.0 * 1024 * 1024)

const char *ap_case_kind_name(enum ap_case_kind k);

/* Whether the aten operator name ("aten.normal_.default" as a trace
 * names it, or "normal_.default" as a device trace does) is one whose
 * values are the random generator's (uniform, normal, bernoulli, rand,
 * randn, randint, ..., in place or not, of any overload): a device's
 * generator is not the CPU's. */
int ap_aten_is_random(const char *name);

#endif
