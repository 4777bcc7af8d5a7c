/* apiparity check - verify one API in one or many environments, with probes,
 * traces and evidence. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evidence/bundle.h"
#include "cmd/cmd.h"
#include "base/err.h"
#include "env/fingerprint.h"
#include "base/fsutil.h"
#include "evidence/journal.h"
#include "check/official.h"
#include "base/pool.h"
#include "check/spec.h"
#include "base/status.h"
#include "check/verdict.h"
#include "base/version.h"
#include "env/worker.h"

#define AP_MAX_ENVS 64
#define AP_MAX_SCRIPTS 16
#define AP_WATCHDOG_MARGIN_S 30

struct ap_check_opts {
	const char *envs, *root, *out, *reference, *specs, *torch_src, *claimed;
	int no_official;
	const char *scripts[AP_MAX_SCRIPTS];
	size_t nscripts;
	const char *names[AP_MAX_ENVS];
	size_t nnames;
	int timeout_s;        /* per probe */
	int answer_s;         /* per worker answer (import, resolve) */
	int require_present;
};

/* One environment's run: filled by a pool job, then judged by the caller. */
struct ap_check_job {
	const struct ap_env *env;
	const struct ap_check_opts *o;
	const struct ap_specs *specs;
	const char *target;
	const struct ap_buf *scripts; /* the --script sources, o->nscripts of them */
	struct ap_status *status;
	size_t idx;
	struct ap_buf dir;
	json_t *b;            /* the bundle */
	struct ap_journal *journal;
	int err;              /* the environment failed: -AP_E* */
	int io_err;           /* evidence could not be written: -errno */
	struct ap_buf io_detail;
	struct ap_env run_env; /* env with the test trees bound */
	struct ap_buf warn;   /* lines for the user, printed after the run */
};

static void ap_utc_now(char out[32])
{
	time_t now = time(NULL);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

static void ap_job_journal(struct ap_check_job *j, const char *type, json_t *data)
{
	json_t *rec = json_pack("{s:s, s:O}", "type", type, "data", data ? data : json_null());
	int r = j->journal ? ap_journal_append(j->journal, rec) : 0;
	if (r && !j->io_err) {
		j->io_err = r;
		ap_buf_addf(&j->io_detail, "cannot append to %s/journal.jsonl: %s",
			    ap_buf_str(&j->dir), strerror(-r));
	}
	json_decref(rec);
}

static void ap_job_fail(struct ap_check_job *j, int err, const struct ap_buf *detail)
{
	j->err = err;
	json_t *e = json_pack("{s:s, s:i, s:s}", "kind", ap_strerror(err), "exit_code",
			      ap_exit_code(err), "message", ap_buf_str(detail));
	json_object_set_new(j->b, "error", e);
	ap_job_journal(j, "error", e);
	ap_status_set(j->status, j->idx, "%s: %s", ap_strerror(err), ap_buf_str(detail));
}

static json_t *ap_check_new(const char *name, const char *kind, const char *status,
			    const char *reason)
{
	return json_pack("{s:s, s:s, s:s, s:s?, s:[], s:i}", "name", name, "kind", kind,
			 "status", status, "reason", reason, "trace", "duration_ms", 0);
}

/* Runs one probe (or script) in the worker and records it as a check. */
static int ap_job_probe(struct ap_check_job *j, struct ap_worker *w, const char *name,
			const char *kind, const char *code, json_t *bind, const json_t *says)
{
	json_t *req = json_pack("{s:s, s:{s:s, s:s, s:O}, s:i}", "op", "probe", "probe",
				"name", name, "code", code, "bind", bind, "timeout_s",
				j->o->timeout_s);
	json_t *res = NULL;
	ap_status_set(j->status, j->idx, "%s %s ...", kind, name);
	int r = req ? ap_worker_call(w, req, &res) : -ENOMEM;
	json_decref(req);
	if (r) {
		json_decref(res);
		ap_job_fail(j, r, &w->detail);
		return r;
	}
	json_object_set_new(res, "name", json_string(name));
	json_object_set_new(res, "kind", json_string(kind));
	if (says)
		json_object_set(res, "says", (json_t *)says);
	json_array_append(json_object_get(j->b, "checks"), res);
	ap_job_journal(j, "check", res);
	ap_status_set(j->status, j->idx, "%s %s %s", kind, name,
		      json_string_value(json_object_get(res, "status")));
	json_decref(res);
	return 0;
}

static int ap_job_family(struct ap_check_job *j, struct ap_worker *w, const json_t *res)
{
	const struct ap_member *m;
	const char *cls = ap_target_class(res);
	const struct ap_family *f = ap_specs_find(j->specs, cls, &m);
	json_t *checks = json_object_get(j->b, "checks");
	if (!f) {
		struct ap_buf why = { 0 };
		ap_buf_addf(&why, "no-family: no spec has a member for %s", cls ? cls : "?");
		json_array_append_new(checks, ap_check_new("family", "plan", "NOTRUN", ap_buf_str(&why)));
		ap_buf_free(&why);
		return 0;
	}
	json_object_set_new(j->b, "family", json_pack("{s:s, s:s, s:s?, s:s?}", "name", f->name,
			    "member", m->cls, "summary_en", f->summary_en, "summary_zh", f->summary_zh));
	json_t *bind = ap_member_bind(f, m);
	int r = bind ? 0 : -ENOMEM;
	for (size_t i = 0; !r && i < f->nprobes; i++) {
		const struct ap_probe *p = &f->probes[i];
		json_t *says = json_pack("{s:s, s:s}", "en", p->says_en, "zh", p->says_zh);
		if (p->needs && !ap_member_has_trait(m, p->needs)) {
			struct ap_buf why = { 0 };
			ap_buf_addf(&why, "not-applicable: %s has no trait '%s'", m->cls, p->needs);
			json_t *c = ap_check_new(p->name, "probe", "NOTRUN", ap_buf_str(&why));
			json_object_set(c, "says", says);
			json_array_append_new(checks, c);
			ap_buf_free(&why);
		} else
			r = ap_job_probe(j, w, p->name, "probe", p->code, bind, says);
		json_decref(says);
	}
	json_decref(bind);
	return r;
}

static int ap_job_script(struct ap_check_job *j, struct ap_worker *w, size_t k)
{
	struct ap_buf name = { 0 }, expr = { 0 };
	const char *base = strrchr(j->o->scripts[k], '/');
	ap_buf_addf(&name, "script:%s", base ? base + 1 : j->o->scripts[k]);
	ap_buf_addf(&expr, "resolve(\"%s\")", j->target);
	json_t *bind = json_pack("[[s,s]]", "TARGET", ap_buf_str(&expr));
	json_t *says = json_pack("{s:s, s:s}", "en", "the user's focused assertions",
				 "zh", "用户提供的专项断言");
	int r = ap_job_probe(j, w, ap_buf_str(&name), "script", ap_buf_str(&j->scripts[k]),
			     bind, says);
	json_decref(bind);
	json_decref(says);
	ap_buf_free(&name);
	ap_buf_free(&expr);
	return r;
}

/* The official upstream tests of the target, when a test tree exists for
 * this environment's torch; their log goes to official.log. */
static int ap_job_official(struct ap_check_job *j, struct ap_worker *w, const json_t *res)
{
	json_t *checks = json_object_get(j->b, "checks"), *pkg = NULL, *found = NULL;
	struct ap_buf root = { 0 }, tree = { 0 }, why = { 0 }, log = { 0 }, path = { 0 };
	ap_status_set(j->status, j->idx, "official tests");
	int r = ap_official_package(w, &pkg);
	const char *ver = json_string_value(json_object_get(pkg, "version"));
	if (!r && !ap_official_root(j->env, j->o->torch_src, ver, &root, &tree, &why))
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:s, s:[], s:i}", "name",
			"official", "kind", "official", "status", "NOTRUN", "reason", ap_buf_str(&why),
			"trace", "duration_ms", 0));
	else if (!r) {
		struct ap_official_opts oo = { ap_buf_str(&root), ap_buf_str(&tree), &j->warn,
					       ver ? ver : "?", j->o->claimed, j->env->device,
					       j->o->timeout_s, 1 };
		size_t before = json_array_size(checks);
		r = ap_official_run(w, res, &oo, checks, &found, &log);
		for (size_t k = before; k < json_array_size(checks); k++)
			ap_job_journal(j, "check", json_array_get(checks, k));
		json_object_set_new(j->b, "official", json_pack("{s:s, s:s?, s:o?}", "root",
				    ap_buf_str(&root), "package_version", ver, "found", found));
		ap_buf_addf(&path, "%s/official.log", ap_buf_str(&j->dir));
		int w2 = r || j->io_err ? 0 : ap_write_atomic(ap_buf_str(&path), log.data ? log.data : "",
							      log.len);
		if (w2 && !j->io_err) {
			j->io_err = w2;
			ap_buf_addf(&j->io_detail, "cannot write %s: %s", ap_buf_str(&path), strerror(-w2));
		}
	}
	if (r)
		ap_job_fail(j, r, &w->detail);
	json_decref(pkg);
	ap_buf_free(&root);
	ap_buf_free(&tree);
	ap_buf_free(&why);
	ap_buf_free(&log);
	ap_buf_free(&path);
	return r;
}

/* resolve, then fingerprint: resolving first imports torch alone, so a
 * plugin's changes to the target can be seen. */
static int ap_job_measure(struct ap_check_job *j, struct ap_worker *w)
{
	json_t *req = json_pack("{s:s, s:s, s:o}", "op", "resolve", "target", j->target,
				"plugins", ap_plugin_modules());
	json_t *res = NULL, *fp = NULL, *fpreq = ap_fingerprint_request();
	ap_status_set(j->status, j->idx, "importing torch, resolving %s", j->target);
	int r = ap_worker_call(w, req, &res);
	json_decref(req);
	if (!r) {
		json_object_set(j->b, "resolution", res);
		ap_job_journal(j, "resolution", res);
		r = ap_worker_call(w, fpreq, &fp);
	}
	json_decref(fpreq);
	if (!r) {
		json_object_set(j->b, "fingerprint", fp);
		ap_job_journal(j, "fingerprint", fp);
	}
	json_decref(fp);
	if (r) {
		json_decref(res);
		ap_job_fail(j, r, &w->detail);
		return r;
	}
	if (!json_is_true(json_object_get(res, "found")))
		json_array_append_new(json_object_get(j->b, "checks"),
				      ap_check_new("resolve", "resolution", "NOTRUN",
						   "absent-in-this-version"));
	else
		r = ap_job_family(j, w, res);
	int found = json_is_true(json_object_get(res, "found"));
	for (size_t k = 0; !r && found && k < j->o->nscripts; k++)
		r = ap_job_script(j, w, k);
	if (!r && found && !j->o->no_official)
		r = ap_job_official(j, w, res);
	json_decref(res);
	return r;
}

static void ap_check_job_run(void *item)
{
	struct ap_check_job *j = item;
	struct ap_worker w;
	struct ap_buf path = { 0 };
	int r = ap_rm_tree(ap_buf_str(&j->dir));
	r = r ? r : ap_mkdirs(ap_buf_str(&j->dir));
	ap_buf_addf(&path, "%s/journal.jsonl", ap_buf_str(&j->dir));
	if (r || !(j->journal = ap_journal_open(ap_buf_str(&path)))) {
		j->io_err = r ? r : -errno;
		ap_buf_addf(&j->io_detail, "cannot create %s: %s", ap_buf_str(&j->dir),
			    strerror(-j->io_err));
	}
	ap_buf_free(&path);
	ap_job_journal(j, "start", json_object_get(j->b, "env"));
	ap_status_set(j->status, j->idx, "starting the worker");
	r = ap_official_env(j->env, j->o->torch_src, &j->run_env);
	r = r ? r : ap_worker_start(&w, &j->run_env, j->o->answer_s * 1000);
	if (r)
		ap_job_fail(j, r, &w.detail);
	else {
		w.timeout_ms = (j->o->timeout_s + AP_WATCHDOG_MARGIN_S) * 1000;
		if (w.timeout_ms < j->o->answer_s * 1000)
			w.timeout_ms = j->o->answer_s * 1000;
		if (!ap_job_measure(j, &w))
			ap_status_set(j->status, j->idx, "done");
	}
	ap_worker_free(&w);
	if (j->journal)
		ap_journal_close(j->journal);
	j->journal = NULL;
}

/* The reference: --reference, else the first environment where the target
 * resolved and that did not fail. -1 when there is none. */
static int ap_pick_reference(const struct ap_check_job *jobs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		int ok = !jobs[i].err && json_is_true(json_object_get(
			json_object_get(jobs[i].b, "resolution"), "found"));
		if (name ? !strcmp(jobs[i].env->name, name) : ok)
			return ok ? (int)i : -1;
	}
	return -1;
}

static void ap_judge(struct ap_check_job *jobs, size_t n, const char *refname)
{
	int ref = ap_pick_reference(jobs, n, refname);
	char now[32];
	ap_utc_now(now);
	for (size_t i = 0; i < n; i++) {
		json_t *b = jobs[i].b;
		json_t *cmp = json_object();
		if (ref >= 0 && json_is_true(json_object_get(json_object_get(b, "resolution"), "found"))) {
			json_object_set_new(cmp, "reference", json_string(jobs[ref].env->name));
			json_object_set_new(cmp, "differences", ap_trace_diff(
				json_object_get(jobs[ref].b, "checks"), json_object_get(b, "checks")));
			ap_official_compare(json_object_get(jobs[ref].b, "checks"),
					    json_object_get(b, "checks"));
		}
		json_object_set_new(b, "comparison", cmp);
		ap_adaptation_decide(b);
		ap_verdict_decide(b);
		json_object_set_new(b, "finished_utc", json_string(now));
	}
}

static void ap_write_bundles(struct ap_check_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].io_err)
			continue;
		int r = ap_bundle_write(ap_buf_str(&jobs[i].dir), jobs[i].b, &jobs[i].io_detail);
		if (r)
			jobs[i].io_err = r;
	}
}

static const char *ap_fp_str(const json_t *b, const char *sect, const char *key)
{
	const char *s = json_string_value(json_object_get(json_object_get(
		json_object_get(b, "fingerprint"), sect), key));
	return s ? s : "-";
}

static void ap_summary_devices(const json_t *b, struct ap_buf *out)
{
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(json_object_get(b, "fingerprint"), "devices"), i, d)
		if (json_is_true(json_object_get(d, "available")))
			ap_buf_addf(out, "%s%s x%lld", out->len ? ", " : "",
				    json_string_value(json_object_get(d, "type")),
				    (long long)json_integer_value(json_object_get(d, "count")));
	if (!out->len)
		ap_buf_adds(out, json_object_get(b, "fingerprint") ? "cpu" : "-");
}

static void ap_summary_plugins(const json_t *b, struct ap_buf *out)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(json_object_get(b, "fingerprint"), "plugins"), i, p)
		ap_buf_addf(out, "%s%s %s", out->len ? ", " : "",
			    json_string_value(json_object_get(p, "name")),
			    json_string_value(json_object_get(p, "version")) ?
			    json_string_value(json_object_get(p, "version")) : "?");
	if (!out->len)
		ap_buf_adds(out, "-");
}

static void ap_summary_probes(const json_t *b, int *passed, int *total)
{
	size_t i;
	json_t *c;
	*passed = *total = 0;
	json_array_foreach(json_object_get(b, "checks"), i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const char *st = json_string_value(json_object_get(c, "status"));
		if (!kind || (strcmp(kind, "probe") && strcmp(kind, "script")) ||
		    (st && !strcmp(st, "NOTRUN")))
			continue;
		(*total)++;
		*passed += st && !strcmp(st, "PASS");
	}
}

static void ap_print_summary(const struct ap_check_job *jobs, size_t n, const char *out)
{
	printf("\n%-10s %-8s %-16s %-16s %-14s %-7s %s\n", "ENV", "PYTHON", "TORCH", "PLUGIN",
	       "DEVICES", "PROBES", "VERDICT");
	for (size_t i = 0; i < n; i++) {
		const json_t *b = jobs[i].b;
		struct ap_buf dev = { 0 }, plug = { 0 }, probes = { 0 };
		int passed, total;
		ap_summary_devices(b, &dev);
		ap_summary_plugins(b, &plug);
		ap_summary_probes(b, &passed, &total);
		ap_buf_addf(&probes, "%d/%d", passed, total);
		printf("%-10s %-8s %-16s %-16s %-14s %-7s %s\n", jobs[i].env->name,
		       ap_fp_str(b, "python", "version"), ap_fp_str(b, "torch", "version"),
		       ap_buf_str(&plug), ap_buf_str(&dev), ap_buf_str(&probes),
		       json_string_value(json_object_get(b, "verdict")));
		ap_buf_free(&dev);
		ap_buf_free(&plug);
		ap_buf_free(&probes);
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *reasons = json_object_get(jobs[i].b, "verdict_reasons");
		const char *v = json_string_value(json_object_get(jobs[i].b, "verdict"));
		if (!v || !strcmp(v, "consistent"))
			continue;
		for (size_t k = 0; k < json_array_size(reasons) && k < 5; k++)
			printf("  %s: %s\n", jobs[i].env->name,
			       json_string_value(json_array_get(reasons, k)));
	}
	printf("\nevidence: %s/<env>/ (bundle.json, run.log, journal.jsonl, MANIFEST.sha256)\n", out);
}

/* Environment failures first (their own codes), then I/O, then verdicts. */
static int ap_check_exit(const struct ap_check_job *jobs, size_t n, int require_present)
{
	int rc = AP_EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		struct ap_buf what = { 0 };
		ap_buf_addf(&what, "env %s", jobs[i].env->name);
		if (jobs[i].err) {
			const char *msg = json_string_value(json_object_get(
				json_object_get(jobs[i].b, "error"), "message"));
			struct ap_buf d = { 0 };
			ap_buf_adds(&d, msg ? msg : "");
			int code = ap_fail(jobs[i].err, ap_buf_str(&what), &d);
			rc = rc == AP_EXIT_OK || rc == AP_EXIT_FAILED ? code : rc;
			ap_buf_free(&d);
		}
		if (jobs[i].io_err) {
			int code = ap_fail(jobs[i].io_err, ap_buf_str(&what), &jobs[i].io_detail);
			(void)code;
			rc = rc == AP_EXIT_OK || rc == AP_EXIT_FAILED ? AP_EXIT_IO : rc;
		}
		ap_buf_free(&what);
		const char *v = json_string_value(json_object_get(jobs[i].b, "verdict"));
		int absent = !json_is_true(json_object_get(json_object_get(jobs[i].b,
									  "resolution"), "found"));
		if (rc == AP_EXIT_OK && v && (!strcmp(v, "inconsistent") ||
					      (require_present && absent && !jobs[i].err)))
			rc = AP_EXIT_FAILED;
	}
	return rc;
}

static json_t *ap_bundle_new(const struct ap_env *env, const char *target)
{
	struct ap_buf where = { 0 };
	char now[32];
	ap_utc_now(now);
	ap_env_describe(env, &where);
	json_t *b = json_pack("{s:s, s:{s:s, s:s, s:s}, s:s, s:{s:s, s:s?, s:s?, s:s}, s:s,"
			      " s:n, s:n, s:n, s:[], s:n}",
			      "schema", AP_BUNDLE_SCHEMA, "tool", "name", "apiparity", "version",
			      ap_version, "commit", ap_commit, "target", target, "env", "name",
			      env->name, "label", env->label, "device", env->device, "where",
			      ap_buf_str(&where), "started_utc", now, "fingerprint", "resolution",
			      "family", "checks", "error");
	ap_buf_free(&where);
	return b;
}

static const char ap_check_usage[] =
	"usage: apiparity check TARGET [--envs FILE] [--env NAME]... [--reference NAME]\n"
	"                       [--out DIR] [--timeout S] [--script FILE]... [--specs DIR]\n"
	"                       [--require-present] [--torch-src DIR] [--claimed NODEID]\n"
	"                       [--no-official]\n";

/* A dotted Python name: it is also written into probe code and paths. */
static int ap_target_ok(const char *t)
{
	int start = 1;
	if (!*t || strlen(t) > 256)
		return 0;
	for (const char *p = t; *p; p++) {
		int alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';
		int digit = *p >= '0' && *p <= '9';
		if (*p == '.' && !start && p[1])
			start = 1;
		else if (alpha || (digit && !start))
			start = 0;
		else
			return 0;
	}
	return 1;
}

static int ap_check_parse(int argc, char **argv, struct ap_check_opts *o)
{
	static const struct option longopts[] = {
		{ "envs", required_argument, NULL, 'E' }, { "env", required_argument, NULL, 'e' },
		{ "root", required_argument, NULL, 'r' }, { "out", required_argument, NULL, 'o' },
		{ "reference", required_argument, NULL, 'R' },
		{ "timeout", required_argument, NULL, 't' },
		{ "script", required_argument, NULL, 's' }, { "specs", required_argument, NULL, 'S' },
		{ "require-present", no_argument, NULL, 'p' }, { "help", no_argument, NULL, 'h' },
		{ "torch-src", required_argument, NULL, 'T' },
		{ "claimed", required_argument, NULL, 'C' },
		{ "no-official", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'E': o->envs = optarg; break;
		case 'r': o->root = optarg; break;
		case 'o': o->out = optarg; break;
		case 'R': o->reference = optarg; break;
		case 's':
			if (o->nscripts == AP_MAX_SCRIPTS)
				return ap_usage("check: at most %d scripts", AP_MAX_SCRIPTS);
			o->scripts[o->nscripts++] = optarg;
			break;
		case 'S': o->specs = optarg; break;
		case 'p': o->require_present = 1; break;
		case 'T': o->torch_src = optarg; break;
		case 'C': o->claimed = optarg; break;
		case 'N': o->no_official = 1; break;
		case 'h': fputs(ap_check_usage, stdout); return -1;
		case 'e':
			if (o->nnames == AP_MAX_ENVS)
				return ap_usage("check: at most %d environments", AP_MAX_ENVS);
			o->names[o->nnames++] = optarg;
			break;
		case 't':
			if (ap_opt_timeout(optarg, &o->timeout_s))
				return AP_EXIT_USAGE;
			break;
		default:
			return ap_usage("check: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return ap_usage("check: name exactly one TARGET, e.g. "
				"torch.autograd.grad_mode.set_multithreading_enabled.clone");
	if (!ap_target_ok(argv[optind]))
		return ap_usage("check: '%s' is not a dotted Python name", argv[optind]);
	return 0;
}

static int ap_read_script(const char *path, struct ap_buf *out)
{
	int r = ap_read_all(path, out);
	if (!r)
		return 0;
	struct ap_buf d = { 0 };
	ap_buf_addf(&d, "%s: %s", path, strerror(-r));
	r = ap_fail(-AP_ECONFIG, "check --script", &d);
	ap_buf_free(&d);
	return r;
}

/* Loads the environments and specs, and makes a job per environment. */
static int ap_check_setup(struct ap_check_opts *o, const char *target, struct ap_envs *envs,
			  struct ap_specs *specs, struct ap_check_job **jobs)
{
	struct ap_buf err = { 0 };
	int r = ap_cli_load_envs(envs, o->envs, o->root);
	if (r)
		return r;
	if ((r = ap_specs_load(specs, o->specs, &err))) {
		r = ap_fail(r, "specs", &err);
		ap_buf_free(&err);
		ap_envs_free(envs);
		return r;
	}
	/* No --env: every environment of the file (local only when named). */
	int all = !o->nnames;
	for (size_t i = 0; all && i < envs->n && o->nnames < AP_MAX_ENVS; i++)
		if (strcmp(envs->v[i].name, "local"))
			o->names[o->nnames++] = envs->v[i].name;
	if (o->reference) {
		size_t k = 0;
		while (k < o->nnames && strcmp(o->names[k], o->reference))
			k++;
		if (k == o->nnames)
			r = ap_usage("check: --reference %s is not one of the environments checked",
				     o->reference);
	}
	*jobs = r ? NULL : calloc(o->nnames ? o->nnames : 1, sizeof(**jobs));
	for (size_t i = 0; *jobs && i < o->nnames; i++) {
		const struct ap_env *env = ap_cli_find_env(envs, o->names[i], "check");
		if (!env) {
			r = AP_EXIT_UNKNOWN_ENV;
			break;
		}
		struct ap_check_job *j = &(*jobs)[i];
		j->env = env;
		j->o = o;
		j->specs = specs;
		j->target = target;
		j->idx = i;
		j->b = ap_bundle_new(env, target);
		ap_buf_addf(&j->dir, "%s/%s", o->out, env->name);
	}
	ap_buf_free(&err);
	if (!r && !*jobs)
		r = ap_fail(-ENOMEM, "check", NULL);
	return r;
}

static void ap_check_free(struct ap_check_job *jobs, size_t n)
{
	for (size_t i = 0; jobs && i < n; i++) {
		json_decref(jobs[i].b);
		ap_env_extra_free(&jobs[i].run_env);
		ap_buf_free(&jobs[i].dir);
		ap_buf_free(&jobs[i].io_detail);
		ap_buf_free(&jobs[i].warn);
	}
	free(jobs);
}

int ap_cmd_check(int argc, char **argv)
{
	struct ap_check_opts o = { .timeout_s = 30, .answer_s = 120 };
	struct ap_envs envs = { 0 };
	struct ap_specs specs = { 0 };
	struct ap_check_job *jobs = NULL;
	struct ap_buf scripts[AP_MAX_SCRIPTS] = { { 0 } }, outdir = { 0 };
	int rc = ap_check_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? AP_EXIT_OK : rc;
	const char *target = argv[optind];
	if (!o.out) {
		ap_buf_addf(&outdir, "out/%s", target);
		o.out = ap_buf_str(&outdir);
	}
	for (size_t k = 0; k < o.nscripts; k++)
		if ((rc = ap_read_script(o.scripts[k], &scripts[k])))
			goto out;
	if ((rc = ap_check_setup(&o, target, &envs, &specs, &jobs)))
		goto out;
	const char *names[AP_MAX_ENVS];
	for (size_t i = 0; i < o.nnames; i++) {
		names[i] = jobs[i].env->name;
		jobs[i].scripts = scripts;
	}
	struct ap_status *st = ap_status_new(names, o.nnames, stderr);
	for (size_t i = 0; i < o.nnames; i++)
		jobs[i].status = st;
	ap_pool_run(jobs, o.nnames, sizeof(*jobs), ap_check_job_run);
	ap_status_free(st);
	for (size_t i = 0; i < o.nnames; i++)
		ap_print_warnings(&jobs[i].warn);
	ap_judge(jobs, o.nnames, o.reference);
	ap_write_bundles(jobs, o.nnames);
	ap_print_summary(jobs, o.nnames, o.out);
	fflush(stdout);
	rc = ap_check_exit(jobs, o.nnames, o.require_present);
out:
	ap_check_free(jobs, o.nnames);
	ap_specs_free(&specs);
	ap_envs_free(&envs);
	for (size_t k = 0; k < o.nscripts; k++)
		ap_buf_free(&scripts[k]);
	ap_buf_free(&outdir);
	return rc;
}
