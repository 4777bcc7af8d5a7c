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
	[AP_OP_RUN] = { "run", 1, FIELDS("target", "samples", "devices"),
			FIELDS("timeout_s", "start_s") },
	[AP_OP_SWEEP_BEGIN] = { "sweep_begin", 1, FIELDS("plugins", "entries", "surface"),
				NONE },
	[AP_OP_SWEEP_WALK] = { "sweep_walk", 1,
			       FIELDS("entry", "walk", "exclude", "skip", "depth", "surface"),
			       NONE },
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

json_t *ap_proto_run(const char *target, const json_t *samples, json_t *devices,
		     int timeout_s, int start_s)
{
	return json_pack("{s:s, s:s, s:O, s:o, s:i, s:i}", "op", ops[AP_OP_RUN].name, "target",
			 target, "samples", samples, "devices", devices, "timeout_s", timeout_s,
			 "start_s", start_s);
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

void ap_proto_sweep_walked(const json_t *reply, struct ap_proto_walked *w)
{
	w->status = json_string_value(json_object_get(reply, "status"));
	w->reason = json_string_value(json_object_get(reply, "reason"));
	w->apis = json_object_get(reply, "apis");
}

void ap_proto_sweep_api(const json_t *api, struct ap_proto_swept *s)
{
	s->api = json_string_value(json_object_get(api, "api"));
	s->status = json_string_value(json_object_get(api, "status"));
	s->canonical = json_string_value(json_object_get(api, "canonical"));
	s->fields = api;
}
