/* apiparity env - provision, fingerprint and list environments. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "env/fingerprint.h"
#include "base/pool.h"
#include "base/text.h"
#include "check/testsrc.h"
#include "env/provision.h"
#include "env/worker.h"

#define AP_SHOW_MAX_PYTHONS 16

struct ap_env_opts {
	const char *envs;
	const char *root;
	const char *suite;
	const char *backend;
	int json;
	int names;           /* env list --names */
	int timeout_s;
	const char *python, *exec, *device; /* env add */
	const char *pythons[AP_SHOW_MAX_PYTHONS]; /* env show --python: their names */
	size_t npythons;
};

/* env show --python [NAME=]PATH: shown beside the named ones. */
static int show_add_python(void *opts, const struct ap_opt *opt, const char *arg,
			   struct ap_buf *err)
{
	struct ap_env_opts *o = opts;
	const char *name;
	(void)opt;
	int r = ap_cli_python(arg, &name, err);
	return r ? r : ap_cli_push(o->pythons, &o->npythons, AP_SHOW_MAX_PYTHONS, name,
				   "env show", "--python", err);
}

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
static const struct ap_opt add_opts[] = {
	{ "python", "PATH", "the environment's Python (with torch)", AT(python), NULL,
	  AP_OPT_REQUIRED },
	{ "exec", "PREFIX", "a command prefix it runs under (ssh host --, env VAR=1)", AT(exec),
	  NULL, 0 },
	{ "device", "TYPE", "the device type it claims (npu, cuda, ...)", AT(device), NULL, 0 },
};
static const struct ap_opt show_opts[] = {
	{ "json", NULL, "the fingerprints as JSON", AT(json), NULL, 0 },
	AP_CLI_OPT_PYTHON(show_add_python),
	AP_CLI_OPT_TIMEOUT(struct ap_env_opts, "seconds each environment may take to answer "
			   "(default 120)"),
	AP_CLI_OPT_ENVS(struct ap_env_opts), AP_CLI_OPT_ROOT(struct ap_env_opts),
};
static const struct ap_opt list_opts[] = {
	{ "names", NULL, "only the names, a line each, none reached (for completion)",
	  AT(names), NULL, 0 },
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
static const struct ap_optset add_set = { "env add", "NAME",
	"add an environment to your own environments file", AP_OPTS(add_opts) };
const struct ap_optset *const ap_env_optsets[] = { &create_set, &show_set, &list_set, &add_set,
						   NULL };

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
	size_t n = (size_t)(argc - optind) + o->npythons;
	int rc = AP_EXIT_OK;
	char *names[AP_SHOW_MAX_PYTHONS + 64];

	if (!n)
		return ap_usage("env show: name at least one environment (or --python PATH)");
	if (n > sizeof(names) / sizeof(names[0]))
		return ap_usage("env show: at most %zu environments", sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < n; i++)
		names[i] = i < o->npythons ? (char *)o->pythons[i] : argv[optind + i - o->npythons];
	if ((rc = load(o, &envs)))
		return rc;
	if ((rc = jobs_for(&envs, names, n, 1, o->timeout_s ? o->timeout_s : 120, &jobs)))
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
	if (o->names) {
		for (size_t i = 0; i < envs.n; i++) {
			ap_text_fputs(envs.v[i].name, AP_TEXT_LINE, stdout);
			putchar('\n');
		}
		ap_envs_free(&envs);
		return AP_EXIT_OK;
	}
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

/* env add NAME --python PATH [--exec PREFIX] [--device TYPE]: appends the
 * entry to the user's own environments file, which must still parse. */
static int env_add(int argc, char **argv, struct ap_env_opts *o)
{
	struct ap_buf file = { 0 }, text = { 0 }, err = { 0 };
	struct ap_envs envs = { 0 };
	if (argc - optind != 1)
		return ap_usage("env add: name exactly one environment");
	const char *name = argv[optind];
	if (!ap_env_name_ok(name) || !strcmp(name, "local"))
		return ap_usage("env add: '%s' is not a name an environment can have", name);
	if (ap_text_has_control(o->python) || ap_text_has_control(o->exec) ||
	    ap_text_has_control(o->device))
		return ap_usage("env add: --python, --exec and --device are one line each");
	if (ap_user_envs_file(&file))
		return ap_usage("env add: neither XDG_CONFIG_HOME nor HOME is set: no file of "
				"yours to add to");
	int r = ap_read_file_limited(ap_buf_str(&file), 1u << 20, &text);
	if (r == -ENOENT)
		r = 0;
	if (text.len && text.data[text.len - 1] != '\n')
		ap_buf_adds(&text, "\n");
	ap_buf_addf(&text, "\n[%s]\npython = ", name);
	ap_shell_quote(&text, o->python);
	ap_buf_adds(&text, "\n");
	if (o->exec)
		ap_buf_addf(&text, "exec = %s\n", o->exec);
	if (o->device)
		ap_buf_addf(&text, "device = %s\n", o->device);
	if (r)
		ap_buf_addf(&err, "%s: %s", ap_buf_str(&file), ap_strerror(r));
	else if (!(r = ap_envs_parse(&envs, ap_buf_str(&text), text.len, ap_buf_str(&file),
				      ap_env_root(o->root), &err))) {
		ap_envs_free(&envs);
		r = ap_mkdirs_parent(ap_buf_str(&file));
		r = r ? r : ap_write_atomic(ap_buf_str(&file), text.data, text.len);
		if (r)
			ap_buf_addf(&err, "%s: %s", ap_buf_str(&file), ap_strerror(r));
	}
	int rc = r ? ap_fail(r == -ENOMEM ? r : -AP_ECONFIG, "env add", &err) : AP_EXIT_OK;
	if (!r)
		printf("%s: [%s] added\n", ap_buf_str(&file), name);
	ap_buf_free(&file);
	ap_buf_free(&text);
	ap_buf_free(&err);
	return rc;
}

int ap_cmd_env(int argc, char **argv)
{
	static const struct {
		const struct ap_optset *set;
		int (*run)(int argc, char **argv, struct ap_env_opts *o);
	} verbs[] = { { &create_set, env_create }, { &show_set, env_show },
		      { &list_set, env_list }, { &add_set, env_add } };
	struct ap_env_opts o = { 0 };
	if (argc < 2)
		return ap_usage("env: want create, show, list or add");
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
