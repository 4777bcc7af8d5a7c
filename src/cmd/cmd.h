/* cmd.h - the subcommands: one file each in src/cmd/, as git's builtin/.
 *
 * A subcommand parses its options, calls the modules of the layers below and
 * prints; it holds no logic another subcommand would need (that goes into a
 * module), and it is the only place an error becomes a message and an exit
 * code (cli.h: ap_fail, ap_usage).
 *
 * Adding a subcommand:
 *   1. Write src/cmd/NAME.c with int ap_cmd_NAME(int argc, char **argv);
 *      argv[0] is the subcommand. Share options through cli.h
 *      (ap_opt_timeout, ap_cli_load_envs, ap_cli_find_env), never a copy.
 *   2. Declare it below and add a row to the table in src/main.c (name, usage
 *      lines shown by --help).
 *   3. Document it in docs/ (the guide of its command) and docs/apiparity.1.
 *   4. Tests: an integration script tests/integration/t-NAME.sh that runs the
 *      real binary (each exit code it can return, each bad input it refuses
 *      with one line), unit tests for the modules it added
 *      (tests/unit/test-MODULE.c), and a mutant in tests/mutants/ for the
 *      decision that matters most.
 */
#ifndef AP_CMD_H
#define AP_CMD_H

#include "cli.h"

/* Each returns the process exit code (base/err.h). */
int ap_cmd_env(int argc, char **argv);
int ap_cmd_check(int argc, char **argv);
int ap_cmd_tests(int argc, char **argv);
int ap_cmd_report(int argc, char **argv);
int ap_cmd_verify(int argc, char **argv);
int ap_cmd_docs(int argc, char **argv);
int ap_cmd_sweep(int argc, char **argv);
int ap_cmd_merge(int argc, char **argv);
int ap_cmd_diff(int argc, char **argv);

#endif
