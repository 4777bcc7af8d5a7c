/* worker.h - a session with the Python worker inside one environment.
 *
 * ap_worker_start() runs the environment's python with a one-line bootstrap that
 * reads the worker's source (embedded in apiparity) from stdin, then waits for
 * the worker's hello. ap_worker_call() sends one request frame and waits for its
 * reply, with the session's timeout. Nothing needs to be installed inside the
 * environment.
 *
 * Every failure is classified once, here, from what was seen (exec errors, the
 * exit status, the tail of the worker's stderr, a truncated frame), returned as
 * -AP_E* and described in w->detail for the user.
 */
#ifndef AP_WORKER_H
#define AP_WORKER_H

#include <jansson.h>

#include "base/buf.h"
#include "env/envs.h"
#include "env/spawn.h"

struct ap_worker {
	const struct ap_env *env;
	struct ap_proc proc;
	struct ap_buf in;       /* bytes from the worker not yet framed */
	struct ap_buf errlog;   /* tail of the worker's stderr */
	char python[32];        /* version from the hello */
	int timeout_ms;         /* per answer */
	int synced;             /* the sync marker before the hello arrived */
	int hello;              /* the hello arrived; cleared when the worker stops */
	size_t discard;         /* bytes of an oversized frame still to skip */
	struct ap_buf detail;   /* what went wrong, one line, for the user */
};

/* Starts the worker in env and waits for its hello. 0 or -AP_E*; on failure
 * w->detail says why and the worker is already stopped. */
int ap_worker_start(struct ap_worker *w, const struct ap_env *env, int timeout_ms);

/* The limits of a worker session: start_ms for the worker's start (its
 * hello), answer_ms for each answer after it (the session's timeout; 0:
 * start_ms again). */
struct ap_worker_limits {
	int start_ms;
	int answer_ms;
};

/* Opens a worker session in env with these limits: ap_worker_start() within
 * lim->start_ms, then lim->answer_ms as the timeout of every call that does
 * not give its own. What check, sweep, tests and env show start their
 * workers with. 0 or -AP_E*, as ap_worker_start(). */
int ap_worker_open(struct ap_worker *w, const struct ap_env *env,
		   const struct ap_worker_limits *lim);

/* Sends req (not consumed) and waits for the reply. On success *reply is the
 * reply's "data" (new reference). A reply with ok=false becomes an error:
 * "torch-import" gives -AP_ETORCH, anything else -AP_EWORKER, with the worker's
 * message in w->detail. On a transport failure the worker is stopped. A reply
 * that arrived whole but cannot be read (not JSON, over the size limit) is
 * -AP_EPROTO with the worker left running (ap_worker_alive()): the framing
 * held, so it costs this answer only and the session can go on. */
int ap_worker_call(struct ap_worker *w, json_t *req, json_t **reply);

/* ap_worker_call() with its own limit for this answer, for requests whose
 * answer comes only after work the worker bounds itself (a test run). The
 * session's timeout is left as it is: the limit is this call's alone. */
int ap_worker_call_within(struct ap_worker *w, json_t *req, json_t **reply, int timeout_ms);

/* ap_worker_call() for a request whose worker sends frames before its
 * answer (op "run": a frame per sample as it ends): each frame other than the
 * answer (type "result") is given to each(ctx, frame) as it arrives (the
 * frame is the caller's only for the call; take a reference to keep it).
 * timeout_ms applies to each frame, not to the whole answer (the first frame
 * of a numeric run comes once the devices have started); the session's
 * timeout is left as it is. A frame before the answer that cannot be read
 * (not JSON, over the size limit) is skipped: the caller sees that it never
 * came. With each NULL, the first frame is the answer, as for
 * ap_worker_call(). */
int ap_worker_call_stream_within(struct ap_worker *w, json_t *req, json_t **reply,
				 void (*each)(void *ctx, json_t *frame), void *ctx,
				 int timeout_ms);

/* Whether the session can take another call: the worker said hello and has
 * not been stopped since. */
int ap_worker_alive(const struct ap_worker *w);

/* Asks the worker to exit, waits briefly, then kills its process group. Frees
 * everything but w->detail, which ap_worker_free() releases. */
void ap_worker_stop(struct ap_worker *w);
void ap_worker_free(struct ap_worker *w);

/* The worker's source, embedded at build time. */
extern const char ap_worker_py[];
extern const unsigned long ap_worker_py_len;

#endif
