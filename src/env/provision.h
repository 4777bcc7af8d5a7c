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
 *
 * A backend environment (--backend) is such an environment with an
 * out-of-tree device backend built into it from a checked upstream test tree:
 * `openreg` is upstream's own PrivateUse1 example, pytorch_openreg, from
 * test/cpp_extensions/open_registration_extension of the 2.6.0+dfsg tree that
 * `apiparity tests fetch trixie` keeps. Every file is checked against the
 * sha256 pinned here before it is built, and the stamp records the tree and
 * the digest of what was built. It starts from a copy of ROOT/SUITE when that
 * is a complete environment of the same suite (cp -a --reflink=auto, said in
 * the log), else from debootstrap.
 */
#ifndef AP_PROVISION_H
#define AP_PROVISION_H

#include "base/buf.h"

#define AP_ENV_STAMP ".apiparity-env"

struct ap_provision_opts {
	const char *root;   /* the environments root directory */
	const char *name;   /* becomes ROOT/NAME */
	const char *suite;  /* bookworm, trixie, sid, ... */
	const char *backend;     /* NULL, or a backend to build in: "openreg" */
	const char *backend_src; /* the checked test tree's test/ directory it is
				    built from (see ap_provision_backend_tree) */
	/* Progress: a phase change (line == NULL) or a line of tool output. */
	void (*progress)(void *ctx, const char *phase, const char *line);
	void *ctx;
};

/* 1: already complete, nothing done; 0: created; or -AP_EPROVISION / -errno
 * with err saying which step failed and the log to read. */
int ap_provision(const struct ap_provision_opts *o, struct ap_buf *err);

/* The upstream test tree that backend name is built from, as `apiparity
 * tests fetch` keys it ("2.6.0+dfsg"), or NULL when apiparity knows no such
 * backend; *suite (when not NULL) gets the suite whose `tests fetch` gives
 * it ("trixie"). The caller finds that tree checked and complete, and passes
 * its test/ directory as backend_src. */
const char *ap_provision_backend_tree(const char *name, const char **suite);

/* The backends ap_provision() can build, for messages: "openreg". */
const char *ap_provision_backends(void);

/* Whether ROOT/NAME is a complete environment. */
int ap_provision_complete(const char *root, const char *name);

/* The suite a complete environment at dir was made from (its stamp), into
 * suite. 0 or -errno. */
int ap_provision_suite(const char *dir, struct ap_buf *suite);

/* The first Debian archive URI of this machine's apt sources, or "" when none
 * can be read (debootstrap then uses its own default). Fills out. */
void ap_apt_mirror(struct ap_buf *out);

#endif
