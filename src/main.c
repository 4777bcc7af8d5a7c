/* apiparity - prove that a PyTorch API behaves the same on a backend and across
 * environments as it does upstream. This file is the table of subcommands. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/version.h"
#include "cmd/cmd.h"
#include "env/ssh.h"
#include "review/png.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const struct ap_optset *const *sets;  /* its verbs' options: --help's lines */
} commands[] = {
	{ "check", ap_cmd_check, ap_check_optsets },
	{ "trace", ap_cmd_trace, ap_trace_optsets },
	{ "tests", ap_cmd_tests, ap_tests_optsets },
	{ "report", ap_cmd_report, ap_report_optsets },
	{ "verify", ap_cmd_verify, ap_verify_optsets },
	{ "sweep", ap_cmd_sweep, ap_sweep_optsets },
	{ "merge", ap_cmd_merge, ap_merge_optsets },
	{ "diff", ap_cmd_diff, ap_diff_optsets },
	{ "docs", ap_cmd_docs, ap_docs_optsets },
	{ "env", ap_cmd_env, ap_env_optsets },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_help(void)
{
	struct ap_buf out = { 0 };
	for (size_t i = 0; i < NCOMMANDS; i++)
		for (size_t k = 0; commands[i].sets[k]; k++)
			ap_opts_synopsis(commands[i].sets[k], &out);
	fputs("usage: apiparity <command> [<args>]\n\ncommands:\n", stdout);
	fputs(ap_buf_str(&out), stdout);
	fputs("\nWhat each option does: apiparity COMMAND --help. --envs FILE defaults to\n"
	      "$APIPARITY_ENVS, else the built-in reference environments; --root DIR to\n"
	      "$APIPARITY_ENV_ROOT, else " AP_DEFAULT_ENV_ROOT ".\n\nexit status:\n", stdout);
	ap_print_exit_table(stdout);
	fputs("\nSee the apiparity(1) manual page (docs/apiparity.1) for verdicts and evidence.\n",
	      stdout);
	ap_buf_free(&out);
}

/* apiparity help --options: each command's and verb's options, a line each
 * (base/opts.h: ap_opts_list), for tests that hold the man page to them. */
static void print_options(void)
{
	struct ap_buf out = { 0 };
	for (size_t i = 0; i < NCOMMANDS; i++)
		for (size_t k = 0; commands[i].sets[k]; k++)
			ap_opts_list(commands[i].sets[k], &out);
	fputs(ap_buf_str(&out), stdout);
	ap_buf_free(&out);
}

int main(int argc, char **argv)
{
	/* A worker that dies must show up as EPIPE on write, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return ap_usage("no command given");
	if (!strcmp(argv[1], "help") && argc == 3 && !strcmp(argv[2], "--options")) {
		print_options();
		return AP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		print_help();
		return AP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("apiparity %s (%s)\n", ap_version, ap_commit);
		printf("pictures: %s\n", ap_png_built_in ? "PNG (librsvg, loaded when one is drawn)" :
		       "none (built with make PNG=0)");
		return AP_EXIT_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name)) {
			int rc = commands[i].run(argc - 1, argv + 1);
			/* The ssh master connections the command's workers shared. */
			ap_ssh_close_all();
			return rc;
		}
	return ap_usage("unknown command '%s'", argv[1]);
}
