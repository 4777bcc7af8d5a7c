#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/text.h"
#include "cli.h"

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

int ap_user_envs_file(struct ap_buf *out)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	if (x && *x == '/')
		return ap_buf_addf(out, "%s/apiparity/envs.ini", x), 0;
	if (h && *h)
		return ap_buf_addf(out, "%s/.config/apiparity/envs.ini", h), 0;
	return -ENOENT;
}

/* The --python environments of this run: an environments file of their
 * own, written as the user would write it. */
#define AP_CLI_MAX_PYTHONS 16
static struct ap_buf cli_pythons;
static char cli_python_names[AP_CLI_MAX_PYTHONS][AP_ENV_NAME_MAX + 1];
static size_t cli_npythons;

/* An environment name from a path: its words joined by '-'
 * ("/opt/venv/bin/python3": "opt-venv-bin-python3"). */
static void name_from_path(const char *path, struct ap_buf *out)
{
	for (const char *p = path; *p; p++) {
		int word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			   (*p >= '0' && *p <= '9') || *p == '_' || *p == '.';
		if (word)
			ap_buf_add(out, p, 1);
		else if (out->len && out->data[out->len - 1] != '-')
			ap_buf_adds(out, "-");
	}
	while (out->len && out->data[out->len - 1] == '-')
		out->data[--out->len] = '\0';
}

int ap_cli_python(const char *arg, const char **name, struct ap_buf *err)
{
	const char *eq = strchr(arg, '='), *path = eq && eq[1] == '/' ? eq + 1 : arg;
	struct ap_buf n = { 0 };
	if (path != arg)
		ap_buf_add(&n, arg, (size_t)(eq - arg));
	else
		name_from_path(path, &n);
	int bad = !ap_env_name_ok(ap_buf_str(&n)), ctl = ap_text_has_control(path);
	if (cli_npythons == AP_CLI_MAX_PYTHONS)
		ap_buf_addf(err, "--python: at most %d", AP_CLI_MAX_PYTHONS);
	else if (bad || ctl || !*path)
		ap_buf_addf(err, "--python: '%s' is [NAME=]PATH, a path without control characters "
			    "and a name of letters, digits, '.', '_' and '-'%s", arg,
			    path == arg ? " (give NAME= where the path makes none)" : "");
	if (err->len) {
		ap_buf_free(&n);
		return -EINVAL;
	}
	/* Single-quoted for the file's word splitting (base/argv.h). */
	ap_buf_addf(&cli_pythons, "[%s]\npython = ", ap_buf_str(&n));
	ap_shell_quote(&cli_pythons, path);
	ap_buf_adds(&cli_pythons, "\n");
	char *kept = cli_python_names[cli_npythons++];
	snprintf(kept, sizeof(cli_python_names[0]), "%s", ap_buf_str(&n)); /* checked above */
	ap_buf_free(&n);
	*name = kept;
	return 0;
}

/* Loads the environments file at path (NULL: the built-in one) into
 * extra and merges it into envs; a missing user file is no error. */
static int merge_file(struct ap_envs *envs, const char *path, const char *text, const char *root,
		      struct ap_buf *err)
{
	struct ap_envs extra;
	int r = text ? ap_envs_parse(&extra, text, strlen(text), path, root, err) :
		       ap_envs_load(&extra, path, root, err);
	if (r)
		return r; /* extra is empty */
	if ((r = ap_envs_merge(envs, &extra)))
		ap_buf_adds(err, "out of memory");
	ap_envs_free(&extra);
	return r;
}

int ap_fail(int err, const char *what, const struct ap_buf *detail)
{
	/* what and detail quote names and messages from data: escaped, so
	 * that they can only be read, never act on the terminal. */
	fputs("apiparity: ", stderr);
	ap_text_fputs(what, AP_TEXT_LINE, stderr);
	fprintf(stderr, ": %s", ap_strerror(err));
	if (detail && detail->len) {
		fputs(": ", stderr);
		ap_text_fputs(ap_buf_str(detail), AP_TEXT_BLOCK, stderr);
	}
	fputs("\n", stderr);
	return ap_exit_code(err);
}

void ap_print_warnings(const struct ap_buf *lines)
{
	const char *p = ap_buf_str(lines);
	while (*p) {
		size_t n = strcspn(p, "\n");
		fprintf(stderr, "apiparity: warning: %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* The longest usage message shown whole. */
#define AP_USAGE_MAX 1024

int ap_usage(const char *fmt, ...)
{
	/* What the user typed comes back in the message: escaped, so that it
	 * can only be read, and bounded, so that a megabyte of it is not. */
	struct ap_buf msg = { 0 };
	va_list ap;
	va_start(ap, fmt);
	ap_buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	fputs("apiparity: ", stderr);
	if (msg.len > AP_USAGE_MAX) {
		size_t n = ap_utf8_prefix(msg.data, AP_USAGE_MAX);
		struct ap_buf cut = { 0 };
		ap_buf_add(&cut, msg.data, n);
		ap_text_fputs(ap_buf_str(&cut), AP_TEXT_LINE, stderr);
		fprintf(stderr, "... (%zu bytes more)", msg.len - n);
		ap_buf_free(&cut);
	} else
		ap_text_fputs(ap_buf_str(&msg), AP_TEXT_LINE, stderr);
	fputs(" (see apiparity --help)\n", stderr);
	ap_buf_free(&msg);
	return AP_EXIT_USAGE;
}

int ap_cli_parse(const struct ap_optset *set, int argc, char **argv, void *opts)
{
	struct ap_buf err = { 0 };
	int r = ap_opts_parse(set, argc, argv, opts, &err);
	if (r == AP_OPTS_HELP) {
		struct ap_buf help = { 0 };
		ap_opts_help(set, &help);
		fputs(ap_buf_str(&help), stdout);
		ap_buf_free(&help);
		r = -1;
	} else if (r)
		r = ap_usage("%s", ap_buf_str(&err));
	ap_buf_free(&err);
	return r;
}

int ap_cli_wants_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

int ap_cli_print_verbs(const struct ap_optset *const *sets)
{
	struct ap_buf out = { 0 };
	for (size_t i = 0; sets[i]; i++)
		ap_opts_usage(sets[i], &out);
	fputs(ap_buf_str(&out), stdout);
	if (sets[0])
		printf("\nEach verb's options: apiparity %.*s VERB --help.\n",
		       (int)strcspn(sets[0]->name, " "), sets[0]->name);
	ap_buf_free(&out);
	return AP_EXIT_OK;
}

int ap_cli_load_envs(struct ap_envs *envs, const char *envs_opt, const char *root_opt)
{
	struct ap_buf err = { 0 }, user = { 0 };
	const char *file = ap_envs_file(envs_opt), *root = ap_env_root(root_opt);
	struct stat st;
	int r = ap_envs_load(envs, file, root, &err);
	if (!r && !file && !ap_user_envs_file(&user) && !stat(ap_buf_str(&user), &st))
		r = merge_file(envs, ap_buf_str(&user), NULL, root, &err);
	if (!r && cli_npythons)
		r = merge_file(envs, "--python", ap_buf_str(&cli_pythons), root, &err);
	if (r && envs->path)
		ap_envs_free(envs);
	if (r)
		r = ap_fail(r, "environments file", &err);
	ap_buf_free(&user);
	ap_buf_free(&err);
	return r;
}

const struct ap_env *ap_cli_find_env(const struct ap_envs *envs, const char *name,
				     const char *what)
{
	const struct ap_env *e = ap_envs_find(envs, name);
	if (e)
		return e;
	struct ap_buf d = { 0 };
	ap_buf_addf(&d, "'%s' is not in %s (see apiparity env list)", name, envs->path);
	ap_fail(-AP_EUNKNOWN_ENV, what, &d);
	ap_buf_free(&d);
	return NULL;
}

void ap_print_exit_table(FILE *f)
{
	for (int c = 0; c <= ap_exit_max(); c++)
		if (ap_exit_text(c))
			fprintf(f, "  %2d  %s\n", c, ap_exit_text(c));
}

int ap_cli_count(void *opts, const struct ap_opt *opt, const char *arg, int max,
		 const char *cmd, struct ap_buf *err)
{
	int v = ap_opt_count(arg, max);
	if (v > 0) {
		*(int *)((char *)opts + opt->at) = v;
		return 0;
	}
	ap_buf_addf(err, "%s: --%s wants a number from 1 to %d", cmd, opt->name, max);
	return -EINVAL;
}

int ap_cli_push(const char **v, size_t *n, size_t max, const char *arg, const char *cmd,
		const char *what, struct ap_buf *err)
{
	if (*n == max) {
		ap_buf_addf(err, "%s: at most %zu %s", cmd, max, what);
		return -EINVAL;
	}
	v[(*n)++] = arg;
	return 0;
}
