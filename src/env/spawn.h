/* spawn.h - start a command inside an environment, and supervise it.
 *
 * The command is an argv. It runs after the environment's exec prefix (an ssh
 * prefix with the options of env/ssh.h; behind a remote shell, each word quoted
 * for it, and the environment's setenv set on the far side through env(1)
 * rather than for the prefix), or inside its
 * chroot: the child is PID 1 of a new PID namespace with a private mount
 * namespace; it mounts /proc (of that namespace), /sys, /dev/shm and a tmpfs
 * on /tmp there, chroots and execs. When it exits, the kernel kills whatever
 * else runs in its namespace, and nothing stays mounted on the host or in the
 * chroot's /tmp. Each child leads its own process group, so a timeout kills
 * everything it started even behind an exec prefix, and gets SIGKILL when
 * apiparity dies (the parent-death signal), even by kill -9. That signal
 * follows the thread that spawned the child: wait for a child in the thread
 * that started it.
 *
 * All descriptors are close-on-exec: concurrent spawns from several threads
 * never leak one child's pipes into another (which would hide its EOF).
 */
#ifndef AP_SPAWN_H
#define AP_SPAWN_H

#include <sys/types.h>

#include "base/argv.h"
#include "base/buf.h"
#include "env/envs.h"

struct ap_proc {
	pid_t pid;   /* also the process group id */
	int in;      /* its stdin, write end; -1 once closed */
	int out;     /* its stdout, read end */
	int err;     /* its stderr, read end; -1 with AP_SPAWN_MERGE_ERR */
	int pidfd;   /* polls readable once it has exited (even while another
			process still holds its pipes); -1 on kernels before 5.3 */
};

#define AP_SPAWN_MERGE_ERR 1 /* stderr goes to the stdout pipe */

/* The exit status of a child that could not run its command: the shell's
 * for "command not found", so a caller reads both the same way. */
#define AP_EXIT_NOEXEC 127

/* Starts cmd in env. Returns 0, or on failure to start: -AP_EUNREACHABLE (the
 * exec prefix or the chroot could not be started), -AP_ENOPYTHON (cmd[0] not
 * found where no prefix stands before it), or -errno; err says what and where. */
int ap_spawn(const struct ap_env *env, const struct ap_argv *cmd, int flags,
	     struct ap_proc *p, struct ap_buf *err);

/* Kills the whole process group (SIGKILL). Safe to call more than once. */
void ap_proc_kill(const struct ap_proc *p);

/* Closes our ends (and the pidfd) and reaps the child; *status is the wait
 * status. 0 or -errno. */
int ap_proc_wait(struct ap_proc *p, int *status);

/* Describes a wait status: "exited with status 3", "killed by SIGSEGV". */
void ap_wait_describe(int status, struct ap_buf *out);

/* Runs cmd in env to completion, passing each line of its output (stdout and
 * stderr merged) to line(). Returns the wait status (>= 0) or a negative error
 * as ap_spawn(). */
int ap_spawn_run(const struct ap_env *env, const struct ap_argv *cmd,
		 void (*line)(void *ctx, const char *line), void *ctx,
		 struct ap_buf *err);

#endif
