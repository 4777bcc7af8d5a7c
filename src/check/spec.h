/* spec.h - API families, as data: which targets belong to a family, and the
 * probes that check them.
 *
 * A family spec (specs/NAME.yaml) names its members (classes, by canonical
 * module.qualname), a set of bindings (Python expressions with {field}
 * placeholders filled from the member), and probes (Python code run in the
 * environment with those bindings, trace() and check()). Adding a family or a
 * member is a new or edited spec file: no C or worker change. A spec is
 * validated whole when loaded, so a mistake is reported as file:line before
 * anything runs.
 *
 * Adding a family:
 *   1. Write specs/NAME.yaml (specs/mode-context.yaml is the model): family,
 *      summary {en, zh}, bind (NAME: a Python expression with {field}
 *      placeholders), members (class: module.qualname plus every field the
 *      bindings use; traits: for probes that need one) and probes (name,
 *      says {en, zh}, needs, code). The Makefile embeds each YAML file of specs/;
 *      `check --specs DIR` tries a copy without rebuilding.
 *   2. No C or worker change: if the family needs one (a new key, a new
 *      kind of binding), it goes here and in spec.c, with unit tests in
 *      tests/unit/test-spec.c (the key accepted, each mistake refused with
 *      file:line).
 *   3. Tests: tests/integration/t-specs.sh compiles every probe and binding
 *      with each reference environment's Python by itself; add to
 *      tests/integration/t-check.sh a run of one member per environment
 *      that has it (the PROBES column, the verdict), and one for a member
 *      whose traits make some probes NOTRUN(not-applicable), as the
 *      mode-context members are.
 *   4. Say what it covers in docs/check.md, beside the mode-context family.
 */
#ifndef AP_SPEC_H
#define AP_SPEC_H

#include <jansson.h>

#include "base/buf.h"

struct ap_probe {
	char *name;      /* [a-z0-9-]+, unique in its family */
	char *needs;     /* a member trait it needs, or NULL */
	char *says_en;   /* what it checks, in words */
	char *says_zh;
	char *code;
};

struct ap_member {
	char *cls;       /* canonical class name, module.qualname */
	json_t *fields;  /* every field, each a string */
	int line;
};

struct ap_family {
	char *name;
	char *summary_en, *summary_zh;
	char *file;
	json_t *bind;    /* name -> template, in file order */
	struct ap_member *members;
	size_t nmembers;
	struct ap_probe *probes;
	size_t nprobes;
};

struct ap_specs {
	struct ap_family *v;
	size_t n;
};

/* Loads every *.yaml of dir, or the built-in specs when dir is NULL. On error
 * returns -AP_ECONFIG with "file:line: what" in err, and s is empty. */
int ap_specs_load(struct ap_specs *s, const char *dir, struct ap_buf *err);

/* Loads one spec from text (name is used in messages) and adds it to s. */
int ap_specs_add(struct ap_specs *s, const char *text, size_t len, const char *name,
		 struct ap_buf *err);

/* The family that has a member for class cls, or NULL; *m is set to it. */
const struct ap_family *ap_specs_find(const struct ap_specs *s, const char *cls,
				      const struct ap_member **m);

/* The bindings for member m of f: a new array of [name, expression] pairs, in
 * the order the family lists them. NULL only when out of memory (templates
 * were checked against every member when the spec was loaded). */
json_t *ap_member_bind(const struct ap_family *f, const struct ap_member *m);

/* The worker's request that runs probe code (a probe's, or a script) named
 * name with bind (as ap_member_bind gives) within timeout_s. NULL when out
 * of memory. */
json_t *ap_probe_request(const char *name, const char *code, const json_t *bind,
			 int timeout_s);

/* Whether the member's `traits` (blank-separated words) include trait. */
int ap_member_has_trait(const struct ap_member *m, const char *trait);

void ap_specs_free(struct ap_specs *s);

#endif
