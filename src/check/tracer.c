#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/embedded.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "check/tracer.h"
#include "env/fingerprint.h"
#include "env/spawn.h"
#include "env/worker.h"

/* The longest frame the runner may send: a journal line describes one call
 * (its tensors described, not stored); a megabyte is far past any. */
#define AP_TRACER_FRAME_MAX (16u << 20)

static const char *trace_source(const char *name)
{
	for (const struct ap_embedded *e = ap_trace_py; e->name; e++)
		if (!strcmp(e->name, name))
			return e->data;
	return "";
}

/* --- the fingerprint, beside the program --------------------------------- */

struct fp_job {
	const struct ap_env *env;
	int answer_s;
	json_t *fp;
	struct ap_buf why;
};

/* A thread: the worker is started, asked and ended here (its parent-death
 * signal follows this thread). */
static void *fp_thread(void *arg)
{
	struct fp_job *j = arg;
	struct ap_worker w;
	struct ap_worker_limits lim = { j->answer_s * 1000, j->answer_s * 1000 };
	json_t *req = ap_fingerprint_request(j->env);
	int r = ap_worker_open(&w, j->env, &lim);
	r = r ? r : req ? ap_worker_call(&w, req, &j->fp) : -ENOMEM;
	if (r)
		ap_buf_addf(&j->why, "%s: %s", ap_strerror(r), ap_buf_str(&w.detail));
	json_decref(req);
	ap_worker_free(&w);
	return NULL;
}

/* --- the runner's frames ------------------------------------------------- */

struct demux {
	struct ap_trace *t;
	int journal;             /* fd, -1: none */
	struct ap_buf in;        /* bytes of the runner's stderr not yet framed */
	int broken;              /* not frames: the rest goes to stderr as it is */
	int ended;               /* the "x" frame came */
	struct ap_buf end_error; /* the program could not be started: why */
};

/* One whole frame: kind, payload[0..n). */
static int frame_take(struct demux *d, char kind, const char *payload, size_t n)
{
	if (kind == 'e')
		return ap_write_all(2, payload, n) == -ENOMEM ? -ENOMEM : 0;
	if (kind == 'j') {
		if (d->journal >= 0 && (ap_write_all(d->journal, payload, n) ||
					ap_write_all(d->journal, "\n", 1)))
			d->journal = -1; /* the trace is still kept in memory */
		return ap_trace_apply(d->t, payload, n);
	}
	json_t *x = json_loadb(payload, n, 0, NULL);
	const json_t *rc = json_object_get(x, "returncode");
	const char *why = json_string_value(json_object_get(x, "error"));
	d->ended = 1;
	if (json_is_integer(rc)) {
		d->t->has_returncode = 1;
		d->t->returncode = (int)json_integer_value(rc);
	}
	ap_buf_adds(&d->end_error, why ? why : json_is_integer(rc) ? "" : "an unreadable end");
	json_decref(x);
	return 0;
}

/* Takes the whole frames of d->in; what is not a frame breaks the framing. */
static int demux_frames(struct demux *d)
{
	int r = 0;
	while (!r && !d->broken && d->in.len >= 5) {
		const unsigned char *p = (const unsigned char *)d->in.data;
		uint32_t n = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
		if (!strchr("ejx", p[0]) || !p[0] || n > AP_TRACER_FRAME_MAX) {
			d->broken = 1;
			break;
		}
		if (d->in.len < 5 + (size_t)n)
			return 0;
		r = frame_take(d, (char)p[0], d->in.data + 5, n);
		ap_buf_consume(&d->in, 5 + (size_t)n);
	}
	if (d->broken && d->in.len) {
		ap_write_all(2, d->in.data, d->in.len);
		ap_buf_reset(&d->in);
	}
	return r;
}

/* --- the run ------------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The runner's argv: the environment's python -c run.py CONFIG PROGRAM... */
static int runner_argv(const struct ap_tracer_opts *o, struct ap_argv *cmd)
{
	json_t *cfg = json_pack("{s:s, s:i, s:b}", "tracer", trace_source("sitecustomize.py"),
				"max_cases", o->max_cases, "keep_values", o->keep_values);
	char *text = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
	int r = text ? ap_argv_extend(cmd, &o->env->python) : -ENOMEM;
	r = r ? r : ap_argv_push(cmd, "-c");
	r = r ? r : ap_argv_push(cmd, trace_source("run.py"));
	r = r ? r : ap_argv_push(cmd, text);
	for (size_t i = 0; !r && i < o->argc; i++)
		r = ap_argv_push(cmd, o->argv[i]);
	free(text);
	json_decref(cfg);
	return r;
}

/* Copies what is readable on fd to the fd `to` (-1: drops it). 1 at EOF
 * (or an error reading), else 0. */
static int pump(int fd, int to)
{
	char buf[AP_LINE_CHUNK];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return 1;
	if (to >= 0)
		ap_write_all(to, buf, (size_t)n);
	return 0;
}

/* Runs the loop: stdin to the program, its stdout to ours, the runner's
 * frames taken, until both its outputs end or the limit passes. */
static int run_loop(const struct ap_tracer_opts *o, struct ap_proc *p, struct demux *d)
{
	long long until = o->limit_s > 0 ? now_ms() + (long long)o->limit_s * 1000 : 0;
	int in_open = 1, out_open = 1, err_open = 1, r = 0;
	while (!r && (out_open || err_open)) {
		struct pollfd fds[3] = { { in_open ? 0 : -1, POLLIN, 0 },
					 { out_open ? p->out : -1, POLLIN, 0 },
					 { err_open ? p->err : -1, POLLIN, 0 } };
		int wait = until ? (int)(until - now_ms()) : -1;
		if (until && wait <= 0) {
			/* what it sent before it was stopped is still read */
			d->t->limited = 1;
			ap_proc_kill(p);
			until = 0;
			continue;
		}
		if (poll(fds, 3, wait) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fds[0].revents && pump(0, p->in)) {
			in_open = 0;
			close(p->in);
			p->in = -1;
		}
		if (fds[1].revents && pump(p->out, 1))
			out_open = 0;
		if (fds[2].revents) {
			char buf[1 << 16];
			ssize_t n = read(p->err, buf, sizeof(buf));
			if (n <= 0 && !(n < 0 && errno == EINTR))
				err_open = 0;
			else if (n > 0 && !(r = ap_buf_add(&d->in, buf, (size_t)n)))
				r = demux_frames(d);
		}
	}
	return r;
}

int ap_tracer_run(const struct ap_tracer_opts *o, struct ap_trace *t, struct ap_buf *fp_err,
		  struct ap_buf *err)
{
	struct demux d = { t, -1, { 0 }, 0, 0, { 0 } };
	struct fp_job job = { o->env, o->answer_s, NULL, { 0 } };
	struct ap_argv cmd = { 0 };
	struct ap_proc p;
	pthread_t fp;
	int status = 0;
	memset(t, 0, sizeof(*t));
	t->max_cases = o->max_cases;
	int r = (t->env = strdup(o->env->name)) && (t->over = json_object()) ? 0 : -ENOMEM;
	for (size_t i = 0; !r && i < o->argc; i++)
		r = ap_argv_push(&t->command, o->argv[i]);
	r = r ? r : runner_argv(o, &cmd);
	if (!r && o->journal &&
	    (d.journal = open(o->journal, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		r = -errno;
		ap_buf_addf(err, "%s: %s", o->journal, strerror(errno));
	}
	if (r) {
		ap_argv_free(&cmd);
		return r;
	}
	int threaded = !pthread_create(&fp, NULL, fp_thread, &job);
	if ((r = ap_spawn(o->env, &cmd, 0, &p, err)) == 0) {
		r = run_loop(o, &p, &d);
		if (r)
			ap_proc_kill(&p);
		ap_proc_wait(&p, &status);
		if (d.in.len) { /* a frame cut short: its bytes, as they are */
			d.broken = 1;
			demux_frames(&d);
		}
		if (!r && !d.ended && !t->limited) {
			r = -AP_EWORKER;
			ap_buf_adds(err, "the tracer's runner ended without saying how the program did: ");
			ap_wait_describe(status, err);
		} else if (!r && d.end_error.len) {
			r = -AP_ENOPYTHON;
			ap_buf_addf(err, "the program could not be started: %s",
				    ap_buf_str(&d.end_error));
		}
	}
	if (threaded)
		pthread_join(fp, NULL);
	else
		ap_buf_adds(&job.why, "no thread for the fingerprint");
	t->fingerprint = job.fp;
	ap_buf_adds(fp_err, ap_buf_str(&job.why));
	if (d.journal >= 0)
		close(d.journal);
	ap_buf_free(&job.why);
	ap_buf_free(&d.in);
	ap_buf_free(&d.end_error);
	ap_argv_free(&cmd);
	return r;
}
