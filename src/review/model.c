/* model.c - the report model (report.h), built from the bundles' facts. */
#include <ctype.h>
#include <math.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonutil.h"
#include "check/limits.h"
#include "evidence/manifest.h"
#include "review/docs.h"
#include "review/report.h"

/* ------------------------------------------------------------ memory */

/* Everything the model allocates, freed at once; oom once anything failed. */
struct pool {
	struct chunk *head;
	int oom;
};

struct chunk {
	struct chunk *next;
	alignas(max_align_t) unsigned char data[];
};

/* n zeroed elements of size each (room for one when n is 0), or NULL. */
static void *palloc(struct ap_report *r, size_t n, size_t size)
{
	struct pool *p = r->pool;
	struct chunk *c = n > ((size_t)-1 - sizeof(*c)) / (size ? size : 1) ? NULL
			: calloc(1, sizeof(*c) + (n ? n : 1) * size);
	if (!c) {
		p->oom = 1;
		return NULL;
	}
	c->next = p->head;
	p->head = c;
	return c->data;
}

static char *pstrdup(struct ap_report *r, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *d = palloc(r, n + 1, 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

const char *ap_report_text(const char *s)
{
	return s ? s : "-";
}

/* ------------------------------------------------------------ environments */

struct evidence_list {
	struct ap_report *r;
	struct ap_report_env *e;
	const char *env;  /* the folder the paths are under, in the submission */
	size_t cap;
};

static int evidence_add(void *ctx, const char *sha256, const char *rel)
{
	struct evidence_list *l = ctx;
	struct ap_report_env *e = l->e;
	if (e->nevidence == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct ap_report_file *v = palloc(l->r, cap, sizeof(*v));
		if (!v)
			return -1;
		if (e->nevidence)
			memcpy(v, e->evidence, e->nevidence * sizeof(*v));
		e->evidence = v;
		l->cap = cap;
	}
	struct ap_buf path = { 0 };
	ap_buf_addf(&path, "%s/%s", l->env, rel);
	e->evidence[e->nevidence++] = (struct ap_report_file){ pstrdup(l->r, rel),
		pstrdup(l->r, sha256), pstrdup(l->r, ap_buf_str(&path)) };
	ap_buf_free(&path);
	return 0;
}

/* The files the manifest of the environment s lists, none when there is
 * no readable manifest (verify names that), each path relative to the
 * submission: the report is a function of the evidence, wherever the
 * submission lies (verify renders it again to compare). */
static void env_evidence(struct ap_report *r, struct ap_report_env *e,
			 const struct ap_sub_env *s)
{
	struct evidence_list l = { r, e, s->name, 0 };
	ap_manifest_list(s->dir, evidence_add, &l);
}

/* The numeric checks summed per operator, dtype and comparison, in the
 * order first seen. */
static void env_numeric(struct ap_report *r, struct ap_report_env *e)
{
	e->numeric = palloc(r, e->nchecks, sizeof(*e->numeric));
	for (size_t i = 0; e->numeric && i < e->nchecks; i++) {
		const struct ap_fact_check *c = &e->checks[i];
		if (!c->numeric)
			continue;
		const char *dt = c->dtype ? c->dtype : "error inputs";
		const char *against = c->against ? c->against : "nothing (ran only)";
		struct ap_report_numeric *row = NULL;
		for (size_t k = 0; k < e->nnumeric && !row; k++) {
			struct ap_report_numeric *x = &e->numeric[k];
			if (!strcmp(ap_report_text(x->op), ap_report_text(c->op)) && !strcmp(x->dtype, dt) &&
			    !strcmp(ap_report_text(x->device), ap_report_text(c->device)) &&
			    !strcmp(x->against, against))
				row = x;
		}
		if (!row) {
			row = &e->numeric[e->nnumeric++];
			*row = (struct ap_report_numeric){ .op = c->op, .device = c->device, .dtype = dt,
							   .against = against };
		}
		row->samples++;
		if (c->status == AP_PASS)
			row->passed++;
		else if (c->status == AP_NOTRUN)
			row->notrun++;
		else
			row->failed++;
		for (size_t k = 0; k < c->nmeasures; k++) {
			const struct ap_fact_measure *m = &c->measures[k];
			const double v[3] = { m->max_abs, m->max_rel, m->worst_ratio };
			double *w[3] = { &row->max_abs, &row->max_rel, &row->worst_ratio };
			for (size_t j = 0; j < 3; j++)
				if (v[j] > *w[j])
					*w[j] = isfinite(v[j]) ? v[j] : 1e308;
			if (row->rtol.kind == AP_NUM_NONE && m->rtol.kind != AP_NUM_NONE) {
				row->rtol = m->rtol;
				row->atol = m->atol;
			}
		}
	}
}

/* The known backend limits applied (check/limits.h counts them). */
static void env_limits(struct ap_report *r, struct ap_report_env *e)
{
	struct ap_limit_applied *rows = NULL;
	size_t n = 0;
	if (ap_limits_applied(e->b->checks, e->b->nchecks, &rows, &n))
		return;
	e->limits = palloc(r, n, sizeof(*e->limits));
	for (size_t i = 0; e->limits && i < n; i++)
		e->limits[e->nlimits++] = (struct ap_report_limit){
			pstrdup(r, rows[i].name), pstrdup(r, rows[i].backend),
			pstrdup(r, rows[i].what), pstrdup(r, rows[i].reason),
			pstrdup(r, rows[i].where), rows[i].samples };
	free(rows);
}

static void model_env(struct ap_report *r, struct ap_report_env *e, const struct ap_sub_env *s,
		      const struct ap_bundle_facts *b)
{
	e->name = s->name;
	e->b = b;
	e->checks = b->checks;
	e->nchecks = b->nchecks;
	e->plugins = palloc(r, b->nplugins, sizeof(*e->plugins));
	for (size_t i = 0; e->plugins && i < b->nplugins; i++) {
		struct ap_buf p = { 0 };
		ap_buf_addf(&p, "%s %s", b->plugins[i].name, b->plugins[i].version);
		e->plugins[i] = pstrdup(r, ap_buf_str(&p));
		ap_buf_free(&p);
	}
	env_evidence(r, e, s);
	env_numeric(r, e);
	env_limits(r, e);
}

/* ------------------------------------------------------------ scope */

/* Whether check c of kind/name was seen in an environment before env i, or
 * before check k of env i. */
static int seen_before(const struct ap_report *r, size_t i, size_t k, const char *kind,
		       const char *name)
{
	for (size_t j = 0; j <= i; j++)
		for (size_t n = 0; n < (j < i ? r->envs[j].nchecks : k); n++) {
			const struct ap_fact_check *c = &r->envs[j].checks[n];
			if (!strcmp(ap_report_text(c->kind_word), kind) && !strcmp(ap_report_text(c->name), name))
				return 1;
		}
	return 0;
}

/* The focused checks in words, and the official nodes with the versions at
 * which they were found, across environments. */
static void model_scope(struct ap_report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nenvs; i++)
		n += r->envs[i].nchecks;
	r->probes = palloc(r, n, sizeof(*r->probes));
	r->nodes = palloc(r, n, sizeof(*r->nodes));
	for (size_t i = 0; r->probes && r->nodes && i < r->nenvs; i++)
		for (size_t k = 0; k < r->envs[i].nchecks; k++) {
			const struct ap_fact_check *c = &r->envs[i].checks[k];
			const char *kind = ap_report_text(c->kind_word), *name = ap_report_text(c->name);
			int official = !strcmp(kind, "official") && strstr(name, "::");
			if ((strcmp(kind, "probe") && strcmp(kind, "script") && !official) ||
			    seen_before(r, i, k, kind, name))
				continue;
			if (official)
				r->nodes[r->nnodes++] = (struct ap_report_node){
					name, r->envs[i].b->official_version };
			else
				r->probes[r->nprobes++] = (struct ap_report_probe){ name, c->says_en,
										    c->says_zh };
		}
}

/* ------------------------------------------------------------ docs */

/* Letters and digits of the ASCII part, lowercased: "Atlas A2 (910B3)" and
 * "<term>Atlas A2 训练系列产品</term>" meet on "atlasa2". */
static void norm(const char *s, size_t max, struct ap_buf *out)
{
	for (size_t i = 0; s[i] && i < max; i++)
		if (isalnum((unsigned char)s[i]) && !((unsigned char)s[i] & 0x80))
			ap_buf_addf(out, "%c", tolower((unsigned char)s[i]));
}

static const struct ap_report_env *env_for_product(const struct ap_report *r, const char *product)
{
	struct ap_buf pn = { 0 };
	const struct ap_report_env *hit = NULL;
	norm(product, strlen(product), &pn);
	for (size_t i = 0; i < r->nenvs; i++) {
		const char *label = r->envs[i].b->label;
		struct ap_buf ln = { 0 };
		if (label)
			norm(label, strcspn(label, "("), &ln);
		if (ln.len >= 3 && pn.len && strstr(ap_buf_str(&pn), ap_buf_str(&ln)))
			hit = &r->envs[i];
		ap_buf_free(&ln);
	}
	ap_buf_free(&pn);
	return hit;
}

/* The docs entry's products (review/docs.h writes them). */
static void docs_entry(struct ap_report *r, const struct ap_docs_entry *entry)
{
	struct ap_report_docs *d = &r->docs;
	d->entry = entry;
	d->api = entry->api;
	d->file = entry->file;
	d->line = entry->line;
	d->products = palloc(r, entry->nproducts, sizeof(*d->products));
	d->contradictions = palloc(r, entry->nproducts, sizeof(*d->contradictions));
	for (size_t i = 0; d->products && d->contradictions && i < entry->nproducts; i++)
		d->products[d->nproducts++] = (struct ap_report_product){
			entry->products[i].product, entry->products[i].supported };
}

static void model_docs(struct ap_report *r, const struct ap_docs_entries *docs)
{
	struct ap_report_docs *d = &r->docs;
	int exact = 0;
	if (!docs)
		return;
	d->checked = 1;
	const struct ap_docs_entry *entry = ap_docs_find(docs, r->target, &exact);
	d->exact = exact;
	if (entry)
		docs_entry(r, entry);
	for (size_t i = 0; i < d->nproducts; i++) {
		const struct ap_report_product *p = &d->products[i];
		const struct ap_report_env *e = env_for_product(r, p->product);
		if (!e)
			continue;
		d->compared++;
		enum ap_verdict ve = e->b->verdict;
		int works = ve == AP_CONSISTENT || ve == AP_CONSISTENT_WITH_LIMITS;
		if (p->supported != works)
			d->contradictions[d->ncontradictions++] = (struct ap_report_contradiction){
				p->product, e->name, ap_report_text(e->b->verdict_word), p->supported };
	}
}

/* ------------------------------------------------------------ conclusion */

static void model_conclusion(struct ap_report *r)
{
	struct ap_report_conclusion *c = &r->conclusion;
	c->consistent = palloc(r, r->nenvs, sizeof(char *));
	c->inconsistent = palloc(r, r->nenvs, sizeof(char *));
	c->unverified = palloc(r, r->nenvs, sizeof(char *));
	for (size_t i = 0; c->consistent && c->inconsistent && c->unverified && i < r->nenvs; i++) {
		enum ap_verdict v = r->envs[i].b->verdict;
		if (v == AP_INCONSISTENT)
			c->inconsistent[c->ninconsistent++] = r->envs[i].name;
		else if (v == AP_UNVERIFIED)
			c->unverified[c->nunverified++] = r->envs[i].name;
		else
			c->consistent[c->nconsistent++] = r->envs[i].name;
	}
	c->verdict = c->ninconsistent ? AP_INCONSISTENT : c->nconsistent ? AP_CONSISTENT
								      : AP_UNVERIFIED;
}

/* ------------------------------------------------------------ matrix and traces */

/* The check named kind/name in environment e, or NULL. */
static const struct ap_fact_check *env_check(const struct ap_report_env *e, const char *kind,
					     const char *name)
{
	for (size_t i = 0; i < e->nchecks; i++)
		if (!strcmp(ap_report_text(e->checks[i].kind_word), kind) &&
		    !strcmp(ap_report_text(e->checks[i].name), name))
			return &e->checks[i];
	return NULL;
}

/* The environments with the reference first, then the others in their
 * order: the order in which rows are first seen. order has room for all. */
static void envs_reference_first(const struct ap_report *r, const struct ap_report_env **order)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nenvs; i++)
		if (r->reference && !strcmp(r->envs[i].name, r->reference))
			order[n++] = &r->envs[i];
	for (size_t i = 0; i < r->nenvs; i++)
		if (!r->reference || strcmp(r->envs[i].name, r->reference))
			order[n++] = &r->envs[i];
}

/* A distinct check (kind, name) of any environment. */
struct check_id {
	const char *kind, *name;
};

/* Every distinct check of any environment, whatever its kind, the reference
 * environment's first: a new array of *n (in the pool). */
static struct check_id *distinct_checks(struct ap_report *r, size_t *n)
{
	size_t all = 0;
	*n = 0;
	for (size_t i = 0; i < r->nenvs; i++)
		all += r->envs[i].nchecks;
	const struct ap_report_env **order = palloc(r, r->nenvs, sizeof(*order));
	struct check_id *v = palloc(r, all, sizeof(*v));
	if (!order || !v)
		return NULL;
	envs_reference_first(r, order);
	for (size_t i = 0; i < r->nenvs; i++)
		for (size_t k = 0; k < order[i]->nchecks; k++) {
			const char *kind = ap_report_text(order[i]->checks[k].kind_word);
			const char *name = ap_report_text(order[i]->checks[k].name);
			size_t j = 0;
			while (j < *n && (strcmp(v[j].kind, kind) || strcmp(v[j].name, name)))
				j++;
			if (j == *n)
				v[(*n)++] = (struct check_id){ kind, name };
		}
	return v;
}

/* A matrix row: the check's status in every environment. */
static void matrix_row(struct ap_report *r, struct ap_report_row *row, const struct check_id *id)
{
	row->kind = id->kind;
	row->name = id->name;
	row->cells = palloc(r, r->nenvs, sizeof(*row->cells));
	for (size_t i = 0; row->cells && i < r->nenvs; i++) {
		const struct ap_fact_check *c = env_check(&r->envs[i], id->kind, id->name);
		row->cells[i] = (struct ap_report_cell){ r->envs[i].name, c != NULL,
			c ? c->status : AP_STATUS_UNKNOWN, c ? ap_report_text(c->status_word) : NULL,
			c ? c->reason : NULL };
	}
}

/* The overview: a column per environment (its verdict, whether it is the
 * reference), a row per check of any kind with a cell per environment. */
static void model_matrix(struct ap_report *r, const struct check_id *ids, size_t n)
{
	r->columns = palloc(r, r->nenvs, sizeof(*r->columns));
	for (size_t i = 0; r->columns && i < r->nenvs; i++) {
		const struct ap_report_env *e = &r->envs[i];
		r->columns[i] = (struct ap_report_column){ e->name, e->b->label, e->b->verdict_word,
			e->b->verdict, r->reference && !strcmp(r->reference, e->name) };
	}
	r->rows = palloc(r, n, sizeof(*r->rows));
	for (size_t i = 0; r->rows && i < n; i++)
		matrix_row(r, &r->rows[r->nrows++], &ids[i]);
}

/* Whether the judge named step of check among e's trace differences. */
static int judged_different(const struct ap_report_env *e, const char *check, const char *step)
{
	for (size_t i = 0; i < e->b->ndifferences; i++)
		if (!strcmp(e->b->differences[i].check, check) && !strcmp(e->b->differences[i].step, step))
			return 1;
	return 0;
}

/* A trace value as compact JSON text (none reads as null). */
static char *value_text(struct ap_report *r, const json_t *v)
{
	char *s = json_dumps(v ? v : json_null(), JSON_ENCODE_ANY | JSON_COMPACT);
	char *d = pstrdup(r, s ? s : "");
	free(s);
	return d;
}

/* Whether two trace values are the same, none reading as null (as the
 * page compares them). */
static int value_equal(const json_t *a, const json_t *b)
{
	return json_equal(a ? a : json_null(), b ? b : json_null());
}

/* Step i of a check's traces in every environment. The baseline is the
 * first environment of the reference-first order that ran the check; a step
 * differs where an environment that ran the check recorded another step or
 * value there (or none), or where the judge said so. */
static void trace_step(struct ap_report *r, const struct ap_report_env **order,
		       const struct check_id *id, size_t i, struct ap_report_step *st)
{
	const struct ap_fact_step *base = NULL;
	for (size_t k = 0; k < r->nenvs; k++) {
		const struct ap_fact_check *c = env_check(order[k], id->kind, id->name);
		if (c && !base && i < c->nsteps)
			base = &c->steps[i];
	}
	const char *step = base ? ap_report_text(base->step) : NULL;
	st->values = palloc(r, r->nenvs, sizeof(*st->values));
	for (size_t k = 0; st->values && k < r->nenvs; k++) {
		const struct ap_report_env *e = &r->envs[k];
		const struct ap_fact_check *c = env_check(e, id->kind, id->name);
		const struct ap_fact_step *s = c && i < c->nsteps ? &c->steps[i] : NULL;
		const char *ss = s ? ap_report_text(s->step) : NULL;
		if (!step)
			step = ss;
		if (c && (!s || !base || strcmp(ss, ap_report_text(base->step)) ||
			  !json_equal(s->value, base->value)))
			st->differs = 1;
		st->differs |= step && judged_different(e, id->name, step);
		st->values[k] = (struct ap_report_value){ e->name, c != NULL, ss, s ? s->value : NULL,
							  value_text(r, s ? s->value : NULL), 0 };
	}
	st->step = step ? step : "-";
	for (size_t k = 0; st->values && k < r->nenvs; k++) {
		struct ap_report_value *v = &st->values[k];
		if (v->ran && !st->base)
			st->base = v;
		v->odd = v->ran && (!v->step || strcmp(v->step, st->step) ||
				    !value_equal(v->value, st->base->value));
	}
}

static void trace_check(struct ap_report *r, const struct ap_report_env **order,
			const struct check_id *id)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nenvs; i++) {
		const struct ap_fact_check *c = env_check(&r->envs[i], id->kind, id->name);
		size_t len = c ? c->nsteps : 0;
		n = len > n ? len : n;
	}
	if (!n)
		return;
	struct ap_report_trace *t = &r->traces[r->ntraces++];
	t->kind = id->kind;
	t->check = id->name;
	t->steps = palloc(r, n, sizeof(*t->steps));
	for (size_t i = 0; t->steps && i < n; i++) {
		trace_step(r, order, id, i, &t->steps[t->nsteps]);
		t->differing += t->steps[t->nsteps++].differs;
	}
}

/* The traces side by side: per check that recorded one, its steps with
 * every environment's value and whether the step differs. */
static void model_traces(struct ap_report *r, const struct check_id *ids, size_t n)
{
	const struct ap_report_env **order = palloc(r, r->nenvs, sizeof(*order));
	r->traces = palloc(r, n, sizeof(*r->traces));
	if (!order || !r->traces)
		return;
	envs_reference_first(r, order);
	for (size_t i = 0; i < n; i++)
		trace_check(r, order, &ids[i]);
}

/* The target's signature in each environment that has a signature check,
 * and how it compares with the reference's (check/signature.h). */
static void model_signatures(struct ap_report *r)
{
	size_t all = 0;
	for (size_t i = 0; i < r->nenvs; i++)
		all += r->envs[i].nchecks;
	r->signatures = palloc(r, all, sizeof(*r->signatures));
	for (size_t i = 0; r->signatures && i < r->nenvs; i++)
		for (size_t k = 0; k < r->envs[i].nchecks; k++) {
			const struct ap_fact_check *c = &r->envs[i].checks[k];
			if (c->signature)
				r->signatures[r->nsignatures++] = (struct ap_report_signature){
					r->envs[i].name, ap_report_text(c->status_word), c->reason,
					r->envs[i].b->signature_text, c->status, &c->sig };
		}
}

/* ------------------------------------------------------------ the model */

/* The reference environment (as the first bundle that names one says)
 * speaks for the implementation; failing that, the first where the target
 * exists. */
static void model_reference(struct ap_report *r)
{
	for (size_t i = 0; i < r->nenvs && !r->reference; i++)
		r->reference = r->facts[i].reference;
	for (size_t i = 0; r->reference && i < r->nenvs && !r->impl; i++)
		if (!strcmp(r->envs[i].name, r->reference))
			r->impl = &r->facts[i];
	for (size_t i = 0; i < r->nenvs && !r->impl; i++)
		if (r->facts[i].found)
			r->impl = &r->facts[i];
	r->owner = r->impl ? r->impl->owner : NULL;
}

struct ap_report *ap_report_model(const struct ap_submission *s,
				  const struct ap_docs_entries *docs)
{
	struct ap_report *r = calloc(1, sizeof(*r));
	struct pool *p = calloc(1, sizeof(*p));
	if (!r || !p) {
		free(r);
		free(p);
		return NULL;
	}
	r->pool = p;
	r->facts = calloc(s->n ? s->n : 1, sizeof(*r->facts));
	r->envs = palloc(r, s->n, sizeof(*r->envs));
	for (size_t i = 0; r->facts && r->envs && i < s->n; i++) {
		p->oom |= ap_bundle_facts(s->v[i].bundle, &r->facts[i]) != 0;
		model_env(r, &r->envs[r->nenvs++], &s->v[i], &r->facts[i]);
	}
	r->target = ap_report_text(s->n && r->facts ? r->facts[0].target : NULL);
	r->tool_json = s->n && r->facts ? r->facts[0].tool_json : NULL;
	if (r->facts && r->envs) {
		size_t n;
		model_reference(r);
		model_scope(r);
		model_docs(r, docs);
		model_conclusion(r);
		struct check_id *ids = distinct_checks(r, &n);
		if (ids) {
			model_matrix(r, ids, n);
			model_traces(r, ids, n);
		}
		model_signatures(r);
	}
	if (!r->facts || p->oom) {
		ap_report_free(r);
		return NULL;
	}
	return r;
}

void ap_report_free(struct ap_report *r)
{
	if (!r)
		return;
	struct pool *p = r->pool;
	for (size_t i = 0; r->facts && i < r->nenvs; i++)
		ap_bundle_facts_free(&r->facts[i]);
	free(r->facts);
	while (p && p->head) {
		struct chunk *c = p->head;
		p->head = c->next;
		free(c);
	}
	free(p);
	free(r);
}
