/* run.h - the check engine: one target checked in several environments, a
 * session per environment, judged together (what `apiparity check` runs).
 *
 * A run is opened with its options and environments (ap_run_open), measured
 * (ap_run_measure) and sealed (ap_run_seal); the caller prints from the
 * sessions after that, and frees the run. Each session owns, while the run
 * measures, its environment's worker, its journal (OUT/<env>/journal.jsonl)
 * and the bundle under construction; every check measured (a probe, a
 * script, an official test, a numeric sample) and every failure is
 * journaled as it is added to the bundle, before the next request, so that
 * what was measured survives a kill (a check decided without measuring, a
 * NOTRUN of the plan, is in the bundle only).
 *
 * Measuring, per environment in its own thread (the worker must stay with
 * the thread that started it: its parent-death signal follows that thread):
 *   1. the journal is created, the worker opened (ap_worker_open: within
 *      answer_s to start, then each answer within the longer of answer_s and
 *      a probe's timeout_s plus a margin);
 *   2. the target is resolved and the environment fingerprinted; the family
 *      that covers it runs its probes, else its OpInfo entry is looked up;
 *      the --script files run; the official upstream tests run;
 *   3. all sessions meet: the reference makes the numeric samples;
 *   4. each session runs them (each frame within answer_s + timeout_s plus
 *      the margin: the call's own deadline, never the session's);
 *   5. all sessions meet again: each CPU result is compared with the
 *      reference's; then each session ends (worker stopped, journal closed).
 * A session that failed keeps err (-AP_E*, its message in the bundle's
 * "error"); one whose evidence could not be written keeps io_err (-errno)
 * and io_detail. Neither stops the other sessions.
 *
 * The engine prints nothing but the status line it is given; errors are
 * returned, for the caller to report once.
 */
#ifndef AP_RUN_H
#define AP_RUN_H

#include <jansson.h>
#include <pthread.h>

#include "base/buf.h"
#include "base/statusline.h"
#include "check/numeric.h"
#include "check/spec.h"
#include "env/envs.h"
#include "env/worker.h"
#include "evidence/journal.h"
#include "evidence/sign.h"

#define AP_RUN_MAX_ENVS 64
/* Added to a limit the worker keeps itself (a probe's, a sample's), so that
 * its own answer (TIMEOUT of a probe, a sample lost) comes before ours. */
#define AP_RUN_WATCHDOG_MARGIN_S 30

struct ap_run_opts {
	const char *target;        /* a dotted Python name */
	const char *out;           /* the evidence goes to OUT/<env>/ */
	const char *reference;     /* the reference environment, or NULL: the default
				    * (ap_bundle_pick_reference) */
	const char *torch_src;     /* --torch-src, or NULL */
	const char *claimed;       /* a claimed node id, or NULL */
	int no_official;           /* do not run the official tests */
	const char *const *script_paths; /* the --script files ... */
	const struct ap_buf *scripts;    /* ... their sources ... */
	size_t nscripts;                 /* ... and how many */
	int timeout_s;             /* per probe, per test, per sample */
	int answer_s;              /* per worker answer (import, resolve) */
	int samples;               /* per OpInfo entry, dtype and kind */
	const struct ap_specs *specs;
	struct ap_numeric_ctx numeric; /* the tolerances and limits, for target */
	struct ap_worker *const *workers; /* NULL, or a worker per environment (NULL:
				    * none) that the caller opened, keeps across runs
				    * and frees: the sessions use it as it is */
	json_t **fingerprints;     /* with workers: NULL, or each environment's
				    * fingerprint once one run took it (a new
				    * reference the caller frees), used by the
				    * runs after it rather than taken again */
	const json_t *cases;       /* NULL, or a traced program's cases of target
				    * ({id, count, args, kwargs}, evidence/cases.h):
				    * the samples, made again, in place of OpInfo's */
};

struct ap_run;

/* Where the sessions' threads meet for the numeric checks: once every one
 * has resolved (the reference is known, and makes the samples), and once
 * every one has run them (the CPU results are compared across). */
struct ap_run_meeting {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t arrived[2];
	int done[2];
	json_t *samples;           /* the reference's, prepared; NULL: none */
};

/* One environment's session. The first block is set by ap_run_open; the
 * second is the result, the caller's to read once ap_run_measure returned;
 * the rest is the engine's own while it measures. */
struct ap_run_session {
	const struct ap_env *env;
	size_t idx;                /* position in the run, and on the status line */
	struct ap_buf dir;         /* OUT/<env> */
	json_t *bundle;            /* evidence/bundle.h */

	int err;                   /* the environment failed: -AP_E* */
	int io_err;                /* evidence could not be written: -errno ... */
	struct ap_buf io_detail;   /* ... and why */
	struct ap_buf warn;        /* lines for the user, to print after the run */

	struct ap_run *run;
	struct ap_journal *journal;
	struct ap_env run_env;     /* env with the test trees bound */
	struct ap_worker own;      /* the session's worker, unless the caller lends one */
	struct ap_worker *worker;  /* the worker it uses: &own, or the caller's
				    * (ap_run_opts.workers), kept from the first
				    * pass for the numeric one */
	int live;                  /* the worker answered everything so far */
	json_t *opinfo;            /* the OpInfo entries of the target here, or NULL */
	const json_t *samples;     /* the reference's samples (the meeting's) */
	json_t *frames;            /* the frame of each sample here, by index */
};

struct ap_run {
	const struct ap_run_opts *o;
	struct ap_run_session *s;  /* n of them, in the order of the environments */
	size_t n;
	struct ap_statusline *status;
	struct ap_run_meeting meeting;
};

/* Opens a run of o (kept by reference: it must outlive the run) in envs[0..n)
 * (at most AP_RUN_MAX_ENVS): a session each, with its bundle and directory.
 * Nothing runs yet. 0, or -ENOMEM / -E2BIG (run is then empty, still to be
 * freed). */
int ap_run_open(struct ap_run *run, const struct ap_run_opts *o,
		const struct ap_env *const *envs, size_t n);

/* Whether the evidence can be written where o->out says, before anything
 * runs: OUT writable, and each OUT/<env> absent, empty (then removed, to be
 * made again) or an earlier check's evidence (it has a journal), for the run
 * replaces it whole. 0, or -errno with why (the path, and what to do). */
int ap_run_out_ok(const struct ap_run *run, struct ap_buf *why);

/* Measures every session, each in a thread of its own, showing progress on
 * status (row i: session i; the caller's), then judges the bundles together
 * (check/verdict.h). Returns when every session has ended. */
void ap_run_measure(struct ap_run *run, struct ap_statusline *status);

/* Writes each bundle whose evidence could be written (bundle.json, run.log,
 * MANIFEST.sha256); with signer, names its key in each bundle first and
 * signs each manifest after. A failure is the session's io_err. */
void ap_run_seal(struct ap_run *run, const struct ap_signer *signer);

/* The exit code of the run (base/err.h), once sealed: an environment's
 * failure first (its own code, through report), then evidence not written
 * (AP_EXIT_IO), then the verdicts (AP_EXIT_FAILED: one inconsistent, or,
 * with require_present, the target absent where nothing failed); nothing
 * verified anywhere is AP_EXIT_UNVERIFIED. Each failure is given to
 * report(err, what, detail) once, which returns its exit code: the engine
 * picks the code, the caller (cli.h's ap_fail) says it. */
int ap_run_exit_code(const struct ap_run *run, int require_present,
		     int (*report)(int err, const char *what, const struct ap_buf *detail));

void ap_run_free(struct ap_run *run);

#endif
