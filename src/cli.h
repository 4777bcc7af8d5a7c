/* cli.h - what every subcommand shares at the edge: where environments live,
 * the options that name them, and turning an error into one line and an exit
 * code, and parsing a command's options by its table (base/opts.h). Only
 * src/cmd/ and main.c include it; nothing here decides anything.
 */
#ifndef AP_CLI_H
#define AP_CLI_H

#include "base/buf.h"
#include "base/opts.h"
#include "env/envs.h"

#include <stddef.h>
#include <stdio.h>

#define AP_DEFAULT_ENV_ROOT "/var/cache/apiparity/envs"

/* The environments root: --root, else $APIPARITY_ENV_ROOT, else the default. */
const char *ap_env_root(const char *opt);

/* The environments file: --envs, else $APIPARITY_ENVS, else NULL (built in). */
const char *ap_envs_file(const char *opt);

/* The user's own environments file, read after the built-in ones (when no
 * --envs or $APIPARITY_ENVS names another) and written by `env add`:
 * $XDG_CONFIG_HOME/apiparity/envs.ini, else $HOME/.config/apiparity/envs.ini,
 * into out. 0, or -ENOENT when neither variable is set. */
int ap_user_envs_file(struct ap_buf *out);

/* --python [NAME=]PATH: a Python with torch on this machine, as an
 * environment of its own for this run, named NAME or after PATH
 * ("usr-bin-python3"); ap_cli_load_envs() adds it after the files (it
 * takes the place of one of theirs of the same name). Its name in *name.
 * 0, or -EINVAL with err saying why (a name that names no directory, a
 * PATH with a control character, too many). */
int ap_cli_python(const char *arg, const char **name, struct ap_buf *err);

#define AP_CLI_OPT_PYTHON(fn)                                                   \
	{ "python", "[NAME=]PATH", "a Python with torch to use as an environment "  \
	  "(named NAME, else after PATH)", 0, fn, AP_OPT_REPEAT }

/* Prints "apiparity: <what>: <error text>[: detail]" on stderr and returns the
 * exit code for err (negative). The one place an error reaches the user. */
int ap_fail(int err, const char *what, const struct ap_buf *detail);

/* Prints each line of lines as "apiparity: warning: <line>" on stderr: what
 * went wrong but was mended (a rebuilt index), so the run goes on. */
void ap_print_warnings(const struct ap_buf *lines);

/* Prints "apiparity: <message> (see apiparity --help)" and returns
 * AP_EXIT_USAGE. */
int ap_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses argv (argv[0] the command or verb) by set into opts (base/opts.h).
 * 0: optind is at the first operand; -1: --help was asked, and set's help is
 * printed on stdout (the command exits 0); else AP_EXIT_USAGE after printing
 * the usage error ("check: option '--out' needs a value"). */
int ap_cli_parse(const struct ap_optset *set, int argc, char **argv, void *opts);

/* Whether arg asks for help: --help or -h. */
int ap_cli_wants_help(const char *arg);

/* The --help of a command with verbs: the usage line of each verb of sets
 * (NULL-terminated), and how to get one verb's help. Returns AP_EXIT_OK. */
int ap_cli_print_verbs(const struct ap_optset *const *sets);

/* The entries every command that reaches environments shares (type: the
 * command's options struct, with fields envs, root and timeout_s). */
#define AP_CLI_OPT_ENVS(type)                                                   \
	{ "envs", "FILE", "the environments file (default $APIPARITY_ENVS, else "   \
	  "the built-in reference environments)", offsetof(type, envs), NULL, 0 }
#define AP_CLI_OPT_ROOT(type)                                                   \
	{ "root", "DIR", "where environments are provisioned (default "             \
	  "$APIPARITY_ENV_ROOT, else " AP_DEFAULT_ENV_ROOT ")", offsetof(type, root), \
	  NULL, 0 }
#define AP_CLI_OPT_TIMEOUT(type, help)                                          \
	{ "timeout", "S", help, offsetof(type, timeout_s), ap_opt_seconds, 0 }

/* Loads the environments file named by envs_opt/root_opt into envs (see
 * ap_env_root/ap_envs_file), the user's own file after the built-in one,
 * and the --python environments after both. 0, or the exit code after
 * printing the error. */
int ap_cli_load_envs(struct ap_envs *envs, const char *envs_opt, const char *root_opt);

/* Finds name in envs; NULL after printing "unknown environment" with the
 * names that exist (what: the subcommand, for the message). */
const struct ap_env *ap_cli_find_env(const struct ap_envs *envs, const char *name,
				     const char *what);

/* An option's count, 1 to max, digits only (ap_opt_count), stored as the
 * int at opt->at in opts: 0, or -EINVAL with err saying "CMD: --NAME wants
 * a number from 1 to MAX". The body of a count option's handler. */
int ap_cli_count(void *opts, const struct ap_opt *opt, const char *arg, int max,
		 const char *cmd, struct ap_buf *err);

/* Appends arg to the list v of *n (a repeated option's values), at most max:
 * 0, or -EINVAL with err saying "CMD: at most MAX WHAT". */
int ap_cli_push(const char **v, size_t *n, size_t max, const char *arg, const char *cmd,
		const char *what, struct ap_buf *err);

/* Prints the exit-status table (from err.c) to f, as --help shows it. */
void ap_print_exit_table(FILE *f);

#endif
