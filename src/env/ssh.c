#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "env/ssh.h"

extern char **environ;

/* Options whose absence lets a run hang, and the values apiparity gives them. */
static const char *const ap_ssh_keepalive[][2] = {
	{ "BatchMode", "yes" },
	{ "ConnectTimeout", "10" },
	{ "ServerAliveInterval", "5" },
	{ "ServerAliveCountMax", "3" },
};
#define AP_SSH_PERSIST_S "10"
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

/* The masters this process set up: for each, the environment, the control
 * socket (DIR/1, DIR/2, ...: an environment's name could make the path too
 * long for a socket) and the argv that ends it. */
static pthread_mutex_t mux_lock = PTHREAD_MUTEX_INITIALIZER;
static char *mux_dir;
static int mux_dir_tried;
static struct ap_argv mux_envs, mux_paths;
static struct ap_argv *mux_exits;

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

/* Remembers how to end the master at path: env's ssh argv with -O exit. */
static int mux_remember(const struct ap_env *env, const char *path)
{
	struct ap_argv *v = realloc(mux_exits, (mux_paths.n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	mux_exits = v;
	struct ap_argv *a = &mux_exits[mux_paths.n];
	struct ap_buf o = { 0 };
	memset(a, 0, sizeof(*a));
	int r = ap_buf_addf(&o, "ControlPath=%s", path);
	const char *head[] = { env->exec.v[0], "-O", "exit", "-o", ap_buf_str(&o) };
	for (size_t i = 0; !r && i < sizeof(head) / sizeof(head[0]); i++)
		r = ap_argv_push(a, head[i]);
	for (size_t i = 1; !r && i < env->exec.n; i++)
		r = ap_argv_push(a, env->exec.v[i]);
	r = r ? r : ap_argv_push(&mux_envs, env->name);
	if (!r && (r = ap_argv_push(&mux_paths, path))) {
		free(mux_envs.v[--mux_envs.n]);
		mux_envs.v[mux_envs.n] = NULL;
	}
	if (r)
		ap_argv_free(a);
	ap_buf_free(&o);
	return r;
}

/* env's control socket, made known on first use; under mux_lock. 0 with
 * path empty when there is no directory for it. */
static int mux_path(const struct ap_env *env, struct ap_buf *path)
{
	for (size_t i = 0; i < mux_envs.n; i++)
		if (!strcmp(mux_envs.v[i], env->name))
			return ap_buf_adds(path, mux_paths.v[i]);
	const char *dir = mux_dir_get();
	if (!dir)
		return 0;
	int r = ap_buf_addf(path, "%s/%zu", dir, mux_paths.n + 1);
	return r ? r : mux_remember(env, ap_buf_str(path));
}

/* Adds the multiplexing options for env (its own control socket). */
static int add_mux(const struct ap_env *env, struct ap_argv *out)
{
	struct ap_buf path = { 0 }, o = { 0 };
	pthread_mutex_lock(&mux_lock);
	int r = mux_path(env, &path);
	pthread_mutex_unlock(&mux_lock);
	if (!r && path.len) {
		r = ap_buf_addf(&o, "ControlPath=%s", ap_buf_str(&path));
		const char *opts[] = { "-o", "ControlMaster=auto", "-o", ap_buf_str(&o), "-o",
				       "ControlPersist=" AP_SSH_PERSIST_S };
		for (size_t i = 0; !r && i < sizeof(opts) / sizeof(opts[0]); i++)
			r = ap_argv_push(out, opts[i]);
	}
	ap_buf_free(&path);
	ap_buf_free(&o);
	return r;
}

int ap_ssh_prefix(const struct ap_env *env, struct ap_argv *out)
{
	if (!ap_ssh_runs(env))
		return ap_argv_extend(out, &env->exec);
	struct ap_ssh_opts s = { .names = { "BatchMode", "ConnectTimeout", "ServerAliveInterval",
					    "ServerAliveCountMax", "ControlMaster", "ControlPath" } };
	struct ap_buf o = { 0 };
	scan(&env->exec, &s);
	int r = ap_argv_push(out, env->exec.v[0]);
	for (int k = 0; !r && k < 4; k++) {
		if (s.set[k])
			continue;
		ap_buf_reset(&o);
		r = ap_buf_addf(&o, "%s=%s", ap_ssh_keepalive[k][0], ap_ssh_keepalive[k][1]);
		r = r ? r : ap_argv_push(out, "-o");
		r = r ? r : ap_argv_push(out, ap_buf_str(&o));
	}
	ap_buf_free(&o);
	if (!r && !s.set[4] && !s.set[5] && !s.master && !s.path)
		r = add_mux(env, out);
	for (size_t i = 1; !r && i < env->exec.n; i++)
		r = ap_argv_push(out, env->exec.v[i]);
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
		while (waitpid(pid, &(int){ 0 }, 0) < 0 && errno == EINTR)
			;
	posix_spawn_file_actions_destroy(&fa);
}

void ap_ssh_close_all(void)
{
	struct stat st;
	pthread_mutex_lock(&mux_lock);
	for (size_t i = 0; i < mux_paths.n; i++) {
		/* No socket: that connection never came up, or its master is gone. */
		if (lstat(mux_paths.v[i], &st) == 0 && S_ISSOCK(st.st_mode))
			run_quietly(&mux_exits[i]);
		unlink(mux_paths.v[i]);
		ap_argv_free(&mux_exits[i]);
	}
	free(mux_exits);
	mux_exits = NULL;
	ap_argv_free(&mux_paths);
	ap_argv_free(&mux_envs);
	if (mux_dir)
		rmdir(mux_dir);
	free(mux_dir);
	mux_dir = NULL;
	mux_dir_tried = 0;
	pthread_mutex_unlock(&mux_lock);
}
