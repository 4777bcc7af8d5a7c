/* apiparity - prove that a PyTorch API behaves the same on a backend and across
 * environments as it does upstream. This file is the table of subcommands. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/version.h"
#include "cmd/cmd.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;  /* the lines --help shows */
} commands[] = {
	{ "check", ap_cmd_check,
	  "  check TARGET [--env NAME]... [--out DIR]      verify one API across environments\n"
	  "        [--reference NAME] [--timeout S] [--script FILE]... [--specs DIR]\n"
	  "        [--require-present] [--torch-src DIR] [--claimed NODEID] [--no-official]\n" },
	{ "tests", ap_cmd_tests,
	  "  tests fetch ENV                               get upstream's tests for ENV's torch\n"
	  "  tests find TARGET --env ENV [--claimed NODEID] [--torch-src DIR]\n"
	  "                                                the upstream tests that use TARGET\n"
	  "  tests run FILE --env ENV [-k REGEX] [--timeout S] [--log FILE]\n"
	  "                                                run a test file, a fork per test\n" },
	{ "report", ap_cmd_report,
	  "  report DIR [--lang zh|en] [--docs DOCSDIR] [--format md,html,json,junit]\n"
	  "                                                the acceptance report of a submission\n" },
	{ "verify", ap_cmd_verify,
	  "  verify DIR [--policy FILE]                    review a submission: ACCEPT or\n"
	  "                                                CHANGES-NEEDED (exit 0 or 1)\n" },
	{ "sweep", ap_cmd_sweep,
	  "  sweep [--env NAME]... --out DIR [--depth resolve|signature] [--resume]\n"
	  "        [--shard I/N] [--catalog FILE] [--timeout S]\n"
	  "                                                the support matrix of every public API\n" },
	{ "merge", ap_cmd_merge,
	  "  merge SHARDDIR... --out DIR                   join sweep shards, checksums verified\n" },
	{ "diff", ap_cmd_diff,
	  "  diff A[:ENV] B[:ENV]                          APIs added, removed and changed\n" },
	{ "docs", ap_cmd_docs,
	  "  docs entry DIR                                the native API docs entry, measured\n"
	  "  docs generate DIR [--format table|list] [--out DOCSDIR]\n"
	  "                                                support pages from a sweep\n"
	  "  docs audit DOCSDIR DIR                        hand-written pages against a sweep\n" },
	{ "env", ap_cmd_env,
	  "  env create NAME --suite SUITE [--root DIR]   provision a reference environment\n"
	  "  env show NAME... [--json]                     fingerprint environments\n"
	  "  env list                                      list environments, reachable or not\n" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_help(void)
{
	fputs("usage: apiparity <command> [<args>]\n\ncommands:\n", stdout);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fputs(commands[i].usage, stdout);
	fputs("\noptions of check, tests and env show/list: --envs FILE (default $APIPARITY_ENVS,\n"
	      "  else the built-in reference environments), --root DIR (default\n"
	      "  $APIPARITY_ENV_ROOT, else " AP_DEFAULT_ENV_ROOT "),\n"
	      "  --timeout SECONDS (per worker answer)\n\nexit status:\n", stdout);
	ap_print_exit_table(stdout);
	fputs("\nSee the apiparity(1) manual page (docs/apiparity.1) for verdicts and evidence.\n",
	      stdout);
}

int main(int argc, char **argv)
{
	/* A worker that dies must show up as EPIPE on write, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return ap_usage("no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		print_help();
		return AP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("apiparity %s (%s)\n", ap_version, ap_commit);
		return AP_EXIT_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return ap_usage("unknown command '%s'", argv[1]);
}
