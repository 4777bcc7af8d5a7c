#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>
#include <unistd.h>

#include "env/envs.h"
#include "check/official.h"
#include "check/testgen.h"
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

static int official_score(const struct ap_official_hit *h, const char *cls_name)
{
	int best = 0;
	if (h->generated)
		return h->score; /* scored by what generated it (ap_testgen_score) */
	for (size_t i = 0; i < h->nmatches; i++) {
		int s = how_score(h->matches[i].how);
		best = s > best ? s : best;
	}
	if (h->test && cls_name && strstr(h->test, cls_name))
		best += 2;
	if (h->uses_leaf)
		best += 1;
	return best;
}

static int by_score(const void *a, const void *b)
{
	const struct ap_official_hit *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	int c = strcmp(x->node, y->node);
	return c ? c : (x->order > y->order) - (x->order < y->order);
}

int ap_official_rank(struct ap_official_found *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++) {
		struct ap_official_hit *h = &f->hits[i];
		struct ap_buf node = { 0 };
		ap_nodeid_format(h->file, h->cls, h->test, &node);
		free(h->node);
		h->node = node.data ? node.data : strdup("");
		if (!h->node)
			return -ENOMEM;
		h->score = official_score(h, name);
		h->order = i;
	}
	if (f->n)
		qsort(f->hits, f->n, sizeof(*f->hits), by_score);
	return 0;
}

static void hit_free(struct ap_official_hit *h)
{
	for (size_t k = 0; k < h->nmatches; k++)
		free(h->matches[k].text);
	free(h->matches);
	free(h->file);
	free(h->cls);
	free(h->test);
	free(h->node);
	free(h->notrun);
	free(h->generic);
}

void ap_official_found_free(struct ap_official_found *f)
{
	for (size_t i = 0; i < f->n; i++)
		hit_free(&f->hits[i]);
	free(f->hits);
	memset(f, 0, sizeof(*f));
}

static json_t *matches_json(const struct ap_official_hit *h)
{
	json_t *out = json_array();
	for (size_t k = 0; out && k < h->nmatches; k++) {
		const struct ap_official_match *m = &h->matches[k];
		if (json_array_append_new(out, json_pack("{s:I, s:s, s:s}", "line",
							 (json_int_t)m->line, "how", m->how,
							 "text", m->text))) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

json_t *ap_official_found_json(const struct ap_official_found *f)
{
	json_t *out = json_array();
	for (size_t i = 0; out && i < f->n; i++) {
		const struct ap_official_hit *h = &f->hits[i];
		json_t *t = json_pack("{s:s, s:s?, s:s, s:I, s:o?, s:b, s:s?, s:i, s:b, s:s?, s:s?}",
				      "file", h->file, "class", h->cls, "test", h->test,
				      "line", (json_int_t)h->line, "matches", matches_json(h),
				      "uses_leaf", h->uses_leaf, "node", h->node, "score", h->score,
				      "generated", h->generated, "notrun", h->notrun,
				      "generic", h->generic);
		if (json_array_append_new(out, t)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

int ap_claim_exists(const char *claimed, const struct ap_official_node *nodes, size_t n)
{
	int exists = 0;
	for (size_t i = 0; !exists && i < n; i++) {
		struct ap_buf id = { 0 };
		ap_nodeid_format(nodes[i].file, nodes[i].cls, nodes[i].test, &id);
		exists = !strcmp(ap_buf_str(&id), claimed);
		ap_buf_free(&id);
	}
	return exists;
}

json_t *ap_claim_check(const char *claimed, const struct ap_official_node *nodes, size_t n,
		       const char *version)
{
	struct ap_buf same = { 0 }, reason = { 0 }, name = { 0 };
	int exists = ap_claim_exists(claimed, nodes, n);
	for (size_t i = 0; !exists && i < n; i++) {
		if (i)
			ap_buf_adds(&same, ", ");
		ap_nodeid_format(nodes[i].file, nodes[i].cls, nodes[i].test, &same);
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

/* The tests that node stands for, by what its file defines. */
static void expand_node(const struct ap_official_ref *node, const json_t *defined, json_t *out)
{
	const char *cls = node->cls, *test = node->test;
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
		json_array_append_new(out, json_pack("[s?,s]", cls, test));
}

json_t *ap_official_expand(const struct ap_official_ref *nodes, size_t n, const json_t *defined)
{
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		expand_node(&nodes[i], defined, out);
	return out;
}

/* The selected nodes as a request carries them: [[class, test]...]. */
static json_t *refs_json(const struct ap_official_group *g)
{
	json_t *out = json_array();
	for (size_t i = 0; i < g->n; i++)
		json_array_append_new(out, json_pack("[s?,s]", g->refs[i].cls, g->refs[i].test));
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

const char *ap_resolution_class(const struct ap_proto_resolution *res)
{
	return res->owner ? res->owner : res->canonical;
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

/* The tests of a name, as the index has them: nodes borrow from recs (the
 * records of their files, one a test of that name). */
struct claim_nodes {
	size_t n, nrecs;
	struct ap_official_node *v;
	struct ap_index_rec *recs;
};

static void claim_nodes_free(struct claim_nodes *c)
{
	for (size_t i = 0; c->recs && i < c->nrecs; i++)
		ap_index_rec_free(&c->recs[i]);
	free(c->recs);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* Moves the nodes of file to the front, each part in its order. */
static void nodes_of_file_first(struct claim_nodes *c, const char *file)
{
	for (size_t i = 0, front = 0; i < c->n; i++)
		if (!strcmp(c->v[i].file, file)) {
			struct ap_official_node x = c->v[i];
			memmove(c->v + front + 1, c->v + front, (i - front) * sizeof(*c->v));
			c->v[front++] = x;
		}
}

/* The tests of the index named n->test, those of n->file first, into c
 * (release it whatever is returned). */
static int index_nodes(struct ap_testindex *ix, const struct ap_nodeid *n, struct claim_nodes *c)
{
	struct ap_index_rec defs;
	int r = ap_testindex_defs(ix, n->test, &defs);
	size_t nd = defs.ndefs;
	memset(c, 0, sizeof(*c));
	c->v = calloc(nd ? nd : 1, sizeof(*c->v));
	c->recs = calloc(nd ? nd : 1, sizeof(*c->recs));
	c->nrecs = c->recs ? nd : 0;
	r = r ? r : c->v && c->recs ? 0 : -ENOMEM;
	for (size_t i = 0; !r && i < nd; i++) {
		const char *file = ap_testindex_file(ix, defs.defs[i].fid);
		long long ti = defs.defs[i].ti;
		const struct ap_index_rec *f = &c->recs[i];
		if (file)
			r = ap_testindex_file_rec(ix, file, &c->recs[i]);
		if (!r && file && ti >= 0 && (size_t)ti < f->ntests)
			c->v[c->n++] = (struct ap_official_node){ file, f->tests[ti].cls,
								   f->tests[ti].name };
	}
	nodes_of_file_first(c, n->file);
	ap_index_rec_free(&defs);
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

/* The generated test of found whose node id is claimed, or NULL. */
static const struct ap_official_hit *generated_node(const struct ap_official_found *found,
						    const char *claimed)
{
	for (size_t i = 0; i < found->n; i++) {
		const struct ap_official_hit *h = &found->hits[i];
		struct ap_buf id = { 0 };
		ap_nodeid_format(h->file, h->cls, h->test, &id);
		int same = h->generated && !strcmp(ap_buf_str(&id), claimed);
		ap_buf_free(&id);
		if (same)
			return h;
	}
	return NULL;
}

/* The claimed node id, checked against every test of that name. Sets *run
 * when the claim should run with the found tests: it exists, or its file is
 * missing (then the preflight names the file). */
static int official_claim(struct ap_testindex *ix, const struct ap_official_opts *o,
			  const struct ap_official_found *found, json_t *checks, int *run)
{
	struct ap_nodeid n;
	struct claim_nodes nodes;
	struct ap_buf base = { 0 };
	if (ap_nodeid_parse(o->claimed, &n)) {
		json_array_append_new(checks, ap_check_new("claimed", "claim", AP_WARN,
			"not a node id (want test/FILE.py::Class::test)"));
		return 0;
	}
	const struct ap_official_hit *gen = generated_node(found, o->claimed);
	if (gen) { /* a test generated for the device: the index has its template */
		struct ap_official_node g = { gen->file, gen->cls, gen->test };
		*run = 1;
		json_array_append_new(checks, ap_claim_check(o->claimed, &g, 1, o->version));
		return 0;
	}
	int r = index_nodes(ix, &n, &nodes);
	const char *slash = strrchr(o->tree, '/');
	ap_buf_add(&base, o->tree, slash ? (size_t)(slash - o->tree) : 0);
	if (!r) {
		*run = ap_claim_exists(o->claimed, nodes.v, nodes.n) ||
		       !is_file(ap_buf_str(&base), n.file);
		json_array_append_new(checks, ap_claim_check(o->claimed, nodes.v, nodes.n,
							     o->version));
	}
	claim_nodes_free(&nodes);
	ap_buf_free(&base);
	return r;
}

/* The environment's device, as the tests name it: the first of o->device
 * ("cpu" when none), into out. */
static const char *official_device(const struct ap_official_opts *o, struct ap_buf *out)
{
	const char *d = o->device && *o->device ? o->device : "cpu";
	ap_buf_add(out, d, strcspn(d, ", "));
	return ap_buf_str(out);
}

/* The environment a test file is imported with: on a device, only that
 * device's instantiations of device-generic tests; on a PrivateUse1
 * backend's, with the adapter (ap_official_adapter) applied first. */
static json_t *official_setenv(const struct ap_official_opts *o)
{
	struct ap_buf dev = { 0 };
	const char *d = official_device(o, &dev);
	json_t *env = json_object();
	if (strcmp(d, "cpu"))
		json_object_set_new(env, "PYTORCH_TESTING_DEVICE_ONLY_FOR", json_string(d));
	if (ap_testgen_is_privateuse1(d))
		json_object_set_new(env, AP_ADAPTER_ENV, json_string("privateuse1"));
	ap_buf_free(&dev);
	return env;
}

json_t *ap_official_adapter(const struct ap_official_opts *o)
{
	struct ap_buf dev = { 0 }, mod = { 0 };
	const char *d = official_device(o, &dev);
	json_t *out = NULL;
	if (ap_testgen_is_privateuse1(d)) {
		ap_buf_addf(&mod, "torch.%s", d);
		out = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:s}", "name",
				"privateuse1-test-base", "module", ap_buf_str(&mod), "why",
				"upstream's instantiate_device_type_tests adds PrivateUse1TestBase only "
				"when the backend's device module has is_available() returning True, "
				"and its setUpClass calls current_device()",
				"where", "the official test runner only, before the test file is "
				"imported; each function only where the module lacks it (the runner's "
				"log says which it added)",
				"adds", "is_available", "True (the device is not asked: asking "
				"would start it in the runner, where the tests forked from it could "
				"not use it)", "device_count", "torch.accelerator.device_count(), asked once in a "
				"child of the runner (so the device starts there, not in the runner)",
				"current_device", "0 (not asked, as is_available)",
				"setenv", AP_ADAPTER_ENV "=privateuse1");
	}
	ap_buf_free(&dev);
	ap_buf_free(&mod);
	return out;
}

/* Asks the worker what the group's file needs into *pre. When the check
 * runs tests, a runner then imports the file and is kept for the run: with
 * wait, *pre holds the import's answer; without, the worker answers at once
 * and the import goes on meanwhile (see import_answer). */
static int official_preflight(struct ap_worker *w, struct ap_testindex *ix,
			      const struct ap_official_opts *o, const struct ap_official_group *g,
			      int wait, json_t **pre)
{
	struct ap_index_rec f;
	/* The file's imports come from the index. Only a run imports the file,
	 * once: the preflight's runner keeps it imported (for the tests it
	 * defines) and runs the tests; tests find does not import it. */
	int r = ap_testindex_file_rec(ix, g->file, &f);
	json_t *names = r ? NULL : refs_json(g);
	struct ap_proto_preflight p = { o->root, g->file, o->run, o->run, wait, AP_IMPORT_TRY_S,
					 r ? NULL : official_setenv(o), names, f.imports };
	r = r ? r : call(w, ap_proto_tests_preflight(&p), pre);
	json_decref(names);
	ap_index_rec_free(&f);
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

/* A NOTRUN check of each selected test of g, for why; with an empty output
 * when output. */
static void official_notrun(const struct ap_official_group *g, const char *why, int output,
			    json_t *checks)
{
	for (size_t i = 0; i < g->n; i++)
		json_array_append_new(checks, official_check_new(
			g->file, g->refs[i].cls, g->refs[i].test, AP_NOTRUN, why, json_integer(0),
			output ? json_string("") : NULL));
}

/* The results of a test run into checks, and its log. */
/* The generated test of found that is file's cls.test, or NULL. */
static const struct ap_official_hit *generated_hit(const struct ap_official_found *found,
						   const char *file, const char *cls,
						   const char *test)
{
	for (size_t i = 0; found && cls && test && i < found->n; i++) {
		const struct ap_official_hit *h = &found->hits[i];
		if (h->generic && !strcmp(h->file, file) && !strcmp(h->cls, cls) &&
		    !strcmp(h->test, test))
			return h;
	}
	return NULL;
}

/* c with the generic id of its test, when found generated it. */
static json_t *with_generic(json_t *c, const struct ap_official_found *found, const char *file,
			    const char *cls, const char *test)
{
	const struct ap_official_hit *h = generated_hit(found, file, cls, test);
	if (c && h)
		json_object_set_new(c, "generic", json_string(h->generic));
	return c;
}

static void official_ran(const char *file, const struct ap_proto_tests_ran *ran,
			 const struct ap_official_found *found, json_t *checks, struct ap_buf *log)
{
	ap_buf_addf(log, "=== %s: import %s (%lld ms)\n%s", file, ran->import.ok ? "ok" : "FAILED",
		    ran->import.ms, ran->log);
	for (size_t i = 0; i < ran->ntests; i++) {
		struct ap_proto_test t;
		struct ap_buf node = { 0 };
		ap_proto_tests_ran_test(ran, i, &t);
		json_t *c = with_generic(ap_official_check(file, &t), found, file, t.cls, t.test);
		ap_nodeid_format(file, t.cls, t.test, &node);
		ap_buf_addf(log, "=== begin %s\n%s=== end %s: %s\n", ap_buf_str(&node), t.output,
			    ap_buf_str(&node), ap_status_name(ap_check_status(c)));
		json_array_append_new(checks, c);
		ap_buf_free(&node);
	}
}

/* Runs the selected tests of one file (g) after its preflight pre (NULL:
 * preflights it first). */
static int official_file(struct ap_worker *w, struct ap_testindex *ix,
			    const struct ap_official_opts *o, const struct ap_official_group *g,
			    const struct ap_official_found *found, json_t *pre, json_t *checks,
			    struct ap_buf *log)
{
	json_t *ran = NULL, *ans = NULL;
	struct ap_proto_preflighted p = { 0 };
	int r = pre ? 0 : official_preflight(w, ix, o, g, 1, &pre);
	if (!r)
		ap_proto_preflight_read(pre, &p);
	if (!r && p.runner)
		r = import_answer(w, &p, &ans);
	char *why = r ? NULL : ap_preflight_reason(&p);
	if (!r && (why || !o->run)) {
		official_notrun(g, why ? why : "ready: the modules it imports are present "
				"(tests find neither imports nor runs it)", 1, checks);
	} else if (!r) {
		json_t *run = ap_official_expand(g->refs, g->n, p.import.defined);
		int deadline = ap_official_deadline_s(json_array_size(run), o->timeout_s);
		/* The worker bounds each test and the run; the answer comes once
		 * all have run, so wait for as long as they may take. */
		struct ap_proto_tests_run t = { o->root, g->file, run, NULL, o->timeout_s, deadline,
						official_setenv(o), p.runner };
		json_t *req = ap_proto_tests_run(&t);
		r = req ? ap_worker_call_within(w, req, &ran, (deadline + AP_ANSWER_MARGIN_S) * 1000)
			: -ENOMEM;
		json_decref(req);
	}
	if (ran) {
		struct ap_proto_tests_ran tr;
		ap_proto_tests_run_read(ran, &tr);
		official_ran(g->file, &tr, found, checks, log);
		if (tr.import.present)
			p.import = tr.import;
		free(why);
		why = tr.import.ok ? NULL : ap_preflight_reason(&p);
		if (why)
			official_notrun(g, why, 0, checks);
	}
	free(why);
	json_decref(pre);
	json_decref(ans);
	json_decref(ran);
	return r;
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Adds cls.test of file to the selection of the plan (once). */
static int select_add(struct ap_official_plan *p, const char *file, const char *cls,
		      const char *test)
{
	struct ap_official_group *g = NULL;
	for (size_t i = 0; !g && i < p->nselected; i++)
		if (!strcmp(p->selected[i].file, file))
			g = &p->selected[i];
	if (!g) {
		/* AP_OFFICIAL_MAX tests and the claim: no more files than that */
		g = &p->selected[p->nselected];
		if (!(g->file = strdup(file)))
			return -ENOMEM;
		p->nselected++;
	}
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->refs[i].test, test) && same_str(g->refs[i].cls, cls))
			return 0;
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 4;
		struct ap_official_ref *v = realloc(g->refs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		g->refs = v;
		g->cap = cap;
	}
	struct ap_official_ref *ref = &g->refs[g->n];
	ref->cls = cls ? strdup(cls) : NULL;
	ref->test = strdup(test);
	if (!ref->test || (cls && !ref->cls)) {
		free(ref->cls);
		free(ref->test);
		return -ENOMEM;
	}
	g->n++;
	return 0;
}

/* Groups the selected tests by file, in rank order, the claimed node (when
 * it should run) first. */
static int official_select(struct ap_official_plan *p, const struct ap_nodeid *claim)
{
	size_t taken = 0;
	int r = 0;
	p->selected = calloc(AP_OFFICIAL_MAX + 1, sizeof(*p->selected));
	if (!p->selected)
		return -ENOMEM;
	if (claim)
		r = select_add(p, claim->file, *claim->cls ? claim->cls : NULL, claim->test);
	for (size_t i = 0, left_out = 0; !r && i < p->found.n; i++) {
		const struct ap_official_hit *h = &p->found.hits[i];
		if (taken == AP_OFFICIAL_MAX || h->score < AP_SCORE_RUN)
			break;
		if (h->notrun) { /* said, never run as if it could pass */
			if (left_out++ < AP_OFFICIAL_MAX)
				json_array_append_new(p->checks, with_generic(official_check_new(
					h->file, h->cls, h->test, AP_NOTRUN, h->notrun,
					json_integer(0), NULL), &p->found, h->file, h->cls, h->test));
			continue;
		}
		r = select_add(p, h->file, h->cls, h->test);
		taken++;
	}
	return r;
}

static void select_free(struct ap_official_plan *p)
{
	for (size_t i = 0; i < p->nselected; i++) {
		struct ap_official_group *g = &p->selected[i];
		for (size_t k = 0; k < g->n; k++) {
			free(g->refs[k].cls);
			free(g->refs[k].test);
		}
		free(g->refs);
		free(g->file);
	}
	free(p->selected);
	p->selected = NULL;
	p->nselected = 0;
}

/* ---- finding: the mentions of a class in the usage index ---- */

/* An alias a file's imports make: local stands for full. */
struct find_alias {
	const char *local, *full;
};

/* A file of the index, read on first use: its record, the names its
 * imports bind to the class or to a module on its path, and the hit of each
 * of its tests (an index into the hits plus one; 0: none). */
struct find_file {
	int read;
	const char *name;
	struct ap_index_rec rec;
	size_t naliases;
	struct find_alias *aliases;
	size_t *hit_of;
};

/* A line of a hit, as found: how ("qualified", "alias" or "?": the same
 * last name, an alias when it is the same object), its text (borrowed from
 * the mentions' record), its name among the pending ones (for "?") and its
 * place among the hit's lines. */
struct find_line {
	long long line;
	const char *how, *text;
	size_t pending, seq;
};

struct find_hit {
	struct ap_official_hit h;
	long long fid, ti;
	size_t n, cap;
	struct find_line *lines;
};

/* A name whose sameness with the class the worker is asked. */
struct find_pending {
	char *name;
	int same;
};

struct finder {
	struct ap_testindex *ix;
	const char *cls_path;
	size_t nfiles, nhits, caphits, npending, cappending;
	struct find_file *files;    /* by file id, up to the highest seen */
	struct find_hit *hits;
	struct find_pending *pending;
};

/* Grows *v (of *cap elements of size) to hold n. 0 or -ENOMEM. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 8;
	while (c < n)
		c *= 2;
	void *p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * size, 0, (c - *cap) * size);
	*v = p;
	*cap = c;
	return 0;
}

/* The names an import of file f binds to the class or to a module on its
 * path (the last binding of a name wins), and the class's first name as
 * itself. */
static int file_aliases(struct find_file *f, const char *cls_path)
{
	const struct ap_index_rec *rec = &f->rec;
	f->aliases = calloc(rec->nbindings + 1, sizeof(*f->aliases));
	if (!f->aliases)
		return -ENOMEM;
	for (size_t i = rec->nbindings; i-- > 0;) {
		const struct ap_index_binding *b = &rec->bindings[i];
		size_t fl = strlen(b->full), k;
		int under = !strncmp(cls_path, b->full, fl) && cls_path[fl] == '.';
		if (!under && !(!strcmp(b->kind, "from") && !strcmp(cls_path, b->full)))
			continue;
		for (k = 0; k < f->naliases && strcmp(f->aliases[k].local, b->local); k++)
			;
		if (k == f->naliases)
			f->aliases[f->naliases++] = (struct find_alias){ b->local, b->full };
	}
	return 0;
}

/* What the first name head (hl bytes) stands for in file f, or NULL. */
static const char *alias_of(const struct find_file *f, const char *cls_path, const char *head,
			    size_t hl, int *same_head)
{
	*same_head = 0;
	for (size_t k = 0; k < f->naliases; k++)
		if (strlen(f->aliases[k].local) == hl && !memcmp(f->aliases[k].local, head, hl))
			return (*same_head = strlen(f->aliases[k].full) == hl &&
					     !memcmp(f->aliases[k].full, head, hl)),
			       f->aliases[k].full;
	if (strcspn(cls_path, ".") == hl && !memcmp(cls_path, head, hl)) {
		*same_head = 1;
		return cls_path;
	}
	return NULL;
}

/* How the dotted name d, in file f, mentions cls_path: "qualified",
 * "alias", "?" (the same last name: an alias when it is the same object),
 * or NULL. exp gets d with its first name's alias applied. */
static const char *official_how(const char *d, const struct find_file *f, const char *cls_path,
				struct ap_buf *exp)
{
	size_t hl = strcspn(d, ".");
	int same_head;
	const char *full = alias_of(f, cls_path, d, hl, &same_head);
	if (full && same_head)
		ap_buf_addf(exp, "%.*s%s", (int)hl, full, d + hl);
	else
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

/* File fid, read on first use; NULL with *r set when the index is damaged
 * or memory is short. */
static struct find_file *find_file(struct finder *fd, long long fid, int *r)
{
	const char *name = ap_testindex_file(fd->ix, fid);
	if (!name) {
		*r = -EBADMSG;
		return NULL;
	}
	if ((size_t)fid >= fd->nfiles &&
	    (*r = grow((void **)&fd->files, &fd->nfiles, (size_t)fid + 1, sizeof(*fd->files))))
		return NULL;
	struct find_file *f = &fd->files[fid];
	if (f->read)
		return f;
	f->read = 1;
	f->name = name;
	*r = ap_testindex_file_rec(fd->ix, name, &f->rec);
	if (!*r && !f->rec.found)
		*r = -EBADMSG; /* a file of "F" without its record */
	*r = *r ? *r : file_aliases(f, fd->cls_path);
	if (!*r && !(f->hit_of = calloc(f->rec.ntests + 1, sizeof(*f->hit_of))))
		*r = -ENOMEM;
	return *r ? NULL : f;
}

/* The hit of test ti of file f (id fid), made on first use; NULL when the
 * file has no such test, or with *r set when memory is short. */
static struct find_hit *find_hit(struct finder *fd, struct find_file *f, long long fid,
				 long long ti, int *r)
{
	if (ti < 0 || (size_t)ti >= f->rec.ntests)
		return NULL;
	if (f->hit_of[ti])
		return &fd->hits[f->hit_of[ti] - 1];
	if ((*r = grow((void **)&fd->hits, &fd->caphits, fd->nhits + 1, sizeof(*fd->hits))))
		return NULL;
	const struct ap_index_test *t = &f->rec.tests[ti];
	struct find_hit *h = &fd->hits[fd->nhits];
	h->fid = fid;
	h->ti = ti;
	h->h.file = strdup(f->name);
	h->h.cls = t->cls ? strdup(t->cls) : NULL;
	h->h.test = strdup(t->name);
	h->h.line = t->line;
	fd->nhits++; /* freed with the others from here on */
	if (!h->h.file || !h->h.test || (t->cls && !h->h.cls)) {
		*r = -ENOMEM;
		return NULL;
	}
	f->hit_of[ti] = fd->nhits;
	return h;
}

/* The place of name among the pending names, added when new. */
static int pending_add(struct finder *fd, const char *name, size_t *at)
{
	for (*at = 0; *at < fd->npending; ++*at)
		if (!strcmp(fd->pending[*at].name, name))
			return 0;
	int r = grow((void **)&fd->pending, &fd->cappending, fd->npending + 1,
		     sizeof(*fd->pending));
	if (!r && !(fd->pending[*at].name = strdup(name)))
		r = -ENOMEM;
	fd->npending += !r;
	return r;
}

/* Adds mention u of file f, named how (exp: as its alias expands), to its
 * test's hit. */
static int add_mention(struct finder *fd, struct find_file *f, const struct ap_index_use *u,
		       const char *how, const char *exp)
{
	int r = 0;
	struct find_hit *h = find_hit(fd, f, u->fid, u->ti, &r);
	if (!h)
		return r;
	if ((r = grow((void **)&h->lines, &h->cap, h->n + 1, sizeof(*h->lines))))
		return r;
	struct find_line *l = &h->lines[h->n];
	*l = (struct find_line){ u->line, how, u->text, 0, h->n };
	if (!strcmp(how, "?") && (r = pending_add(fd, exp, &l->pending)))
		return r;
	h->n++;
	return 0;
}

/* Asks the worker which pending names are the class itself. */
static int find_same(struct ap_worker *w, struct finder *fd)
{
	json_t *names = json_array(), *ans = NULL;
	for (size_t i = 0; i < fd->npending; i++)
		json_array_append_new(names, json_string(fd->pending[i].name));
	int r = !fd->npending || !w ? 0 : call(w, ap_proto_same_object(fd->cls_path, names), &ans);
	for (size_t i = 0; i < fd->npending; i++)
		fd->pending[i].same = ap_proto_same_object_is(ans, i);
	json_decref(names);
	json_decref(ans);
	return r;
}

static int by_line(const void *a, const void *b)
{
	const struct find_line *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* A hit's lines settled (aliases resolved) into its matches: one per line
 * and how, the first eight by line. */
static int find_settle(struct finder *fd, struct find_hit *h)
{
	enum { MAX_MATCHES = 8 };
	if (h->n)
		qsort(h->lines, h->n, sizeof(*h->lines), by_line);
	h->h.matches = calloc(MAX_MATCHES, sizeof(*h->h.matches));
	if (!h->h.matches)
		return -ENOMEM;
	for (size_t i = 0; i < h->n && h->h.nmatches < MAX_MATCHES; i++) {
		const struct find_line *l = &h->lines[i];
		const char *how = l->how;
		if (!strcmp(how, "?"))
			how = fd->pending[l->pending].same ? "alias" : "name";
		size_t k;
		for (k = 0; k < h->h.nmatches; k++)
			if (h->h.matches[k].line == l->line && !strcmp(h->h.matches[k].how, how))
				break;
		if (k < h->h.nmatches)
			continue;
		struct ap_official_match *m = &h->h.matches[h->h.nmatches];
		if (!(m->text = strdup(l->text)))
			return -ENOMEM;
		m->line = l->line;
		m->how = how;
		h->h.nmatches++;
	}
	return 0;
}

/* The mentions of the class among the "u" entries of its last name. */
static int find_mentions(struct ap_worker *w, struct finder *fd)
{
	const char *cls_path = fd->cls_path;
	const char *name = strrchr(cls_path, '.') ? strrchr(cls_path, '.') + 1 : cls_path;
	struct ap_index_rec uses;
	int r = ap_testindex_uses(fd->ix, name, &uses);
	for (size_t i = 0; !r && i < uses.nuses; i++) {
		const struct ap_index_use *u = &uses.uses[i];
		struct find_file *f = *u->dotted ? find_file(fd, u->fid, &r) : NULL;
		struct ap_buf exp = { 0 };
		const char *how = f ? official_how(u->dotted, f, cls_path, &exp) : NULL;
		if (how)
			r = add_mention(fd, f, u, how, ap_buf_str(&exp));
		ap_buf_free(&exp);
	}
	r = r ? r : find_same(w, fd);
	for (size_t i = 0; !r && i < fd->nhits; i++)
		r = find_settle(fd, &fd->hits[i]);
	ap_index_rec_free(&uses);
	return r;
}

/* Marks the hits whose test uses attribute leaf. */
static int find_leaf(struct finder *fd, const char *leaf)
{
	struct ap_index_rec uses;
	int r = ap_testindex_uses(fd->ix, leaf, &uses);
	for (size_t i = 0; !r && i < uses.nuses; i++) {
		const struct ap_index_use *u = &uses.uses[i];
		const struct find_file *f = u->fid >= 0 && (size_t)u->fid < fd->nfiles ?
					    &fd->files[u->fid] : NULL;
		size_t at = f && f->hit_of && u->ti >= 0 && (size_t)u->ti < f->rec.ntests ?
			    f->hit_of[u->ti] : 0;
		if (at && strchr(u->dotted, '.'))
			fd->hits[at - 1].h.uses_leaf = 1;
	}
	ap_index_rec_free(&uses);
	return r;
}

static int by_test(const void *a, const void *b)
{
	const struct find_hit *x = a, *y = b;
	if (x->fid != y->fid)
		return x->fid < y->fid ? -1 : 1;
	return (x->ti > y->ti) - (x->ti < y->ti);
}

static void finder_free(struct finder *fd)
{
	for (size_t i = 0; i < fd->nfiles; i++) {
		ap_index_rec_free(&fd->files[i].rec);
		free(fd->files[i].aliases);
		free(fd->files[i].hit_of);
	}
	for (size_t i = 0; i < fd->nhits; i++)
		free(fd->hits[i].lines);
	for (size_t i = 0; i < fd->npending; i++)
		free(fd->pending[i].name);
	free(fd->files);
	free(fd->hits);
	free(fd->pending);
}

int ap_official_find(struct ap_worker *w, struct ap_testindex *ix, const char *cls_path,
		     const char *leaf, struct ap_official_found *out)
{
	struct finder fd = { .ix = ix, .cls_path = cls_path };
	int r = find_mentions(w, &fd);
	r = r || !leaf ? r : find_leaf(&fd, leaf);
	memset(out, 0, sizeof(*out));
	if (fd.nhits)
		qsort(fd.hits, fd.nhits, sizeof(*fd.hits), by_test);
	out->hits = calloc(fd.nhits ? fd.nhits : 1, sizeof(*out->hits));
	r = r ? r : out->hits ? 0 : -ENOMEM;
	for (size_t i = 0; i < fd.nhits; i++) {
		fd.hits[i].h.order = i;
		if (out->hits)
			out->hits[out->n++] = fd.hits[i].h;
		else
			hit_free(&fd.hits[i].h);
	}
	finder_free(&fd);
	if (r)
		ap_official_found_free(out);
	return r;
}

/* ---- generated tests: the index's templates, evaluated by the worker (see
 * check/testgen.h for the policy) ---- */

/* The templates of the tree as the worker is asked about them, and what
 * each stands for here. */
struct gen_tpl {
	const char *file, *cls, *test, *source;
	long long line, def_line;
	const json_t *devices;
};

/* A file of the templates: its id and record. */
struct gen_file {
	long long fid;
	struct ap_index_rec rec;
};

struct gen_req {
	json_t *templates, *facts;  /* the request's */
	size_t n, nfiles;
	struct gen_tpl *v;
	struct gen_file *files;     /* in the order met (the index's "D" is by file) */
	struct ap_index_rec gens;
};

static void gen_req_free(struct gen_req *g)
{
	for (size_t i = 0; i < g->nfiles; i++)
		ap_index_rec_free(&g->files[i].rec);
	free(g->files);
	free(g->v);
	ap_index_rec_free(&g->gens);
	json_decref(g->templates);
	json_decref(g->facts);
}

/* The facts of file fid for the worker: its decorators' assigns and
 * instantiations, and its bindings. */
static int file_facts(struct ap_testindex *ix, long long fid, const struct ap_index_rec *f,
		      json_t **out)
{
	struct ap_index_rec g;
	int r = ap_testindex_gen_facts(ix, fid, &g);
	*out = r ? NULL : g.found ? json_deep_copy(g.doc) : json_object();
	if (*out)
		json_object_set(*out, "bindings", json_object_get(f->doc, "bindings"));
	ap_index_rec_free(&g);
	return r ? r : *out ? 0 : -ENOMEM;
}

/* The record of file fid (named file), read when it is not the last one. */
static int gen_file(struct ap_testindex *ix, struct gen_req *g, long long fid, const char *file,
		    const struct ap_index_rec **out)
{
	json_t *facts = NULL;
	if (g->nfiles && g->files[g->nfiles - 1].fid == fid) {
		*out = &g->files[g->nfiles - 1].rec;
		return 0;
	}
	struct gen_file *f = &g->files[g->nfiles++];
	f->fid = fid;
	int r = ap_testindex_file_rec(ix, file, &f->rec);
	r = r ? r : !f->rec.found ? -EBADMSG : file_facts(ix, fid, &f->rec, &facts);
	if (!r && json_object_set_new(g->facts, file, facts))
		r = -ENOMEM;
	*out = &f->rec;
	return r;
}

/* Adds template i of the index (gens.gens[i]) to the request. */
static int gen_add(struct ap_testindex *ix, struct gen_req *g, size_t i)
{
	const struct ap_index_gen *x = &g->gens.gens[i];
	const struct ap_index_rec *f;
	const char *file = ap_testindex_file(ix, x->fid);
	int r = file ? gen_file(ix, g, x->fid, file, &f) : -EBADMSG;
	if (r)
		return r;
	if (f->error || x->ti < 0 || (size_t)x->ti >= f->ntests || !f->tests[x->ti].cls ||
	    !x->source)
		return 0; /* module-level, or too long to evaluate: no device class */
	const struct ap_index_test *t = &f->tests[x->ti];
	g->v[g->n++] = (struct gen_tpl){ file, t->cls, t->name, x->source, x->line, t->line,
					 x->devices };
	return json_array_append_new(g->templates, json_pack("[s,s,s,s]", file, t->cls, t->name,
							     x->source)) ? -ENOMEM : 0;
}

/* The request for every template of the index, into g (release it
 * whatever is returned). */
static int gen_request(struct ap_testindex *ix, struct gen_req *g)
{
	memset(g, 0, sizeof(*g));
	g->templates = json_array();
	g->facts = json_object();
	int r = g->templates && g->facts ? ap_testindex_gens(ix, &g->gens) : -ENOMEM;
	size_t n = g->gens.ngens;
	if (!r && n) {
		g->v = calloc(n, sizeof(*g->v));
		g->files = calloc(n, sizeof(*g->files));
		r = g->v && g->files ? 0 : -ENOMEM;
	}
	for (size_t i = 0; !r && i < n; i++)
		r = gen_add(ix, g, i);
	return r;
}

/* The decorator's source on one line, after "@". */
static char *decorator_line(const char *source)
{
	struct ap_buf out = { 0 };
	int space = 0;
	ap_buf_adds(&out, "@");
	for (const char *p = source; *p; p++) {
		int ws = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
		if (ws && !space && out.len > 1)
			ap_buf_add(&out, " ", 1);
		else if (!ws)
			ap_buf_add(&out, p, 1);
		space = ws;
	}
	return out.data;
}

/* found grown by one hit, zeroed; NULL when memory is short. */
static struct ap_official_hit *found_add(struct ap_official_found *found)
{
	struct ap_official_hit *v = realloc(found->hits, (found->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	found->hits = v;
	memset(&v[found->n], 0, sizeof(*v));
	return &v[found->n++];
}

/* The id of generated test test (of template t) on no device: the
 * template's class, and test without its last "_DEVICE" (a new string, or
 * NULL when memory is short). */
static char *generic_id(const struct gen_tpl *t, const char *test, const char *device)
{
	struct ap_buf out = { 0 }, dev = { 0 };
	ap_buf_addf(&dev, "_%s", device);
	const char *at = NULL;
	for (const char *p = strstr(test, ap_buf_str(&dev)); p; p = strstr(p + 1, ap_buf_str(&dev)))
		if (p[dev.len] == '_' || !p[dev.len])
			at = p;
	if (at)
		ap_buf_addf(&out, "%s::%s::%.*s%s", t->file, t->cls, (int)(at - test), test,
			    at + dev.len);
	else
		ap_buf_addf(&out, "%s::%s::%s", t->file, t->cls, test);
	ap_buf_free(&dev);
	return out.data;
}

/* A hit for the generated test [class, test, dtype] of template t. */
static int gen_hit(const struct gen_tpl *t, const json_t *name, const char *device,
		   const char *not_for, struct ap_official_found *found)
{
	const char *cls = json_string_value(json_array_get(name, 0));
	const char *test = json_string_value(json_array_get(name, 1));
	const char *dtype = json_string_value(json_array_get(name, 2));
	if (!cls || !test)
		return -EBADMSG;
	struct ap_official_hit *h = found_add(found);
	if (!h)
		return -ENOMEM;
	h->file = strdup(t->file);
	h->cls = strdup(cls);
	h->test = strdup(test);
	h->line = t->def_line;
	h->generated = 1;
	h->generic = generic_id(t, test, device);
	h->score = ap_testgen_score(t->file, t->cls, dtype);
	h->matches = calloc(1, sizeof(*h->matches));
	if (not_for) {
		struct ap_buf why = { 0 };
		ap_buf_addf(&why, "no-device: not instantiated for %s: %s", device, not_for);
		h->notrun = why.data;
	} else
		h->notrun = ap_testgen_device_skip(t->devices, device);
	if (h->notrun) /* listed after the ones that run here, above any mention */
		h->score -= AP_SCORE_GENERATED / 2;
	if (!h->file || !h->cls || !h->test || !h->matches || !h->generic)
		return -ENOMEM;
	h->matches[0] = (struct ap_official_match){ t->line, "generated",
						    decorator_line(t->source) };
	h->nmatches = h->matches[0].text ? 1 : 0;
	return h->nmatches ? 0 : -ENOMEM;
}

/* The hits of the worker's answer to g; the templates it could not
 * evaluate are counted into why, with the first one's error. */
static int gen_hits(const struct gen_req *g, const json_t *reply, const char *device,
		    struct ap_official_found *found, struct ap_buf *why)
{
	struct ap_proto_generated gr;
	ap_proto_tests_generated_read(reply, &gr);
	int r = 0;
	size_t failed = 0;
	struct ap_buf first = { 0 };
	for (size_t i = 0; !r && i < g->n; i++) {
		struct ap_proto_generated_template t;
		const json_t *name;
		size_t k;
		ap_proto_generated_template(&gr, i, &t);
		if (t.error && !failed++)
			ap_buf_addf(&first, "%s::%s::%s: %s", g->v[i].file, g->v[i].cls, g->v[i].test,
				    t.error);
		json_array_foreach(t.names, k, name) {
			r = gen_hit(&g->v[i], name, device, t.not_for_device, found);
			if (r)
				break;
		}
	}
	if (failed)
		ap_buf_addf(why, "%zu of %zu test templates could not be evaluated here (the "
			    "first: %s)", failed, g->n, ap_buf_str(&first));
	ap_buf_free(&first);
	return r;
}

/* Appends to found the tests that the tree's decorated templates generate
 * for target on device, each a hit with generated set, its score, and
 * notrun where a device decorator or its instantiation leaves the device
 * out; sets *onnxruntime to whether onnxruntime imports there. 0 (also when
 * the index has no template, or the worker could not import OpInfo: then
 * nothing is added and warn says so; why counts the templates that could
 * not be evaluated), -EBADMSG, -ENOMEM or a worker error. */
static int generated_find(struct ap_worker *w, struct ap_testindex *ix, const char *target,
			  const char *device, struct ap_official_found *found, int *onnxruntime,
			  struct ap_buf *warn, struct ap_buf *why)
{
	struct gen_req g = { 0 };
	json_t *reply = NULL, *modules = json_pack("[s]", "onnxruntime");
	device = device ? device : "cpu";
	*onnxruntime = 0;
	int r = modules ? gen_request(ix, &g) : -ENOMEM;
	if (!r && g.n) {
		json_t *req = ap_proto_tests_generated(target, device, g.templates, g.facts, modules);
		r = req ? ap_worker_call(w, req, &reply) : -ENOMEM;
		json_decref(req);
	}
	if (!r && reply) {
		struct ap_proto_generated gr;
		ap_proto_tests_generated_read(reply, &gr);
		*onnxruntime = ap_proto_generated_present(&gr, "onnxruntime");
		if (gr.error)
			ap_buf_addf(warn, "no tests generated from OpInfo (it does not import "
				    "here): %s", gr.error);
		r = gen_hits(&g, reply, device, found, why);
	}
	json_decref(reply);
	json_decref(modules);
	gen_req_free(&g);
	return r;
}

/* Adds the tests generated for the target (check/testgen.h), and says why
 * of each test found that cannot run in this environment. */
static int official_generated(struct ap_worker *w, struct ap_testindex *ix,
			      const struct ap_proto_resolution *res,
			      const struct ap_official_opts *o, struct ap_official_plan *p)
{
	struct ap_buf dev = { 0 }, why = { 0 }, warn = { 0 };
	const char *device = official_device(o, &dev);
	int onnx = 0;
	int r = res->target ? generated_find(w, ix, res->target, device, &p->found, &onnx, &warn,
					     &why) : 0;
	for (size_t i = 0; !r && i < p->found.n; i++) {
		struct ap_official_hit *h = &p->found.hits[i];
		if (!h->notrun)
			h->notrun = ap_testgen_file_skip(h->file, device, onnx);
	}
	if (why.len)
		ap_buf_addf(&p->log, "=== %s\n", ap_buf_str(&why));
	/* official.log only: where OpInfo does not import (bookworm lacks
	 * expecttest) every check would say so, operator or not. */
	if (warn.len)
		ap_buf_addf(&p->log, "=== %s\n", ap_buf_str(&warn));
	ap_buf_free(&warn);
	ap_buf_free(&dev);
	ap_buf_free(&why);
	return r;
}

/* The claim, the tests found and the selection, from the index. */
static int official_lookup(struct ap_worker *w, struct ap_testindex *ix, const json_t *resj,
			   const struct ap_official_opts *o, struct ap_official_plan *p)
{
	struct ap_proto_resolution res;
	ap_proto_resolution_read(resj, &res);
	const char *cls = ap_resolution_class(&res);
	const char *dot = res.owner && res.target ? strrchr(res.target, '.') : NULL;
	const char *leaf = dot ? dot + 1 : NULL;
	const char *short_name = cls && strrchr(cls, '.') ? strrchr(cls, '.') + 1 : cls;
	json_t *mine = json_array();
	struct ap_nodeid claim;
	int run_claim = 0;
	int r = cls ? ap_official_find(w, ix, cls, leaf, &p->found) : 0;
	r = r ? r : official_generated(w, ix, &res, o, p);
	/* after the generated tests are known: a claim may name one of them */
	r = r ? r : o->claimed ? official_claim(ix, o, &p->found, mine, &run_claim) : 0;
	if (run_claim && ap_nodeid_parse(o->claimed, &claim))
		run_claim = 0;
	r = r ? r : ap_official_rank(&p->found, short_name);
	r = r ? r : official_select(p, run_claim ? &claim : NULL);
	if (!r)
		json_array_extend(p->checks, mine);
	json_decref(mine);
	return r;
}

/* What a lookup left in p, for another. */
static void lookup_clear(struct ap_official_plan *p)
{
	json_array_clear(p->checks);
	ap_official_found_free(&p->found);
	select_free(p);
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
	r = r ? r : official_lookup(w, &p->ix, res, o, p);
	if (r == -EBADMSG) { /* a damaged line deep in the index: build it again */
		ap_testindex_close(&p->ix);
		lookup_clear(p);
		r = ap_testindex_load(w, o->root, o->tree, 1, &p->ix, &warn, &w->detail);
		r = r ? r : official_lookup(w, &p->ix, res, o, p);
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
		    p->found.n, (long long)((t1.tv_sec - t0.tv_sec) * 1000 +
					    (t1.tv_nsec - t0.tv_nsec) / 1000000));
	/* The first file's runner starts importing it now, while the caller
	 * does other work; the others are imported in turn by finish. */
	if (o->run && p->nselected) {
		p->started = 1;
		r = official_preflight(w, &p->ix, o, &p->selected[0], 0, &p->pre);
	}
	return r;
}

int ap_official_finish(struct ap_worker *w, const struct ap_official_opts *o,
		       struct ap_official_plan *p, json_t *checks, json_t **found,
		       struct ap_buf *log)
{
	int r = 0;
	json_array_extend(checks, p->checks);
	ap_buf_add(log, p->log.data ? p->log.data : "", p->log.len);
	*found = ap_official_found_json(&p->found);
	if (!p->nselected)
		json_array_append_new(checks, ap_check_new("official", "official", AP_NOTRUN,
			"no-test: no upstream test uses this target"));
	for (size_t i = 0; i < p->nselected; i++) {
		int mine = i == 0 && p->started;
		if (!r)
			r = official_file(w, &p->ix, o, &p->selected[i], &p->found, mine ? p->pre : NULL,
					  checks,
					  log);
		if (mine)
			p->pre = NULL; /* official_file took it */
	}
	return *found ? r : r ? r : -ENOMEM;
}

void ap_official_plan_free(struct ap_official_plan *p)
{
	ap_testindex_close(&p->ix); /* a zeroed one (never loaded) too */
	json_decref(p->checks);
	ap_official_found_free(&p->found);
	select_free(p);
	json_decref(p->pre);
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
