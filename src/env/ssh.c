#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "env/ssh.h"

extern char **environ;

/* Options whose absence lets a run hang, and the values apiparity gives them. */
static const char *const ap_ssh_keepalive[][2] = {
	{ "BatchMode", "yes" },
	{ "ConnectTimeout", "10" },
	{ "ServerAliveInterval", "5" },
	{ "ServerAliveCountMax", "3" },
};
#define AP_SSH_PERSIST_S "15"
/* How long a master may take to log in before it counts as not connecting. */
#define AP_SSH_MASTER_S 60
#define AP_SSH_MASTER_S_STR "60"
/* How often a master's start is looked at while it is awaited. */
#define AP_SSH_POLL_MS 20
/* The most of a master's log read for its last line. */
#define AP_SSH_LOG_MAX (1u << 20)
/* A unix socket's path holds 107 bytes; ssh binds DIR/N plus a suffix of 17
 * while it sets a master up. A longer $TMPDIR gives way to /tmp. */
#define AP_SSH_TMPDIR_MAX 60

/* ssh's options that take an argument (ssh(1) SYNOPSIS). */
static const char ap_ssh_argopts[] = "BbcDEeFIiJLlmOopQRSWw";

/* What an ssh argv chooses itself, found by reading its options the way ssh
 * does: flags may be grouped, an option's argument is the rest of its word or
 * the next word, options may follow the host, and the command (the first word
 * after the host, or what follows "--") ends them. */
struct ap_ssh_opts {
	const char *names[8]; /* -o option names looked for ... */
	int set[8];           /* ... and whether the argv sets each */
	int master;           /* -M */
	int path;             /* -S */
};

/* Whether the -o argument opt ("Name=value", "Name value") sets name. */
static int opt_names(const char *opt, const char *name)
{
	size_t n = strlen(name);
	return !strncasecmp(opt, name, n) && strchr("= \t", opt[n]) && opt[n];
}

static void scan_o(struct ap_ssh_opts *s, const char *opt)
{
	for (int k = 0; k < 8 && s->names[k]; k++)
		if (opt_names(opt, s->names[k]))
			s->set[k] = 1;
}

static void scan(const struct ap_argv *exec, struct ap_ssh_opts *s)
{
	int host = 0;
	for (size_t i = 1; i < exec->n; i++) {
		const char *w = exec->v[i];
		if (!strcmp(w, "--"))
			return;
		if (w[0] != '-' || !w[1]) {
			if (host++)
				return; /* the command */
			continue;
		}
		for (const char *c = w + 1; *c; c++) {
			if (*c == 'M')
				s->master = 1;
			if (!strchr(ap_ssh_argopts, *c))
				continue;
			const char *arg = c[1] ? c + 1 : i + 1 < exec->n ? exec->v[++i] : "";
			if (*c == 'o')
				scan_o(s, arg);
			else if (*c == 'S')
				s->path = 1;
			break;
		}
	}
}

int ap_ssh_runs(const struct ap_env *env)
{
	if (!env->exec.n)
		return 0;
	const char *base = strrchr(env->exec.v[0], '/');
	return !strcmp(base ? base + 1 : env->exec.v[0], "ssh");
}

/* The masters this process started, one per environment. Its control
 * socket is DIR/1, DIR/2, ... (an environment's name could make the path
 * too long for a socket). */
enum { AP_MUX_NEW, AP_MUX_STARTING, AP_MUX_UP, AP_MUX_FAILED };
#define AP_MUX_TIMEOUT (-2) /* a status: the master did not connect in time */
struct ap_mux {
	char *env;
	char *path;
	struct ap_argv exit;    /* the argv that ends it: ssh -O exit ... */
	int state;
	struct ap_buf why;      /* AP_MUX_FAILED: ssh's last line */
	int status;             /* AP_MUX_FAILED: its wait status */
};
static pthread_mutex_t mux_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mux_cond = PTHREAD_COND_INITIALIZER;
static char *mux_dir;
static int mux_dir_tried;
static struct ap_mux **muxes;
static size_t nmux;

/* The directory for control sockets, made on first use; NULL if it cannot
 * be (then ssh runs without multiplexing). Called under mux_lock. */
static const char *mux_dir_get(void)
{
	if (mux_dir_tried)
		return mux_dir;
	mux_dir_tried = 1;
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > AP_SSH_TMPDIR_MAX)
		tmp = "/tmp";
	struct ap_buf b = { 0 };
	if (ap_buf_addf(&b, "%s/apiparity-XXXXXX", tmp) == 0 && mkdtemp(b.data))
		mux_dir = b.data;
	else
		ap_buf_free(&b);
	return mux_dir;
}

static void mux_free(struct ap_mux *m)
{
	free(m->env);
	free(m->path);
	ap_argv_free(&m->exit);
	ap_buf_free(&m->why);
	free(m);
}

/* A new master's record for env, at the next socket of dir. NULL: no memory. */
static struct ap_mux *mux_new(const struct ap_env *env, const char *dir)
{
	struct ap_mux *m = calloc(1, sizeof(*m));
	struct ap_mux **v = realloc(muxes, (nmux + 1) * sizeof(*v));
	struct ap_buf path = { 0 }, o = { 0 };
	if (v)
		muxes = v;
	int r = m && v ? ap_buf_addf(&path, "%s/%zu", dir, nmux + 1) : -ENOMEM;
	r = r ? r : ap_buf_addf(&o, "ControlPath=%s", ap_buf_str(&path));
	const char *head[] = { env->exec.v[0], "-O", "exit", "-o", ap_buf_str(&o) };
	for (size_t i = 0; !r && i < sizeof(head) / sizeof(head[0]); i++)
		r = ap_argv_push(&m->exit, head[i]);
	for (size_t i = 1; !r && i < env->exec.n; i++)
		r = ap_argv_push(&m->exit, env->exec.v[i]);
	if (!r && (!(m->env = strdup(env->name)) || !(m->path = strdup(ap_buf_str(&path)))))
		r = -ENOMEM;
	ap_buf_free(&path);
	ap_buf_free(&o);
	if (r) {
		if (m)
			mux_free(m);
		return NULL;
	}
	muxes[nmux++] = m;
	return m;
}

/* The last non-empty line of the file at fd, into out. */
static void last_line(int fd, struct ap_buf *out)
{
	char chunk[AP_LINE_CHUNK];
	struct ap_buf all = { 0 };
	ssize_t n;
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 && all.len < AP_SSH_LOG_MAX)
		ap_buf_add(&all, chunk, (size_t)n);
	size_t end = all.len;
	while (end && strchr("\r\n ", all.data[end - 1]))
		end--;
	size_t start = end;
	while (start && all.data[start - 1] != '\n')
		start--;
	ap_buf_add(out, all.data + start, end - start);
	ap_buf_free(&all);
}

/* Waits for pid, at most AP_SSH_MASTER_S: 1 with *status, or 0 after
 * killing it. */
static int wait_bounded(pid_t pid, int *status)
{
	for (int tick = 0; tick < AP_SSH_MASTER_S * 1000 / AP_SSH_POLL_MS; tick++) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return 0;
		struct timespec ts = { 0, AP_SSH_POLL_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* Starts m's master: prefix (env's ssh with the options added) and -N, so
 * it logs in and runs nothing, then puts itself in the background once it
 * listens on its socket. 1 if it is up; else 0, with ssh's wait status (or
 * AP_MUX_TIMEOUT) and last line in m, or m->status -1 when it could not be
 * tried at all. */
static int mux_start(struct ap_mux *m, const struct ap_env *env, const struct ap_argv *prefix)
{
	struct ap_argv argv = { 0 };
	struct ap_buf o = { 0 };
	posix_spawn_file_actions_t fa;
	int log = open(mux_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600), up = 0, status = 0;
	pid_t pid;
	m->status = -1; /* not started: ssh then runs without multiplexing */
	int r = log < 0 ? -errno : ap_argv_extend(&argv, prefix);
	r = r ? r : ap_buf_addf(&o, "ControlPath=%s", m->path);
	const char *opts[] = { "-N", "-o", "ControlMaster=yes", "-o", ap_buf_str(&o), "-o",
			       "ControlPersist=" AP_SSH_PERSIST_S };
	for (size_t i = 0; !r && i < sizeof(opts) / sizeof(opts[0]); i++)
		r = ap_argv_push(&argv, opts[i]);
	for (size_t i = 1; !r && i < env->exec.n; i++)
		r = ap_argv_push(&argv, env->exec.v[i]);
	if (!r && !(r = posix_spawn_file_actions_init(&fa))) {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, log, 2);
		r = posix_spawnp(&pid, argv.v[0], &fa, NULL, argv.v, environ);
		posix_spawn_file_actions_destroy(&fa);
		int waited = !r && wait_bounded(pid, &status);
		up = waited && WIFEXITED(status) && !WEXITSTATUS(status);
		if (!r && !up) {
			last_line(log, &m->why);
			m->status = waited ? status : AP_MUX_TIMEOUT;
		}
	}
	if (log >= 0)
		close(log);
	ap_argv_free(&argv);
	ap_buf_free(&o);
	return up;
}

/* Says why m's master did not come up, in the words the worker uses for an
 * exec prefix that ends before python answers. Returns -AP_EUNREACHABLE. */
static int mux_failed(const struct ap_mux *m, const struct ap_env *env, struct ap_buf *err)
{
	ap_buf_addf(err, "exec prefix '%s' ", env->exec.v[0]);
	if (m->status == AP_MUX_TIMEOUT)
		ap_buf_adds(err, "did not connect within " AP_SSH_MASTER_S_STR " s");
	else if (WIFEXITED(m->status))
		ap_buf_addf(err, "exited with status %d", WEXITSTATUS(m->status));
	else
		ap_buf_adds(err, "was killed by a signal");
	ap_buf_addf(err, " before python answered%s%s", m->why.len ? ": " : "",
		    ap_buf_str(&m->why));
	return -AP_EUNREACHABLE;
}

/* Adds to pre (ssh and the options added so far) the multiplexing options
 * for env, once its master is up: the first process for an environment
 * starts the master, any other waits for it, so that all share one
 * connection. -AP_EUNREACHABLE with err filled when ssh cannot connect. */
static int add_mux(const struct ap_env *env, struct ap_argv *pre, struct ap_buf *err)
{
	struct ap_mux *m = NULL;
	pthread_mutex_lock(&mux_lock);
	for (size_t i = 0; i < nmux && !m; i++)
		if (!strcmp(muxes[i]->env, env->name))
			m = muxes[i];
	const char *dir = m ? mux_dir : mux_dir_get();
	if (!m && dir && !(m = mux_new(env, dir))) {
		pthread_mutex_unlock(&mux_lock);
		return -ENOMEM;
	}
	while (m && m->state == AP_MUX_STARTING)
		pthread_cond_wait(&mux_cond, &mux_lock);
	if (m && m->state == AP_MUX_NEW) {
		m->state = AP_MUX_STARTING;
		pthread_mutex_unlock(&mux_lock);
		int up = mux_start(m, env, pre);
		pthread_mutex_lock(&mux_lock);
		m->state = up ? AP_MUX_UP : AP_MUX_FAILED;
		pthread_cond_broadcast(&mux_cond);
	}
	int state = m ? m->state : AP_MUX_FAILED;
	struct ap_buf o = { 0 };
	int r = m ? ap_buf_addf(&o, "ControlPath=%s", m->path) : 0;
	if (state == AP_MUX_FAILED && m && m->status != -1)
		r = mux_failed(m, env, err);
	pthread_mutex_unlock(&mux_lock);
	const char *opts[] = { "-o", "ControlMaster=no", "-o", ap_buf_str(&o) };
	for (size_t i = 0; !r && state == AP_MUX_UP && i < 4; i++)
		r = ap_argv_push(pre, opts[i]);
	ap_buf_free(&o);
	return r;
}

int ap_ssh_prefix(const struct ap_env *env, struct ap_argv *out, struct ap_buf *err)
{
	if (!ap_ssh_runs(env))
		return ap_argv_extend(out, &env->exec);
	struct ap_ssh_opts s = { .names = { "BatchMode", "ConnectTimeout", "ServerAliveInterval",
					    "ServerAliveCountMax", "ControlMaster", "ControlPath" } };
	struct ap_argv pre = { 0 };
	struct ap_buf o = { 0 };
	scan(&env->exec, &s);
	int r = ap_argv_push(&pre, env->exec.v[0]);
	for (int k = 0; !r && k < 4; k++) {
		if (s.set[k])
			continue;
		ap_buf_reset(&o);
		r = ap_buf_addf(&o, "%s=%s", ap_ssh_keepalive[k][0], ap_ssh_keepalive[k][1]);
		r = r ? r : ap_argv_push(&pre, "-o");
		r = r ? r : ap_argv_push(&pre, ap_buf_str(&o));
	}
	ap_buf_free(&o);
	if (!r && !s.set[4] && !s.set[5] && !s.master && !s.path)
		r = add_mux(env, &pre, err);
	for (size_t i = 1; !r && i < env->exec.n; i++)
		r = ap_argv_push(&pre, env->exec.v[i]);
	r = r ? r : ap_argv_extend(out, &pre);
	ap_argv_free(&pre);
	return r;
}

/* Runs argv, its output discarded, and waits for it. */
static void run_quietly(const struct ap_argv *argv)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	if (posix_spawn_file_actions_init(&fa))
		return;
	for (int fd = 0; fd < 3; fd++)
		posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
	if (posix_spawnp(&pid, argv->v[0], &fa, NULL, argv->v, environ) == 0)
		wait_bounded(pid, &(int){ 0 });
	posix_spawn_file_actions_destroy(&fa);
}

void ap_ssh_close_all(void)
{
	struct stat st;
	pthread_mutex_lock(&mux_lock);
	for (size_t i = 0; i < nmux; i++) {
		struct ap_mux *m = muxes[i];
		/* No socket: that master never came up, or is gone already. */
		if (lstat(m->path, &st) == 0 && S_ISSOCK(st.st_mode))
			run_quietly(&m->exit);
		unlink(m->path);
		mux_free(m);
	}
	free(muxes);
	muxes = NULL;
	nmux = 0;
	if (mux_dir)
		rmdir(mux_dir);
	free(mux_dir);
	mux_dir = NULL;
	mux_dir_tried = 0;
	pthread_mutex_unlock(&mux_lock);
}
