/* cmd.h - the subcommands, and what they share: options naming environments,
 * and reporting an error once, at the edge, as one line with an exit code. */
#ifndef AP_CMD_H
#define AP_CMD_H

#include "buf.h"
#include "envs.h"

#define AP_DEFAULT_ENV_ROOT "/var/cache/apiparity/envs"

/* Each returns the process exit code (err.h). argv[0] is the subcommand. */
int ap_cmd_env(int argc, char **argv);
int ap_cmd_check(int argc, char **argv);
int ap_cmd_tests(int argc, char **argv);
int ap_cmd_report(int argc, char **argv);
int ap_cmd_verify(int argc, char **argv);
int ap_cmd_docs(int argc, char **argv);

/* The environments root: --root, else $APIPARITY_ENV_ROOT, else the default. */
const char *ap_env_root(const char *opt);

/* The environments file: --envs, else $APIPARITY_ENVS, else NULL (built in). */
const char *ap_envs_file(const char *opt);

/* Prints "apiparity: <what>: <error text>[: detail]" on stderr and returns the
 * exit code for err (negative). */
int ap_report(int err, const char *what, const struct ap_buf *detail);

/* Prints a usage line and returns AP_EXIT_USAGE. */
int ap_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
