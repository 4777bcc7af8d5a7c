#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "env/envs.h"
#include "check/official.h"
#include "check/testsrc.h"
#include "env/worker.h"
#include "evidence/bundle.h"

int ap_nodeid_parse(const char *s, struct ap_nodeid *n)
{
	const char *a = strstr(s, "::"), *b = a ? strstr(a + 2, "::") : NULL;
	memset(n, 0, sizeof(*n));
	if (!a || a == s || strstr(s, "..") || s[0] == '/')
		return -EINVAL;
	if (b && strstr(b + 2, "::"))
		return -EINVAL;
	int ok = snprintf(n->file, sizeof(n->file), "%.*s", (int)(a - s), s) < (int)sizeof(n->file);
	if (b) {
		ok &= snprintf(n->cls, sizeof(n->cls), "%.*s", (int)(b - a - 2), a + 2) <
		      (int)sizeof(n->cls);
		ok &= snprintf(n->test, sizeof(n->test), "%s", b + 2) < (int)sizeof(n->test);
	} else
		ok &= snprintf(n->test, sizeof(n->test), "%s", a + 2) < (int)sizeof(n->test);
	size_t fl = strlen(n->file);
	if (!ok || !*n->test || (b && !*n->cls) || fl < 4 || strcmp(n->file + fl - 3, ".py"))
		return -EINVAL;
	return 0;
}

void ap_nodeid_format(const char *file, const char *cls, const char *test, struct ap_buf *out)
{
	if (cls && *cls)
		ap_buf_addf(out, "%s::%s::%s", file, cls, test);
	else
		ap_buf_addf(out, "%s::%s", file, test);
}

static int ap_how_score(const char *how)
{
	return !how ? 0 : !strcmp(how, "qualified") ? 4 : !strcmp(how, "alias") ? 3 : 1;
}

static int ap_score(const json_t *t, const char *cls_name)
{
	int best = 0;
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(t, "matches"), i, m) {
		int s = ap_how_score(json_string_value(json_object_get(m, "how")));
		best = s > best ? s : best;
	}
	const char *test = json_string_value(json_object_get(t, "test"));
	if (test && cls_name && strstr(test, cls_name))
		best += 2;
	if (json_is_true(json_object_get(t, "uses_leaf")))
		best += 1;
	return best;
}

static int ap_by_score(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t sx = json_integer_value(json_object_get(x, "score"));
	json_int_t sy = json_integer_value(json_object_get(y, "score"));
	if (sx != sy)
		return sx < sy ? 1 : -1;
	return strcmp(json_string_value(json_object_get(x, "node")),
		      json_string_value(json_object_get(y, "node")));
}

json_t *ap_official_rank(const json_t *found, const char *name)
{
	size_t n = json_array_size(found), i;
	json_t **v = calloc(n ? n : 1, sizeof(*v)), *out = json_array();
	for (i = 0; v && i < n; i++) {
		struct ap_buf node = { 0 };
		v[i] = json_deep_copy(json_array_get(found, i));
		ap_nodeid_format(json_string_value(json_object_get(v[i], "file")),
				 json_string_value(json_object_get(v[i], "class")),
				 json_string_value(json_object_get(v[i], "test")), &node);
		json_object_set_new(v[i], "node", json_string(ap_buf_str(&node)));
		json_object_set_new(v[i], "score", json_integer(ap_score(v[i], name)));
		ap_buf_free(&node);
	}
	if (v)
		qsort(v, n, sizeof(*v), ap_by_score);
	for (i = 0; v && i < n; i++)
		json_array_append_new(out, v[i]);
	free(v);
	return out;
}

json_t *ap_claim_check(const char *claimed, const json_t *nodes, const char *version)
{
	struct ap_buf same = { 0 }, reason = { 0 }, name = { 0 };
	int exists = 0;
	size_t i;
	json_t *n;
	json_array_foreach(nodes, i, n) {
		struct ap_buf id = { 0 };
		if (json_object_get(n, "error"))
			continue;
		ap_nodeid_format(json_string_value(json_object_get(n, "file")),
				 json_string_value(json_object_get(n, "class")),
				 json_string_value(json_object_get(n, "test")), &id);
		if (!strcmp(ap_buf_str(&id), claimed))
			exists = 1;
		else
			ap_buf_addf(&same, "%s%s", same.len ? ", " : "", ap_buf_str(&id));
		ap_buf_free(&id);
	}
	ap_buf_addf(&name, "claimed:%s", claimed);
	if (!exists)
		ap_buf_addf(&reason, "no such test at torch %s%s%s", version,
			    same.len ? "; the same test name exists as " : "; no test has that name",
			    ap_buf_str(&same));
	json_t *c = json_pack("{s:s, s:s, s:s, s:s?, s:[], s:i, s:s, s:b}", "name", ap_buf_str(&name),
			      "kind", "claim", "status", exists ? "PASS" : "WARN", "reason",
			      exists ? NULL : ap_buf_str(&reason), "trace", "duration_ms", 0,
			      "node", claimed, "exists", exists);
	if (!exists)
		json_object_set_new(c, "suggestions", json_string(ap_buf_str(&same)));
	ap_buf_free(&same);
	ap_buf_free(&reason);
	ap_buf_free(&name);
	return c;
}

char *ap_preflight_reason(const json_t *pre)
{
	struct ap_buf why = { 0 };
	const char *file = json_string_value(json_object_get(pre, "file"));
	const char *base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file;
	if (!json_is_true(json_object_get(pre, "file_exists"))) {
		ap_buf_addf(&why, "missing-fixture: %s (the test file itself)", file ? file : "?");
		return why.data;
	}
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(pre, "modules"), i, m) {
		if (json_is_true(json_object_get(m, "present")))
			continue;
		const char *path = json_string_value(json_object_get(m, "path"));
		ap_buf_addf(&why, "%s%s (imported by %s)", why.len ? ", " : "missing-fixture: ",
			    path ? path : json_string_value(json_object_get(m, "module")), base);
	}
	const json_t *imp = json_object_get(pre, "import");
	if (!why.len && imp && !json_is_true(json_object_get(imp, "ok"))) {
		const char *missing = json_string_value(json_object_get(imp, "missing"));
		if (missing)
			ap_buf_addf(&why, "missing-fixture: module %s (needed to import %s)", missing, base);
		else
			ap_buf_addf(&why, "import-failed: %s", json_string_value(json_object_get(imp, "error")));
	}
	return why.data;
}

json_t *ap_official_check(const char *file, const json_t *res)
{
	struct ap_buf node = { 0 };
	ap_nodeid_format(file, json_string_value(json_object_get(res, "class")),
			 json_string_value(json_object_get(res, "test")), &node);
	json_t *c = json_pack("{s:s, s:s, s:O?, s:O?, s:[], s:O?, s:O?}", "name",
			      ap_buf_str(&node), "kind", "official", "status",
			      json_object_get(res, "status"), "reason", json_object_get(res, "reason"),
			      "trace", "duration_ms", json_object_get(res, "duration_ms"),
			      "output", json_object_get(res, "output"));
	ap_buf_free(&node);
	return c;
}

static int ap_call(struct ap_worker *w, json_t *req, json_t **out)
{
	int r = req ? ap_worker_call(w, req, out) : -ENOMEM;
	json_decref(req);
	return r;
}

const char *ap_target_class(const json_t *res)
{
	const char *owner = json_string_value(json_object_get(res, "owner"));
	return owner ? owner : json_string_value(json_object_get(res, "canonical"));
}

int ap_official_package(struct ap_worker *w, json_t **pkg)
{
	return ap_call(w, json_pack("{s:s, s:s}", "op", "package", "name", "python3-torch"), pkg);
}

int ap_official_env(const struct ap_env *env, const char *torch_src, struct ap_env *dst)
{
	int r = ap_env_copy(env, dst);
	if (!r && env->chroot && torch_src)
		r = ap_env_add_bind(dst, torch_src, "/run/apiparity/src");
	if (!r && env->chroot && access(ap_tests_root(), F_OK) == 0)
		r = ap_env_add_bind(dst, ap_tests_root(), "/run/apiparity/tests");
	return r;
}

int ap_official_root(const struct ap_env *env, const char *torch_src, const char *pkgver,
		     struct ap_buf *root, struct ap_buf *why)
{
	struct ap_buf key = { 0 }, host = { 0 };
	if (torch_src) {
		ap_buf_adds(root, env->chroot ? "/run/apiparity/src" : torch_src);
		return 1;
	}
	if (!pkgver) {
		ap_buf_adds(why, "no-test-source: torch is not a Debian package here; give a "
			    "source tree with --torch-src DIR");
		return 0;
	}
	ap_upstream_version(pkgver, &key);
	int ok = ap_testsrc_cached(ap_buf_str(&key), &host);
	if (ok && env->chroot)
		ap_buf_addf(root, "/run/apiparity/tests/%s/test", ap_buf_str(&key));
	else if (ok)
		ap_buf_adds(root, ap_buf_str(&host));
	else
		ap_buf_addf(why, "no-test-source: no upstream tests for pytorch %s in %s (run "
			    "apiparity tests fetch %s, or give --torch-src DIR)", ap_buf_str(&key),
			    ap_tests_root(), env->name);
	ap_buf_free(&key);
	ap_buf_free(&host);
	return ok;
}

/* The claimed node id, checked against every test of that name. Sets *run
 * when the claim should run with the found tests: it exists, or its file is
 * missing (then the preflight names the file). */
static int ap_official_claim(struct ap_worker *w, const struct ap_official_opts *o,
			     json_t *checks, int *run)
{
	struct ap_nodeid n;
	json_t *nodes = NULL;
	if (ap_nodeid_parse(o->claimed, &n)) {
		json_array_append_new(checks, ap_check_new("claimed", "claim", "WARN",
			"not a node id (want test/FILE.py::Class::test)"));
		return 0;
	}
	int r = ap_call(w, json_pack("{s:s, s:s, s:s, s:[s]}", "op", "tests_nodes", "root",
				     o->root, "name", n.test, "files", n.file), &nodes);
	if (!r) {
		json_t *c = ap_claim_check(o->claimed, json_object_get(nodes, "nodes"), o->version);
		*run = json_is_true(json_object_get(c, "exists")) ||
		       json_array_size(json_object_get(nodes, "missing_files"));
		json_array_append_new(checks, c);
	}
	json_decref(nodes);
	return r;
}

/* Preflights one file and runs its selected tests (nodes: [[class, test]]). */
static int ap_official_file(struct ap_worker *w, const struct ap_official_opts *o,
			    const char *file, json_t *nodes, json_t *checks, struct ap_buf *log)
{
	json_t *pre = NULL, *ran = NULL;
	int r = ap_call(w, json_pack("{s:s, s:s, s:s, s:b}", "op", "tests_preflight", "root",
				     o->root, "file", file, "try_import", 1), &pre);
	char *why = r ? NULL : ap_preflight_reason(pre);
	size_t i;
	json_t *nd;
	if (!r && (why || !o->run)) {
		json_array_foreach(nodes, i, nd) {
			json_t *res = json_pack("{s:O, s:O, s:s, s:s?, s:i, s:s}", "class",
				json_array_get(nd, 0), "test", json_array_get(nd, 1), "status", "NOTRUN",
				"reason", why ? why : "ready: the preflight found all it needs (not run by tests find)",
				"duration_ms", 0, "output", "");
			json_array_append_new(checks, ap_official_check(file, res));
			json_decref(res);
		}
	} else if (!r) {
		json_t *env = json_object();
		if (o->device && strcmp(o->device, "cpu"))
			json_object_set_new(env, "PYTORCH_TESTING_DEVICE_ONLY_FOR", json_string(o->device));
		/* The worker bounds each test and the import itself; the answer
		 * comes once all have run, so wait for as long as they may take. */
		json_t *req = json_pack("{s:s, s:s, s:s, s:O, s:i, s:o}", "op", "tests_run", "root",
					o->root, "file", file, "nodes", nodes, "timeout_s",
					o->timeout_s, "setenv", env);
		int limit = (300 + (int)json_array_size(nodes) * (o->timeout_s + 5) + 30) * 1000;
		r = req ? ap_worker_call_within(w, req, &ran, limit) : -ENOMEM;
		json_decref(req);
	}
	if (ran) {
		const json_t *imp = json_object_get(ran, "import");
		ap_buf_addf(log, "=== %s: import %s (%lld ms)\n%s", file,
			    json_is_true(json_object_get(imp, "ok")) ? "ok" : "FAILED",
			    (long long)json_integer_value(json_object_get(imp, "ms")),
			    json_string_value(json_object_get(ran, "log")));
		json_array_foreach(json_object_get(ran, "tests"), i, nd) {
			json_t *c = ap_official_check(file, nd);
			ap_buf_addf(log, "=== begin %s\n%s=== end %s: %s\n",
				    json_string_value(json_object_get(c, "name")),
				    json_string_value(json_object_get(nd, "output")),
				    json_string_value(json_object_get(c, "name")),
				    json_string_value(json_object_get(c, "status")));
			json_array_append_new(checks, c);
		}
		if (!json_is_true(json_object_get(imp, "ok")))
			json_array_foreach(nodes, i, nd) {
				json_t *res = json_pack("{s:O, s:O, s:s, s:O?, s:i}", "class",
					json_array_get(nd, 0), "test", json_array_get(nd, 1), "status",
					"NOTRUN", "reason", json_object_get(imp, "error"), "duration_ms", 0);
				json_array_append_new(checks, ap_official_check(file, res));
				json_decref(res);
			}
	}
	free(why);
	json_decref(pre);
	json_decref(ran);
	return r;
}

static void ap_select_add(json_t *by_file, const char *file, const char *cls, const char *test)
{
	json_t *list = json_object_get(by_file, file), *nd;
	if (!list)
		json_object_set_new(by_file, file, list = json_array());
	for (size_t i = 0; i < json_array_size(list); i++) {
		nd = json_array_get(list, i);
		const char *c = json_string_value(json_array_get(nd, 0));
		if (!strcmp(json_string_value(json_array_get(nd, 1)), test) &&
		    ((!c && !cls) || (c && cls && !strcmp(c, cls))))
			return;
	}
	json_array_append_new(list, json_pack("[s?,s]", cls, test));
}

/* Groups the selected tests by file, in rank order: {file: [[class, test]...]},
 * the claimed node (when it should run) first. */
static json_t *ap_official_select(const json_t *ranked, const struct ap_nodeid *claim)
{
	json_t *by_file = json_object();
	size_t i, taken = 0;
	json_t *t;
	if (claim)
		ap_select_add(by_file, claim->file, *claim->cls ? claim->cls : NULL, claim->test);
	json_array_foreach(ranked, i, t) {
		if (taken == AP_OFFICIAL_MAX ||
		    json_integer_value(json_object_get(t, "score")) < AP_SCORE_RUN)
			break;
		ap_select_add(by_file, json_string_value(json_object_get(t, "file")),
			      json_string_value(json_object_get(t, "class")),
			      json_string_value(json_object_get(t, "test")));
		taken++;
	}
	return by_file;
}

int ap_official_run(struct ap_worker *w, const json_t *res, const struct ap_official_opts *o,
		    json_t *checks, json_t **found, struct ap_buf *log)
{
	const char *owner = json_string_value(json_object_get(res, "owner"));
	const char *cls = ap_target_class(res);
	const char *target = json_string_value(json_object_get(res, "target"));
	const char *leaf = owner && target ? strrchr(target, '.') + 1 : NULL;
	const char *short_name = strrchr(cls, '.') ? strrchr(cls, '.') + 1 : cls;
	json_t *hits = NULL;
	struct ap_nodeid claim;
	int run_claim = 0;
	*found = NULL;
	int r = o->claimed ? ap_official_claim(w, o, checks, &run_claim) : 0;
	if (run_claim && ap_nodeid_parse(o->claimed, &claim))
		run_claim = 0;
	r = r ? r : ap_call(w, json_pack("{s:s, s:s, s:s, s:s?}", "op", "tests_find", "root",
					 o->root, "class", cls, "leaf", leaf), &hits);
	if (r)
		return r;
	*found = ap_official_rank(json_object_get(hits, "tests"), short_name);
	json_decref(hits);
	json_t *by_file = ap_official_select(*found, run_claim ? &claim : NULL);
	const char *file;
	json_t *nodes;
	if (!json_object_size(by_file))
		json_array_append_new(checks, ap_check_new("official", "official", "NOTRUN",
			"no-test: no upstream test uses this target"));
	json_object_foreach(by_file, file, nodes)
		if (!r)
			r = ap_official_file(w, o, file, nodes, checks, log);
	json_decref(by_file);
	return r;
}
