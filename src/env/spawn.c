#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "env/spawn.h"
#include "env/ssh.h"

extern char **environ;

/* What the child reports through its close-on-exec pipe when it cannot exec. */
enum { AP_STAGE_NS = 1, AP_STAGE_PROC, AP_STAGE_TMP, AP_STAGE_BIND, AP_STAGE_CHROOT,
       AP_STAGE_EXEC };
struct ap_child_fail {
	int stage;
	int err;
	int which; /* the bind that failed */
};

/* Everything the child needs, computed before fork: after fork it only makes
 * system calls (the parent may have other threads; malloc is off limits). */
struct ap_child_plan {
	const char *root;           /* chroot directory or NULL */
	struct ap_argv mounts;      /* proc, sys, dev/shm targets under root */
	char *tmp;                  /* root/tmp, when it is a directory: gets a tmpfs */
	struct ap_argv bind_src;    /* host directories to bind ... */
	struct ap_argv bind_dst;    /* ... onto these, under root */
	char *run_tmpfs;            /* root/run, when a bind goes under /run/apiparity */
	struct ap_argv mkdirs;      /* directories to make in that tmpfs, in order */
	struct ap_argv candidates;  /* paths to try for argv[0], in order */
	struct ap_argv argv;
	char **envp;
	struct ap_argv envbuf;
};

static const char ap_chroot_path[] =
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/* Appends to a the word s quoted for the remote shell. */
static int push_quoted(struct ap_argv *a, const char *s)
{
	struct ap_buf b = { 0 };
	int r = ap_shell_quote(&b, s);
	r = r ? r : ap_argv_push(a, ap_buf_str(&b));
	ap_buf_free(&b);
	return r;
}

/* What follows the prefix when a remote shell reads it: cmd, run by env(1)
 * with env's setenv there, since the variables are for the far side's python,
 * not for ssh; every word quoted, so that it arrives as written. */
static int plan_remote(struct ap_child_plan *pl, const struct ap_env *env,
			  const struct ap_argv *cmd)
{
	int r = env->setenv.n ? push_quoted(&pl->argv, "env") : 0;
	for (size_t i = 0; !r && i < env->setenv.n; i++)
		r = push_quoted(&pl->argv, env->setenv.v[i]);
	for (size_t i = 0; !r && i < cmd->n; i++)
		r = push_quoted(&pl->argv, cmd->v[i]);
	return r;
}

static int plan_candidates(struct ap_child_plan *pl, const char *path)
{
	const char *cmd = pl->argv.v[0];
	if (strchr(cmd, '/'))
		return ap_argv_push(&pl->candidates, cmd);
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		struct ap_buf b = { 0 };
		int r = ap_buf_addf(&b, "%.*s/%s", (int)n, p, cmd);
		if (!r && n)
			r = ap_argv_push(&pl->candidates, ap_buf_str(&b));
		ap_buf_free(&b);
		if (r)
			return r;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* Whether the NAME=VALUE word w sets a name that set (NAME=VALUE words) sets. */
static int env_overridden(const char *w, const struct ap_argv *set)
{
	size_t n = strcspn(w, "=");
	for (size_t i = 0; i < set->n; i++)
		if (!strncmp(set->v[i], w, n) && set->v[i][n] == '=')
			return 1;
	return 0;
}

/* The child's environment: base (NAME=VALUE words) with env's setenv on top. */
static int plan_env(struct ap_child_plan *pl, const struct ap_env *env, char **base)
{
	int r = ap_argv_extend(&pl->envbuf, &env->setenv);
	for (size_t i = 0; !r && base[i]; i++)
		if (!env_overridden(base[i], &env->setenv))
			r = ap_argv_push(&pl->envbuf, base[i]);
	pl->envp = pl->envbuf.v;
	return r;
}

/* A chroot starts from a clean environment: the host's PATH and the like
 * mean nothing inside it. */
static int plan_chroot_env(struct ap_child_plan *pl, const struct ap_env *env)
{
	const char *keep[] = { "TERM", "TZ", NULL };
	struct ap_argv base = { 0 };
	struct ap_buf b = { 0 };
	int r = ap_argv_push(&base, "PATH=/usr/local/sbin:/usr/local/bin:"
			     "/usr/sbin:/usr/bin:/sbin:/bin");
	r = r ? r : ap_argv_push(&base, "HOME=/root");
	r = r ? r : ap_argv_push(&base, "LANG=C.UTF-8");
	for (int i = 0; !r && keep[i]; i++) {
		const char *v = getenv(keep[i]);
		if (!v)
			continue;
		ap_buf_reset(&b);
		r = ap_buf_addf(&b, "%s=%s", keep[i], v);
		r = r ? r : ap_argv_push(&base, ap_buf_str(&b));
	}
	r = r ? r : plan_env(pl, env, base.v);
	ap_buf_free(&b);
	ap_argv_free(&base);
	return r;
}

/* A bind under /run/apiparity/ needs no directory in the chroot: the child
 * mounts a tmpfs on /run and makes the mount points there, so apiparity can
 * show a test tree to an environment without changing its files. */
static int plan_run_dirs(struct ap_child_plan *pl, const struct ap_env *env,
			    const char *inside)
{
	struct ap_buf b = { 0 };
	int r = 0;
	if (!pl->run_tmpfs) {
		r = ap_buf_addf(&b, "%s/run", env->chroot);
		if (r || !(pl->run_tmpfs = strdup(ap_buf_str(&b))))
			return ap_buf_free(&b), -ENOMEM;
	}
	for (const char *p = inside + strlen("/run/"); !r && p && *p; p = strchr(p + 1, '/')) {
		ap_buf_reset(&b);
		r = ap_buf_addf(&b, "%s%.*s", env->chroot, (int)(p - inside), inside);
		if (!r && p != inside + strlen("/run/"))
			r = ap_argv_push(&pl->mkdirs, ap_buf_str(&b));
	}
	ap_buf_reset(&b);
	r = r ? r : ap_buf_addf(&b, "%s%s", env->chroot, inside);
	r = r ? r : ap_argv_push(&pl->mkdirs, ap_buf_str(&b));
	ap_buf_free(&b);
	return r;
}

static int plan_binds(struct ap_child_plan *pl, const struct ap_env *env)
{
	struct ap_buf b = { 0 };
	int r = 0;
	for (size_t i = 0; !r && i < env->bind.n; i++) {
		const char *w = env->bind.v[i], *sep = strchr(w, ':');
		if (!strncmp(sep + 1, "/run/apiparity/", strlen("/run/apiparity/")))
			r = plan_run_dirs(pl, env, sep + 1);
		ap_buf_reset(&b);
		r = ap_buf_add(&b, w, (size_t)(sep - w));
		r = r ? r : ap_argv_push(&pl->bind_src, ap_buf_str(&b));
		ap_buf_reset(&b);
		r = r ? r : ap_buf_addf(&b, "%s%s", env->chroot, sep + 1);
		r = r ? r : ap_argv_push(&pl->bind_dst, ap_buf_str(&b));
	}
	ap_buf_free(&b);
	return r;
}

/* The run's own /tmp: a tmpfs over the chroot's /tmp, so that whatever a probe
 * or an official test leaves there goes with the mount namespace. Only over a
 * real directory (lstat): a symlink would lead the mount elsewhere. */
static int plan_tmp(struct ap_child_plan *pl, const struct ap_env *env, struct ap_buf *b)
{
	struct stat st;
	ap_buf_reset(b);
	int r = ap_buf_addf(b, "%s/tmp", env->chroot);
	if (r || lstat(ap_buf_str(b), &st) || !S_ISDIR(st.st_mode))
		return r;
	pl->tmp = strdup(ap_buf_str(b));
	return pl->tmp ? 0 : -ENOMEM;
}

static int plan_build(struct ap_child_plan *pl, const struct ap_env *env,
			 const struct ap_argv *cmd, struct ap_buf *err)
{
	int remote = ap_env_remote(env);
	int r = ap_ssh_prefix(env, &pl->argv, err);
	r = r ? r : remote ? plan_remote(pl, env, cmd) : ap_argv_extend(&pl->argv, cmd);
	if (r)
		return r;
	if (!env->chroot) {
		int local_env = env->setenv.n && !remote;
		r = local_env ? plan_env(pl, env, environ) : 0;
		if (!local_env)
			pl->envp = environ;
		const char *path = getenv("PATH");
		for (size_t i = 0; local_env && i < env->setenv.n; i++)
			if (!strncmp(env->setenv.v[i], "PATH=", 5))
				path = env->setenv.v[i] + 5;
		return r ? r : plan_candidates(pl, path ? path : ap_chroot_path);
	}
	pl->root = env->chroot;
	const char *sub[] = { "/proc", "/sys", "/dev/shm", NULL };
	struct ap_buf b = { 0 };
	for (int i = 0; !r && sub[i]; i++) {
		ap_buf_reset(&b);
		r = ap_buf_addf(&b, "%s%s", env->chroot, sub[i]);
		r = r ? r : ap_argv_push(&pl->mounts, ap_buf_str(&b));
	}
	r = r ? r : plan_tmp(pl, env, &b);
	ap_buf_free(&b);
	r = r ? r : plan_binds(pl, env);
	r = r ? r : plan_chroot_env(pl, env);
	return r ? r : plan_candidates(pl, ap_chroot_path);
}

static void plan_free(struct ap_child_plan *pl)
{
	ap_argv_free(&pl->mounts);
	free(pl->tmp);
	ap_argv_free(&pl->bind_src);
	ap_argv_free(&pl->bind_dst);
	ap_argv_free(&pl->mkdirs);
	free(pl->run_tmpfs);
	ap_argv_free(&pl->candidates);
	ap_argv_free(&pl->argv);
	ap_argv_free(&pl->envbuf);
}

static _Noreturn void child_fail(int fd, int stage, int err)
{
	struct ap_child_fail f = { stage, err, 0 };
	ssize_t n = write(fd, &f, sizeof(f));
	(void)n;
	_exit(AP_EXIT_NOEXEC);
}

/* Runs in the child, between fork (or clone) and exec: system calls only. */
static _Noreturn void spawn_child(const struct ap_child_plan *pl, int fd[3], int report)
{
	setpgid(0, 0);
	/* apiparity's end, even by kill -9, ends the child: SIGKILL, sent from
	 * outside its PID namespace, reaches a namespace's PID 1 too. (A parent
	 * gone before this line leaves the child an ended stdin: a worker then
	 * reads no source and exits.) */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 0; i < 3; i++)
		if (dup2(fd[i], i) < 0)
			child_fail(report, AP_STAGE_EXEC, errno);
	signal(SIGPIPE, SIG_DFL);
	if (pl->root) {
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			child_fail(report, AP_STAGE_NS, errno);
		/* Mounted from inside the new PID namespace: shows its processes only. */
		if (mount("proc", pl->mounts.v[0], "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  NULL))
			child_fail(report, AP_STAGE_PROC, errno);
		/* /sys (CPU topology) and /dev/shm (torch's shared memory) are
		 * helpful, not required: a chroot without them still works. */
		(void)mount("sysfs", pl->mounts.v[1], "sysfs", MS_RDONLY | MS_NOSUID |
			    MS_NODEV | MS_NOEXEC, NULL);
		(void)mount("tmpfs", pl->mounts.v[2], "tmpfs", MS_NOSUID | MS_NODEV, NULL);
		if (pl->tmp && mount("tmpfs", pl->tmp, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"))
			child_fail(report, AP_STAGE_TMP, errno);
		if (pl->run_tmpfs && mount("tmpfs", pl->run_tmpfs, "tmpfs", MS_NOSUID | MS_NODEV, NULL))
			child_fail(report, AP_STAGE_BIND, errno);
		for (size_t i = 0; i < pl->mkdirs.n; i++)
			if (mkdir(pl->mkdirs.v[i], 0755) && errno != EEXIST)
				child_fail(report, AP_STAGE_BIND, errno);
		for (size_t i = 0; i < pl->bind_src.n; i++)
			if (mount(pl->bind_src.v[i], pl->bind_dst.v[i], NULL, MS_BIND | MS_REC, NULL) ||
			    mount(NULL, pl->bind_dst.v[i], NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL)) {
				struct ap_child_fail f = { AP_STAGE_BIND, errno, (int)i };
				ssize_t n = write(report, &f, sizeof(f));
				(void)n;
				_exit(AP_EXIT_NOEXEC);
			}
		if (chroot(pl->root) || chdir("/"))
			child_fail(report, AP_STAGE_CHROOT, errno);
	}
	int last = ENOENT;
	for (size_t i = 0; i < pl->candidates.n; i++) {
		execve(pl->candidates.v[i], pl->argv.v, pl->envp);
		if (errno != ENOENT && errno != ENOTDIR)
			last = errno;
	}
	child_fail(report, AP_STAGE_EXEC, last);
}

/* fork(), but into new mount and PID namespaces. Like fork(), and unlike
 * glibc's clone(), the child runs on its copy of our stack, which the
 * sanitizers also know as a stack. */
static pid_t fork_ns(void)
{
	unsigned long flags = CLONE_NEWNS | CLONE_NEWPID | SIGCHLD;
#if defined(__s390__) || defined(__CRIS__)
	return (pid_t)syscall(SYS_clone, 0UL, flags, NULL, NULL, 0UL);
#else
	return (pid_t)syscall(SYS_clone, flags, 0UL, NULL, NULL, 0UL);
#endif
}

/* Starts the child: forked, or for a chroot forked into new mount and PID
 * namespaces, whose PID 1 it is. The end of a namespace's PID 1 kills every
 * process left in it, so nothing the environment started outlives its
 * worker, whatever it did (setsid, double fork). Returns the pid or -1. */
static pid_t start_child(const struct ap_child_plan *pl, int fd[3], int report)
{
	pid_t pid = pl->root ? fork_ns() : fork();
	if (pid == 0)
		spawn_child(pl, fd, report);
	return pid;
}

static int spawn_failed(const struct ap_env *env, const char *prog,
			   const struct ap_child_fail *f, struct ap_buf *err)
{
	const char *what = strerror(f->err);
	switch (f->stage) {
	case AP_STAGE_NS:
		ap_buf_addf(err, "cannot create mount and PID namespaces for chroot %s: %s "
			    "(chroot environments need root)", env->chroot, what);
		return -AP_EUNREACHABLE;
	case AP_STAGE_PROC:
		ap_buf_addf(err, "cannot mount /proc in chroot %s: %s", env->chroot, what);
		return -AP_EUNREACHABLE;
	case AP_STAGE_TMP:
		ap_buf_addf(err, "cannot mount a tmpfs on /tmp in chroot %s: %s", env->chroot,
			    what);
		return -AP_EUNREACHABLE;
	case AP_STAGE_BIND:
		ap_buf_addf(err, "cannot bind %s in chroot %s: %s", f->which < (int)env->bind.n
			    ? env->bind.v[f->which] : "?", env->chroot, what);
		return -AP_EUNREACHABLE;
	case AP_STAGE_CHROOT:
		ap_buf_addf(err, "cannot enter chroot %s: %s", env->chroot, what);
		return -AP_EUNREACHABLE;
	}
	if (env->exec.n) {
		ap_buf_addf(err, "cannot run exec prefix '%s': %s", env->exec.v[0], what);
		return -AP_EUNREACHABLE;
	}
	ap_buf_addf(err, "cannot run '%s'%s%s: %s", prog,
		    env->chroot ? " in chroot " : "", env->chroot ? env->chroot : "", what);
	return -AP_ENOPYTHON;
}

static int check_chroot(const struct ap_env *env, struct ap_buf *err)
{
	struct stat st;
	if (stat(env->chroot, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	ap_buf_addf(err, "chroot %s does not exist (provision it with `apiparity env "
		    "create %s --suite SUITE`)", env->chroot, env->name);
	return -AP_EUNREACHABLE;
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A descriptor that polls readable once pid has exited; -1 on a kernel
 * without pidfds (before 5.3), where callers fall back to waitid(). */
static int pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

int ap_spawn(const struct ap_env *env, const struct ap_argv *cmd, int flags,
	     struct ap_proc *p, struct ap_buf *err)
{
	struct ap_child_plan pl = { 0 };
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
	int rep[2] = { -1, -1 };
	int r;

	if (env->chroot && (r = check_chroot(env, err)))
		return r;
	if ((r = plan_build(&pl, env, cmd, err)))
		goto out;
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(rep, O_CLOEXEC) ||
	    (!(flags & AP_SPAWN_MERGE_ERR) && pipe2(perr, O_CLOEXEC))) {
		r = -errno;
		goto fail;
	}
	int child_fd[3] = { pin[0], pout[1], flags & AP_SPAWN_MERGE_ERR ? pout[1] : perr[1] };
	pid_t pid = start_child(&pl, child_fd, rep[1]);
	if (pid < 0 && pl.root && (errno == EPERM || errno == EINVAL)) {
		/* clone() itself refused the namespaces: say so as the child would. */
		struct ap_child_fail f = { AP_STAGE_NS, errno, 0 };
		int all[] = { pin[0], pin[1], pout[0], pout[1], perr[0], perr[1], rep[0], rep[1] };
		close_all(all, 8);
		r = spawn_failed(env, cmd->v[0], &f, err);
		goto out;
	}
	if (pid < 0) {
		r = -errno;
		goto fail;
	}
	setpgid(pid, pid); /* also in the child: whichever runs first wins the race */
	close(rep[1]);
	rep[1] = -1;
	struct ap_child_fail f;
	ssize_t n;
	while ((n = read(rep[0], &f, sizeof(f))) < 0 && errno == EINTR)
		;
	int fds[] = { pin[0], pout[1], perr[1], rep[0] };
	close_all(fds, 4);
	*p = (struct ap_proc){ pid, pin[1], pout[0], perr[0], pidfd_open(pid) };
	if (n == (ssize_t)sizeof(f)) {
		ap_proc_wait(p, &(int){ 0 });
		r = spawn_failed(env, cmd->v[0], &f, err);
	}
	goto out;
fail:
	ap_buf_addf(err, "cannot start a process: %s", strerror(-r));
	int all[] = { pin[0], pin[1], pout[0], pout[1], perr[0], perr[1], rep[0], rep[1] };
	close_all(all, 8);
out:
	plan_free(&pl);
	return r;
}

void ap_proc_kill(const struct ap_proc *p)
{
	if (p->pid > 0)
		kill(-p->pid, SIGKILL);
}

int ap_proc_wait(struct ap_proc *p, int *status)
{
	int fds[] = { p->in, p->out, p->err, p->pidfd };
	close_all(fds, 4);
	p->in = p->out = p->err = p->pidfd = -1;
	if (p->pid <= 0)
		return -ECHILD;
	pid_t r;
	while ((r = waitpid(p->pid, status, 0)) < 0 && errno == EINTR)
		;
	p->pid = 0;
	return r < 0 ? -errno : 0;
}

void ap_wait_describe(int status, struct ap_buf *out)
{
	if (WIFEXITED(status))
		ap_buf_addf(out, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		ap_buf_addf(out, "killed by SIG%s", sigabbrev_np(WTERMSIG(status))
			    ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		ap_buf_addf(out, "wait status %d", status);
}

static void emit_lines(struct ap_buf *acc, int eof,
			  void (*line)(void *ctx, const char *line), void *ctx)
{
	char *nl;
	while (acc->len && ((nl = memchr(acc->data, '\n', acc->len)) || eof)) {
		size_t n = nl ? (size_t)(nl - acc->data) : acc->len;
		acc->data[n] = '\0';
		line(ctx, acc->data);
		ap_buf_consume(acc, nl ? n + 1 : n);
	}
}

int ap_spawn_run(const struct ap_env *env, const struct ap_argv *cmd,
		 void (*line)(void *ctx, const char *line), void *ctx,
		 struct ap_buf *err)
{
	struct ap_proc p;
	struct ap_buf acc = { 0 };
	char chunk[AP_LINE_CHUNK];
	int r = ap_spawn(env, cmd, AP_SPAWN_MERGE_ERR, &p, err);
	if (r)
		return r;
	close(p.in);
	p.in = -1;
	for (;;) {
		ssize_t n = read(p.out, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || ap_buf_add(&acc, chunk, (size_t)n))
			break;
		emit_lines(&acc, 0, line, ctx);
	}
	emit_lines(&acc, 1, line, ctx);
	ap_buf_free(&acc);
	int status = 0;
	r = ap_proc_wait(&p, &status);
	return r ? r : status;
}
