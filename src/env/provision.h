/* provision.h - reference environments: Debian releases with Debian's torch.
 *
 * ap_provision() builds ROOT/NAME as a debootstrap'd Debian SUITE with
 * python3-torch, python3-pytest and the modules upstream's tests import. It is
 * idempotent, since a complete environment carries a stamp and is left alone,
 * and atomic, since everything happens in ROOT/.NAME.partial, stamped and
 * renamed into place only when whole: an interrupted run leaves nothing that
 * looks complete, and the next run starts that partial tree afresh.
 *
 * Mirrors come from this machine's apt configuration, so nothing names a host.
 */
#ifndef AP_PROVISION_H
#define AP_PROVISION_H

#include "base/buf.h"

#define AP_ENV_STAMP ".apiparity-env"

struct ap_provision_opts {
	const char *root;   /* the environments root directory */
	const char *name;   /* becomes ROOT/NAME */
	const char *suite;  /* bookworm, trixie, sid, ... */
	/* Progress: a phase change (line == NULL) or a line of tool output. */
	void (*progress)(void *ctx, const char *phase, const char *line);
	void *ctx;
};

/* 1: already complete, nothing done; 0: created; or -AP_EPROVISION / -errno
 * with err saying which step failed and the log to read. */
int ap_provision(const struct ap_provision_opts *o, struct ap_buf *err);

/* Whether ROOT/NAME is a complete environment. */
int ap_provision_complete(const char *root, const char *name);

/* The suite a complete environment at dir was made from (its stamp), into
 * suite. 0 or -errno. */
int ap_provision_suite(const char *dir, struct ap_buf *suite);

/* The first Debian archive URI of this machine's apt sources, or "" when none
 * can be read (debootstrap then uses its own default). Fills out. */
void ap_apt_mirror(struct ap_buf *out);

#endif
