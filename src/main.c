/* apiparity - prove that a PyTorch API behaves the same on a backend and across
 * environments as it does upstream. This file only dispatches subcommands. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "version.h"

static const char ap_help[] =
	"usage: apiparity <command> [<args>]\n"
	"\n"
	"commands:\n"
	"  check TARGET [--env NAME]... [--out DIR]      verify one API across environments\n"
	"        [--reference NAME] [--timeout S] [--script FILE]... [--specs DIR]\n"
	"        [--require-present] [--torch-src DIR] [--claimed NODEID] [--no-official]\n"
	"  tests fetch ENV                               get upstream's tests for ENV's torch\n"
	"  tests find TARGET --env ENV [--claimed NODEID] [--torch-src DIR]\n"
	"                                                the upstream tests that use TARGET\n"
	"  tests run FILE --env ENV [-k REGEX] [--timeout S] [--log FILE]\n"
	"                                                run a test file, a fork per test\n"
	"  report DIR [--lang zh|en] [--docs DOCSDIR] [--format md,html,json,junit]\n"
	"                                                the acceptance report of a submission\n"
	"  verify DIR [--policy FILE]                    review a submission: ACCEPT or\n"
	"                                                CHANGES-NEEDED (exit 0 or 1)\n"
	"  docs entry DIR                                the native API docs entry, measured\n"
	"  env create NAME --suite SUITE [--root DIR]   provision a reference environment\n"
	"  env show NAME... [--json]                     fingerprint environments\n"
	"  env list                                      list environments, reachable or not\n"
	"\n"
	"options of check and env show/list: --envs FILE (default $APIPARITY_ENVS, else the built-in\n"
	"  reference environments), --root DIR (default $APIPARITY_ENV_ROOT, else\n"
	"  " AP_DEFAULT_ENV_ROOT "), --timeout SECONDS (per worker answer)\n"
	"\n"
	"exit status:\n"
	"   0  success\n"
	"   1  a check found an inconsistency, or a probe failed, crashed or hung\n"
	"   2  usage error\n"
	"   3  environment unreachable (exec prefix or chroot failed)\n"
	"   4  malformed environments or spec file\n"
	"   5  unknown environment\n"
	"   6  python not found in the environment\n"
	"   7  torch failed to import\n"
	"   8  worker died or broke the protocol\n"
	"   9  worker stopped answering (timeout)\n"
	"  10  could not write results\n"
	"  11  provisioning or fetching failed\n"
	"  12  no upstream test source for that torch version\n"
	"\n"
	"See the apiparity(1) manual page (docs/apiparity.1) for verdicts and evidence.\n";

const char *ap_env_root(const char *opt)
{
	const char *e = getenv("APIPARITY_ENV_ROOT");
	return opt ? opt : e && *e ? e : AP_DEFAULT_ENV_ROOT;
}

const char *ap_envs_file(const char *opt)
{
	const char *e = getenv("APIPARITY_ENVS");
	return opt ? opt : e && *e ? e : NULL;
}

int ap_report(int err, const char *what, const struct ap_buf *detail)
{
	if (detail && detail->len)
		fprintf(stderr, "apiparity: %s: %s: %s\n", what, ap_strerror(err),
			ap_buf_str(detail));
	else
		fprintf(stderr, "apiparity: %s: %s\n", what, ap_strerror(err));
	return ap_exit_code(err);
}

int ap_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("apiparity: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see apiparity --help)\n", stderr);
	return AP_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	/* A worker that dies must show up as EPIPE on write, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return ap_usage("no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(ap_help, stdout);
		return AP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("apiparity %s (%s)\n", ap_version, ap_commit);
		return AP_EXIT_OK;
	}
	if (!strcmp(argv[1], "env"))
		return ap_cmd_env(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return ap_cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tests"))
		return ap_cmd_tests(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return ap_cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "verify"))
		return ap_cmd_verify(argc - 1, argv + 1);
	if (!strcmp(argv[1], "docs"))
		return ap_cmd_docs(argc - 1, argv + 1);
	return ap_usage("unknown command '%s'", argv[1]);
}
