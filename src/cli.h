/* cli.h - what every subcommand shares at the edge: where environments live,
 * the options that name them, and turning an error into one line and an exit
 * code. Only src/cmd/ and main.c include it; nothing here decides anything.
 */
#ifndef AP_CLI_H
#define AP_CLI_H

#include "base/buf.h"
#include "env/envs.h"

#include <stdio.h>

#define AP_DEFAULT_ENV_ROOT "/var/cache/apiparity/envs"

/* The environments root: --root, else $APIPARITY_ENV_ROOT, else the default. */
const char *ap_env_root(const char *opt);

/* The environments file: --envs, else $APIPARITY_ENVS, else NULL (built in). */
const char *ap_envs_file(const char *opt);

/* Prints "apiparity: <what>: <error text>[: detail]" on stderr and returns the
 * exit code for err (negative). The one place an error reaches the user. */
int ap_fail(int err, const char *what, const struct ap_buf *detail);

/* Prints each line of lines as "apiparity: warning: <line>" on stderr: what
 * went wrong but was mended (a rebuilt index), so the run goes on. */
void ap_print_warnings(const struct ap_buf *lines);

/* Prints "apiparity: <message> (see apiparity --help)" and returns
 * AP_EXIT_USAGE. */
int ap_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The usage error for what getopt_long() returned instead of an option of
 * cmd (optstring must start with ':'): "option '--out' needs a value" for
 * ':', else "unknown option '--colour'". Returns AP_EXIT_USAGE. */
int ap_opt_bad(const char *cmd, int c, char **argv);

/* Parses a --timeout value: a positive number of seconds. 0 and *out set, or
 * -1 after printing the usage error. */
int ap_opt_timeout(const char *arg, int *out);

/* Loads the environments file named by envs_opt/root_opt into envs (see
 * ap_env_root/ap_envs_file). 0, or the exit code after printing the error. */
int ap_cli_load_envs(struct ap_envs *envs, const char *envs_opt, const char *root_opt);

/* Finds name in envs; NULL after printing "unknown environment" with the
 * names that exist (what: the subcommand, for the message). */
const struct ap_env *ap_cli_find_env(const struct ap_envs *envs, const char *name,
				     const char *what);

/* Prints the exit-status table (from err.c) to f, as --help shows it. */
void ap_print_exit_table(FILE *f);

#endif
