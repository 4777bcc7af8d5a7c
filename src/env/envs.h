/* envs.h - environments: where a Python with torch runs, named in an INI file.
 *
 *   [a2]
 *   label  = Atlas A2 (910B3)
 *   exec   = ssh a2-host --      ; an argv prefix, split into words once
 *   python = python3
 *   device = npu
 *   [trixie]
 *   chroot = trixie              ; relative: under the environments root
 *
 * Every command is held as an argv and never passes through a local shell. An
 * exec prefix that hands its arguments to a remote shell (ssh does) must be told
 * so, with `remote_shell = yes` (the default when the prefix starts with ssh),
 * and then apiparity quotes what follows the prefix for that shell.
 * `setenv = NAME=VALUE ...` sets variables for the python apiparity starts
 * (for the prefix too, unless the prefix hands its words to a remote shell:
 * then only on the far side); `bind = /host/dir:/existing/dir ...` makes host
 * directories visible, read-only, inside a chroot (fixtures, source trees);
 * `plugins = module ...` names the Python modules that make up the backend
 * under test, imported in that order after torch (a PrivateUse1 backend that
 * torch does not load itself, such as upstream's pytorch_openreg).
 * `tests_root = DIR` says where, on the far side of a remote shell, the
 * upstream test trees are (laid out as `apiparity tests fetch` lays them out
 * here); without it, a remote environment runs no official tests. `local`
 * (this machine's python3) exists without an entry; an entry named local
 * overrides it.
 */
#ifndef AP_ENVS_H
#define AP_ENVS_H

#include "base/argv.h"
#include "base/buf.h"

struct ap_env {
	char *name;
	char *label;            /* NULL: none given */
	char *device;           /* claimed device type, NULL: none claimed */
	char *chroot;           /* absolute directory, NULL: not a chroot */
	struct ap_argv exec;    /* exec prefix, may be empty */
	struct ap_argv python;  /* interpreter argv, never empty */
	int remote_shell;
	struct ap_argv setenv;  /* NAME=VALUE words, for the process started */
	struct ap_argv bind;    /* /host:/inside words, chroot only, read-only */
	struct ap_argv plugins; /* Python modules to import after torch, in order */
	char *tests_root;       /* the test trees on the far side, NULL: none */
	const char *file;       /* where it was defined (NULL: built in) */
	int line;
};

struct ap_envs {
	struct ap_env *v;
	size_t n;
	char *path;
};

/* Parses the environments file at path ("-" or NULL: the built-in reference
 * file). Relative chroot directories are taken under root. On error returns
 * -AP_ECONFIG with "file:line: what" in err ("file: why" when the file cannot
 * be read), or -ENOMEM; envs is then empty and needs no ap_envs_free(). */
int ap_envs_load(struct ap_envs *envs, const char *path, const char *root,
		 struct ap_buf *err);

/* As ap_envs_load(), from the len bytes at text (any bytes: a NUL is an
 * error), named name in messages. */
int ap_envs_parse(struct ap_envs *envs, const char *text, size_t len, const char *name,
		  const char *root, struct ap_buf *err);

/* Moves every environment of src into dst, after dst's own; one with the
 * name of one of dst's takes its place (a later file is more specific:
 * the user's own file after the built-in one, --python after both). src
 * is left empty. 0 or -ENOMEM (then both are as they were). */
int ap_envs_merge(struct ap_envs *dst, struct ap_envs *src);

/* The environment called name; `local` always exists. NULL if unknown. */
const struct ap_env *ap_envs_find(const struct ap_envs *envs, const char *name);

/* The longest environment name, in bytes: a name is a directory and a
 * socket's path component, and a short word keeps both far from their
 * limits. */
#define AP_ENV_NAME_MAX 64

/* Whether name is usable as an environment name (it names directories):
 * letters, digits, '.', '_' and '-', not starting with '.', at most
 * AP_ENV_NAME_MAX bytes. */
int ap_env_name_ok(const char *name);

/* Whether env's commands go to a shell on another machine (an exec prefix
 * with remote_shell): paths of this machine mean nothing there. */
int ap_env_remote(const struct ap_env *env);

/* What runs, for people: "chroot /x: python3", "ssh a -- python3", "python3". */
void ap_env_describe(const struct ap_env *env, struct ap_buf *out);

void ap_envs_free(struct ap_envs *envs);

/* dst: a copy of env that shares env's strings and owns only its own copy of
 * the bind list, so binds can be added for one run: release it with
 * ap_env_extra_free(), and keep env alive as long as dst. 0 or -ENOMEM. */
int ap_env_copy(const struct ap_env *env, struct ap_env *dst);

/* Adds a bind of host at inside to a copy made by ap_env_copy(). */
int ap_env_add_bind(struct ap_env *dst, const char *host, const char *inside);
void ap_env_extra_free(struct ap_env *dst);

/* The built-in reference environments file (envs/reference.ini). */
extern const char ap_reference_envs[];

#endif
