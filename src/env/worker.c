#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/text.h"
#include "env/frame.h"
#include "env/protocol.h"
#include "env/ssh.h"
#include "env/worker.h"

/* The bootstrap line: its code and the worker source's length, with room. */
#define AP_BOOT_MAX 160
#define AP_ERRLOG_MAX 16384

/* Precedes the hello (see worker/apiparity_worker.py). */
static const char ap_sync[] = "\0apiparity-worker-sync\0";
#define AP_SYNC_LEN (sizeof(ap_sync) - 1)
#define AP_EXIT_GRACE_MS 2000
/* Once the worker has exited, how long what it wrote may take to be read:
 * at most AP_DRAIN_MS, and no longer than AP_QUIET_MS without a byte. */
#define AP_DRAIN_MS 200
#define AP_QUIET_MS 50
/* Without a pidfd, how often to look whether the worker has exited. */
#define AP_REAP_TICK_MS 100

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Waits up to grace_ms for the group leader to exit by itself, without reaping
 * it (WNOWAIT): its pid must still name the process group that the caller
 * kills next. 1 if it exited. */
static int await_exit(pid_t pid, long grace_ms)
{
	long deadline = now_ms() + grace_ms;
	for (;;) {
		siginfo_t si = { 0 };
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
			return 0;
		if (si.si_pid == pid)
			return 1;
		if (now_ms() >= deadline)
			return 0;
		struct timespec ts = { 0, 5 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* Whether the worker's process has exited (not reaped: see await_exit). */
static int worker_exited(struct ap_worker *w)
{
	if (w->proc.pidfd >= 0) {
		struct pollfd p = { w->proc.pidfd, POLLIN, 0 };
		return poll(&p, 1, 0) == 1;
	}
	return await_exit(w->proc.pid, 0);
}

/* The last non-empty line of the worker's stderr: usually the error itself.
 * Escaped as it is copied: it goes into JSON (which holds only UTF-8) and
 * onto the terminal. */
static void last_line(const struct ap_buf *log, struct ap_buf *out)
{
	const char *s = ap_buf_str(log);
	size_t end = log->len;
	while (end && (s[end - 1] == '\n' || s[end - 1] == '\r' || s[end - 1] == ' '))
		end--;
	size_t start = end;
	while (start && s[start - 1] != '\n')
		start--;
	ap_text_term(out, s + start, end - start, AP_TEXT_LINE);
}

static void errlog_add(struct ap_worker *w, const char *p, size_t n)
{
	ap_buf_add(&w->errlog, p, n);
	ap_buf_keep_tail(&w->errlog, AP_ERRLOG_MAX);
}

/* Lets the tail of the worker's stderr arrive (it holds the reason), for at
 * most AP_DRAIN_MS: a process the worker left may hold the pipe open. */
static void drain_errlog(struct ap_worker *w)
{
	long deadline = now_ms() + AP_DRAIN_MS;
	char chunk[AP_LINE_CHUNK];
	while (w->proc.err >= 0) {
		long left = deadline - now_ms();
		struct pollfd p = { w->proc.err, POLLIN, 0 };
		if (left <= 0 || poll(&p, 1, left < AP_QUIET_MS ? (int)left : AP_QUIET_MS) != 1)
			return;
		ssize_t k = read(w->proc.err, chunk, sizeof(chunk));
		if (k <= 0)
			return;
		errlog_add(w, chunk, (size_t)k);
	}
}

/* The worker's stdout ended, or its process did: reap it and say why, as
 * precisely as we can. */
static int worker_died(struct ap_worker *w)
{
	int status = 0;
	struct ap_buf how = { 0 }, last = { 0 };
	size_t got, want;

	drain_errlog(w);

	ap_frame_truncation(&w->in, &got, &want);
	if (!w->synced)
		got = 0; /* start-up noise, not a frame */
	/* Its stdout closed because it is exiting: let it, so that its own
	 * status (127, a signal) is what we report, not our SIGKILL. */
	await_exit(w->proc.pid, AP_EXIT_GRACE_MS);
	ap_proc_kill(&w->proc);
	ap_proc_wait(&w->proc, &status);
	ap_wait_describe(status, &how);
	last_line(&w->errlog, &last);
	int r = -AP_EWORKER;
	if (got)
		ap_buf_addf(&w->detail, "worker died mid-message (truncated frame: %zu of "
			    "%zu bytes), %s", got, want, ap_buf_str(&how));
	else if (!w->hello && WIFEXITED(status) && WEXITSTATUS(status) == AP_EXIT_NOEXEC) {
		r = -AP_ENOPYTHON;
		ap_buf_addf(&w->detail, "'%s' (exit status %d)", w->env->python.v[0], AP_EXIT_NOEXEC);
	} else if (!w->hello && w->env->exec.n && WIFEXITED(status)) {
		r = -AP_EUNREACHABLE;
		ap_buf_addf(&w->detail, "exec prefix '%s' %s before python answered",
			    w->env->exec.v[0], ap_buf_str(&how));
	} else if (ap_ssh_runs(w->env) && WIFEXITED(status) &&
		   WEXITSTATUS(status) == AP_SSH_EXIT_FAILED) {
		/* ssh's own failure: the connection, not the worker, ended. */
		r = -AP_EUNREACHABLE;
		ap_buf_addf(&w->detail, "ssh lost the connection while the worker was answering "
			    "(ssh %s)", ap_buf_str(&how));
	} else
		ap_buf_addf(&w->detail, "%s %s %s", w->hello ? "worker" : "python",
			    ap_buf_str(&how), w->hello ? "while answering" : "before answering");
	if (last.len)
		ap_buf_addf(&w->detail, ": %s", ap_buf_str(&last));
	ap_buf_free(&how);
	ap_buf_free(&last);
	w->hello = 0; /* reaped: ap_worker_alive() must say so */
	return r;
}

static int fail(struct ap_worker *w, int r)
{
	ap_worker_stop(w);
	return r;
}

/* Before the hello, stdout may carry what the interpreter's start-up printed:
 * moves it to the stderr log, up to the sync marker. 1 once synced. */
static int worker_sync(struct ap_worker *w)
{
	if (w->synced)
		return 1;
	for (size_t i = 0; i + AP_SYNC_LEN <= w->in.len; i++)
		if (!memcmp(w->in.data + i, ap_sync, AP_SYNC_LEN)) {
			errlog_add(w, w->in.data, i);
			ap_buf_consume(&w->in, i + AP_SYNC_LEN);
			w->synced = 1;
			return 1;
		}
	if (w->in.len >= AP_SYNC_LEN) {
		size_t noise = w->in.len - (AP_SYNC_LEN - 1);
		errlog_add(w, w->in.data, noise);
		ap_buf_consume(&w->in, noise);
	}
	return 0;
}

/* Reads until one whole frame is in w->in, within timeout_ms; returns it
 * parsed. */
static int worker_recv(struct ap_worker *w, json_t **msg, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	char chunk[AP_READ_CHUNK];
	int gone = 0; /* the worker has exited: read what is left, briefly */

	for (;;) {
		const char *payload;
		size_t len, flen;
		int r = worker_sync(w) ? ap_frame_peek(&w->in, AP_FRAME_MAX, &payload,
							  &len, &flen) : 0;
		if (r < 0 && !w->discard) {
			/* The header holds, so the frame can be skipped whole. */
			size_t got;
			ap_frame_truncation(&w->in, &got, &w->discard);
			ap_buf_addf(&w->detail, "unreadable frame: %zu bytes, over the limit "
				    "of %u", w->discard - AP_FRAME_HEADER, AP_FRAME_MAX);
		}
		if (w->discard) {
			size_t n = w->in.len < w->discard ? w->in.len : w->discard;
			ap_buf_consume(&w->in, n);
			if (!(w->discard -= n))
				return -AP_EPROTO;
		} else if (r == 1) {
			struct ap_buf why = { 0 };
			r = ap_frame_json(payload, len, msg, &why);
			ap_buf_consume(&w->in, flen);
			if (r)
				ap_buf_addf(&w->detail, "unreadable frame: %s", ap_buf_str(&why));
			ap_buf_free(&why);
			return r;
		}
		long left = deadline - now_ms();
		if (left <= 0 && gone)
			return worker_died(w);
		if (left <= 0) {
			ap_buf_addf(&w->detail, "no answer from the worker within %d s",
				    timeout_ms / 1000);
			return fail(w, -AP_ETIMEOUT);
		}
		/* The worker's own end is what counts, not the end of its pipes,
		 * which a process it left behind may hold open. */
		if (!gone && worker_exited(w)) {
			gone = 1;
			deadline = now_ms() + AP_DRAIN_MS;
			continue;
		}
		struct pollfd pfd[3] = { { w->proc.out, POLLIN, 0 }, { w->proc.err, POLLIN, 0 },
					 { gone ? -1 : w->proc.pidfd, POLLIN, 0 } };
		if (w->proc.pidfd < 0 && !gone && left > AP_REAP_TICK_MS)
			left = AP_REAP_TICK_MS; /* no pidfd: look again soon */
		if (gone && left > AP_QUIET_MS)
			left = AP_QUIET_MS;
		int n = poll(pfd, 3, (int)left);
		if (n < 0 && errno != EINTR)
			return fail(w, -errno);
		if (n == 0 && gone)
			return worker_died(w);
		if (n <= 0 || !(pfd[0].revents | pfd[1].revents))
			continue;
		if (pfd[1].revents && w->proc.err >= 0) {
			ssize_t k = read(w->proc.err, chunk, sizeof(chunk));
			if (k > 0) {
				errlog_add(w, chunk, (size_t)k);
			} else if (k == 0) {
				close(w->proc.err);
				w->proc.err = -1;
			}
		}
		if (pfd[0].revents) {
			ssize_t k = read(w->proc.out, chunk, sizeof(chunk));
			if (k == 0 || (k < 0 && errno != EINTR))
				return worker_died(w);
			if (k > 0 && ap_buf_add(&w->in, chunk, (size_t)k))
				return fail(w, -ENOMEM);
		}
	}
}


static int worker_send(struct ap_worker *w, json_t *req)
{
	struct ap_buf frame = { 0 };
	char *s = json_dumps(req, JSON_COMPACT);
	int r = s ? ap_frame_encode(&frame, s, strlen(s)) : -ENOMEM;
	free(s);
	if (!r)
		r = ap_write_all(w->proc.in, frame.data, frame.len);
	ap_buf_free(&frame);
	return r;
}

/* Sending failed (EPIPE): the worker is gone; read what it left to say why. */
static int worker_lost(struct ap_worker *w, int timeout_ms)
{
	json_t *msg = NULL;
	int r = worker_recv(w, &msg, timeout_ms);
	if (r)
		return fail(w, r); /* stopped already, unless the frame was unreadable */
	json_decref(msg);
	ap_buf_adds(&w->detail, "worker stopped reading its input");
	return fail(w, -AP_EWORKER);
}

static int worker_hello(struct ap_worker *w)
{
	json_t *hello;
	int r = worker_recv(w, &hello, w->timeout_ms);
	if (r)
		return fail(w, r); /* stopped already, unless the frame was unreadable */
	const char *py;
	if (ap_proto_hello(hello, &py)) {
		json_decref(hello);
		ap_buf_adds(&w->detail, "worker's first message is not a hello");
		return fail(w, -AP_EPROTO);
	}
	snprintf(w->python, sizeof(w->python), "%s", py);
	w->hello = 1;
	json_decref(hello);
	return 0;
}

int ap_worker_start(struct ap_worker *w, const struct ap_env *env, int timeout_ms)
{
	struct ap_argv cmd = { 0 };
	char boot[AP_BOOT_MAX];

	memset(w, 0, sizeof(*w));
	w->env = env;
	w->timeout_ms = timeout_ms;
	w->proc = (struct ap_proc){ 0, -1, -1, -1, -1 };
	/* The bootstrap reads exactly the source's length: the worker's own
	 * frames follow on the same stdin, after its hello. */
	snprintf(boot, sizeof(boot), "import sys;exec(compile(sys.stdin.buffer.read(%lu),"
		 "'apiparity-worker','exec'))", ap_worker_py_len);
	int r = ap_argv_extend(&cmd, &env->python);
	r = r ? r : ap_argv_push(&cmd, "-c");
	r = r ? r : ap_argv_push(&cmd, boot);
	r = r ? r : ap_spawn(env, &cmd, 0, &w->proc, &w->detail);
	ap_argv_free(&cmd);
	if (r)
		return r;
	if (ap_write_all(w->proc.in, ap_worker_py, ap_worker_py_len) == 0)
		return worker_hello(w);
	/* It died before reading its source (EPIPE): its exit says why. */
	return worker_lost(w, w->timeout_ms);
}

int ap_worker_open(struct ap_worker *w, const struct ap_env *env,
		   const struct ap_worker_limits *lim)
{
	int r = ap_worker_start(w, env, lim->start_ms);
	if (!r && lim->answer_ms)
		w->timeout_ms = lim->answer_ms;
	return r;
}

int ap_worker_call_within(struct ap_worker *w, json_t *req, json_t **reply, int timeout_ms)
{
	return ap_worker_call_stream_within(w, req, reply, NULL, NULL, timeout_ms);
}

int ap_worker_call(struct ap_worker *w, json_t *req, json_t **reply)
{
	return ap_worker_call_stream_within(w, req, reply, NULL, NULL, w->timeout_ms);
}

int ap_worker_call_stream_within(struct ap_worker *w, json_t *req, json_t **reply,
				 void (*each)(void *ctx, json_t *frame), void *ctx,
				 int timeout_ms)
{
	json_t *msg;
	*reply = NULL;
	if (!w->hello) {
		ap_buf_adds(&w->detail, "worker is not running");
		return -AP_EWORKER;
	}
	int r = worker_send(w, req);
	if (r)
		return worker_lost(w, timeout_ms);
	for (;;) {
		r = worker_recv(w, &msg, timeout_ms);
		if (r == -AP_EPROTO && each && w->hello) {
			ap_buf_reset(&w->detail); /* the framing held: that frame is lost, not the rest */
			continue;
		}
		if (r)
			return r;
		const char *type = json_string_value(json_object_get(msg, "type"));
		if (!each || (type && !strcmp(type, "result")))
			break;
		each(ctx, msg); /* a frame before the answer: each one judges it */
		json_decref(msg);
	}
	if (json_is_true(json_object_get(msg, "ok"))) {
		*reply = json_incref(json_object_get(msg, "data"));
		json_decref(msg);
		return *reply ? 0 : (ap_buf_adds(&w->detail, "reply without data"), -AP_EPROTO);
	}
	const char *kind = json_string_value(json_object_get(msg, "error"));
	const char *text = json_string_value(json_object_get(msg, "message"));
	ap_buf_addf(&w->detail, "%s", text ? text : "(no message)");
	r = kind && !strcmp(kind, "torch-import") ? -AP_ETORCH : -AP_EWORKER;
	*reply = json_incref(json_object_get(msg, "partial"));
	json_decref(msg);
	return r;
}

int ap_worker_alive(const struct ap_worker *w)
{
	return w->hello;
}

void ap_worker_stop(struct ap_worker *w)
{
	if (w->proc.pid > 0 && w->proc.in >= 0) {
		json_t *bye = ap_proto_exit();
		worker_send(w, bye);
		json_decref(bye);
		close(w->proc.in);
		w->proc.in = -1;
		await_exit(w->proc.pid, AP_EXIT_GRACE_MS);
	}
	ap_proc_kill(&w->proc);
	if (w->proc.pid > 0)
		ap_proc_wait(&w->proc, &(int){ 0 });
	ap_buf_free(&w->in);
	ap_buf_free(&w->errlog);
	w->hello = 0;
	w->discard = 0;
}

void ap_worker_free(struct ap_worker *w)
{
	ap_worker_stop(w);
	ap_buf_free(&w->detail);
}
