/* apiparity env - provision, fingerprint and list environments. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/err.h"
#include "env/fingerprint.h"
#include "base/pool.h"
#include "base/text.h"
#include "check/testsrc.h"
#include "env/provision.h"
#include "env/worker.h"

struct ap_env_opts {
	const char *envs;
	const char *root;
	const char *suite;
	const char *backend;
	int json;
	int timeout_s;
};

/* One environment's measurement, filled in by a pool job. */
struct ap_env_job {
	const struct ap_env *env;
	int timeout_ms;
	int full;            /* fingerprint (else only the hello) */
	int err;
	struct ap_buf detail;
	char python[32];
	json_t *fp;
};

#define AT(field) offsetof(struct ap_env_opts, field)
static const struct ap_opt create_opts[] = {
	{ "suite", "SUITE", "the Debian suite to bootstrap (bookworm, trixie, sid, ...)",
	  AT(suite), NULL, AP_OPT_REQUIRED },
	{ "backend", "openreg", "also builds this out-of-tree backend into the environment",
	  AT(backend), NULL, 0 },
	AP_CLI_OPT_ROOT(struct ap_env_opts),
};
static const struct ap_opt show_opts[] = {
	{ "json", NULL, "the fingerprints as JSON", AT(json), NULL, 0 },
	AP_CLI_OPT_TIMEOUT(struct ap_env_opts, "seconds each environment may take to answer "
			   "(default 120)"),
	AP_CLI_OPT_ENVS(struct ap_env_opts), AP_CLI_OPT_ROOT(struct ap_env_opts),
};
static const struct ap_opt list_opts[] = {
	AP_CLI_OPT_TIMEOUT(struct ap_env_opts, "seconds each environment may take to start "
			   "(default 30)"),
	AP_CLI_OPT_ENVS(struct ap_env_opts), AP_CLI_OPT_ROOT(struct ap_env_opts),
};
#undef AT

static const struct ap_optset create_set = { "env create", "NAME",
	"provision a reference environment", AP_OPTS(create_opts) };
static const struct ap_optset show_set = { "env show", "NAME...", "fingerprint environments",
	AP_OPTS(show_opts) };
static const struct ap_optset list_set = { "env list", "",
	"list environments, reachable or not", AP_OPTS(list_opts) };
const struct ap_optset *const ap_env_optsets[] = { &create_set, &show_set, &list_set, NULL };

static void env_job_run(void *item)
{
	struct ap_env_job *j = item;
	struct ap_worker w;
	const struct ap_worker_limits lim = { j->timeout_ms, j->timeout_ms };
	j->err = ap_worker_open(&w, j->env, &lim);
	if (!j->err) {
		snprintf(j->python, sizeof(j->python), "%s", w.python);
		if (j->full) {
			json_t *req = ap_fingerprint_request(j->env);
			j->err = req ? ap_worker_call(&w, req, &j->fp) : -ENOMEM;
			json_decref(req);
		}
	}
	ap_buf_adds(&j->detail, ap_buf_str(&w.detail));
	ap_worker_free(&w);
}

static int load(const struct ap_env_opts *o, struct ap_envs *envs)
{
	return ap_cli_load_envs(envs, o->envs, o->root);
}

static void jobs_free(struct ap_env_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ap_buf_free(&jobs[i].detail);
		json_decref(jobs[i].fp);
	}
	free(jobs);
}

/* Prints the fingerprints, as JSON or side by side; returns how many decoded. */
static void show_print(const struct ap_env_job *jobs, size_t n, int json)
{
	if (json) {
		json_t *all = json_object();
		for (size_t i = 0; i < n; i++)
			if (!jobs[i].err)
				json_object_set(all, jobs[i].env->name, jobs[i].fp);
		json_t *out = n == 1 ? jobs[0].fp : all;
		if (out)
			json_dumpf(out, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		if (out)
			putchar('\n');
		json_decref(all);
		return;
	}
	struct ap_fingerprint *fps = calloc(n, sizeof(*fps));
	const struct ap_fingerprint **cols = calloc(n, sizeof(*cols));
	const char **names = calloc(n, sizeof(*names)), **errors = calloc(n, sizeof(*errors));
	struct ap_buf out = { 0 }, derr = { 0 };
	for (size_t i = 0; fps && cols && names && errors && i < n; i++) {
		names[i] = jobs[i].env->name;
		errors[i] = "(no fingerprint)";
		if (!jobs[i].err && !ap_fingerprint_decode(&fps[i], jobs[i].fp, &derr))
			cols[i] = &fps[i];
	}
	if (fps && cols && names && errors) {
		if (n == 1 && cols[0])
			ap_fingerprint_render(cols[0], &out);
		else if (n > 1)
			ap_fingerprint_table(cols, names, errors, n, &out);
	}
	ap_text_fputs(ap_buf_str(&out), AP_TEXT_BLOCK, stdout); /* what the env says */
	for (size_t i = 0; fps && i < n; i++)
		ap_fingerprint_free(&fps[i]);
	free(fps);
	free(cols);
	free(names);
	free(errors);
	ap_buf_free(&out);
	ap_buf_free(&derr);
}

/* Resolves names to environments; the first unknown name is a usage error. */
static int jobs_for(const struct ap_envs *envs, char **names, size_t n, int full,
		       int timeout_s, struct ap_env_job **out)
{
	struct ap_env_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
	if (!jobs)
		return ap_fail(-ENOMEM, "env", NULL);
	for (size_t i = 0; i < n; i++) {
		jobs[i].env = ap_cli_find_env(envs, names[i], "env");
		jobs[i].full = full;
		jobs[i].timeout_ms = timeout_s * 1000;
		if (!jobs[i].env) {
			jobs_free(jobs, n);
			return AP_EXIT_UNKNOWN_ENV;
		}
	}
	*out = jobs;
	return 0;
}

static int env_show(int argc, char **argv, struct ap_env_opts *o)
{
	struct ap_envs envs;
	struct ap_env_job *jobs = NULL;
	size_t n = (size_t)(argc - optind);
	int rc = AP_EXIT_OK;

	if (!n)
		return ap_usage("env show: name at least one environment");
	if ((rc = load(o, &envs)))
		return rc;
	if ((rc = jobs_for(&envs, argv + optind, n, 1, o->timeout_s ? o->timeout_s : 120,
			      &jobs)))
		goto out;
	ap_pool_run(jobs, n, sizeof(*jobs), env_job_run);
	show_print(jobs, n, o->json);
	fflush(stdout);
	for (size_t i = 0; i < n; i++) {
		if (!jobs[i].err)
			continue;
		struct ap_buf what = { 0 };
		ap_buf_addf(&what, "env %s", jobs[i].env->name);
		int code = ap_fail(jobs[i].err, ap_buf_str(&what), &jobs[i].detail);
		rc = rc ? rc : code;
		ap_buf_free(&what);
	}
	jobs_free(jobs, n);
out:
	ap_envs_free(&envs);
	return rc;
}

/* env list takes no operands; those given are ignored, as they always were. */
static int env_list(int argc, char **argv, struct ap_env_opts *o)
{
	(void)argc;
	(void)argv;
	struct ap_envs envs;
	struct ap_env_job *jobs;
	int rc = load(o, &envs);
	if (rc)
		return rc;
	jobs = calloc(envs.n ? envs.n : 1, sizeof(*jobs));
	for (size_t i = 0; jobs && i < envs.n; i++)
		jobs[i] = (struct ap_env_job){ .env = &envs.v[i],
					       .timeout_ms = (o->timeout_s ? o->timeout_s : 30) * 1000 };
	if (!jobs) {
		ap_envs_free(&envs);
		return ap_fail(-ENOMEM, "env list", NULL);
	}
	ap_pool_run(jobs, envs.n, sizeof(*jobs), env_job_run);
	printf("%-12s %-12s %s\n", "NAME", "STATUS", "WHERE / WHY");
	for (size_t i = 0; i < envs.n; i++) {
		struct ap_buf where = { 0 };
		ap_env_describe(jobs[i].env, &where);
		struct ap_buf row = { 0 };
		if (jobs[i].err)
			ap_buf_addf(&row, "%-12s %-12s %s: %s", jobs[i].env->name, "unreachable",
				    ap_strerror(jobs[i].err), ap_buf_str(&jobs[i].detail));
		else
			ap_buf_addf(&row, "%-12s %-12s python %s; %s", jobs[i].env->name,
				    "reachable", jobs[i].python, ap_buf_str(&where));
		ap_text_fputs(ap_buf_str(&row), AP_TEXT_LINE, stdout);
		putchar('\n');
		ap_buf_free(&row);
		ap_buf_free(&where);
	}
	jobs_free(jobs, envs.n);
	ap_envs_free(&envs);
	return AP_EXIT_OK;
}

/* On a terminal, one line rewritten in place; otherwise one line per phase. */
static void create_progress(void *ctx, const char *phase, const char *line)
{
	const char *name = ctx;
	if (!isatty(STDERR_FILENO)) {
		if (!line)
			fprintf(stderr, "apiparity: env %s: %s\n", name, phase);
		return;
	}
	fprintf(stderr, "\r\033[K%s: %s%s%.60s", name, phase, line ? ": " : "",
		line ? line : "");
	fflush(stderr);
}

/* The checked test tree's test/ directory that backend is built from, into
 * src; a usage error for an unknown backend, a provisioning failure when the
 * tree is not fetched (nothing is fetched behind the user's back). */
static int backend_source(const char *backend, struct ap_buf *src)
{
	if (!backend)
		return 0;
	const char *suite = "?";
	const char *key = ap_provision_backend_tree(backend, &suite);
	if (!key)
		return ap_usage("env create: no backend '%s' (known: %s)", backend,
				ap_provision_backends());
	if (ap_testsrc_cached(key, src))
		return 0;
	struct ap_buf why = { 0 };
	ap_buf_addf(&why, "backend %s is built from the %s test tree, not fetched yet (%s): "
		    "run `apiparity tests fetch %s` first", backend, key, ap_buf_str(src), suite);
	int rc = ap_fail(-AP_EPROVISION, "env create", &why);
	ap_buf_free(&why);
	ap_buf_free(src);
	return rc;
}

static int env_create(int argc, char **argv, struct ap_env_opts *o)
{
	struct ap_buf err = { 0 }, what = { 0 };
	if (argc - optind != 1)
		return ap_usage("env create: name exactly one environment");
	const char *name = argv[optind];
	if (!ap_env_name_ok(name))
		return ap_usage("env create: '%s' is not a valid environment name", name);
	if (!o->suite)
		return ap_usage("env create: --suite is required (bookworm, trixie, sid, ...)");
	struct ap_buf src = { 0 };
	int rc = backend_source(o->backend, &src);
	if (rc)
		return rc;
	struct ap_provision_opts po = { ap_env_root(o->root), name, o->suite, o->backend,
					o->backend ? ap_buf_str(&src) : NULL,
					create_progress, (void *)name };
	int r = ap_provision(&po, &err);
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	if (r == 1)
		printf("%s/%s: already complete\n", po.root, name);
	else if (r == 0)
		printf("%s/%s: created (Debian %s%s%s)\n", po.root, name, o->suite,
		       o->backend ? " with " : "", o->backend ? o->backend : "");
	ap_buf_free(&src);
	ap_buf_addf(&what, "env create %s", name);
	rc = r < 0 ? ap_fail(r, ap_buf_str(&what), &err) : AP_EXIT_OK;
	ap_buf_free(&err);
	ap_buf_free(&what);
	return rc;
}

int ap_cmd_env(int argc, char **argv)
{
	static const struct {
		const struct ap_optset *set;
		int (*run)(int argc, char **argv, struct ap_env_opts *o);
	} verbs[] = { { &create_set, env_create }, { &show_set, env_show },
		      { &list_set, env_list } };
	struct ap_env_opts o = { 0 };
	if (argc < 2)
		return ap_usage("env: want create, show or list");
	if (ap_cli_wants_help(argv[1]))
		return ap_cli_print_verbs(ap_env_optsets);
	const char *sub = argv[1];
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(sub, verbs[i].set->name + strlen("env ")))
			continue;
		int r = ap_cli_parse(verbs[i].set, argc - 1, argv + 1, &o);
		if (r)
			return r < 0 ? AP_EXIT_OK : r;
		return verbs[i].run(argc - 1, argv + 1, &o);
	}
	return ap_usage("env: unknown subcommand '%s'", sub);
}
