#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>
#include <unistd.h>

#include "env/envs.h"
#include "check/official.h"
#include "check/testsrc.h"
#include "base/jsonutil.h"
#include "env/protocol.h"
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

static int how_score(const char *how)
{
	return !how ? 0 : !strcmp(how, "qualified") ? 4 : !strcmp(how, "alias") ? 3 : 1;
}

static int official_score(const json_t *t, const char *cls_name)
{
	int best = 0;
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(t, "matches"), i, m) {
		int s = how_score(json_string_value(json_object_get(m, "how")));
		best = s > best ? s : best;
	}
	const char *test = json_string_value(json_object_get(t, "test"));
	if (test && cls_name && strstr(test, cls_name))
		best += 2;
	if (json_is_true(json_object_get(t, "uses_leaf")))
		best += 1;
	return best;
}

static int by_score(const void *a, const void *b)
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
		json_object_set_new(v[i], "score", json_integer(official_score(v[i], name)));
		ap_buf_free(&node);
	}
	if (v)
		qsort(v, n, sizeof(*v), by_score);
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
			      "kind", "claim", "status", ap_status_name(exists ? AP_PASS : AP_WARN), "reason",
			      exists ? NULL : ap_buf_str(&reason), "trace", "duration_ms", 0,
			      "node", claimed, "exists", exists);
	if (!exists)
		json_object_set_new(c, "suggestions", json_string(ap_buf_str(&same)));
	ap_buf_free(&same);
	ap_buf_free(&reason);
	ap_buf_free(&name);
	return c;
}

char *ap_preflight_reason(const struct ap_proto_preflighted *pre)
{
	struct ap_buf why = { 0 };
	const char *file = pre->file;
	const char *base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file;
	if (!pre->file_exists) {
		ap_buf_addf(&why, "missing-fixture: %s (the test file itself)", file ? file : "?");
		return why.data;
	}
	for (size_t i = 0; i < pre->nmodules; i++) {
		struct ap_proto_module m;
		ap_proto_preflight_module(pre, i, &m);
		if (m.present)
			continue;
		ap_buf_addf(&why, "%s%s (imported by %s)", why.len ? ", " : "missing-fixture: ",
			    m.path ? m.path : m.module, base);
	}
	const struct ap_proto_import *imp = &pre->import;
	if (!why.len && imp->present && !imp->ok) {
		if (imp->missing)
			ap_buf_addf(&why, "missing-fixture: module %s (needed to import %s)",
				    imp->missing, base);
		else
			ap_buf_addf(&why, "import-failed: %s", imp->error);
	}
	return why.data;
}

static int word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Whether a traceback line starts by naming an exception: a dotted name
 * ending in Error, Exception, Failure, Interrupt, Exit or Skipped. */
static int names_exception(const char *l, size_t len)
{
	static const char *const ends[] = { "Error", "Exception", "Failure", "Interrupt",
					    "Exit", "Skipped" };
	size_t run = 0;
	if (!len || !word_char(l[0]) || (l[0] >= '0' && l[0] <= '9'))
		return 0;
	while (run < len && (word_char(l[run]) || l[run] == '.'))
		run++;
	/* the name may end where a '.' follows or where the dotted run ends */
	for (size_t p = 2; p <= run; p++) {
		if (p < run && l[p] != '.')
			continue;
		for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++) {
			size_t n = strlen(ends[k]);
			if (p > n && !memcmp(l + p - n, ends[k], n))
				return 1;
		}
	}
	return 0;
}

/* A line of text, as exception_line picks it. */
struct text_line {
	const char *at;
	size_t len;
};

/* The last line of text that names an exception (named) and its last line
 * that is not blank (last); at is NULL for none. Each line is matched as it
 * stands, but that the first line's leading blanks do not count when
 * first_trimmed (the text is a traceback stripped as a whole). */
static void scan_lines(const char *text, int first_trimmed, struct text_line *named,
		       struct text_line *last)
{
	*named = *last = (struct text_line){ NULL, 0 };
	for (const char *p = text ? text : ""; *p;) {
		size_t len = strcspn(p, "\r\n");
		size_t lead = strspn(p, " \t\f\v");
		if (lead < len) {
			size_t skip = last->at || !first_trimmed ? 0 : lead;
			*last = (struct text_line){ p, len };
			if (names_exception(p + skip, len - skip))
				*named = *last;
		}
		p += len;
		p += *p == '\r' && p[1] == '\n' ? 2 : *p ? 1 : 0;
	}
}

/* l into out without surrounding blanks. */
static void add_trimmed(struct text_line l, struct ap_buf *out)
{
	while (l.len && strchr(" \t\f\v", l.at[l.len - 1]))
		l.len--;
	size_t lead = strspn(l.at, " \t\f\v");
	ap_buf_add(out, l.at + lead, l.len - lead);
}

/* The exception line of a traceback into out: its last line that names an
 * exception (what follows it may be hints, not the cause), else its last
 * line that is not blank, else "?"; without surrounding blanks. The
 * fallback of exc_reason, for what the facts cannot word. */
static void exception_line(const char *tb, struct ap_buf *out)
{
	struct text_line named, last;
	scan_lines(tb, 1, &named, &last);
	if (!named.at && !last.at)
		ap_buf_adds(out, "?");
	else
		add_trimmed(named.at ? named : last, out);
}

/* The lines a Python traceback ends with for exception e, as traceback's
 * format_exception_only writes them: its type (qualified by its module but
 * for builtins and __main__), ": " and its message when it has one, then
 * each note. 0, or -1 when the facts lack one of these. */
static int exc_lines(const struct ap_proto_exc *e, struct ap_buf *out)
{
	if (!e->known || !e->qualname || !e->module || !e->message || !e->notes)
		return -1;
	if (strcmp(e->module, "builtins") && strcmp(e->module, "__main__"))
		ap_buf_addf(out, "%s.", e->module);
	ap_buf_adds(out, e->qualname);
	if (*e->message)
		ap_buf_addf(out, ": %s", e->message);
	ap_buf_adds(out, "\n");
	for (size_t i = 0; i < json_array_size(e->notes); i++) {
		const char *note = ap_proto_exc_note(e, i);
		if (!note)
			return -1;
		ap_buf_addf(out, "%s\n", note);
	}
	return 0;
}

/* Whether text ends with the whole lines tail. */
static int ends_with_lines(const char *text, const struct ap_buf *tail)
{
	size_t n = text ? strlen(text) : 0;
	if (!tail->len || n < tail->len || memcmp(text + n - tail->len, tail->data, tail->len))
		return 0;
	return n == tail->len || strchr("\r\n", text[n - tail->len - 1]);
}

/* The reason of a unittest error or failure: of the lines its exception's
 * facts give, the last that names an exception. From its traceback tb
 * (exception_line) instead when none does (then the cause may be named
 * above them), or when tb does not end with them: the facts are missing,
 * or Python wrote the exception otherwise (a suggestion added to its
 * message, a SyntaxError's place, a str() that failed). Without tb, the
 * facts' lines stand for it. */
static void exc_reason(const char *tb, const struct ap_proto_exc *e, struct ap_buf *out)
{
	struct ap_buf lines = { 0 };
	struct text_line named = { NULL, 0 }, last;
	int facts = !exc_lines(e, &lines);
	if (facts && (!tb || ends_with_lines(tb, &lines)))
		scan_lines(ap_buf_str(&lines), 0, &named, &last);
	if (named.at)
		add_trimmed(named, out);
	else
		exception_line(tb || !facts ? tb : ap_buf_str(&lines), out);
	ap_buf_free(&lines);
}

/* A module-level test function: what it raised, if anything, worded as
 * "type: message" (the worker's text where it sent no facts). */
static enum ap_status function_outcome(const struct ap_proto_raised *raised,
				       struct ap_buf *reason)
{
	const struct ap_proto_exc *e = &raised->exc;
	if (!raised->raised)
		return AP_PASS;
	if (e->known && e->type && e->message)
		ap_buf_addf(reason, "%s: %s", e->type, e->message);
	else
		ap_buf_adds(reason, raised->text ? raised->text : "-");
	if (raised->assertion)
		return AP_FAIL;
	const char *type = raised->type;
	return type && (!strcmp(type, "Skipped") || !strcmp(type, "SkipTest")) ? AP_SKIP : AP_ERROR;
}

/* A unittest TestResult: errors first, then failures, as unittest reports. */
static enum ap_status unittest_outcome(const struct ap_proto_unittest *u, struct ap_buf *reason)
{
	if (u->errors || u->failures) {
		if (u->errors)
			exc_reason(u->error, &u->error_exc, reason);
		else
			exc_reason(u->failure, &u->failure_exc, reason);
		return u->errors ? AP_ERROR : AP_FAIL;
	}
	if (u->unexpected_successes) {
		ap_buf_adds(reason, "unexpected success");
		return AP_FAIL;
	}
	if (u->skipped) {
		ap_buf_adds(reason, u->skip ? u->skip : "-");
		return AP_SKIP;
	}
	if (u->expected_failures) {
		ap_buf_adds(reason, "expected failure");
		return AP_PASS;
	}
	if (!u->tests_run) {
		ap_buf_adds(reason, "no test ran");
		return AP_NOTRUN;
	}
	return AP_PASS;
}

/* A test whose process reported nothing: it passed its timeout, a signal
 * killed it, or it exited. */
static enum ap_status died_outcome(const struct ap_proto_died *d, struct ap_buf *reason)
{
	if (d->timed_out) {
		ap_buf_addf(reason, "no result within %g s", d->timeout_s);
		return AP_TIMEOUT;
	}
	if (d->signal && d->signal_name)
		ap_buf_adds(reason, d->signal_name);
	else if (d->signal)
		ap_buf_addf(reason, "signal %d", d->signal);
	else
		ap_buf_addf(reason, "the test process exited with status %d during the test",
			    d->exit_status);
	return AP_CRASH;
}

enum ap_status ap_official_outcome(const struct ap_proto_test *t, struct ap_buf *reason)
{
	switch (t->kind) {
	case AP_TEST_DIED:
		return died_outcome(&t->died, reason);
	case AP_TEST_BROKEN:
		ap_buf_adds(reason, t->broken);
		return AP_ERROR;
	case AP_TEST_UNDEFINED:
		ap_buf_addf(reason, "not-defined: %s.%s does not exist after import (a conditional "
			    "or generated test)", t->cls ? t->cls : "-", t->test ? t->test : "-");
		return AP_NOTRUN;
	case AP_TEST_FUNCTION:
		return function_outcome(&t->function, reason);
	case AP_TEST_UNITTEST:
		return unittest_outcome(&t->unittest, reason);
	case AP_TEST_NONE:
		break;
	}
	ap_buf_adds(reason, "the worker reported no outcome");
	return AP_ERROR;
}

/* A check object (kind "official") of the test cls.test (cls NULL: a
 * module-level test) of file; reason NULL for none, duration and output
 * NULL for none (taken). */
static json_t *official_check_new(const char *file, const char *cls, const char *test,
				  enum ap_status status, const char *reason, json_t *duration,
				  json_t *output)
{
	struct ap_buf node = { 0 };
	ap_nodeid_format(file, cls, test, &node);
	json_t *c = json_pack("{s:s, s:s, s:s, s:s?, s:[], s:O?, s:O?}", "name",
			      ap_buf_str(&node), "kind", "official", "status", ap_status_name(status),
			      "reason", reason, "trace", "duration_ms", duration, "output", output);
	json_decref(duration);
	json_decref(output);
	ap_buf_free(&node);
	return c;
}

json_t *ap_official_check(const char *file, const struct ap_proto_test *t)
{
	struct ap_buf reason = { 0 };
	enum ap_status status = ap_official_outcome(t, &reason);
	json_t *c = official_check_new(file, t->cls, t->test ? t->test : "(null)", status,
				       reason.len ? ap_buf_str(&reason) : NULL,
				       t->has_duration ? json_integer(t->duration_ms) : NULL,
				       t->output ? json_string(t->output) : NULL);
	ap_buf_free(&reason);
	return c;
}

/* Whether method is test itself or test parametrized: test + "_" + more. */
static int instance_of(const char *method, const char *test)
{
	size_t n = strlen(test);
	return !strncmp(method, test, n) && (!method[n] || method[n] == '_');
}

/* The tests that node [cls, test] stands for, by what its file defines. */
static void expand_node(const json_t *node, const json_t *defined, json_t *out)
{
	const char *cls = json_string_value(json_array_get(node, 0));
	const char *test = json_string_value(json_array_get(node, 1));
	struct ap_proto_defined_class c;
	const json_t *m;
	size_t i, k, before = json_array_size(out);
	for (k = 0; !ap_proto_defined_class(defined, cls, test, k, &c); k++)
		if (!strcmp(c.name, cls) && c.own) {
			json_array_append_new(out, json_pack("[s,s]", c.name, test));
			return;
		}
	for (k = 0; !ap_proto_defined_class(defined, cls, test, k, &c); k++)
		json_array_foreach(c.methods, i, m)
			if (json_is_string(m) && instance_of(json_string_value(m), test))
				json_array_append_new(out, json_pack("[s,O]", c.name, m));
	if (json_array_size(out) == before)
		json_array_append(out, (json_t *)node);
}

json_t *ap_official_expand(const json_t *nodes, const json_t *defined)
{
	json_t *out = json_array();
	size_t i;
	json_t *nd;
	json_array_foreach(nodes, i, nd)
		expand_node(nd, defined, out);
	return out;
}

int ap_official_deadline_s(size_t ntests, int timeout_s)
{
	return AP_RUN_IMPORT_S + (int)ntests * (timeout_s + AP_TEST_SLACK_S);
}

static int call(struct ap_worker *w, json_t *req, json_t **out)
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
	return call(w, ap_proto_package("python3-torch"), pkg);
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

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The test/ directory of a source tree, as the worker's _test_root finds it. */
static void src_tree(const char *src, struct ap_buf *tree)
{
	struct ap_buf t = { 0 };
	size_t n = strlen(src);
	while (n > 1 && src[n - 1] == '/')
		n--;
	ap_buf_addf(&t, "%.*s/test", (int)n, src);
	int sub = (n < 4 || strncmp(src + n - 4, "test", 4) || (n > 4 && src[n - 5] != '/')) &&
		  is_dir(ap_buf_str(&t));
	if (sub)
		ap_buf_adds(tree, ap_buf_str(&t));
	else
		ap_buf_add(tree, src, n);
	ap_buf_free(&t);
}

int ap_official_root(const struct ap_env *env, const char *torch_src, const char *pkgver,
		     struct ap_buf *root, struct ap_buf *tree, struct ap_buf *why)
{
	struct ap_buf key = { 0 }, host = { 0 };
	if (torch_src) {
		ap_buf_adds(root, env->chroot ? "/run/apiparity/src" : torch_src);
		src_tree(torch_src, tree);
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
	else if (ok && env->tests_root)
		ap_buf_addf(root, "%s/%s/test", env->tests_root, ap_buf_str(&key));
	else if (ok && ap_env_remote(env)) {
		/* This machine's path means nothing on the far side. */
		ok = 0;
		ap_buf_addf(why, "no-test-source: the upstream tests for pytorch %s are on this "
			    "machine, not on the far side of %s's remote shell (copy %s there, "
			    "and set tests_root in [%s] to the directory that holds the copy)",
			    ap_buf_str(&key), env->name, ap_buf_str(&host), env->name);
	} else if (ok)
		ap_buf_adds(root, ap_buf_str(&host));
	if (ok)
		ap_buf_adds(tree, ap_buf_str(&host));
	else if (!why->len)
		ap_buf_addf(why, "no-test-source: no upstream tests for pytorch %s in %s (run "
			    "apiparity tests fetch %s, or give --torch-src DIR)", ap_buf_str(&key),
			    ap_tests_root(), env->name);
	ap_buf_free(&key);
	ap_buf_free(&host);
	return ok;
}

/* The tests of the index named n->test, those of n->file first: an array
 * of {file, class, test}. */
static int index_nodes(struct ap_testindex *ix, const struct ap_nodeid *n, json_t **nodes)
{
	struct ap_buf key = { 0 };
	json_t *defs = NULL, *d, *first = json_array(), *rest = json_array();
	size_t i;
	ap_buf_addf(&key, "t %s", n->test);
	int r = ap_testindex_get(ix, ap_buf_str(&key), &defs);
	json_array_foreach(defs, i, d) {
		const char *file = ap_testindex_file(ix, json_integer_value(json_array_get(d, 0)));
		json_t *f = NULL;
		ap_buf_reset(&key);
		ap_buf_addf(&key, "f %s", file ? file : "");
		if (!r && file && !(r = ap_testindex_get(ix, ap_buf_str(&key), &f))) {
			json_t *t = json_array_get(json_object_get(f, "tests"),
						   (size_t)json_integer_value(json_array_get(d, 1)));
			json_array_append_new(!strcmp(file, n->file) ? first : rest,
				json_pack("{s:s, s:O, s:O}", "file", file, "class", json_array_get(t, 0),
					  "test", json_array_get(t, 1)));
		}
		json_decref(f);
	}
	json_array_extend(first, rest);
	json_decref(rest);
	json_decref(defs);
	ap_buf_free(&key);
	*nodes = first;
	return r;
}

static int is_file(const char *base, const char *rel)
{
	struct ap_buf p = { 0 };
	struct stat st;
	ap_buf_addf(&p, "%s/%s", base, rel);
	int ok = stat(ap_buf_str(&p), &st) == 0 && S_ISREG(st.st_mode);
	ap_buf_free(&p);
	return ok;
}

/* The claimed node id, checked against every test of that name. Sets *run
 * when the claim should run with the found tests: it exists, or its file is
 * missing (then the preflight names the file). */
static int official_claim(struct ap_testindex *ix, const struct ap_official_opts *o,
			     json_t *checks, int *run)
{
	struct ap_nodeid n;
	json_t *nodes = NULL;
	struct ap_buf base = { 0 };
	if (ap_nodeid_parse(o->claimed, &n)) {
		json_array_append_new(checks, ap_check_new("claimed", "claim", AP_WARN,
			"not a node id (want test/FILE.py::Class::test)"));
		return 0;
	}
	int r = index_nodes(ix, &n, &nodes);
	const char *slash = strrchr(o->tree, '/');
	ap_buf_add(&base, o->tree, slash ? (size_t)(slash - o->tree) : 0);
	if (!r) {
		json_t *c = ap_claim_check(o->claimed, nodes, o->version);
		*run = json_is_true(json_object_get(c, "exists")) ||
		       !is_file(ap_buf_str(&base), n.file);
		json_array_append_new(checks, c);
	}
	json_decref(nodes);
	ap_buf_free(&base);
	return r;
}

/* The environment a test file is imported with: on a device, only that
 * device's instantiations of device-generic tests. */
static json_t *official_setenv(const struct ap_official_opts *o)
{
	json_t *env = json_object();
	if (o->device && strcmp(o->device, "cpu"))
		json_object_set_new(env, "PYTORCH_TESTING_DEVICE_ONLY_FOR", json_string(o->device));
	return env;
}

/* Asks the worker what file needs (nodes: [[class, test]]) into *pre. When
 * the check runs tests, a runner then imports the file and is kept for the
 * run: with wait, *pre holds the import's answer; without, the worker
 * answers at once and the import goes on meanwhile (see import_answer). */
static int official_preflight(struct ap_worker *w, struct ap_testindex *ix,
			      const struct ap_official_opts *o, const char *file,
			      const json_t *nodes, int wait, json_t **pre)
{
	json_t *f = NULL;
	struct ap_buf key = { 0 };
	/* The file's imports come from the index. Only a run imports the file,
	 * once: the preflight's runner keeps it imported (for the tests it
	 * defines) and runs the tests; tests find does not import it. */
	ap_buf_addf(&key, "f %s", file);
	int r = ap_testindex_get(ix, ap_buf_str(&key), &f);
	struct ap_proto_preflight p = { o->root, file, o->run, o->run, wait, AP_IMPORT_TRY_S,
					 r ? NULL : official_setenv(o), nodes,
					 json_object_get(f, "imports") };
	r = r ? r : call(w, ap_proto_tests_preflight(&p), pre);
	ap_buf_free(&key);
	json_decref(f);
	return r;
}

/* Completes a preflight p that did not wait: the import's answer of its
 * runner, which the run then takes (or none, when it did not import); the
 * answer in *ans, which p now borrows from. */
static int import_answer(struct ap_worker *w, struct ap_proto_preflighted *p, json_t **ans)
{
	if (!p->runner || p->import.present)
		return 0;
	json_t *req = ap_proto_tests_import(p->runner);
	int r = req ? ap_worker_call_within(w, req, ans, (AP_IMPORT_TRY_S + AP_ANSWER_MARGIN_S) *
					    1000) : -ENOMEM;
	json_decref(req);
	if (!r)
		ap_proto_tests_import_read(*ans, p);
	return r;
}

/* A NOTRUN check of each of nodes ([[class, test]]) of file, for why; with
 * an empty output when output. */
static void official_notrun(const char *file, const json_t *nodes, const char *why, int output,
			    json_t *checks)
{
	size_t i;
	json_t *nd;
	json_array_foreach(nodes, i, nd)
		json_array_append_new(checks, official_check_new(
			file, json_string_value(json_array_get(nd, 0)),
			json_string_value(json_array_get(nd, 1)), AP_NOTRUN, why, json_integer(0),
			output ? json_string("") : NULL));
}

/* The results of a test run into checks, and its log. */
static void official_ran(const char *file, const struct ap_proto_tests_ran *ran, json_t *checks,
			 struct ap_buf *log)
{
	ap_buf_addf(log, "=== %s: import %s (%lld ms)\n%s", file, ran->import.ok ? "ok" : "FAILED",
		    ran->import.ms, ran->log);
	for (size_t i = 0; i < ran->ntests; i++) {
		struct ap_proto_test t;
		struct ap_buf node = { 0 };
		ap_proto_tests_ran_test(ran, i, &t);
		json_t *c = ap_official_check(file, &t);
		ap_nodeid_format(file, t.cls, t.test, &node);
		ap_buf_addf(log, "=== begin %s\n%s=== end %s: %s\n", ap_buf_str(&node), t.output,
			    ap_buf_str(&node), ap_status_name(ap_check_status(c)));
		json_array_append_new(checks, c);
		ap_buf_free(&node);
	}
}

/* Runs the selected tests of one file (nodes: [[class, test]]) after its
 * preflight pre (NULL: preflights it first). */
static int official_file(struct ap_worker *w, struct ap_testindex *ix,
			    const struct ap_official_opts *o, const char *file, json_t *nodes,
			    json_t *pre, json_t *checks, struct ap_buf *log)
{
	json_t *ran = NULL, *ans = NULL;
	struct ap_proto_preflighted p = { 0 };
	int r = pre ? 0 : official_preflight(w, ix, o, file, nodes, 1, &pre);
	if (!r)
		ap_proto_preflight_read(pre, &p);
	if (!r && p.runner)
		r = import_answer(w, &p, &ans);
	char *why = r ? NULL : ap_preflight_reason(&p);
	if (!r && (why || !o->run)) {
		official_notrun(file, nodes, why ? why : "ready: the modules it imports are present "
				"(tests find neither imports nor runs it)", 1, checks);
	} else if (!r) {
		json_t *run = ap_official_expand(nodes, p.import.defined);
		int deadline = ap_official_deadline_s(json_array_size(run), o->timeout_s);
		/* The worker bounds each test and the run; the answer comes once
		 * all have run, so wait for as long as they may take. */
		struct ap_proto_tests_run t = { o->root, file, run, NULL, o->timeout_s, deadline,
						official_setenv(o), p.runner };
		json_t *req = ap_proto_tests_run(&t);
		r = req ? ap_worker_call_within(w, req, &ran, (deadline + AP_ANSWER_MARGIN_S) * 1000)
			: -ENOMEM;
		json_decref(req);
	}
	if (ran) {
		struct ap_proto_tests_ran tr;
		ap_proto_tests_run_read(ran, &tr);
		official_ran(file, &tr, checks, log);
		if (tr.import.present)
			p.import = tr.import;
		free(why);
		why = tr.import.ok ? NULL : ap_preflight_reason(&p);
		if (why)
			official_notrun(file, nodes, why, 0, checks);
	}
	free(why);
	json_decref(pre);
	json_decref(ans);
	json_decref(ran);
	return r;
}

static void select_add(json_t *by_file, const char *file, const char *cls, const char *test)
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
static json_t *official_select(const json_t *ranked, const struct ap_nodeid *claim)
{
	json_t *by_file = json_object();
	size_t i, taken = 0;
	json_t *t;
	if (claim)
		select_add(by_file, claim->file, *claim->cls ? claim->cls : NULL, claim->test);
	json_array_foreach(ranked, i, t) {
		if (taken == AP_OFFICIAL_MAX ||
		    json_integer_value(json_object_get(t, "score")) < AP_SCORE_RUN)
			break;
		select_add(by_file, json_string_value(json_object_get(t, "file")),
			      json_string_value(json_object_get(t, "class")),
			      json_string_value(json_object_get(t, "test")));
		taken++;
	}
	return by_file;
}

/* The names an import of the file binds to the class or to a module on its
 * path ({local: dotted}), and the class's first name as itself. */
static json_t *file_aliases(const json_t *bindings, const char *cls_path)
{
	json_t *names = json_object(), *b;
	struct ap_buf head = { 0 };
	size_t i;
	json_array_foreach(bindings, i, b) {
		const char *kind = json_string_value(json_array_get(b, 0));
		const char *local = json_string_value(json_array_get(b, 1));
		const char *full = json_string_value(json_array_get(b, 2));
		if (!kind || !local || !full)
			continue;
		size_t fl = strlen(full);
		int under = !strncmp(cls_path, full, fl) && cls_path[fl] == '.';
		if (under || (!strcmp(kind, "from") && !strcmp(cls_path, full)))
			json_object_set_new(names, local, json_string(full));
	}
	ap_buf_add(&head, cls_path, strcspn(cls_path, "."));
	if (!json_object_get(names, ap_buf_str(&head)))
		json_object_set_new(names, ap_buf_str(&head), json_string(ap_buf_str(&head)));
	ap_buf_free(&head);
	return names;
}

/* How the dotted name d, in a file with these aliases, mentions cls_path:
 * "qualified", "alias", "?" (the same last name: an alias when it is the
 * same object), or NULL. exp gets d with its first name's alias applied. */
static const char *official_how(const char *d, const json_t *aliases, const char *cls_path,
			  struct ap_buf *exp)
{
	struct ap_buf head = { 0 };
	size_t hl = strcspn(d, ".");
	ap_buf_add(&head, d, hl);
	const char *full = json_string_value(json_object_get(aliases, ap_buf_str(&head)));
	int same_head = full && !strcmp(full, ap_buf_str(&head));
	ap_buf_free(&head);
	ap_buf_addf(exp, "%s%s", full ? full : d, full ? d + hl : "");
	const char *e = ap_buf_str(exp), *name = strrchr(cls_path, '.');
	size_t cl = strlen(cls_path), el = strlen(e);
	name = name ? name + 1 : cls_path;
	size_t nl = strlen(name);
	if (!strncmp(e, cls_path, cl) && (e[cl] == '.' || !e[cl]))
		return same_head ? "qualified" : "alias";
	if (!strcmp(e, name) || (el > nl && e[el - nl - 1] == '.' && !strcmp(e + el - nl, name)))
		return "?";
	return NULL;
}

/* The keys of the maps below, as text: "FID" and "FID TI" (decimal
 * integers, 20 digits at most), and "LINE HOW" (how a test names the
 * target: "alias", "name" or another short word of the worker's). */
#define AP_KEY_ONE 32
#define AP_KEY_TWO 64
#define AP_KEY_MATCH 160

/* The record of file id fid ({tests, aliases}), kept in files by id. */
static json_t *find_file(struct ap_testindex *ix, json_t *files, json_int_t fid,
			    const char *cls_path, int *r)
{
	char id[AP_KEY_ONE];
	snprintf(id, sizeof(id), "%lld", (long long)fid);
	json_t *rec = json_object_get(files, id), *f = NULL;
	if (rec)
		return rec;
	const char *name = ap_testindex_file(ix, fid);
	struct ap_buf key = { 0 };
	ap_buf_addf(&key, "f %s", name ? name : "");
	*r = name ? ap_testindex_get(ix, ap_buf_str(&key), &f) : -EBADMSG;
	ap_buf_free(&key);
	if (!*r && !f)
		*r = -EBADMSG; /* a file of "F" without its record */
	if (*r) {
		json_decref(f);
		return NULL;
	}
	rec = json_pack("{s:s, s:O, s:o}", "file", name, "tests", json_object_get(f, "tests"),
			"aliases", file_aliases(json_object_get(f, "bindings"), cls_path));
	json_decref(f);
	json_object_set_new(files, id, rec);
	return rec;
}

/* The hit of (fid, ti) in hits, made on first use. */
static json_t *find_hit(json_t *hits, const json_t *file, json_int_t fid, json_int_t ti)
{
	char id[AP_KEY_TWO];
	snprintf(id, sizeof(id), "%lld %lld", (long long)fid, (long long)ti);
	json_t *h = json_object_get(hits, id);
	const json_t *t = json_array_get(json_object_get(file, "tests"), (size_t)ti);
	if (h || !t)
		return h;
	h = json_pack("{s:O, s:O, s:O, s:O, s:[], s:b, s:I, s:I}", "file",
		      json_object_get(file, "file"), "class", json_array_get(t, 0), "test",
		      json_array_get(t, 1), "line", json_array_get(t, 2), "matches", "uses_leaf", 0,
		      "fid", fid, "ti", ti);
	json_object_set_new(hits, id, h);
	return h;
}

/* Asks the worker which names of pending ({name: null}) are the class itself. */
static int find_same(struct ap_worker *w, const char *cls_path, json_t *pending)
{
	json_t *names = json_array(), *ans = NULL, *v;
	const char *k;
	json_object_foreach(pending, k, v)
		json_array_append_new(names, json_string(k));
	int r = !json_array_size(names) || !w ? 0 :
		call(w, ap_proto_same_object(cls_path, names), &ans);
	size_t i;
	json_array_foreach(names, i, v)
		json_object_set(pending, json_string_value(v),
				ap_proto_same_object_is(ans, i) ?
				json_true() : json_false());
	json_decref(names);
	json_decref(ans);
	return r;
}

static int by_line(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "line"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "line"));
	json_int_t i = json_integer_value(json_object_get(*(json_t *const *)a, "seq"));
	json_int_t j = json_integer_value(json_object_get(*(json_t *const *)b, "seq"));
	return x != y ? (x < y ? -1 : 1) : (i > j) - (i < j);
}

/* A hit's matches settled (aliases resolved), one per line and kind, the
 * first eight by line. */
static void find_settle(json_t *hit, const json_t *pending)
{
	json_t *ms = json_object_get(hit, "matches"), *m, *seen = json_object();
	json_t *out = json_array();
	size_t n = json_array_size(ms), i;
	json_t **v = calloc(n ? n : 1, sizeof(*v));
	for (i = 0; v && i < n; i++) {
		v[i] = json_array_get(ms, i);
		json_object_set_new(v[i], "seq", json_integer((json_int_t)i));
	}
	if (v)
		qsort(v, n, sizeof(*v), by_line);
	for (i = 0; v && i < n && json_array_size(out) < 8; i++) {
		m = v[i];
		const char *how = json_string_value(json_object_get(m, "how"));
		const char *exp = json_string_value(json_object_get(m, "exp"));
		if (!strcmp(how, "?"))
			how = json_is_true(json_object_get(pending, exp)) ? "alias" : "name";
		char id[AP_KEY_MATCH];
		snprintf(id, sizeof(id), "%lld %s", (long long)json_integer_value(
				 json_object_get(m, "line")), how);
		if (json_object_get(seen, id))
			continue;
		json_object_set_new(seen, id, json_true());
		json_array_append_new(out, json_pack("{s:O, s:s, s:O}", "line",
			json_object_get(m, "line"), "how", how, "text", json_object_get(m, "text")));
	}
	free(v);
	json_decref(seen);
	json_object_set_new(hit, "matches", out);
}

static int by_test(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t fx = json_integer_value(json_object_get(x, "fid"));
	json_int_t fy = json_integer_value(json_object_get(y, "fid"));
	json_int_t tx = json_integer_value(json_object_get(x, "ti"));
	json_int_t ty = json_integer_value(json_object_get(y, "ti"));
	return fx != fy ? (fx < fy ? -1 : 1) : (tx > ty) - (tx < ty);
}

/* The mentions of cls_path among the "u" entries of its last name. */
static int find_mentions(struct ap_worker *w, struct ap_testindex *ix, const char *cls_path,
			    json_t *hits)
{
	const char *name = strrchr(cls_path, '.') ? strrchr(cls_path, '.') + 1 : cls_path;
	json_t *uses = NULL, *u, *files = json_object(), *pending = json_object();
	struct ap_buf key = { 0 };
	size_t i;
	ap_buf_addf(&key, "u %s", name);
	int r = ap_testindex_get(ix, ap_buf_str(&key), &uses);
	json_array_foreach(uses, i, u) {
		json_int_t fid = json_integer_value(json_array_get(u, 0));
		json_int_t ti = json_integer_value(json_array_get(u, 1));
		const char *d = json_string_value(json_array_get(u, 3));
		json_t *file = !r && d && *d ? find_file(ix, files, fid, cls_path, &r) : NULL;
		struct ap_buf exp = { 0 };
		const char *how = file ? official_how(d, json_object_get(file, "aliases"), cls_path, &exp) :
				  NULL;
		json_t *hit = how ? find_hit(hits, file, fid, ti) : NULL;
		if (hit)
			json_array_append_new(json_object_get(hit, "matches"), json_pack(
				"{s:O, s:s, s:O, s:s}", "line", json_array_get(u, 2), "how", how,
				"text", json_array_get(u, 4), "exp", ap_buf_str(&exp)));
		if (hit && !strcmp(how, "?"))
			json_object_set_new(pending, ap_buf_str(&exp), json_null());
		ap_buf_free(&exp);
	}
	r = r ? r : find_same(w, cls_path, pending);
	const char *k;
	json_t *h;
	json_object_foreach(hits, k, h)
		find_settle(h, pending);
	json_decref(uses);
	json_decref(files);
	json_decref(pending);
	ap_buf_free(&key);
	return r;
}

/* Marks the hits whose test uses attribute leaf. */
static int find_leaf(struct ap_testindex *ix, const char *leaf, json_t *hits)
{
	json_t *uses = NULL, *u;
	struct ap_buf key = { 0 };
	size_t i;
	ap_buf_addf(&key, "u %s", leaf);
	int r = ap_testindex_get(ix, ap_buf_str(&key), &uses);
	json_array_foreach(uses, i, u) {
		const char *d = json_string_value(json_array_get(u, 3));
		char id[AP_KEY_TWO];
		snprintf(id, sizeof(id), "%lld %lld", (long long)json_integer_value(json_array_get(u, 0)),
			 (long long)json_integer_value(json_array_get(u, 1)));
		json_t *h = d && strchr(d, '.') ? json_object_get(hits, id) : NULL;
		if (h)
			json_object_set(h, "uses_leaf", json_true());
	}
	json_decref(uses);
	ap_buf_free(&key);
	return r;
}

int ap_official_find(struct ap_worker *w, struct ap_testindex *ix, const char *cls_path,
		     const char *leaf, json_t **out)
{
	json_t *hits = json_object(), *h;
	const char *k;
	int r = find_mentions(w, ix, cls_path, hits);
	r = r || !leaf ? r : find_leaf(ix, leaf, hits);
	size_t n = json_object_size(hits), i = 0;
	json_t **v = calloc(n ? n : 1, sizeof(*v));
	json_object_foreach(hits, k, h)
		if (v)
			v[i++] = h;
	if (v)
		qsort(v, n, sizeof(*v), by_test);
	*out = json_array();
	for (i = 0; !r && v && i < n; i++) {
		json_object_del(v[i], "fid");
		json_object_del(v[i], "ti");
		json_array_append(*out, v[i]);
	}
	free(v);
	json_decref(hits);
	if (r) {
		json_decref(*out);
		*out = NULL;
	}
	return r ? r : v ? 0 : -ENOMEM;
}

/* The claim, the tests found and the selection, from the index. */
static int official_lookup(struct ap_worker *w, struct ap_testindex *ix, const json_t *res,
			      const struct ap_official_opts *o, json_t *checks, json_t **found,
			      json_t **by_file)
{
	const char *owner = json_string_value(json_object_get(res, "owner"));
	const char *cls = ap_target_class(res);
	const char *target = json_string_value(json_object_get(res, "target"));
	const char *leaf = owner && target ? strrchr(target, '.') + 1 : NULL;
	const char *short_name = strrchr(cls, '.') ? strrchr(cls, '.') + 1 : cls;
	json_t *hits = NULL, *mine = json_array();
	struct ap_nodeid claim;
	int run_claim = 0;
	int r = o->claimed ? official_claim(ix, o, mine, &run_claim) : 0;
	if (run_claim && ap_nodeid_parse(o->claimed, &claim))
		run_claim = 0;
	r = r ? r : ap_official_find(w, ix, cls, leaf, &hits);
	if (!r) {
		*found = ap_official_rank(hits, short_name);
		*by_file = official_select(*found, run_claim ? &claim : NULL);
		json_array_extend(checks, mine);
	}
	json_decref(hits);
	json_decref(mine);
	return r;
}

int ap_official_start(struct ap_worker *w, const json_t *res, const struct ap_official_opts *o,
		      struct ap_official_plan *p)
{
	struct ap_buf warn = { 0 };
	struct timespec t0, t1;
	memset(p, 0, sizeof(*p));
	p->checks = json_array();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int r = ap_testindex_load(w, o->root, o->tree, 0, &p->ix, &warn, &w->detail);
	r = r ? r : official_lookup(w, &p->ix, res, o, p->checks, &p->found, &p->by_file);
	if (r == -EBADMSG) { /* a damaged line deep in the index: build it again */
		ap_testindex_close(&p->ix);
		json_array_clear(p->checks);
		r = ap_testindex_load(w, o->root, o->tree, 1, &p->ix, &warn, &w->detail);
		r = r ? r : official_lookup(w, &p->ix, res, o, p->checks, &p->found, &p->by_file);
	}
	if (o->warn)
		ap_buf_add(o->warn, warn.data ? warn.data : "", warn.len);
	ap_buf_free(&warn);
	if (r)
		return r;
	/* How long finding took (index and lookup, a build included), so that
	 * its cost inside a check can be read from the evidence. */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ap_buf_addf(&p->log, "=== usage index: %zu tests use the target, found in %lld ms\n",
		    json_array_size(p->found), (long long)((t1.tv_sec - t0.tv_sec) * 1000 +
							   (t1.tv_nsec - t0.tv_nsec) / 1000000));
	/* The first file's runner starts importing it now, while the caller
	 * does other work; the others are imported in turn by finish. */
	void *it = json_object_iter(p->by_file);
	if (o->run && it) {
		p->file = strdup(json_object_iter_key(it));
		r = p->file ? official_preflight(w, &p->ix, o, p->file, json_object_iter_value(it), 0,
						 &p->pre) : -ENOMEM;
	}
	return r;
}

int ap_official_finish(struct ap_worker *w, const struct ap_official_opts *o,
		       struct ap_official_plan *p, json_t *checks, json_t **found,
		       struct ap_buf *log)
{
	const char *file;
	json_t *nodes;
	int r = 0;
	json_array_extend(checks, p->checks);
	ap_buf_add(log, p->log.data ? p->log.data : "", p->log.len);
	*found = p->found;
	p->found = NULL;
	if (!json_object_size(p->by_file))
		json_array_append_new(checks, ap_check_new("official", "official", AP_NOTRUN,
			"no-test: no upstream test uses this target"));
	json_object_foreach(p->by_file, file, nodes) {
		int mine = p->file && !strcmp(file, p->file);
		if (!r)
			r = official_file(w, &p->ix, o, file, nodes, mine ? p->pre : NULL, checks, log);
		if (mine)
			p->pre = NULL; /* official_file took it */
	}
	return r;
}

void ap_official_plan_free(struct ap_official_plan *p)
{
	ap_testindex_close(&p->ix); /* a zeroed one (never loaded) too */
	json_decref(p->checks);
	json_decref(p->found);
	json_decref(p->by_file);
	json_decref(p->pre);
	free(p->file);
	ap_buf_free(&p->log);
	memset(p, 0, sizeof(*p));
}

int ap_official_run(struct ap_worker *w, const json_t *res, const struct ap_official_opts *o,
		    json_t *checks, json_t **found, struct ap_buf *log)
{
	struct ap_official_plan p;
	int r = ap_official_start(w, res, o, &p);
	*found = NULL;
	r = r ? r : ap_official_finish(w, o, &p, checks, found, log);
	ap_official_plan_free(&p);
	return r;
}
