/* reportjson.c - report.json: the report model (report.h) written out.
 *
 * One of the review layer's JSON borders: it writes JSON from the model's
 * fields and reads none (the open-ended values the model carries as the
 * bundles' JSON go out as they came in).
 */
#include "review/report.h"

/* Sets o[key] to v (taken); a NULL v (out of memory) leaves key out. */
static void put(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static json_t *text(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* A value of a bundle, as it was; null when there was none. */
static json_t *raw(const json_t *v)
{
	return v ? json_incref((json_t *)v) : json_null();
}

static json_t *number(struct ap_number n)
{
	return n.kind == AP_NUM_INT ? json_integer((json_int_t)n.i)
	     : n.kind == AP_NUM_REAL ? json_real(n.d) : json_null();
}

static json_t *flag(int b)
{
	return json_boolean(b);
}

static json_t *names(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, text(v[i]));
	return a;
}

static json_t *check_json(const struct ap_fact_check *c)
{
	json_t *o = json_object();
	put(o, "name", text(c->name));
	put(o, "kind", json_string(ap_report_text(c->kind_word)));
	put(o, "status", json_string(ap_report_text(c->status_word)));
	put(o, "reason", text(c->reason));
	put(o, "says_en", text(c->says_en));
	put(o, "says_zh", text(c->says_zh));
	put(o, "duration_ms", number(c->duration_ms));
	put(o, "trace", raw(c->trace_json));
	return o;
}

static json_t *numeric_json(const struct ap_report_numeric *r)
{
	json_t *o = json_object();
	put(o, "op", text(r->op));
	put(o, "dtype", json_string(r->dtype));
	put(o, "device", text(r->device));
	put(o, "against", json_string(r->against));
	put(o, "samples", json_integer(r->samples));
	put(o, "passed", json_integer(r->passed));
	put(o, "failed", json_integer(r->failed));
	put(o, "notrun", json_integer(r->notrun));
	put(o, "max_abs", json_real(r->max_abs));
	put(o, "max_rel", json_real(r->max_rel));
	put(o, "worst_ratio", json_real(r->worst_ratio));
	put(o, "rtol", number(r->rtol));
	put(o, "atol", number(r->atol));
	return o;
}

static json_t *limit_json(const struct ap_report_limit *l)
{
	json_t *o = json_object();
	put(o, "name", text(l->name));
	put(o, "backend", text(l->backend));
	put(o, "what", text(l->what));
	put(o, "reason", text(l->reason));
	put(o, "where", text(l->where));
	put(o, "samples", json_integer(l->samples));
	return o;
}

static json_t *env_lists(const struct ap_report_env *e, json_t *o)
{
	json_t *checks = json_array(), *evidence = json_array();
	json_t *numeric = json_array(), *limits = json_array();
	for (size_t i = 0; i < e->nchecks; i++)
		json_array_append_new(checks, check_json(&e->checks[i]));
	for (size_t i = 0; i < e->nevidence; i++)
		json_array_append_new(evidence, json_pack("{s:s, s:s, s:s}", "file", e->evidence[i].file,
							  "sha256", e->evidence[i].sha256, "path",
							  e->evidence[i].path));
	for (size_t i = 0; i < e->nnumeric; i++)
		json_array_append_new(numeric, numeric_json(&e->numeric[i]));
	for (size_t i = 0; i < e->nlimits; i++)
		json_array_append_new(limits, limit_json(&e->limits[i]));
	put(o, "checks", checks);
	put(o, "official_version", text(e->b->official_version));
	put(o, "evidence", evidence);
	put(o, "resolution", raw(e->b->resolution_json));
	put(o, "adaptation", raw(e->b->adaptation_json));
	put(o, "differences", raw(e->b->differences_json));
	put(o, "reference", text(e->b->reference));
	put(o, "os", text(e->b->os));
	put(o, "numeric", numeric);
	put(o, "limits", limits);
	return o;
}

static json_t *env_json(const struct ap_report_env *e)
{
	const struct ap_bundle_facts *b = e->b;
	json_t *o = json_object();
	put(o, "name", json_string(e->name));
	put(o, "label", text(b->label));
	put(o, "device", text(b->device));
	put(o, "verdict", text(b->verdict_word));
	put(o, "verdict_reasons", raw(b->verdict_reasons_json));
	put(o, "error", text(b->error));
	put(o, "python", text(b->python));
	put(o, "torch", text(b->torch));
	put(o, "plugins", names((const char *const *)e->plugins, b->nplugins));
	put(o, "devices", raw(b->devices_json));
	put(o, "found", flag(b->found));
	put(o, "nearest", raw(b->nearest_json));
	put(o, "exit_code", json_integer(b->exit_code));
	put(o, "probes", json_pack("{s:i, s:i}", "passed", b->probes_passed, "total",
				   b->probes_total));
	return env_lists(e, o);
}

static json_t *scope_json(const struct ap_report *r)
{
	json_t *probes = json_array(), *nodes = json_array();
	for (size_t i = 0; i < r->nprobes; i++) {
		json_t *p = json_object();
		put(p, "name", json_string(r->probes[i].name));
		put(p, "says_en", text(r->probes[i].says_en));
		put(p, "says_zh", text(r->probes[i].says_zh));
		json_array_append_new(probes, p);
	}
	for (size_t i = 0; i < r->nnodes; i++) {
		json_t *n = json_object();
		put(n, "node", json_string(r->nodes[i].node));
		put(n, "version", text(r->nodes[i].version));
		json_array_append_new(nodes, n);
	}
	return json_pack("{s:o, s:o}", "probes", probes, "official_nodes", nodes);
}

static json_t *docs_json(const struct ap_report_docs *d)
{
	json_t *o = json_object(), *contra = json_array();
	put(o, "checked", flag(d->checked));
	if (!d->checked) {
		json_decref(contra);
		return o;
	}
	for (size_t i = 0; i < d->ncontradictions; i++) {
		const struct ap_report_contradiction *c = &d->contradictions[i];
		json_t *x = json_object();
		put(x, "product", json_string(c->product));
		put(x, "claimed", flag(c->claimed));
		put(x, "env", json_string(c->env));
		put(x, "verdict", json_string(c->verdict_word));
		json_array_append_new(contra, x);
	}
	put(o, "entry", d->entry ? ap_docs_entry_json(d->entry) : json_null());
	put(o, "exact", flag(d->exact));
	put(o, "contradictions", contra);
	put(o, "compared", json_integer(d->compared));
	return o;
}

static json_t *conclusion_json(const struct ap_report_conclusion *c)
{
	json_t *o = json_object();
	put(o, "verdict", json_string(ap_verdict_name(c->verdict)));
	put(o, ap_verdict_name(AP_CONSISTENT), names(c->consistent, c->nconsistent));
	put(o, ap_verdict_name(AP_INCONSISTENT), names(c->inconsistent, c->ninconsistent));
	put(o, ap_verdict_name(AP_UNVERIFIED), names(c->unverified, c->nunverified));
	return o;
}

static json_t *matrix_json(const struct ap_report *r)
{
	json_t *cols = json_array(), *rows = json_array();
	for (size_t i = 0; i < r->nenvs; i++) {
		const struct ap_report_column *c = &r->columns[i];
		json_t *o = json_object();
		put(o, "env", json_string(c->env));
		put(o, "label", text(c->label));
		put(o, "verdict", text(c->verdict_word));
		put(o, "reference", flag(c->reference));
		json_array_append_new(cols, o);
	}
	for (size_t i = 0; i < r->nrows; i++) {
		json_t *cells = json_array();
		for (size_t k = 0; k < r->nenvs; k++) {
			const struct ap_report_cell *c = &r->rows[i].cells[k];
			json_t *o = json_object();
			put(o, "env", json_string(c->env));
			put(o, "status", text(c->status_word));
			put(o, "reason", text(c->reason));
			json_array_append_new(cells, o);
		}
		json_array_append_new(rows, json_pack("{s:s, s:s, s:o}", "kind", r->rows[i].kind,
						      "name", r->rows[i].name, "cells", cells));
	}
	return json_pack("{s:o, s:o}", "columns", cols, "rows", rows);
}

static json_t *step_json(const struct ap_report_step *st, size_t nenvs)
{
	json_t *values = json_array();
	for (size_t k = 0; k < nenvs; k++) {
		const struct ap_report_value *v = &st->values[k];
		json_t *o = json_object();
		put(o, "env", json_string(v->env));
		put(o, "ran", flag(v->ran));
		put(o, "step", text(v->step));
		put(o, "value", raw(v->value));
		json_array_append_new(values, o);
	}
	return json_pack("{s:s, s:b, s:o}", "step", st->step, "differs", st->differs, "values",
			 values);
}

static json_t *traces_json(const struct ap_report *r)
{
	json_t *out = json_array();
	for (size_t i = 0; i < r->ntraces; i++) {
		const struct ap_report_trace *t = &r->traces[i];
		json_t *steps = json_array();
		for (size_t k = 0; k < t->nsteps; k++)
			json_array_append_new(steps, step_json(&t->steps[k], r->nenvs));
		json_array_append_new(out, json_pack("{s:s, s:s, s:I, s:o}", "kind", t->kind, "check",
						     t->check, "differing", (json_int_t)t->differing,
						     "steps", steps));
	}
	return out;
}

static json_t *signatures_json(const struct ap_report *r)
{
	json_t *out = json_array();
	for (size_t i = 0; i < r->nsignatures; i++) {
		const struct ap_report_signature *g = &r->signatures[i];
		json_t *o = json_object();
		put(o, "env", json_string(g->env));
		put(o, "status", json_string(g->status_word));
		put(o, "reason", text(g->reason));
		put(o, "text", text(g->text));
		put(o, "source", text(g->sig->source));
		put(o, "reference", text(g->sig->reference));
		put(o, "torch", text(g->sig->torch));
		put(o, "same_torch", g->sig->same_torch < 0 ? json_null() : flag(g->sig->same_torch));
		put(o, "differences", raw(g->sig->differences_json));
		json_array_append_new(out, o);
	}
	return out;
}

json_t *ap_report_json(const struct ap_report *r)
{
	json_t *m = json_object(), *envs = json_array();
	const struct ap_bundle_facts *impl = r->impl;
	put(m, "schema", json_string("apiparity.report/1"));
	put(m, "target", json_string(r->target));
	put(m, "tool", raw(r->tool_json));
	put(m, "scope", scope_json(r));
	put(m, "docs", docs_json(&r->docs));
	put(m, "resolution", raw(impl ? impl->resolution_json : NULL));
	put(m, "adaptation", raw(impl ? impl->adaptation_json : NULL));
	put(m, "conclusion", conclusion_json(&r->conclusion));
	put(m, "reference", text(r->reference));
	put(m, "matrix", matrix_json(r));
	put(m, "traces", traces_json(r));
	for (size_t i = 0; i < r->nenvs; i++)
		json_array_append_new(envs, env_json(&r->envs[i]));
	put(m, "environments", envs);
	put(m, "class", text(r->owner));
	put(m, "signatures", signatures_json(r));
	return m;
}
