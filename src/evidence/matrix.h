/* matrix.h - the support matrix of a sweep: one line per API per environment.
 *
 * `apiparity sweep --out DIR` writes DIR/matrix.jsonl; merge, diff, `docs
 * generate` and `docs audit` read it back. This module owns the shape of a
 * line (nobody else spells its keys), its order, and reading a matrix back as
 * untrusted input.
 *
 * A line is one compact JSON object, its keys in this order:
 *   {"schema": "apiparity.matrix/1",
 *    "env": "trixie",                       the environment (its name)
 *    "module": "torch.autograd.grad_mode",  the catalog entry it was found under
 *    "api": "torch.autograd.grad_mode.set_multithreading_enabled.clone",
 *                                           the public dotted path walked (as the
 *                                           backend's pages head their entries)
 *    "key": "set_multithreading_enabled.clone",
 *                                           the class-relative form the pages use
 *                                           for a member ("Tensor.abs"); the api
 *                                           itself for anything else
 *    "owner": "torch.autograd.grad_mode.set_multithreading_enabled" | null,
 *    "status": "present" | "absent" | "import-error" | "crash" | "timeout" | "error",
 *    "kind": "module" | "class" | "function" | "method" | "classmethod" |
 *            "staticmethod" | "property" | "builtin" | "builtin-method" |
 *            "callable" | "value" | null,
 *    "file": "torch/autograd/grad_mode.py" | null, "line": 201 | null,
 *    "defined": "torch.distributions.von_mises.VonMises" | null,
 *                                           a class's identity: its module and
 *                                           qualname, whatever path reached it
 *    "pure_python": true | false | null,
 *    "doc": true | false | null,            whether the object carries a
 *                                           docstring of its own (not its
 *                                           type's): what autodoc needs to
 *                                           document a member on its class's page
 *    "signature": ["clone(self)"] | null    every overload's text (depth
 *                                           signature and deeper), in order,
 *    "reaches": ["zero_grad"] | null,       on a module or class whose members
 *                                           were walked: the other names getattr
 *                                           reaches on it, sorted (private names,
 *                                           members inherited from a public base,
 *                                           names from outside torch, a class's
 *                                           own dunders); what the audit looks in
 *                                           before it calls a name absent
 *    "on_self": ["data"] | null,            on a class: names its source (or a
 *                                           torch base's) assigns on self that
 *                                           getattr does not reach on the class
 *    "patched": true | false | null,        a plugin replaced it (null: nothing
 *                                           to compare, or no plugin loaded)
 *    "plugin_added": true | false,          it exists only once plugins load
 *    "check": null | {...},                 its automatic checks (depth probe
 *                                           and numeric; below),
 *    "verdict": "consistent" | "inconsistent" | "not-run" | "absent",
 *    "reason": "text" | null}
 *
 * An API is a (module, api) pair, and each api has one line per environment:
 * a name that is a catalog entry of its own is that entry's (torch.nn is not
 * listed again as a member of torch), and a class's members are walked under
 * the entry that defines it (torch.autograd.function.Function.forward, not
 * again as torch.autograd.Function.forward), so that each lies wholly in one
 * shard. Every catalog entry has a line of its own in every environment (api
 * = module = the entry, kind "module", or for a class entry the class as
 * measured), whose status says whether its walk worked there.
 *
 * status says what was measured in that environment: present, absent (the
 * API exists in another environment of the matrix, not here; on an entry's
 * own line: this torch has no such module or class, e.g. torch.export in
 * 1.13, the import's error in reason), or that the walk of the module
 * failed (import-error: the entry does not import, e.g. an optional
 * dependency is missing, the error in reason; crash, timeout, error); the
 * APIs other environments found under a failed or absent entry are lines
 * of that status too. A line holds
 * nothing that changes from run to run (no time, no address), so two sweeps of
 * the same environments give byte-identical matrices: that is what --resume
 * and merge are checked against.
 *
 * verdict, per API, against the API's reference: the --reference environment
 * when it has the API, else the first environment (in --env order) where it is
 * present. The reference's own line is consistent; another present line is
 * inconsistent when its kind or (depth signature) its signature differs from
 * the reference's, else consistent; absent is absent; a failed walk is
 * not-run. reason says why for anything but consistent.
 *
 * check (depth probe and numeric, on a present callable or class; null
 * otherwise) sums up the checks `apiparity check` would choose for the API,
 * run in that environment (check/autocheck.h):
 *   {"status": "consistent" | "inconsistent" | "not-run" | "crash" | "timeout",
 *    "reason": "text" | null, "family": "mode-context" | null,
 *    "operators": ["nn.functional.relu"] | null   (OpInfo/ModuleInfo entries),
 *    "checks": n, "passed": n, "failed": n, "notrun": n, "samples": n,
 *    "digest": "sha256 of the samples' CPU results" | null}
 * A check that is inconsistent, crashed or timed out makes the line
 * inconsistent (after kind and signature), its reason "check: ..." (the
 * policy of check/verdict.h: a FAIL, CRASH or TIMEOUT is an inconsistency);
 * one that did not run leaves the verdict as resolution and signature make it.
 *
 * Lines are sorted by api, module, then the environment's position in --env,
 * so the file is the same whatever order modules were walked or shards merged
 * in.
 */
#ifndef AP_MATRIX_H
#define AP_MATRIX_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/outcome.h"

#define AP_MATRIX_SCHEMA "apiparity.matrix/1"
#define AP_MATRIX_NAME "matrix.jsonl"
/* What a sweep directory says about itself: envs (name, label, torch,
 * plugins loaded),
 * depth, catalog digest, shard {index, count} or null, complete. */
#define AP_SWEEP_META_NAME "sweep.json"
#define AP_SWEEP_SCHEMA "apiparity.sweep/1"

/* A matrix line's limits when read back from someone else. */
#define AP_MATRIX_MAX_BYTES (256u << 20)
#define AP_MATRIX_MAX_LINE (1u << 20)

/* Nothing said (null), no, yes: a line's optional booleans. */
enum ap_tri { AP_TRI_NULL, AP_TRI_FALSE, AP_TRI_TRUE };

/* A list of strings (owned), or null (set 0). */
struct ap_matrix_strs {
	char **v;
	size_t n;
	int set;
};

/* Whether the list s holds name (read back from someone else, so not
 * trusted to be sorted). */
int ap_matrix_strs_has(const struct ap_matrix_strs *s, const char *name);

/* Whether two lines' kinds (optional strings: both null, or the same text)
 * and signatures (both null, or the same strings in order) are the same. */
int ap_matrix_same_kind(const char *a, const char *b);
int ap_matrix_same_signature(const struct ap_matrix_strs *a, const struct ap_matrix_strs *b);

/* The counts of a line's check, in the order they are written. */
enum { AP_MCOUNT_CHECKS, AP_MCOUNT_PASSED, AP_MCOUNT_FAILED, AP_MCOUNT_NOTRUN,
       AP_MCOUNT_SAMPLES, AP_MCOUNT_N };

/* A line's check (see above); set 0: the line's check is null. Strings are
 * owned, NULL for null. */
struct ap_matrix_check {
	int set;
	enum ap_line_check status;
	char *reason, *family, *digest;
	struct ap_matrix_strs operators;
	long long counts[AP_MCOUNT_N];
};

/* One line (see above): every string owned, NULL for null. verdict is
 * AP_LINE_VERDICT_UNKNOWN until the line is judged (written as null). */
struct ap_matrix_line {
	char *env, *module, *api, *key, *owner;
	enum ap_line_status status;
	char *kind, *file, *defined;
	int has_line;                /* line is known (else null) */
	long long line;
	enum ap_tri pure_python, doc;
	struct ap_matrix_strs signature, reaches, on_self;
	enum ap_tri patched;
	int plugin_added;
	struct ap_matrix_check check;
	enum ap_line_verdict verdict;
	char *reason;
};

/* A matrix: lines, owned. */
struct ap_matrix {
	struct ap_matrix_line *v;
	size_t n, cap;
};

/* Makes *l a new line for api in env, found under module, with status; key
 * is api, everything else null (plugin_added false). 0 or -ENOMEM. */
int ap_matrix_line_init(struct ap_matrix_line *l, const char *env, const char *module,
			const char *api, enum ap_line_status status);

/* Frees what l owns (l may be all zeroes). */
void ap_matrix_line_free(struct ap_matrix_line *l);

/* Makes *dst a copy of src. 0 or -ENOMEM. */
int ap_matrix_line_copy(struct ap_matrix_line *dst, const struct ap_matrix_line *src);

/* Sets the measured fields of l that o holds under a line's keys (key,
 * owner, kind, file, line, defined, pure_python, doc, signature, reaches, on_self, patched, plugin_added,
 * reason): the worker's answer for one API; a value of another type than
 * due is taken as null. 0 or -ENOMEM. */
int ap_matrix_line_measured(struct ap_matrix_line *l, const json_t *o);

/* The line as a JSON object, its keys in the order above (a journal's
 * record of it). NULL when out of memory. */
json_t *ap_matrix_line_json(const struct ap_matrix_line *l);

/* Makes *l the line o is (a journal's record, or a line read back): 0,
 * -ENOMEM, or -AP_EPROTO when o has no env, module, api or known status. */
int ap_matrix_line_from_json(const json_t *o, struct ap_matrix_line *l);

/* The check of a line (see above), its keys in that order; counts are
 * checks, passed, failed, notrun, samples. operators is taken (may be NULL);
 * the strings may be NULL but status. NULL when out of memory. */
json_t *ap_matrix_check(enum ap_line_check status, const char *reason, const char *family,
			json_t *operators, const size_t counts[5], const char *digest);

/* Sets *c from c_json, a check as ap_matrix_check() makes it (NULL or null:
 * no check). 0 or -ENOMEM. */
int ap_matrix_check_read(const json_t *c_json, struct ap_matrix_check *c);

/* Whether the line's check is there and has status st. */
int ap_matrix_check_is(const struct ap_matrix_line *l, enum ap_line_check st);

/* Appends *l to m, taking what it owns (*l is zeroed). 0 or -ENOMEM (l
 * freed). */
int ap_matrix_add(struct ap_matrix *m, struct ap_matrix_line *l);

/* Frees the lines of m and m's array; m is empty after. */
void ap_matrix_free(struct ap_matrix *m);

/* Sorts the lines by api, module, then the position of their env in envs
 * (names; an env not in envs sorts last, by name). */
void ap_matrix_sort(struct ap_matrix *m, const char *const *envs, size_t nenvs);

/* Whether lines a and b are of the same API (module and api equal). */
int ap_matrix_same_api(const struct ap_matrix_line *a, const struct ap_matrix_line *b);

/* Sets the verdict and reason of every line (see above). m must be sorted
 * (ap_matrix_sort), so that the first present line of an API is its first
 * environment's; reference (the --reference name) may be NULL. */
void ap_matrix_judge(struct ap_matrix *m, const char *reference);

/* Appends the lines to out as matrix.jsonl: one compact line each, keys in
 * the order above. */
int ap_matrix_render(const struct ap_matrix *m, struct ap_buf *out);

/* Reads DIR/matrix.jsonl (or a file path) as untrusted input: a regular file
 * within AP_MATRIX_MAX_BYTES, each line within AP_MATRIX_MAX_LINE, a JSON
 * object with the schema above (strings where strings are due, integers,
 * booleans and lists where they are; env, module and api names of ASCII
 * letters, digits, '_' and '.', '-' too in env). *m (empty before) gets the
 * lines. 0, or -errno / -AP_EPROTO with "path:line: why" in err (m empty). */
int ap_matrix_read(const char *path, struct ap_matrix *m, struct ap_buf *err);

/* The environments of m's lines, in order of first appearance: a new array
 * of *n names borrowed from the lines (NULL when none or out of memory). */
const char **ap_matrix_envs(const struct ap_matrix *m, size_t *n);

#endif
