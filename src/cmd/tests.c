/* apiparity tests - upstream's official tests: fetch them for an environment's
 * torch version, and find the ones that exercise a target. */
#include <regex.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "evidence/manifest.h"
#include "base/err.h"
#include "env/fingerprint.h"
#include "base/fsutil.h"
#include "check/official.h"
#include "base/text.h"
#include "env/provision.h"
#include "check/testindex.h"
#include "check/testsrc.h"
#include "check/verdict.h"
#include "env/protocol.h"
#include "env/worker.h"
#include "evidence/bundle.h"
#include "evidence/facts.h"

#define AP_TESTS_RUN_LIMIT_MS (24 * 3600 * 1000)
/* The worker's start (torch's import) and each answer but a test run's. */
#define AP_TESTS_WORKER_MS (300 * 1000)

static const struct ap_worker_limits tests_worker_limits = { AP_TESTS_WORKER_MS,
							     AP_TESTS_WORKER_MS };

struct ap_tests_opts {
	const char *envs, *root, *env, *torch_src, *claimed, *select, *log;
	int timeout_s;
};

/* --python [NAME=]PATH: the environment, a Python of this machine. */
static int tests_python(void *opts, const struct ap_opt *opt, const char *arg,
			struct ap_buf *err)
{
	(void)opt;
	return ap_cli_python(arg, &((struct ap_tests_opts *)opts)->env, err);
}

#define AT(field) offsetof(struct ap_tests_opts, field)
#define TORCH_SRC { "torch-src", "DIR", "a torch source tree, instead of the tests fetched " \
		    "for the environment's torch", AT(torch_src), NULL, 0 }
#define ENV { "env", "ENV", "the environment (or --python)", AT(env), NULL, 0 }, \
	    { "python", "[NAME=]PATH", "a Python with torch to use as the environment", 0, \
	      tests_python, 0 }
static const struct ap_opt fetch_opts[] = {
	AP_CLI_OPT_ENVS(struct ap_tests_opts), AP_CLI_OPT_ROOT(struct ap_tests_opts), TORCH_SRC,
};
static const struct ap_opt find_opts[] = {
	ENV,
	{ "claimed", "NODEID", "the official test claimed to cover TARGET, checked to exist",
	  AT(claimed), NULL, 0 },
	TORCH_SRC, AP_CLI_OPT_ENVS(struct ap_tests_opts), AP_CLI_OPT_ROOT(struct ap_tests_opts),
};
static const struct ap_opt run_opts[] = {
	ENV,
	{ "k", "REGEX", "only the tests whose node id matches (extended, ignoring case)",
	  AT(select), NULL, 0 },
	AP_CLI_OPT_TIMEOUT(struct ap_tests_opts, "seconds each test may run (default 30)"),
	{ "log", "FILE", "writes the tests' output there", AT(log), NULL, 0 },
	TORCH_SRC, AP_CLI_OPT_ENVS(struct ap_tests_opts), AP_CLI_OPT_ROOT(struct ap_tests_opts),
};
#undef ENV
#undef TORCH_SRC
#undef AT

static const struct ap_optset fetch_set = { "tests fetch", "ENV",
	"get upstream's tests for ENV's torch", AP_OPTS(fetch_opts) };
static const struct ap_optset find_set = { "tests find", "TARGET",
	"the upstream tests that use TARGET", AP_OPTS(find_opts) };
static const struct ap_optset run_set = { "tests run", "FILE",
	"run a test file, a fork per test", AP_OPTS(run_opts) };
const struct ap_optset *const ap_tests_optsets[] = { &fetch_set, &find_set, &run_set, NULL };

/* Loads the environments and starts a worker in the named one (with the test
 * trees bound). Returns 0, or an exit code already reported. */
static int tests_start(const struct ap_tests_opts *o, const char *name, struct ap_envs *envs,
			  struct ap_env *env, struct ap_worker *w)
{
	struct ap_buf err = { 0 }, what = { 0 };
	int r = ap_cli_load_envs(envs, o->envs, o->root);
	if (r)
		return r;
	const struct ap_env *e = ap_cli_find_env(envs, name, "tests");
	ap_buf_addf(&what, "env %s", name);
	if (!e) {
		r = AP_EXIT_UNKNOWN_ENV;
	} else if ((r = ap_official_env(e, o->torch_src, env)))
		r = ap_fail(r, ap_buf_str(&what), NULL);
	else if ((r = ap_worker_open(w, env, &tests_worker_limits))) {
		r = ap_fail(r, ap_buf_str(&what), &w->detail);
		ap_worker_free(w);
		ap_env_extra_free(env);
	}
	if (r)
		ap_envs_free(envs);
	ap_buf_free(&err);
	ap_buf_free(&what);
	return r;
}

static void tests_stop(struct ap_envs *envs, struct ap_env *env, struct ap_worker *w)
{
	ap_worker_free(w);
	ap_env_extra_free(env);
	ap_envs_free(envs);
}

/* The torch package in the environment: a new object, or NULL (reported). */
static json_t *tests_package(struct ap_worker *w, const char *name, int *rc)
{
	json_t *pkg = NULL;
	int r = ap_official_package(w, &pkg);
	if (r) {
		struct ap_buf what = { 0 };
		ap_buf_addf(&what, "env %s", name);
		*rc = ap_fail(r, ap_buf_str(&what), &w->detail);
		ap_buf_free(&what);
	}
	return pkg;
}

static void fetch_progress(void *ctx, const char *line)
{
	(void)ctx;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K%.70s", line);
}

/* Builds the usage index of the tree of torch version ver (or finds it
 * current), with a fresh worker: the one that fetched may have started before
 * the test cache existed, and so not see it. */
static int tests_index(const struct ap_tests_opts *o, const char *name, const char *ver)
{
	struct ap_envs envs;
	struct ap_env env;
	struct ap_worker w;
	struct ap_testindex ix;
	struct ap_buf root = { 0 }, tree = { 0 }, why = { 0 }, warn = { 0 }, where = { 0 };
	int rc = tests_start(o, name, &envs, &env, &w);
	if (rc)
		return rc;
	if (!ap_official_root(&env, NULL, ver, &root, &tree, &why)) {
		rc = ap_fail(-AP_ENOSOURCE, "tests fetch", &why);
	} else {
		int r = ap_testindex_load(&w, ap_buf_str(&root), ap_buf_str(&tree), 0, &ix, &warn,
					  &w.detail);
		ap_print_warnings(&warn);
		ap_testindex_path(ap_buf_str(&tree), &where);
		if (r)
			rc = ap_fail(r, "tests fetch: indexing the tests", &w.detail);
		else
			printf("%s: usage index: %s\n", name, ap_buf_str(&where));
		if (!r)
			ap_testindex_close(&ix);
	}
	tests_stop(&envs, &env, &w);
	ap_buf_free(&root);
	ap_buf_free(&tree);
	ap_buf_free(&why);
	ap_buf_free(&warn);
	ap_buf_free(&where);
	return rc;
}

static int tests_fetch(const struct ap_tests_opts *o, const char *name)
{
	struct ap_envs envs;
	struct ap_env env;
	struct ap_worker w;
	struct ap_buf suite = { 0 }, err = { 0 }, where = { 0 }, up = { 0 };
	int rc = tests_start(o, name, &envs, &env, &w);
	if (rc)
		return rc;
	json_t *pkg = tests_package(&w, name, &rc);
	struct ap_proto_package pk;
	ap_proto_package_read(pkg, &pk);
	const char *ver = pk.version, *src = pk.source;
	if (!rc && (!ver || !src)) {
		ap_buf_addf(&err, "%s: torch is not a Debian package here (%s); give a source "
			    "tree with --torch-src DIR", name, pk.why);
		rc = ap_fail(-AP_ENOSOURCE, "tests fetch", &err);
	}
	if (!rc && (!env.chroot || ap_provision_suite(env.chroot, &suite)))
		ap_buf_adds(&suite, pk.codename ? pk.codename : "sid");
	if (!rc) {
		int r = ap_testsrc_fetch(ap_buf_str(&suite), src, ver, fetch_progress, NULL, &err);
		if (isatty(STDERR_FILENO))
			fputs("\r\033[K", stderr);
		ap_upstream_version(ver, &up);
		ap_testsrc_cached(ap_buf_str(&up), &where);
		if (r >= 0)
			printf("%s: tests of %s %s: %s (%s)\n", name, src, ver, ap_buf_str(&where),
			       r == 1 ? "already cached" : "fetched and verified against its .dsc");
		else
			rc = ap_fail(r, "tests fetch", &err);
	}
	tests_stop(&envs, &env, &w);
	if (!rc)
		rc = tests_index(o, name, ver);
	json_decref(pkg);
	ap_buf_free(&suite);
	ap_buf_free(&err);
	ap_buf_free(&where);
	ap_buf_free(&up);
	return rc;
}

/* The ranked tests, with at most this many of each one's uses of the target. */
#define FOUND_USES_SHOWN 3

static void print_found(const json_t *found, const json_t *checks)
{
	struct ap_fact_found *f = NULL;
	struct ap_fact_check *c = NULL;
	size_t nf = 0, nc = 0;
	if (ap_found_facts(found, &f, &nf) || ap_checks_facts(checks, &c, &nc))
		fprintf(stderr, "apiparity: tests find: out of memory\n");
	/* What the test files hold is data: written as one line each, its
	 * control bytes escaped. */
	for (size_t i = 0; i < nf; i++) {
		printf("%3lld  ", f[i].score);
		ap_text_fputs(f[i].node, AP_TEXT_LINE, stdout);
		if (f[i].notrun) {
			fputs("\n       not run here: ", stdout);
			ap_text_fputs(f[i].notrun, AP_TEXT_LINE, stdout);
		}
		for (size_t k = 0; k < f[i].nuses && k < FOUND_USES_SHOWN; k++) {
			printf("\n       %lld: ", f[i].uses[k].line);
			ap_text_fputs(f[i].uses[k].text, AP_TEXT_LINE, stdout);
		}
		fputs("\n", stdout);
	}
	if (!json_array_size(found))
		printf("no upstream test uses it\n");
	for (size_t i = 0; i < nc; i++) {
		printf("%s ", c[i].status_word);
		ap_text_fputs(c[i].name, AP_TEXT_LINE, stdout);
		if (c[i].reason) {
			fputs(": ", stdout);
			ap_text_fputs(c[i].reason, AP_TEXT_LINE, stdout);
		}
		fputs("\n", stdout);
	}
	ap_found_facts_free(f, nf);
	ap_checks_facts_free(c, nc);
}

static int tests_find(const struct ap_tests_opts *o, const char *target)
{
	struct ap_envs envs;
	struct ap_env env;
	struct ap_worker w;
	struct ap_buf root = { 0 }, tree = { 0 }, why = { 0 }, what = { 0 }, warn = { 0 };
	json_t *res = NULL, *found = NULL, *checks = json_array();
	if (!o->env)
		return ap_usage("tests find: name the environment with --env NAME or --python PATH");
	int rc = tests_start(o, o->env, &envs, &env, &w);
	if (rc)
		return rc;
	ap_buf_addf(&what, "env %s", o->env);
	json_t *pkg = tests_package(&w, o->env, &rc);
	json_t *req = ap_proto_resolve(target, ap_plugin_modules(&env));
	int r = rc ? 0 : ap_worker_call(&w, req, &res);
	json_decref(req);
	if (r)
		rc = ap_fail(r, ap_buf_str(&what), &w.detail);
	else if (!rc && !ap_resolved(res)) {
		ap_buf_addf(&why, "%s is absent in this version", target);
		rc = ap_fail(-AP_ENOSOURCE, ap_buf_str(&what), &why);
	} else if (!rc && !ap_official_root(&env, o->torch_src,
					    ap_proto_package_version(pkg),
					    &root, &tree, &why))
		rc = ap_fail(-AP_ENOSOURCE, ap_buf_str(&what), &why);
	if (!rc) {
		struct ap_official_opts oo = { ap_buf_str(&root), ap_buf_str(&tree), &warn,
			ap_proto_package_version(pkg), o->claimed, env.device, 30, 0 };
		struct ap_buf log = { 0 };
		r = ap_official_run(&w, res, &oo, checks, &found, &log);
		ap_print_warnings(&warn);
		if (r)
			rc = ap_fail(r, ap_buf_str(&what), &w.detail);
		else
			print_found(found, checks);
		ap_buf_free(&log);
		for (size_t i = 0; !rc && i < json_array_size(checks); i++)
			if (ap_check_status(json_array_get(checks, i)) == AP_WARN)
				rc = AP_EXIT_FAILED;
	}
	json_decref(pkg);
	json_decref(res);
	json_decref(found);
	json_decref(checks);
	tests_stop(&envs, &env, &w);
	ap_buf_free(&root);
	ap_buf_free(&tree);
	ap_buf_free(&why);
	ap_buf_free(&what);
	ap_buf_free(&warn);
	return rc;
}

static int print_run(const json_t *reply, const char *file, const char *logpath)
{
	int counts[3] = { 0 }, rc = AP_EXIT_OK; /* passed, failed, other */
	struct ap_proto_tests_ran ran;
	ap_proto_tests_run_read(reply, &ran);
	if (!ran.import.ok) {
		printf("NOTRUN %s: import failed: %s\n", file, ran.import.error);
		return AP_EXIT_FAILED;
	}
	for (size_t i = 0; i < ran.ntests; i++) {
		struct ap_proto_test t;
		struct ap_buf why = { 0 }, node = { 0 };
		ap_proto_tests_ran_test(&ran, i, &t);
		enum ap_status s = ap_official_outcome(&t, &why);
		ap_nodeid_format(file, t.cls, t.test, &node);
		printf("%-7s %s%s%s (%lld ms)\n", ap_status_name(s), ap_buf_str(&node),
		       why.len ? ": " : "", ap_buf_str(&why), t.duration_ms);
		counts[s == AP_PASS ? 0 : ap_status_failed(s) ? 1 : 2]++;
		ap_buf_free(&why);
		ap_buf_free(&node);
	}
	printf("%s: import %lld ms; %d passed, %d failed, %d skipped or not run\n", file,
	       ran.import.ms, counts[0], counts[1], counts[2]);
	if (logpath) {
		const char *log = ran.log;
		int r = ap_write_atomic(logpath, log ? log : "", log ? strlen(log) : 0);
		if (r)
			fprintf(stderr, "apiparity: tests run: cannot write %s: %s\n", logpath, strerror(-r));
		rc = r ? AP_EXIT_IO : rc;
	}
	return counts[1] && rc == AP_EXIT_OK ? AP_EXIT_FAILED : rc;
}

/* Runs the tests of one file (those whose node id matches -k, an extended
 * regular expression, ignoring case), one after another in a child of the
 * runner that imported the file, re-forked after a crash or hang. They are
 * collected after import, as unittest and pytest do: a test class the file
 * imports from a helper module is among them. */
static int tests_tests_run(const struct ap_tests_opts *o, const char *file)
{
	struct ap_envs envs;
	struct ap_env env;
	struct ap_worker w;
	struct ap_buf root = { 0 }, tree = { 0 }, why = { 0 }, what = { 0 };
	regex_t re;
	json_t *ran = NULL;
	if (!o->env)
		return ap_usage("tests run: name the environment with --env NAME or --python PATH");
	if (!ap_path_is_safe(file))
		return ap_usage("tests run: FILE is a path inside the environment's test tree "
				"(test/test_autograd.py), not '%s'", file);
	if (o->select && regcomp(&re, o->select, REG_EXTENDED | REG_NOSUB))
		return ap_usage("tests run: -k '%s' is not an extended regular expression", o->select);
	if (o->select)
		regfree(&re); /* checked here, applied in the environment */
	int rc = tests_start(o, o->env, &envs, &env, &w);
	if (rc)
		goto out;
	ap_buf_addf(&what, "env %s", o->env);
	json_t *pkg = tests_package(&w, o->env, &rc);
	if (!rc && !ap_official_root(&env, o->torch_src,
				     ap_proto_package_version(pkg), &root, &tree,
				     &why))
		rc = ap_fail(-AP_ENOSOURCE, ap_buf_str(&what), &why);
	json_decref(pkg);
	/* The name stays inside the tree (checked above); a link in the tree
	 * must not lead out of it either, where the tree is on this machine. */
	const char *base = o->torch_src ? o->torch_src : ap_buf_str(&tree);
	if (!rc && *base && !ap_path_within(base, file))
		rc = ap_usage("tests run: '%s' is a link that leads out of the test tree", file);
	int r = 0;
	if (!rc) {
		int per = o->timeout_s ? o->timeout_s : 30;
		struct ap_proto_tests_run t = { ap_buf_str(&root), file, NULL, o->select, per,
						ap_official_deadline_s(AP_SELECT_MAX, per), NULL, NULL };
		json_t *req = ap_proto_tests_run(&t);
		/* The worker bounds the import and each test; it answers once all
		 * have run, and how many match -k is known only there. */
		r = ap_worker_call_within(&w, req, &ran, AP_TESTS_RUN_LIMIT_MS);
		json_decref(req);
	}
	if (r)
		rc = ap_fail(r, ap_buf_str(&what), &w.detail);
	else if (!rc)
		rc = print_run(ran, file, o->log);
	tests_stop(&envs, &env, &w);
out:
	json_decref(ran);
	ap_buf_free(&root);
	ap_buf_free(&tree);
	ap_buf_free(&why);
	ap_buf_free(&what);
	return rc;
}

int ap_cmd_tests(int argc, char **argv)
{
	struct ap_tests_opts o = { 0 };
	if (argc < 2)
		return ap_usage("tests: want fetch ENV, find TARGET --env ENV, or run FILE --env ENV");
	if (ap_cli_wants_help(argv[1]))
		return ap_cli_print_verbs(ap_tests_optsets);
	static const struct {
		const struct ap_optset *set;
		int (*run)(const struct ap_tests_opts *o, const char *operand);
	} verbs[] = { { &fetch_set, tests_fetch }, { &find_set, tests_find },
		      { &run_set, tests_tests_run } };
	const char *sub = argv[1];
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(sub, verbs[i].set->name + strlen("tests ")))
			continue;
		int r = ap_cli_parse(verbs[i].set, argc - 1, argv + 1, &o);
		if (r)
			return r < 0 ? AP_EXIT_OK : r;
		if (argc - 1 - optind != 1)
			return ap_usage("tests %s: name exactly one %s", sub, !strcmp(sub, "fetch") ?
					"environment" : !strcmp(sub, "run") ? "test file" : "TARGET");
		return verbs[i].run(&o, argv[1 + optind]);
	}
	return ap_usage("tests: unknown subcommand '%s'", sub);
}
