/* spec-code [DIR] - prints the Python of every family spec (the *.yaml files
 * of DIR, or the built-in specs) as a JSON array, for
 * tests/integration/t-specs.sh to compile with each reference environment's
 * Python. A maintenance tool, not part of apiparity: it reads specs through
 * src/check/spec.h exactly as check does.
 *
 * Each element: {"where": "FILE: probe NAME" or "FILE:LINE: member CLASS,
 * binding NAME", "filename": what a traceback would name, "mode": "exec" for
 * a probe, "eval" for a binding, "code": the source}. Exit 0, or 2 when the
 * specs cannot be loaded (the error on stderr). */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "check/spec.h"

static int add_family(json_t *out, const struct ap_family *f)
{
	char where[1024], filename[512];
	for (size_t i = 0; i < f->nprobes; i++) {
		snprintf(where, sizeof(where), "%s: probe %s", f->file, f->probes[i].name);
		snprintf(filename, sizeof(filename), "<probe %s>", f->probes[i].name);
		if (json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s}", "where", where,
							 "filename", filename, "mode", "exec",
							 "code", f->probes[i].code)))
			return -1;
	}
	for (size_t i = 0; i < f->nmembers; i++) {
		const struct ap_member *m = &f->members[i];
		json_t *bind = ap_member_bind(f, m), *pair;
		size_t k;
		if (!bind)
			return -1;
		json_array_foreach(bind, k, pair) {
			const char *name = json_string_value(json_array_get(pair, 0));
			snprintf(where, sizeof(where), "%s:%d: member %s, binding %s", f->file,
				 m->line, m->cls, name);
			snprintf(filename, sizeof(filename), "<binding %s>", name);
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:O}", "where", where,
							     "filename", filename, "mode", "eval",
							     "code", json_array_get(pair, 1)));
		}
		json_decref(bind);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ap_specs specs = { 0 };
	struct ap_buf err = { 0 };
	json_t *out = json_array();
	if (argc > 2 || !out) {
		fputs("usage: spec-code [DIR]\n", stderr);
		return 2;
	}
	if (ap_specs_load(&specs, argc == 2 ? argv[1] : NULL, &err)) {
		fprintf(stderr, "spec-code: %s\n", ap_buf_str(&err));
		ap_buf_free(&err);
		return 2;
	}
	int r = 0;
	for (size_t i = 0; !r && i < specs.n; i++)
		r = add_family(out, &specs.v[i]);
	char *text = r ? NULL : json_dumps(out, JSON_INDENT(1));
	if (text)
		puts(text);
	free(text);
	json_decref(out);
	ap_specs_free(&specs);
	return text ? 0 : 2;
}
