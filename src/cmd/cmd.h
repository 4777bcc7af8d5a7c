/* cmd.h - the subcommands: one file each in src/cmd/, as git's builtin/.
 *
 * A subcommand parses its options, calls the modules of the layers below and
 * prints; it holds no logic another subcommand would need (that goes into a
 * module), and it is the only place an error becomes a message and an exit
 * code (cli.h: ap_fail, ap_usage).
 *
 * Adding a subcommand:
 *   1. Write src/cmd/NAME.c with int ap_cmd_NAME(int argc, char **argv);
 *      argv[0] is the subcommand. Its options are one table (base/opts.h)
 *      per verb, parsed by ap_cli_parse(), which also prints its --help;
 *      export them, NULL-terminated, as ap_NAME_optsets. Share options and
 *      their handling through cli.h (AP_CLI_OPT_ENVS, AP_CLI_OPT_TIMEOUT,
 *      ap_cli_load_envs, ap_cli_find_env), never a copy.
 *   2. Declare both below and add a row to the table in src/main.c: its
 *      usage lines in `apiparity --help` come from the tables.
 *   3. Document it in docs/ (the guide of its command) and every option in
 *      docs/apiparity.1 (SYNOPSIS and OPTIONS; tests/integration/t-options.sh
 *      compares them with the tables).
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
int ap_cmd_trace(int argc, char **argv);

/* Each command's option tables, one per verb, in the order --help shows
 * them; NULL-terminated. */
extern const struct ap_optset *const ap_check_optsets[];
extern const struct ap_optset *const ap_trace_optsets[];
extern const struct ap_optset *const ap_tests_optsets[];
extern const struct ap_optset *const ap_report_optsets[];
extern const struct ap_optset *const ap_verify_optsets[];
extern const struct ap_optset *const ap_sweep_optsets[];
extern const struct ap_optset *const ap_merge_optsets[];
extern const struct ap_optset *const ap_diff_optsets[];
extern const struct ap_optset *const ap_docs_optsets[];
extern const struct ap_optset *const ap_env_optsets[];

#endif
