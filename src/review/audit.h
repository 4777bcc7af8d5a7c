/* audit.h - a backend's support pages against a measured support matrix:
 * pages generated from the matrix, and hand-written pages audited by it.
 *
 * A product of the pages is an environment whose label (its name when it
 * has none) is that product's name. Names on the pages are resolved as a
 * reader would: Markdown escapes dropped (`torch.\_\_config\_\_.show`), a
 * trailing "()" dropped, then the exact api of a matrix line, else the
 * class-relative key the matrix gives a member (`Tensor.abs`,
 * `FunctionCtx.save_for_backward`), else an api that ends with the name
 * (`profile.key_averages`); among several, the shortest api, then the first
 * in order.
 */
#ifndef AP_AUDIT_H
#define AP_AUDIT_H

#include <jansson.h>

#include "base/buf.h"
#include "evidence/matrix.h"
#include "evidence/sweepfile.h"
#include "review/docs.h"
#include "review/plugins.h"
#include "review/updocs.h"

/* An environment of a sweep as the pages see it: its name, its product (its
 * label, else its name; NULL when it has neither), its torch version (NULL
 * when not said) and the plugins it loaded (NULL when not known). Borrowed
 * from the sweep.json read. */
struct ap_docs_env {
	const char *name, *product, *torch;
	const struct ap_matrix_strs *plugins;
};

struct ap_docs_envs {
	struct ap_docs_env *v;
	size_t n;
};

/* The environments of a sweep.json (its envs, in order) into *out, which
 * points into meta: keep meta while out is used. 0 or -ENOMEM. */
int ap_docs_envs_read(const struct ap_sweep_meta *meta, struct ap_docs_envs *out);
void ap_docs_envs_free(struct ap_docs_envs *e);

/* A top-level block of a generated page while the page is made: a class's
 * (with its sub-entries) or a function's, and upstream's section of it. */
struct ap_docs_gen_block {
	char *section;    /* the section title upstream documents it under, or NULL */
	unsigned order;   /* that section's place in upstream's sources (0: none) */
	struct ap_buf text;
};

/* One generated page: its file name and its text. */
struct ap_docs_gen_page {
	char *name;
	struct ap_buf text;
	int open;      /* a class's block is open for its sub-entries */
	struct ap_docs_gen_block *blocks; /* while generating; none after */
	size_t nblocks, cap;
};

struct ap_docs_gen {
	struct ap_docs_gen_page *v;
	size_t n, cap;
};

/* The pages of a matrix into *out (zeroed): one page per catalog entry (its
 * name with '.' as '-', "PAGE.md"), with the furniture of the backend's
 * pages: its title, a NOTE (what the support marks mean here, that what
 * is not listed was not measured, the module's upstream page where the
 * sources place it), and, where upstream's sources (up) place its APIs in
 * sections, a 目录 of them and a `## ` heading each, in upstream's order
 * (what no section holds last, under 其他); a `### ` block per API present
 * somewhere, a class's block holding its members' sub-entries (a property
 * or value without "()"), in format
 * table or list (docs.h). products: per environment, its product,
 * supported when the API's verdict there is consistent, unsupported when
 * inconsistent, left out when absent or not run (not measured is not
 * claimed). An API with no product is left out. The doc links are where
 * up (NULL: none) says upstream publishes each API; an API it does not
 * place gets none, and *unlinked counts them. */
void ap_docs_generate(const struct ap_docs_envs *envs, const struct ap_matrix *lines,
		      const struct ap_updocs *up, enum ap_docs_format format,
		      struct ap_docs_gen *out, size_t *unlinked);
void ap_docs_gen_free(struct ap_docs_gen *g);

/* The classes of findings, in their order of precedence (see
 * ap_docs_audit()). */
enum ap_docs_finding_class {
	AP_FINDING_UNREADABLE,
	AP_FINDING_OPTIONAL_DEPENDENCY,
	AP_FINDING_ABSENT_IN_VERSION,
	AP_FINDING_PLUGIN_API,
	AP_FINDING_INSTANCE_ATTRIBUTE,
	AP_FINDING_ABSENT,
	AP_FINDING_NOT_FOUND,
	AP_FINDING_NOT_MEASURED,
	AP_FINDING_NOT_SWEPT,
	AP_FINDING_PLUGIN_ADDED,
	AP_FINDING_UNBACKED,
	AP_FINDING_CONTRADICTED,
	AP_FINDING_BACKED,
	AP_FINDING_MISSING_SUB_ENTRY,
	AP_FINDING_NCLASSES
};

/* "unreadable", "optional-dependency", ... "missing-sub-entry". */
const char *ap_docs_finding_name(enum ap_docs_finding_class c);

/* One finding: where (the entry's file and line), the api as the page wrote
 * it, the matrix api it resolved to (NULL when none), its class and what it
 * says. Every string owned. */
struct ap_docs_finding {
	char *file;
	long long line;
	char *api, *resolved;
	enum ap_docs_finding_class cls;
	char *detail;
};

struct ap_docs_findings {
	struct ap_docs_finding *v;
	size_t n, cap;
};

/* Audits entries (ap_docs_load()) against a matrix into *out (zeroed),
 * sorted by file and line. 0 or -ENOMEM.
 * Every entry gets exactly one finding of these classes, in this order of
 * precedence:
 *   unreadable          its support could not be read
 *   absent-in-version   what it is under is a module or class that no
 *                       measured torch has (torch.export in 1.13)
 *   optional-dependency what it is under does not import (import-error:
 *                       a package outside torch is missing)
 *   plugin-api          getattr reaches it in no environment, a plugin of
 *                       plugins (plugins.h) adds it when it loads, and no
 *                       environment loads that plugin (torch.nn.Module.npu
 *                       without torch_npu)
 *   instance-attribute  a member getattr does not reach on its class in any
 *                       environment, which the class's source (or a torch
 *                       base's) assigns on self: set only on instances
 *   not-found           a member getattr reaches on its class in no
 *                       environment, and no source assigns it on self
 *   absent              import its module, then getattr it: nothing, in the
 *                       measured torch of every environment
 *   not-measured        the walk that would have measured it failed
 *   not-swept           nothing of the catalog covers it
 *   plugin-added        it exists only once a plugin loads
 *   unbacked            none of its products is a measured environment
 *   contradicted        a product's claim differs from the measurement (✔
 *                       and inconsistent or absent there; ✘ and consistent)
 *   backed              every product that was measured agrees
 * and, in the other direction, one finding of class "missing-sub-entry" at a
 * class's entry for each member the matrix has for that class, consistent
 * in some environment, that the pages give no sub-entry (the README's
 * set_multithreading_enabled and its clone()). */
int ap_docs_audit(const struct ap_docs_entries *entries, const struct ap_docs_envs *envs,
		  const struct ap_matrix *lines, const struct ap_plugins *plugins,
		  struct ap_docs_findings *out);
void ap_docs_findings_free(struct ap_docs_findings *f);

/* Findings as text: "FILE:LINE: CLASS: API: DETAIL" a line, then one count
 * line per class, in the order first found. Values escaped for a terminal. */
void ap_docs_audit_text(const struct ap_docs_findings *findings, struct ap_buf *out);

/* Which formats each page was read in (ap_docs_load_pages()), a line per page:
 * "FILE: formats: table 46, unreadable 2", or "FILE: formats: none (...)"
 * for a page with no entry in a format the parser knows. Escaped for a
 * terminal. */
void ap_docs_pages_text(const struct ap_docs_pages *pages, struct ap_buf *out);

#endif
