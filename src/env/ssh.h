/* ssh.h - what apiparity adds to an exec prefix that runs ssh.
 *
 * An environment whose exec prefix starts with ssh (its first word's last
 * path component is "ssh") gets, after that first word, the options that keep
 * a run from hanging, unless the prefix sets them itself (`-o Name=value`,
 * `-oName=value` or `-o "Name value"`, any case, before a `--`):
 *
 *   -o BatchMode=yes            never a password or passphrase prompt
 *   -o ConnectTimeout=10        a host that does not answer fails in 10 s
 *   -o ServerAliveInterval=5    a dropped connection is noticed within
 *   -o ServerAliveCountMax=3    about 20 s, even with no data in flight
 *
 * and connection multiplexing, unless the prefix chose its own (ControlMaster,
 * ControlPath, -M or -S): one master connection per environment, started
 * first (ssh -N -o ControlMaster=yes -o ControlPersist=15), its socket in a
 * directory of this process's own (mode 0700, under $TMPDIR or /tmp), and
 * every process the run starts there rides on it:
 *
 *   -o ControlMaster=no -o ControlPath=DIR/N
 *
 * ap_ssh_close_all() ends those masters (ssh -O exit) and removes the
 * directory; a master that a killed apiparity could not end exits by itself
 * once idle for 15 s.
 */
#ifndef AP_SSH_H
#define AP_SSH_H

#include "base/argv.h"
#include "base/buf.h"
#include "env/envs.h"

/* ssh's exit status for its own failure (the connection, a bad option), not
 * the remote command's. */
#define AP_SSH_EXIT_FAILED 255

/* Whether env's exec prefix runs ssh. */
int ap_ssh_runs(const struct ap_env *env);

/* Appends env's exec prefix to out, with the options above added when it
 * runs ssh. The first call for an environment starts its master connection
 * and waits until it is up (at most 60 s); a concurrent call for the same
 * environment waits for it. Thread-safe. 0, -ENOMEM, or -AP_EUNREACHABLE
 * with err saying why, as ssh said it, when the master could not connect. */
int ap_ssh_prefix(const struct ap_env *env, struct ap_argv *out, struct ap_buf *err);

/* Ends every master connection ap_ssh_prefix() set up in this process, and
 * removes their directory. Call once, when no process it started is left. */
void ap_ssh_close_all(void);

#endif
