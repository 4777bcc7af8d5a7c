/* apiparity diff - what changed from one matrix (or environment) to another:
 * APIs added and removed, signature and kind changes, verdict changes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/jsonutil.h"
#include "base/text.h"
#include "cmd/cmd.h"
#include "evidence/matrix.h"
#include "review/sweepview.h"

/* A side of the diff: "PATH" or "PATH:ENV", PATH a sweep directory or a
 * matrix.jsonl. A PATH that exists as given wins over a colon in it. */
struct side {
	char *path;
	char *env;        /* owned; NULL until known */
	struct ap_matrix lines;
};

static int side_load(struct side *s, const char *arg, const char *what)
{
	struct ap_buf err = { 0 };
	struct stat st;
	s->path = strdup(arg);
	char *colon = strrchr(s->path, ':');
	if (lstat(arg, &st) && colon) {
		*colon = '\0';
		s->env = strdup(colon + 1);
	}
	int r = ap_matrix_read(s->path, &s->lines, &err);
	if (r) {
		/* a matrix is an input, not a worker's frame: garbage is malformed
		 * input (exit 4), whatever the reader called it */
		r = ap_fail(r == -ENOMEM ? r : r == -AP_EPROTO ? -AP_EINPUT : -AP_ECONFIG, what, &err);
		ap_buf_free(&err);
		return r;
	}
	size_t n, found = 0;
	const char **envs = ap_matrix_envs(&s->lines, &n);
	for (size_t i = 0; i < n; i++)
		found |= s->env && !strcmp(envs[i], s->env);
	if (!s->env && n == 1)
		s->env = strdup(envs[0]);
	else if (!found) {
		for (size_t i = 0; i < n; i++)
			ap_buf_addf(&err, "%s%s", i ? ", " : "", envs[i]);
		r = ap_usage("diff: %s: %s %s; name one as %s:ENV (it holds %s)", what, s->path,
			     s->env ? "has no such environment" : "holds several environments",
			     s->path, ap_buf_str(&err));
	}
	free(envs);
	ap_buf_free(&err);
	return r;
}

static const struct ap_optset diff_set = { "diff", "A[:ENV] B[:ENV]",
	"APIs added, removed and changed", NULL, 0 };
const struct ap_optset *const ap_diff_optsets[] = { &diff_set, NULL };

int ap_cmd_diff(int argc, char **argv)
{
	struct side a = { 0 }, b = { 0 };
	int rc = ap_cli_parse(&diff_set, argc, argv, NULL);
	if (rc)
		return rc < 0 ? AP_EXIT_OK : rc;
	if (argc - optind != 2)
		return ap_usage("diff: want diff A[:ENV] B[:ENV] (sweep directories or matrix.jsonl)");
	rc = side_load(&a, argv[optind], "diff A");
	rc = rc ? rc : side_load(&b, argv[optind + 1], "diff B");
	if (!rc) {
		struct ap_buf out = { 0 };
		struct ap_matrix_diff d;
		rc = ap_matrix_diff(&a.lines, a.env, &b.lines, b.env, &d);
		if (rc)
			rc = ap_fail(rc, "diff", NULL);
		else {
			printf("from %s:%s to %s:%s\n", a.path, a.env, b.path, b.env);
			ap_matrix_diff_text(&d, &out);
			fputs(ap_buf_str(&out), stdout);
		}
		ap_matrix_diff_free(&d);
		ap_buf_free(&out);
	}
	free(a.path);
	free(b.path);
	free(a.env);
	free(b.env);
	ap_matrix_free(&a.lines);
	ap_matrix_free(&b.lines);
	return rc;
}
