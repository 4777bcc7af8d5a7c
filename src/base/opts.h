/* opts.h - a command's options as one table, from which its parser, its usage
 * line and its --help all come, so that they cannot disagree (git's
 * parse-options, smaller).
 *
 * A table (struct ap_optset) belongs to one command or verb: "check",
 * "tests run". Each entry is one option: its name (a long option, --out, or
 * with a one-letter name a short one, -k), the name of the value it takes
 * (none: a flag), one line of help, and where a parsed value goes, as an
 * offset into the command's own options struct:
 *
 *   metavar   set    the field at .at
 *   NULL      NULL   int, set to 1 (a flag)
 *   "DIR"     NULL   const char *, the value (the last one given wins)
 *   "S"       fn     whatever fn stores there once it has checked the value
 *
 * Every table also takes --help and -h, which are not entries. Nothing here
 * prints: a refused option's message comes back in a buffer, to be printed by
 * the caller after "apiparity: " (cli.h: ap_cli_parse).
 *
 * Adding an option: one entry in the command's table (in src/cmd/NAME.c), and
 * the option in docs/apiparity.1's SYNOPSIS line of that command and its
 * OPTIONS section; tests/integration/t-options.sh fails until both are there.
 */
#ifndef AP_OPTS_H
#define AP_OPTS_H

#include <stddef.h>

#include "base/buf.h"

/* How an entry is shown in the usage line; the parser does not enforce them. */
#define AP_OPT_REPEAT   1u  /* may be given several times: [--env NAME]... */
#define AP_OPT_REQUIRED 2u  /* the command refuses to run without it: no brackets */

struct ap_opt;

/* Checks arg and stores it into the field of opts at o->at. 0, or -EINVAL
 * with the whole message in err ("check: --samples wants ..."). */
typedef int ap_opt_set_fn(void *opts, const struct ap_opt *o, const char *arg,
			  struct ap_buf *err);

struct ap_opt {
	const char *name;     /* "out" for --out, "k" for -k */
	const char *metavar;  /* the value's name in the usage line; NULL: a flag */
	const char *help;     /* one line, for --help */
	size_t at;            /* offsetof the field in the options struct */
	ap_opt_set_fn *set;   /* NULL: store as the table above says */
	unsigned flags;       /* AP_OPT_REPEAT, AP_OPT_REQUIRED */
};

struct ap_optset {
	const char *name;     /* as typed after "apiparity": "check", "tests run" */
	const char *operands; /* what follows the name: "TARGET", "SHARDDIR...", "" */
	const char *summary;  /* what it does, one line */
	const struct ap_opt *v;
	size_t n;
};

/* A table's entries and their count, for a struct ap_optset initializer. */
#define AP_OPTS(table) (table), (sizeof(table) / sizeof((table)[0]))

/* Options with more than this many entries are not one table (getopt's own
 * array is on the stack). */
#define AP_OPTS_MAX 32

/* ap_opts_parse()'s answer when --help or -h was given: nothing else parsed. */
#define AP_OPTS_HELP 1

/* Parses argv[1..argc-1] (argv[0] is the command or verb, skipped) by set,
 * with getopt_long(3): options and operands may mix, "--" ends the options,
 * a long name may be shortened to any unambiguous prefix. Fills opts; leaves
 * optind at the first operand (argv is permuted so that they come last).
 * 0; AP_OPTS_HELP; or -EINVAL with the message in err: "check: option '--out'
 * needs a value", "check: unknown option '--colour'", or a setter's. */
int ap_opts_parse(const struct ap_optset *set, int argc, char **argv, void *opts,
		  struct ap_buf *err);

/* The usage line of set, as --help shows it: "usage: apiparity check TARGET
 * [--envs FILE] ...", wrapped at 80 columns under the first option. */
void ap_opts_usage(const struct ap_optset *set, struct ap_buf *out);

/* The synopsis of set for the list of all commands: "  check TARGET [...]",
 * continuation lines indented by 8, then the summary at column 48 (on the
 * synopsis' last line when it fits, else on a line of its own). */
void ap_opts_synopsis(const struct ap_optset *set, struct ap_buf *out);

/* set's --help: its usage line, its summary, and a line per option (with
 * --help itself last). */
void ap_opts_help(const struct ap_optset *set, struct ap_buf *out);

/* One line: set's name, a tab, and its options as typed, space-separated
 * ("tests run\t--envs --root ... -k"): what tests compare the man page with. */
void ap_opts_list(const struct ap_optset *set, struct ap_buf *out);

/* A setter for a number of seconds, 1 to 86400, into an int:
 * "--timeout wants a positive number of seconds (at most 86400), not 'x'". */
ap_opt_set_fn ap_opt_seconds;

/* arg as a count from 1 to max, digits only (no sign, no blank), or -1:
 * for setters whose message names their own range. */
int ap_opt_count(const char *arg, int max);

#endif
