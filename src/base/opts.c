#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"

#define WIDTH 80          /* where usage lines and help wrap */
#define SUMMARY_COL 48    /* the summary's column in the list of commands */
#define HELP_COL 24       /* an option's help line starts here in --help */
#define LONG_VAL 256      /* getopt's val of entry i: LONG_VAL + i */

static int is_short(const struct ap_opt *o)
{
	return o->name[0] && !o->name[1];
}

/* "--out DIR", "-k REGEX", "--json": the option as typed. */
static void opt_text(const struct ap_opt *o, struct ap_buf *out)
{
	ap_buf_addf(out, "%s%s", is_short(o) ? "-" : "--", o->name);
	if (o->metavar)
		ap_buf_addf(out, " %s", o->metavar);
}

/* The message for what getopt_long() returned instead of an option: ':' for
 * a missing value, else an unknown option (in a cluster, "-xk", only "-x"). */
static int opt_bad(const char *cmd, int c, char **argv, struct ap_buf *err)
{
	const char *opt = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };
	if (c != ':' && strncmp(opt, "--", 2) && optopt > 0 && optopt < 128)
		opt = shortopt;
	if (c == ':')
		ap_buf_addf(err, "%s: option '%s' needs a value", cmd, opt);
	else
		ap_buf_addf(err, "%s: unknown option '%s'", cmd, opt);
	return -EINVAL;
}

/* Stores arg (NULL for a flag) as entry o says. 0 or -EINVAL (err). */
static int opt_store(const struct ap_opt *o, void *opts, const char *arg, struct ap_buf *err)
{
	char *field = (char *)opts + o->at;
	if (o->set)
		return o->set(opts, o, arg, err);
	if (o->metavar)
		memcpy(field, &arg, sizeof(arg));
	else
		*(int *)(void *)field = 1;
	return 0;
}

/* The entry getopt_long() returned c for, or NULL. */
static const struct ap_opt *opt_of(const struct ap_optset *set, int c)
{
	if (c >= LONG_VAL && (size_t)(c - LONG_VAL) < set->n)
		return &set->v[c - LONG_VAL];
	for (size_t i = 0; i < set->n; i++)
		if (is_short(&set->v[i]) && set->v[i].name[0] == c)
			return &set->v[i];
	return NULL;
}

int ap_opts_parse(const struct ap_optset *set, int argc, char **argv, void *opts,
		  struct ap_buf *err)
{
	struct option longopts[AP_OPTS_MAX + 2];
	char shorts[2 * AP_OPTS_MAX + 3] = ":h";
	size_t nl = 0, ns = strlen(shorts);
	if (set->n > AP_OPTS_MAX)
		return -E2BIG;
	for (size_t i = 0; i < set->n; i++) {
		const struct ap_opt *o = &set->v[i];
		if (is_short(o)) {
			shorts[ns++] = o->name[0];
			if (o->metavar)
				shorts[ns++] = ':';
		} else
			longopts[nl++] = (struct option){ o->name, o->metavar ? required_argument :
							  no_argument, NULL, LONG_VAL + (int)i };
	}
	shorts[ns] = '\0';
	longopts[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[nl] = (struct option){ NULL, 0, NULL, 0 };
	int c;
	optind = 0; /* a fresh scan, whatever an earlier one left behind */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const struct ap_opt *o = opt_of(set, c);
		if (c == 'h' && !o)
			return AP_OPTS_HELP;
		if (!o)
			return opt_bad(set->name, c, argv, err);
		int r = opt_store(o, opts, optarg, err);
		if (r)
			return r;
	}
	return 0;
}

/* Appends " word" to out, or, where that would pass WIDTH on a line that has
 * more than its indent, a new line indented by indent and word; *col is the
 * column out ends at. */
static void add_word(struct ap_buf *out, size_t *col, size_t indent, const char *word)
{
	size_t n = strlen(word);
	if (*col > indent && *col + 1 + n > WIDTH) {
		ap_buf_addf(out, "\n%*s%s", (int)indent, "", word);
		*col = indent + n;
		return;
	}
	ap_buf_addf(out, " %s", word);
	*col += 1 + n;
}

/* The operands and options of set as words, wrapped (see add_word). */
static void add_items(const struct ap_optset *set, struct ap_buf *out, size_t *col,
		      size_t indent)
{
	if (set->operands && *set->operands)
		add_word(out, col, indent, set->operands);
	for (size_t i = 0; i < set->n; i++) {
		const struct ap_opt *o = &set->v[i];
		struct ap_buf w = { 0 }, t = { 0 };
		opt_text(o, &t);
		ap_buf_addf(&w, o->flags & AP_OPT_REQUIRED ? "%s" : "[%s]", ap_buf_str(&t));
		if (o->flags & AP_OPT_REPEAT)
			ap_buf_adds(&w, "...");
		add_word(out, col, indent, ap_buf_str(&w));
		ap_buf_free(&w);
		ap_buf_free(&t);
	}
}

/* text wrapped at WIDTH, each line after the first indented by indent;
 * *col is where out ends. */
static void add_text(struct ap_buf *out, size_t *col, size_t indent, const char *text)
{
	char *copy = strdup(text), *save = NULL;
	for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save))
		add_word(out, col, indent, w);
	free(copy);
}

void ap_opts_usage(const struct ap_optset *set, struct ap_buf *out)
{
	size_t start = out->len;
	ap_buf_addf(out, "usage: apiparity %s", set->name);
	size_t col = out->len - start;
	add_items(set, out, &col, col + 1);
	ap_buf_adds(out, "\n");
}

void ap_opts_synopsis(const struct ap_optset *set, struct ap_buf *out)
{
	size_t start = out->len;
	ap_buf_addf(out, "  %s", set->name);
	size_t col = out->len - start;
	add_items(set, out, &col, 8);
	if (col + 1 > SUMMARY_COL) {
		ap_buf_adds(out, "\n");
		col = 0;
	}
	ap_buf_addf(out, "%*s", (int)(SUMMARY_COL - 1 - col), "");
	col = SUMMARY_COL - 1;
	add_text(out, &col, SUMMARY_COL, set->summary);
	ap_buf_adds(out, "\n");
}

void ap_opts_help(const struct ap_optset *set, struct ap_buf *out)
{
	static const struct ap_opt help = { "help", NULL, "prints this help", 0, NULL, 0 };
	ap_opts_usage(set, out);
	ap_buf_addf(out, "\n%s\n", set->summary);
	ap_buf_adds(out, "\noptions:\n");
	for (size_t i = 0; i <= set->n; i++) {
		const struct ap_opt *o = i < set->n ? &set->v[i] : &help;
		struct ap_buf t = { 0 };
		opt_text(o, &t);
		ap_buf_addf(out, "  %s", ap_buf_str(&t));
		/* The help on the option's line, else on the next. */
		size_t col = 2 + t.len;
		if (col + 2 > HELP_COL)
			ap_buf_adds(out, "\n");
		ap_buf_addf(out, "%*s", (int)(HELP_COL - 1 - (col + 2 > HELP_COL ? 0 : col)), "");
		col = HELP_COL - 1;
		add_text(out, &col, HELP_COL, o->help);
		ap_buf_adds(out, "\n");
		ap_buf_free(&t);
	}
}

void ap_opts_list(const struct ap_optset *set, struct ap_buf *out)
{
	ap_buf_addf(out, "%s\t", set->name);
	for (size_t i = 0; i < set->n; i++)
		ap_buf_addf(out, "%s%s%s", i ? " " : "", is_short(&set->v[i]) ? "-" : "--",
			    set->v[i].name);
	ap_buf_adds(out, "\n");
}

int ap_opt_seconds(void *opts, const struct ap_opt *o, const char *arg, struct ap_buf *err)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (end == arg || *end || v <= 0 || v > 86400) {
		ap_buf_addf(err, "--%s wants a positive number of seconds (at most 86400), not '%s'",
			    o->name, arg);
		return -EINVAL;
	}
	*(int *)(void *)((char *)opts + o->at) = (int)v;
	return 0;
}

int ap_opt_count(const char *arg, int max)
{
	char *end;
	long v = strtol(arg, &end, 10);
	return *arg >= '0' && *arg <= '9' && !*end && v >= 1 && v <= max ? (int)v : -1;
}
