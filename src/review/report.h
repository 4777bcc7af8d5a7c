/* report.h - the acceptance report, from a submission's bundles.
 *
 * Every sentence of a report comes from data in the bundles (and the docs
 * entry, when given): versions from fingerprints, results from checks,
 * evidence hashes from the files. Sections follow the outline that backend
 * projects use: title, scope, one block per environment, backend adaptation
 * conclusion, native API documentation, conclusion.
 *
 * The model (struct ap_report) is built once, from the bundles as
 * evidence/facts.h reads them, and every renderer (Markdown here, html.h,
 * svg.h, JUnit here) reads its fields; report.json is the model written out
 * (ap_report_json). It also holds the overview the page and the pictures draw:
 * the matrix (a column per environment, a row per check of any kind, a cell
 * per check and environment with its status, none where that environment has
 * no such check) and the traces (per check, each step with every
 * environment's value and whether it differs from the reference's).
 *
 * The model points into the submission's bundles (and the docs entries):
 * build it from them and free it before they are. A string not in the data
 * is NULL (shown as "-", ap_report_text()).
 */
#ifndef AP_REPORT_H
#define AP_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/outcome.h"
#include "evidence/facts.h"
#include "evidence/submission.h"
#include "review/docs.h"
#include "review/escape.h"
#include "review/words.h"

/* A file of an environment's manifest. */
struct ap_report_file {
	char *file, *sha256;
	char *path; /* <env>/file, relative to the submission */
};

/* The numeric checks of an environment summed per operator, dtype and
 * comparison. */
struct ap_report_numeric {
	const char *op, *device;
	const char *dtype;   /* "error inputs" for an error input */
	const char *against; /* the environment compared with, or "nothing (ran only)" */
	long long samples, passed, failed, notrun;
	double max_abs, max_rel, worst_ratio; /* the worst of its samples (finite) */
	struct ap_number rtol, atol;          /* the first sample's that has them */
};

/* A known backend limit applied (check/limits.h), with the samples it
 * excused. */
struct ap_report_limit {
	const char *name, *backend, *what, *reason, *where;
	long long samples;
};

struct ap_report_env {
	const char *name;
	const struct ap_bundle_facts *b; /* what its bundle says */
	const struct ap_fact_check *checks;
	size_t nchecks;
	char **plugins;                  /* "name version" */
	struct ap_report_file *evidence;
	size_t nevidence;
	struct ap_report_numeric *numeric;
	size_t nnumeric;
	struct ap_report_limit *limits;
	size_t nlimits;
};

/* A probe or script check, in words; an official test node with the torch
 * version it was found at. */
struct ap_report_probe {
	const char *name, *says_en, *says_zh;
};

struct ap_report_node {
	const char *node, *version;
};

/* A cell of the matrix: the check's status in one environment. */
struct ap_report_cell {
	const char *env;
	int present;              /* the environment has the check */
	enum ap_status status;
	const char *status_word;  /* as written, NULL when absent */
	const char *reason;
};

struct ap_report_row {
	const char *kind, *name;
	struct ap_report_cell *cells; /* one per environment, in their order */
};

struct ap_report_column {
	const char *env, *label, *verdict_word;
	enum ap_verdict verdict;
	int reference;
};

/* One environment's value at a step of a trace. */
struct ap_report_value {
	const char *env;
	int ran;              /* the environment ran the check */
	const char *step;     /* its step there, NULL when it has none */
	const json_t *value;  /* NULL when none */
	char *text;           /* value as compact JSON, "" when none */
	int odd;              /* ran, and another step or value than the first that ran */
};

struct ap_report_step {
	const char *step;     /* "-" when no environment has one */
	int differs;
	struct ap_report_value *values; /* one per environment */
	const struct ap_report_value *base; /* the first that ran, or NULL */
};

struct ap_report_trace {
	const char *kind, *check;
	size_t differing;
	struct ap_report_step *steps;
	size_t nsteps;
};

/* The target's signature in an environment with a signature check. */
struct ap_report_signature {
	const char *env, *status_word, *reason, *text;
	enum ap_status status;
	const struct ap_fact_signature *sig;
};

struct ap_report_product {
	const char *product;
	int supported;
};

/* A product the docs page claims one thing of and the environment measured
 * the other. */
struct ap_report_contradiction {
	const char *product, *env, *verdict_word;
	int claimed;
};

struct ap_report_docs {
	int checked;              /* docs were given */
	const struct ap_docs_entry *entry; /* the entry found, NULL when none */
	const char *api, *file;
	long long line;
	struct ap_report_product *products;
	size_t nproducts;
	int exact;                /* the entry is the target's own, not its class's */
	struct ap_report_contradiction *contradictions;
	size_t ncontradictions;
	int compared;             /* products matched to an environment */
};

/* The environments by verdict, and the report's. */
struct ap_report_conclusion {
	enum ap_verdict verdict;
	const char **consistent, **inconsistent, **unverified;
	size_t nconsistent, ninconsistent, nunverified;
};

struct ap_report {
	const char *target;
	const json_t *tool_json;
	const char *reference;               /* NULL when no bundle names one */
	const char *owner;                   /* the class, NULL when none */
	const struct ap_bundle_facts *impl;  /* the bundle that speaks for the implementation */
	struct ap_report_env *envs;
	size_t nenvs;
	struct ap_report_probe *probes;
	size_t nprobes;
	struct ap_report_node *nodes;
	size_t nnodes;
	struct ap_report_docs docs;
	struct ap_report_conclusion conclusion;
	struct ap_report_column *columns;    /* one per environment */
	struct ap_report_row *rows;
	size_t nrows;
	struct ap_report_trace *traces;
	size_t ntraces;
	struct ap_report_signature *signatures;
	size_t nsignatures;
	struct ap_bundle_facts *facts;       /* one per environment (owned) */
	void *pool;                          /* what the model allocated */
};

/* The report's model, derived once from the submission (and docs: the parsed
 * docs entries, or NULL when not given). NULL when out of memory; free it
 * with ap_report_free(). */
struct ap_report *ap_report_model(const struct ap_submission *s,
				  const struct ap_docs_entries *docs);

void ap_report_free(struct ap_report *r);

/* The model as report.json has it: a new object. */
json_t *ap_report_json(const struct ap_report *r);

/* s, or "-" where the data had no such string. */
const char *ap_report_text(const char *s);

/* A number of a numeric row as text (an integer as itself, a real to three
 * significant digits, none as "-"), into buf; returns buf. */
const char *ap_report_number(struct ap_number n, char buf[32]);

/* A numeric row's counts and worst errors (M_NUMERIC_ROW, each number as
 * ap_report_number() writes it), as report.md and report.html show them. */
void ap_report_numeric_row(const struct ap_report_numeric *r, enum ap_lang lang, struct ap_buf *out);

/* The available devices of b ("TYPE: N x NAME"), then the unavailable ones
 * with why, or "cpu" for none, each string escaped by esc (the page's
 * format: ap_escape_md, ap_escape_xml). */
void ap_report_devices(const struct ap_bundle_facts *b, enum ap_lang lang,
		       void (*esc)(const char *s, struct ap_buf *out), struct ap_buf *out);

void ap_report_markdown(const struct ap_report *r, enum ap_lang lang, struct ap_buf *out);
void ap_report_junit(const struct ap_report *r, struct ap_buf *out);

#endif
