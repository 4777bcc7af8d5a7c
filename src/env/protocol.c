#include <string.h>

#include "base/err.h"
#include "env/protocol.h"

#define FIELDS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NONE ((const char *const[]){ NULL })

struct op_info {
	const char *name;
	int dispatched;             /* in the worker's OPS table */
	const char *const *fields;  /* always carried, besides op and the limits */
	const char *const *limits;  /* seconds, always carried */
};

static const struct op_info ops[AP_OP_COUNT] = {
	[AP_OP_FINGERPRINT] = { "fingerprint", 1, FIELDS("backends", "plugins"),
				FIELDS("device_timeout_s") },
	[AP_OP_RESOLVE] = { "resolve", 1, FIELDS("target", "plugins"), NONE },
	[AP_OP_PROBE] = { "probe", 1, FIELDS("probe"), FIELDS("timeout_s") },
	[AP_OP_PACKAGE] = { "package", 1, FIELDS("name"), NONE },
	[AP_OP_TESTS_INDEX] = { "tests_index", 1, FIELDS("root"), NONE },
	[AP_OP_SAME_OBJECT] = { "same_object", 1, FIELDS("target", "names"), NONE },
	[AP_OP_TESTS_PREFLIGHT] = { "tests_preflight", 1,
				    FIELDS("root", "file", "try_import", "keep", "wait", "setenv",
					   "names"),
				    FIELDS("timeout_s") },
	[AP_OP_TESTS_IMPORT] = { "tests_import", 1, FIELDS("runner"), NONE },
	[AP_OP_TESTS_RUN] = { "tests_run", 1, FIELDS("root", "file", "setenv"),
			      FIELDS("timeout_s", "deadline_s") },
	[AP_OP_OPINFO] = { "opinfo", 1, FIELDS("target", "devices"), NONE },
	[AP_OP_SAMPLES] = { "samples", 1, FIELDS("target", "dtypes", "max_samples", "seed"),
			    NONE },
	[AP_OP_RUN] = { "run", 1, FIELDS("target", "samples", "devices", "notrun", "adapter"),
			FIELDS("timeout_s", "start_s", "floor_s", "factor") },
	[AP_OP_SWEEP_BEGIN] = { "sweep_begin", 1, FIELDS("plugins", "entries", "surface"),
				NONE },
	[AP_OP_SWEEP_WALK] = { "sweep_walk", 1,
			       FIELDS("entry", "walk", "exclude", "skip", "depth", "surface"),
			       NONE },
	[AP_OP_TESTS_GENERATED] = { "tests_generated", 1,
				    FIELDS("target", "device", "templates", "facts", "modules"),
				    NONE },
	[AP_OP_CASE_SAMPLES] = { "case_samples", 1, FIELDS("target", "cases", "seed"), NONE },
	[AP_OP_EXIT] = { "exit", 0, NONE, NONE },
};

const char *ap_op_name(enum ap_op op)
{
	return ops[op].name;
}

enum ap_op ap_op_parse(const char *name)
{
	for (int i = 0; name && i < AP_OP_COUNT; i++)
		if (!strcmp(ops[i].name, name))
			return (enum ap_op)i;
	return AP_OP_UNKNOWN;
}

int ap_op_dispatched(enum ap_op op)
{
	return ops[op].dispatched;
}

const char *const *ap_op_fields(enum ap_op op)
{
	return ops[op].fields;
}

const char *const *ap_op_limits(enum ap_op op)
{
	return ops[op].limits;
}

int ap_proto_check(const json_t *req, struct ap_buf *why)
{
	const char *name = json_string_value(json_object_get(req, "op"));
	enum ap_op op = ap_op_parse(name);
	if (op == AP_OP_UNKNOWN) {
		ap_buf_addf(why, "request of no known op (%s)", name ? name : "none");
		return -AP_EPROTO;
	}
	for (const char *const *f = ops[op].fields; *f; f++)
		if (!json_object_get(req, *f)) {
			ap_buf_addf(why, "%s request without the field '%s'", name, *f);
			return -AP_EPROTO;
		}
	for (const char *const *l = ops[op].limits; *l; l++)
		if (json_integer_value(json_object_get(req, *l)) <= 0) {
			ap_buf_addf(why, "%s request without the limit '%s'", name, *l);
			return -AP_EPROTO;
		}
	return 0;
}

/* ------------------------------------------------------------- requests */

json_t *ap_proto_fingerprint(json_t *backends, json_t *plugins, int device_timeout_s)
{
	return json_pack("{s:s, s:o, s:o, s:i}", "op", ops[AP_OP_FINGERPRINT].name, "backends",
			 backends, "plugins", plugins, "device_timeout_s", device_timeout_s);
}

json_t *ap_proto_resolve(const char *target, json_t *plugins)
{
	return json_pack("{s:s, s:s, s:o}", "op", ops[AP_OP_RESOLVE].name, "target", target,
			 "plugins", plugins);
}

json_t *ap_proto_probe(const char *name, const char *code, const json_t *bind, int timeout_s)
{
	return json_pack("{s:s, s:{s:s, s:s, s:O}, s:i}", "op", ops[AP_OP_PROBE].name, "probe",
			 "name", name, "code", code, "bind", bind, "timeout_s", timeout_s);
}

json_t *ap_proto_package(const char *name)
{
	return json_pack("{s:s, s:s}", "op", ops[AP_OP_PACKAGE].name, "name", name);
}

json_t *ap_proto_tests_index(const char *root)
{
	return json_pack("{s:s, s:s}", "op", ops[AP_OP_TESTS_INDEX].name, "root", root);
}

json_t *ap_proto_same_object(const char *target, const json_t *names)
{
	return json_pack("{s:s, s:s, s:O}", "op", ops[AP_OP_SAME_OBJECT].name, "target", target,
			 "names", names);
}

json_t *ap_proto_tests_generated(const char *target, const char *device, const json_t *templates,
				 const json_t *facts, const json_t *modules)
{
	return json_pack("{s:s, s:s, s:s, s:O, s:O, s:O}", "op", ops[AP_OP_TESTS_GENERATED].name,
			 "target", target, "device", device, "templates", templates, "facts", facts,
			 "modules", modules);
}

json_t *ap_proto_tests_preflight(const struct ap_proto_preflight *p)
{
	return json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:i, s:o, s:O, s:O?}", "op",
			 ops[AP_OP_TESTS_PREFLIGHT].name, "root", p->root, "file", p->file,
			 "try_import", p->try_import, "keep", p->keep, "wait", p->wait,
			 "timeout_s", p->timeout_s, "setenv", p->setenv, "names", p->names,
			 "imports", p->imports);
}

json_t *ap_proto_tests_import(const json_t *runner)
{
	return json_pack("{s:s, s:O}", "op", ops[AP_OP_TESTS_IMPORT].name, "runner", runner);
}

json_t *ap_proto_tests_run(const struct ap_proto_tests_run *t)
{
	json_t *nodes = t->nodes, *setenv = t->setenv ? t->setenv : json_object();
	json_t *req = json_pack("{s:s, s:s, s:s}", "op", ops[AP_OP_TESTS_RUN].name, "root",
				t->root, "file", t->file);
	int r = !req || !setenv;
	if (!r && nodes)
		r = json_object_set(req, "nodes", nodes);
	else if (!r)
		r = json_object_set_new(req, "select", json_string(t->select ? t->select : ""));
	r = r ? r : json_object_set_new(req, "timeout_s", json_integer(t->timeout_s));
	r = r ? r : json_object_set_new(req, "deadline_s", json_integer(t->deadline_s));
	r = r ? r : json_object_set(req, "setenv", setenv);
	if (!r && nodes)
		r = json_object_set(req, "runner", t->runner ? (json_t *)t->runner : json_null());
	json_decref(nodes);
	json_decref(setenv);
	if (r) {
		json_decref(req);
		return NULL;
	}
	return req;
}

json_t *ap_proto_opinfo(const char *target, json_t *devices)
{
	return json_pack("{s:s, s:s, s:o}", "op", ops[AP_OP_OPINFO].name, "target", target,
			 "devices", devices);
}

json_t *ap_proto_samples(const char *target, json_t *dtypes, int max_samples, long seed)
{
	return json_pack("{s:s, s:s, s:o, s:i, s:I}", "op", ops[AP_OP_SAMPLES].name, "target",
			 target, "dtypes", dtypes, "max_samples", max_samples, "seed",
			 (json_int_t)seed);
}

json_t *ap_proto_case_samples(const char *target, json_t *cases, long seed)
{
	return json_pack("{s:s, s:s, s:o, s:I}", "op", ops[AP_OP_CASE_SAMPLES].name, "target",
			 target, "cases", cases, "seed", (json_int_t)seed);
}

json_t *ap_proto_run(const char *target, const json_t *samples, json_t *devices,
		     json_t *notrun, const struct ap_proto_run_limits *lim, const char *adapter)
{
	return json_pack("{s:s, s:s, s:O, s:o, s:o, s:i, s:i, s:i, s:i, s:o}", "op",
			 ops[AP_OP_RUN].name, "target", target, "samples", samples, "devices",
			 devices, "notrun", notrun, "timeout_s", lim->timeout_s, "start_s",
			 lim->start_s, "floor_s", lim->floor_s, "factor", lim->factor, "adapter",
			 adapter ? json_string(adapter) : json_null());
}

json_t *ap_proto_sweep_entry(const char *name, const char *walk, json_t *exclude)
{
	return json_pack("{s:s, s:s, s:o}", "name", name, "walk", walk, "exclude", exclude);
}

json_t *ap_proto_sweep_begin(json_t *plugins, json_t *entries, const json_t *surface)
{
	return json_pack("{s:s, s:o, s:o, s:O}", "op", ops[AP_OP_SWEEP_BEGIN].name, "plugins",
			 plugins, "entries", entries, "surface", surface);
}

json_t *ap_proto_sweep_walk(const char *entry, const char *walk, json_t *exclude,
			    const json_t *skip, const char *depth, const json_t *surface)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:O}", "op", ops[AP_OP_SWEEP_WALK].name,
			 "entry", entry, "walk", walk, "exclude", exclude, "skip",
			 skip ? json_incref((json_t *)skip) : json_array(), "depth", depth,
			 "surface", surface);
}

json_t *ap_proto_exit(void)
{
	return json_pack("{s:s}", "op", ops[AP_OP_EXIT].name);
}

/* --------------------------------------------------------------- replies */

int ap_proto_hello(const json_t *msg, const char **python)
{
	const char *type = json_string_value(json_object_get(msg, "type"));
	*python = json_string_value(json_object_get(msg, "python"));
	return type && !strcmp(type, "hello") && *python ? 0 : -AP_EPROTO;
}

int ap_proto_resolve_found(const json_t *reply)
{
	return json_is_true(json_object_get(reply, "found"));
}

void ap_proto_package_read(const json_t *reply, struct ap_proto_package *p)
{
	p->found = json_is_true(json_object_get(reply, "found"));
	p->source = json_string_value(json_object_get(reply, "source"));
	p->version = json_string_value(json_object_get(reply, "version"));
	p->codename = json_string_value(json_object_get(reply, "codename"));
	p->why = json_string_value(json_object_get(reply, "why"));
}

const char *ap_proto_package_version(const json_t *reply)
{
	return json_string_value(json_object_get(reply, "version"));
}

const char *ap_proto_tests_index_path(const json_t *reply)
{
	return json_string_value(json_object_get(reply, "path"));
}

int ap_proto_same_object_is(const json_t *reply, size_t i)
{
	return json_is_true(json_array_get(json_object_get(reply, "same"), i));
}

/* ------------------------------------------------- official tests' replies */

static const char *str_of(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

void ap_proto_tests_generated_read(const json_t *reply, struct ap_proto_generated *g)
{
	g->error = str_of(reply, "error");
	g->ops = json_object_get(reply, "ops");
	g->templates = json_object_get(reply, "templates");
	g->present = json_object_get(reply, "present");
}

void ap_proto_generated_template(const struct ap_proto_generated *g, size_t i,
				 struct ap_proto_generated_template *t)
{
	const json_t *o = json_array_get(g->templates, i);
	const json_t *names = json_object_get(o, "names");
	t->names = json_is_array(names) ? names : NULL;
	t->not_for_device = str_of(o, "not_for_device");
	t->error = str_of(o, "error");
}

int ap_proto_generated_present(const struct ap_proto_generated *g, const char *module)
{
	return json_is_true(json_object_get(g->present, module));
}

static long long int_of(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static void exc_read(const json_t *x, struct ap_proto_exc *e)
{
	const json_t *frames = json_object_get(x, "frames"), *f;
	size_t n = json_array_size(frames), skip = n > AP_PROTO_FRAMES ? n - AP_PROTO_FRAMES : 0;
	memset(e, 0, sizeof(*e));
	if (!json_is_object(x))
		return;
	e->known = 1;
	e->type = str_of(x, "type");
	e->qualname = str_of(x, "qualname");
	e->module = str_of(x, "module");
	e->message = str_of(x, "message");
	e->notes = json_is_array(json_object_get(x, "notes")) ? json_object_get(x, "notes") : NULL;
	for (size_t i = skip; i < n; i++) {
		f = json_array_get(frames, i);
		e->frames[e->nframes++] = (struct ap_proto_frame){ str_of(f, "file"),
								    str_of(f, "function"),
								    int_of(f, "line") };
	}
}

const char *ap_proto_exc_note(const struct ap_proto_exc *e, size_t i)
{
	return json_string_value(json_array_get(e->notes, i));
}

static void unittest_read(const json_t *u, struct ap_proto_unittest *t)
{
	t->tests_run = int_of(u, "tests_run");
	t->errors = int_of(u, "errors");
	t->failures = int_of(u, "failures");
	t->skipped = int_of(u, "skipped");
	t->expected_failures = int_of(u, "expected_failures");
	t->unexpected_successes = int_of(u, "unexpected_successes");
	t->error = str_of(u, "error");
	t->failure = str_of(u, "failure");
	t->skip = str_of(u, "skip");
	exc_read(json_object_get(u, "error_exception"), &t->error_exc);
	exc_read(json_object_get(u, "failure_exception"), &t->failure_exc);
}

static void raised_read(const json_t *r, struct ap_proto_raised *f)
{
	f->raised = json_is_object(r);
	f->assertion = json_is_true(json_object_get(r, "assertion"));
	f->type = str_of(r, "type");
	f->text = str_of(r, "text");
	exc_read(json_object_get(r, "exception"), &f->exc);
}

static void died_read(const json_t *d, struct ap_proto_died *x)
{
	const json_t *timeout = json_object_get(d, "timeout_s");
	x->timed_out = json_is_number(timeout);
	x->timeout_s = json_number_value(timeout);
	x->signal = (int)int_of(d, "signal");
	x->signal_name = str_of(d, "signal_name");
	x->exit_status = (int)int_of(d, "exit_status");
}

void ap_proto_test_read(const json_t *res, struct ap_proto_test *t)
{
	const json_t *died = json_object_get(res, "died"), *dur = json_object_get(res, "duration_ms");
	memset(t, 0, sizeof(*t));
	t->cls = str_of(res, "class");
	t->test = str_of(res, "test");
	t->has_duration = json_is_integer(dur);
	t->duration_ms = (long long)json_integer_value(dur);
	t->output = str_of(res, "output");
	t->broken = str_of(res, "broken");
	died_read(died, &t->died);
	unittest_read(json_object_get(res, "unittest"), &t->unittest);
	raised_read(json_object_get(json_object_get(res, "function"), "raised"), &t->function);
	if (json_is_object(died))
		t->kind = AP_TEST_DIED;
	else if (t->broken)
		t->kind = AP_TEST_BROKEN;
	else if (json_is_false(json_object_get(res, "defined")))
		t->kind = AP_TEST_UNDEFINED;
	else if (json_object_get(res, "function"))
		t->kind = AP_TEST_FUNCTION;
	else if (json_object_get(res, "unittest"))
		t->kind = AP_TEST_UNITTEST;
	else
		t->kind = AP_TEST_NONE;
}

void ap_proto_import_read(const json_t *x, struct ap_proto_import *imp)
{
	imp->present = json_is_object(x);
	imp->ok = json_is_true(json_object_get(x, "ok"));
	imp->ms = int_of(x, "ms");
	imp->error = str_of(x, "error");
	imp->missing = str_of(x, "missing");
	imp->defined = json_object_get(x, "defined");
}

int ap_proto_defined_class(const json_t *defined, const char *cls, const char *test, size_t k,
			   struct ap_proto_defined_class *c)
{
	const json_t *classes = NULL, *d;
	size_t i;
	json_array_foreach(defined, i, d) {
		const char *dc = str_of(d, "class"), *dt = str_of(d, "test");
		if (cls && test && dc && dt && !strcmp(dc, cls) && !strcmp(dt, test))
			classes = json_object_get(d, "classes");
	}
	const json_t *x = json_array_get(classes, k);
	if (!x)
		return -1;
	c->name = str_of(x, "name") ? str_of(x, "name") : "-";
	c->own = json_is_true(json_object_get(x, "own"));
	c->methods = json_object_get(x, "methods");
	return 0;
}

void ap_proto_preflight_read(const json_t *reply, struct ap_proto_preflighted *p)
{
	p->file = str_of(reply, "file");
	p->file_exists = json_is_true(json_object_get(reply, "file_exists"));
	p->modules = json_object_get(reply, "modules");
	p->nmodules = json_array_size(p->modules);
	ap_proto_import_read(json_object_get(reply, "import"), &p->import);
	p->runner = json_object_get(reply, "runner");
}

void ap_proto_preflight_module(const struct ap_proto_preflighted *p, size_t i,
			       struct ap_proto_module *m)
{
	const json_t *x = json_array_get(p->modules, i);
	m->module = str_of(x, "module");
	m->where = str_of(x, "where");
	m->path = str_of(x, "path");
	m->present = json_is_true(json_object_get(x, "present"));
}

void ap_proto_tests_import_read(const json_t *reply, struct ap_proto_preflighted *p)
{
	const json_t *runner = json_object_get(reply, "runner");
	ap_proto_import_read(json_object_get(reply, "import"), &p->import);
	p->runner = json_is_string(runner) ? runner : NULL;
}

void ap_proto_tests_run_read(const json_t *reply, struct ap_proto_tests_ran *r)
{
	ap_proto_import_read(json_object_get(reply, "import"), &r->import);
	r->tests = json_object_get(reply, "tests");
	r->ntests = json_array_size(r->tests);
	r->log = str_of(reply, "log");
}

void ap_proto_tests_ran_test(const struct ap_proto_tests_ran *r, size_t i, struct ap_proto_test *t)
{
	ap_proto_test_read(json_array_get(r->tests, i), t);
}

void ap_proto_sweep_walked(const json_t *reply, struct ap_proto_walked *w)
{
	w->status = json_string_value(json_object_get(reply, "status"));
	w->reason = json_string_value(json_object_get(reply, "reason"));
	w->apis = json_object_get(reply, "apis");
}

void ap_proto_numeric_ran_read(const json_t *reply, struct ap_proto_numeric_ran *r)
{
	r->log = str_of(reply, "log");
}

void ap_proto_sweep_begun(const json_t *reply, struct ap_proto_begun *b)
{
	b->torch = json_string_value(json_object_get(reply, "torch"));
	b->plugins = json_object_get(reply, "plugins_loaded");
}

void ap_proto_ended_read(const json_t *ended, struct ap_proto_ended *e)
{
	const json_t *x = json_object_get(ended, "exit_status");
	e->timed_out = json_is_true(json_object_get(ended, "timed_out"));
	e->signal = json_string_value(json_object_get(ended, "signal"));
	e->has_exit_status = json_is_integer(x);
	e->exit_status = (long long)json_integer_value(x);
	e->limit_s = json_number_value(json_object_get(ended, "limit_s"));
}

static void probe_raised_read(const json_t *r, struct ap_proto_probe_raised *x)
{
	const json_t *msg = json_object_get(r, "message");
	x->type = json_string_value(json_object_get(r, "type"));
	x->message = json_is_string(msg) ? json_string_value(msg) : "";
	x->message_len = json_is_string(msg) ? json_string_length(msg) : 0;
	x->check = json_is_true(json_object_get(r, "check"));
	x->traceback = json_object_get(r, "traceback");
}

void ap_proto_probe_read(const json_t *reply, struct ap_proto_probe_reply *p)
{
	const json_t *res = json_object_get(reply, "result");
	const json_t *raised = json_object_get(res, "raised");
	memset(p, 0, sizeof(*p));
	p->has_result = json_is_object(res);
	p->unreadable = json_is_true(json_object_get(res, "unreadable"));
	p->harness = json_string_value(json_object_get(res, "harness"));
	p->raised = json_is_object(raised);
	probe_raised_read(raised, &p->exc);
	p->trace = json_object_get(res, "trace");
	p->device_trace = json_object_get(res, "device_trace");
	p->steps = json_object_get(reply, "steps");
	ap_proto_ended_read(json_object_get(reply, "ended"), &p->ended);
	p->duration_ms = json_object_get(reply, "duration_ms");
	p->output = json_object_get(reply, "output");
}

int ap_proto_frame_lost(const json_t *frame, struct ap_proto_lost *l)
{
	const json_t *lost = json_object_get(frame, "lost");
	const char *phase = json_string_value(json_object_get(lost, "phase"));
	memset(l, 0, sizeof(*l));
	if (!phase)
		return 0;
	const json_t *cpu = json_object_get(lost, "cpu_s");
	const json_t *d = json_object_get(lost, "daemon");
	const json_t *pid = json_object_get(d, "pid"), *code = json_object_get(d, "exit_status");
	l->before_start = !strcmp(phase, "start");
	ap_proto_ended_read(lost, &l->ended);
	l->has_cpu_s = json_is_number(cpu);
	l->cpu_s = json_number_value(cpu);
	l->daemon_died = json_is_integer(pid);
	l->daemon_pid = int_of(d, "pid");
	l->daemon_signal = str_of(d, "signal");
	l->daemon_has_exit = json_is_integer(code);
	l->daemon_exit = int_of(d, "exit_status");
	return 1;
}

size_t ap_proto_opinfo_count(const json_t *reply)
{
	return json_array_size(json_object_get(reply, "ops"));
}

void ap_proto_opinfo_op(const json_t *reply, size_t i, struct ap_proto_opinfo_op *op)
{
	const json_t *o = json_array_get(json_object_get(reply, "ops"), i);
	const char *var = json_string_value(json_object_get(o, "variant"));
	op->name = json_string_value(json_object_get(o, "name"));
	op->variant = var ? var : "";
	op->dtypes = json_object_get(o, "dtypes");
}

int ap_proto_opinfo_claims(const struct ap_proto_opinfo_op *op, const char *side,
			   const char *dtype)
{
	const json_t *dts = json_object_get(op->dtypes, side), *d;
	size_t i;
	if (!json_is_array(dts))
		return -1;
	json_array_foreach(dts, i, d)
		if (json_is_string(d) && !strcmp(json_string_value(d), dtype))
			return 1;
	return 0;
}

void ap_proto_sweep_api(const json_t *api, struct ap_proto_swept *s)
{
	s->api = json_string_value(json_object_get(api, "api"));
	s->status = json_string_value(json_object_get(api, "status"));
	s->canonical = json_string_value(json_object_get(api, "canonical"));
	s->fields = api;
}

/* ------------------------------------------------------ numeric replies */

void ap_proto_resolution_read(const json_t *reply, struct ap_proto_resolution *r)
{
	memset(r, 0, sizeof(*r));
	r->found = ap_proto_resolve_found(reply);
	r->target = str_of(reply, "target");
	r->canonical = str_of(reply, "canonical");
	r->owner = str_of(reply, "owner");
	r->kind = str_of(reply, "kind");
	r->module = str_of(reply, "module");
	r->file = str_of(reply, "file");
	r->line = int_of(reply, "line");
	r->signature = str_of(reply, "signature");
	r->signature_data = json_object_get(reply, "signature_data");
	r->patch = json_object_get(reply, "patch");
	r->deepest = str_of(reply, "deepest");
	r->missing = str_of(reply, "missing");
	r->nearest = json_object_get(reply, "nearest");
	r->cls = r->owner ? r->owner : r->canonical;
}

static const char *const sample_kinds[AP_SAMPLE_KIND_COUNT] = {
	[AP_SAMPLE_SAMPLE] = "sample",
	[AP_SAMPLE_REFERENCE] = "reference",
	[AP_SAMPLE_ERROR] = "error",
	[AP_SAMPLE_DTYPE] = "dtype",
	[AP_SAMPLE_CASE] = "case",
};

static const char *const forms[AP_FORM_COUNT] = {
	[AP_FORM_TARGET] = "",
	[AP_FORM_FUNCTION] = "function",
	[AP_FORM_METHOD] = "method",
	[AP_FORM_INPLACE] = "inplace",
	[AP_FORM_OUT] = "out",
	[AP_FORM_NONCONTIGUOUS] = "noncontiguous",
};

static const char *const part_statuses[AP_PART_STATUS_COUNT] = {
	[AP_PART_OK] = "ok",
	[AP_PART_RAISED] = "raised",
	[AP_PART_NOTRUN] = "notrun",
	[AP_PART_ERROR] = "error",
};

/* The index of word in names[n], or -1. */
static int word_index(const char *const *names, int n, const char *word)
{
	for (int i = 0; word && i < n; i++)
		if (!strcmp(names[i], word))
			return i;
	return -1;
}

const char *ap_proto_sample_kind_name(enum ap_proto_sample_kind kind)
{
	return kind >= 0 && kind < AP_SAMPLE_KIND_COUNT ? sample_kinds[kind] : NULL;
}

enum ap_proto_sample_kind ap_proto_sample_kind_parse(const char *word)
{
	return (enum ap_proto_sample_kind)word_index(sample_kinds, AP_SAMPLE_KIND_COUNT, word);
}

const char *ap_proto_form_name(enum ap_proto_form form)
{
	return form >= 0 && form < AP_FORM_COUNT ? forms[form] : NULL;
}

enum ap_proto_form ap_proto_form_parse(const char *word)
{
	return word ? (enum ap_proto_form)word_index(forms, AP_FORM_COUNT, word) : AP_FORM_TARGET;
}

const char *ap_proto_part_status_name(enum ap_proto_part_status status)
{
	return status >= 0 && status < AP_PART_STATUS_COUNT ? part_statuses[status] : NULL;
}

enum ap_proto_part_status ap_proto_part_status_parse(const char *word)
{
	return (enum ap_proto_part_status)word_index(part_statuses, AP_PART_STATUS_COUNT, word);
}

void ap_proto_samples_read(const json_t *reply, struct ap_proto_samples *r)
{
	const json_t *samples = json_object_get(reply, "samples");
	r->samples = json_is_array(samples) ? samples : NULL;
	r->n = json_array_size(r->samples);
	r->skipped = json_object_get(reply, "skipped");
}

void ap_proto_sample_read(const json_t *sample, struct ap_proto_sample *s)
{
	const json_t *dt = json_object_get(sample, "dtype");
	const json_t *index = json_object_get(sample, "index");
	memset(s, 0, sizeof(*s));
	s->op = str_of(sample, "op");
	s->variant = str_of(sample, "variant");
	s->dtype = json_string_value(dt);
	s->kind_word = str_of(sample, "kind");
	s->kind = ap_proto_sample_kind_parse(s->kind_word);
	s->index = (long long)json_integer_value(index);
	s->error_type = str_of(sample, "error_type");
	s->input = json_object_get(sample, "sample");
	s->id = str_of(sample, "id");
	s->input_digest = str_of(sample, "input_digest");
	s->form = ap_proto_form_parse(str_of(sample, "form"));
	s->call = str_of(sample, "call");
	s->compare_skip = str_of(sample, "compare_skip");
	s->ok = json_is_object(sample) && s->op && s->variant &&
		s->kind != AP_SAMPLE_KIND_UNKNOWN && s->form != AP_FORM_UNKNOWN &&
		(s->dtype || (json_is_null(dt) && s->kind == AP_SAMPLE_ERROR)) &&
		json_is_integer(index) && json_is_object(s->input);
}

json_t *ap_proto_sample_prepared(const json_t *sample, const char *id, const char *input_digest)
{
	json_t *c = json_copy((json_t *)sample);
	if (c && (json_object_set_new(c, "id", json_string(id)) ||
		  json_object_set_new(c, "input_digest", json_string(input_digest)))) {
		json_decref(c);
		return NULL;
	}
	return c;
}

void ap_proto_run_frame_read(const json_t *frame, struct ap_proto_run_frame *f)
{
	const json_t *i = json_object_get(frame, "i"), *lost = json_object_get(frame, "lost");
	f->has_index = json_is_integer(i);
	f->index = (long long)json_integer_value(i);
	f->parts = json_object_get(frame, "parts");
	f->lost = lost != NULL;
	f->lost_status = str_of(lost, "status");
	f->lost_reason = str_of(lost, "reason");
	f->lost_daemon_exit = json_is_integer(json_object_get(lost, "daemon_exit"))
				      ? int_of(lost, "daemon_exit")
				      : -1;
}

void ap_proto_run_frame_part(const struct ap_proto_run_frame *f, const char *side,
			     struct ap_proto_part *p)
{
	const json_t *x = json_object_get(f->parts, side);
	memset(p, 0, sizeof(*p));
	p->status = AP_PART_STATUS_UNKNOWN;
	if (!json_is_object(x))
		return;
	p->present = 1;
	p->status_word = str_of(x, "status");
	p->status = ap_proto_part_status_parse(p->status_word);
	p->exception = str_of(x, "exception");
	p->message = str_of(x, "message");
	p->reason = str_of(x, "reason");
	p->outputs = json_object_get(x, "outputs");
	p->grads = json_object_get(x, "grads");
	p->device_trace = json_object_get(x, "device_trace");
	p->has_alias = json_is_boolean(json_object_get(x, "alias"));
	p->alias = json_is_true(json_object_get(x, "alias"));
}

int ap_proto_frame_set_lost(json_t *frame, const char *status, const char *reason,
			    size_t reason_len, long long daemon_exit)
{
	json_t *lost = json_pack("{s:s, s:s%}", "status", status, "reason", reason, reason_len);
	if (lost && daemon_exit >= 0 &&
	    json_object_set_new(lost, "daemon_exit", json_integer((json_int_t)daemon_exit))) {
		json_decref(lost);
		lost = NULL;
	}
	return json_object_set_new(frame, "lost", lost);
}

json_t *ap_proto_lost_frame(long long i, const char *status, const char *reason)
{
	return json_pack("{s:I, s:{s:s, s:s}}", "i", (json_int_t)i, "lost", "status", status,
			 "reason", reason);
}

json_t *ap_proto_frame_result(const json_t *frame, const char *side)
{
	const json_t *part = json_object_get(json_object_get(frame, "parts"), side);
	const json_t *status = json_object_get(part, "status");
	/* Of a loss, only its status, and only where the side has no result:
	 * how a runner ended (a daemon's pid, a limit derived from a time) is
	 * this run's, and another side's loss is not this side's result. */
	const json_t *lost = json_object_get(json_object_get(frame, "lost"), "status");
	return json_pack("{s:O?, s:O?, s:O?, s:O?}", "status", status, "exception",
			 json_object_get(part, "exception"), "outputs",
			 json_object_get(part, "outputs"), "lost", status ? NULL : lost);
}

const char *ap_proto_part_op_where(const struct ap_proto_part *p, int (*pred)(const char *op))
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)json_object_get(p->device_trace, "ops"), k, v)
		if (pred(k))
			return k;
	return NULL;
}
