/* autocheck.h - the automatic checks of one API, as a sweep runs them
 * (`apiparity sweep --depth probe|numeric`), summed up for the matrix.
 *
 * The checks are the ones `apiparity check` chooses for a target with no
 * spec written for it, through the same requests and the same comparisons:
 *   - a member of a family (specs/, e.g. mode-context: the class itself, or
 *     a member of it such as its clone) runs the family's probes
 *     (spec.h; a probe whose trait the member lacks is NOTRUN);
 *   - an operator or nn module that an entry of the environment's OpInfo or
 *     ModuleInfo database stands for (numeric.h): at depth numeric its
 *     samples, made in this environment (at most max_samples per entry,
 *     dtype and kind, and AP_AUTOCHECK_SAMPLES_MAX in all), run on CPU and
 *     on each device of the environment, each device compared with the CPU;
 *     at depth probe only the entries are named (the samples NOTRUN).
 * Signatures are compared across environments by the matrix itself
 * (evidence/matrix.h). The traces of probes and the CPU results of samples
 * are compared across environments only by `apiparity check`: here each
 * environment is judged on its own, and the CPU results' digest is kept so
 * that two environments that made the same samples (the same torch) can be
 * compared by it.
 *
 * The summary is a matrix line's "check" (its shape: evidence/matrix.h).
 * Its status, worst first: crash (a check crashed: a probe's child, a
 * sample's runner, or the worker itself), timeout, inconsistent (a FAIL or
 * an ERROR), consistent (a check passed), not-run (nothing checked it, or
 * only NOTRUN checks; reason says why); its reason, the first check of that
 * status ("NAME: why").
 * Nothing in it changes from run to run, so the matrix stays reproducible.
 */
#ifndef AP_AUTOCHECK_H
#define AP_AUTOCHECK_H

#include <jansson.h>

#include "check/spec.h"
#include "env/worker.h"

#define AP_AUTOCHECK_SAMPLES 1       /* --samples of a sweep, by default */
#define AP_AUTOCHECK_SAMPLES_MAX 24  /* samples of one API at most */

struct ap_tolerances;
struct ap_limits;

struct ap_autocheck {
	const struct ap_specs *specs;
	/* what the samples' comparisons look up, for the API checked
	 * (numeric.h: struct ap_numeric_ctx); NULL: the defaults, no limits */
	const struct ap_tolerances *tolerances;
	const struct ap_limits *limits;
	const char *devices;  /* the environment's (env->device), or NULL */
	int numeric;          /* run the samples (depth numeric) */
	int max_samples;      /* per entry, dtype and kind */
	int limit_s;          /* each probe, each sample, each answer */
	int start_s;          /* for the devices to start */
};

/* Whether an API of this kind (the matrix's) can have checks: callables
 * and classes, not modules, values or properties. */
int ap_autocheck_applies(const char *kind);

/* Runs the checks of api in worker w; cls is the class whose family it may
 * belong to (the worker's "canonical": its owner's, else its own) or NULL.
 * *summary is a new summary (never NULL unless out of memory). 0, or the
 * worker's -AP_E* when it crashed or hung (the summary says so; the caller
 * restarts it). */
int ap_autocheck_run(struct ap_worker *w, const struct ap_autocheck *o, const char *api,
		     const char *cls, json_t **summary);

#endif
