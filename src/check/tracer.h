/* tracer.h - runs a user's program inside an environment under the tracer,
 * and takes its cases as they come (`apiparity trace`).
 *
 * The program runs as the environment runs Python (its chroot, its exec
 * prefix), behind worker/trace/run.py, which puts the tracer (worker/trace/
 * sitecustomize.py) in front of every Python the program starts and sends,
 * framed on its stderr, the program's stderr and the tracer's journal. The
 * program's stdin and stdout are its own: apiparity copies its own stdin to
 * the program and the program's stdout to its own, byte for byte, and the
 * program's stderr to its own stderr.
 *
 * Every journal line is appended to OUT/journal.jsonl as it arrives and
 * applied to the trace (evidence/cases.h), so a program that crashes, or is
 * stopped at the limit, keeps every case it made. The environment's
 * fingerprint is taken by a worker at the same time, in a thread of its
 * own, so that it costs the traced run nothing.
 */
#ifndef AP_TRACER_H
#define AP_TRACER_H

#include "base/buf.h"
#include "env/envs.h"
#include "evidence/cases.h"

struct ap_tracer_opts {
	const struct ap_env *env;
	char *const *argv;       /* the program and its arguments */
	size_t argc;
	const char *journal;     /* the path the journal lines go to */
	int max_cases;           /* per API */
	int keep_values;         /* small tensors' values kept */
	int limit_s;             /* 0: none */
	int answer_s;            /* the fingerprint's worker, to start and answer */
};

/* Runs the program and fills t (which it initialises): the command, env,
 * the program's end (or limited), the cases, the fingerprint (NULL where it
 * could not be taken: *fp_err says why). 0 once the program ran (whatever
 * its end), or -AP_E* or -errno when it could not be started or its runner's
 * frames could not be read: err says why, and t keeps what came before. */
int ap_tracer_run(const struct ap_tracer_opts *o, struct ap_trace *t, struct ap_buf *fp_err,
		  struct ap_buf *err);

#endif
