/* sweepfile.c - sweep.json and a sweep journal's records (see sweepfile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "evidence/journal.h"
#include "evidence/sweepfile.h"

static const char *const states[] = { "running", "complete", "failed" };
#define NSTATES (sizeof(states) / sizeof(states[0]))

const char *ap_sweep_state_name(enum ap_sweep_state s)
{
	return s >= 0 && (size_t)s < NSTATES ? states[s] : "?";
}

static enum ap_sweep_state state_parse(const char *w)
{
	for (size_t i = 0; w && i < NSTATES; i++)
		if (!strcmp(w, states[i]))
			return (enum ap_sweep_state)i;
	return AP_SWEEP_STATE_UNKNOWN;
}

int ap_sweep_meta_set(char **dst, const char *s)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

static void strs_free(struct ap_matrix_strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct ap_matrix_strs){ 0 };
}

/* *d = the strings of the JSON array a (its strings only), set. */
static int strs_of(struct ap_matrix_strs *d, const json_t *a)
{
	size_t i;
	json_t *x;
	*d = (struct ap_matrix_strs){ .set = 1 };
	if (json_array_size(a) && !(d->v = calloc(json_array_size(a), sizeof(*d->v))))
		return -ENOMEM;
	json_array_foreach(a, i, x)
		if (json_is_string(x) && !(d->v[d->n++] = strdup(json_string_value(x))))
			return -ENOMEM;
	return 0;
}

static json_t *strs_json(const struct ap_matrix_strs *s)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->n; i++)
		json_array_append_new(a, json_string(s->v[i]));
	return a;
}

static void env_free(struct ap_sweep_meta_env *e)
{
	free(e->name);
	free(e->label);
	free(e->torch);
	free(e->adapter);
	strs_free(&e->plugins);
}

int ap_sweep_meta_add_env(struct ap_sweep_meta *m, const char *name, const char *label,
			  const char *torch, const struct ap_matrix_strs *plugins)
{
	struct ap_sweep_meta_env *v = realloc(m->envs, (m->nenvs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->envs = v;
	struct ap_sweep_meta_env *e = &v[m->nenvs++];
	*e = (struct ap_sweep_meta_env){ 0 };
	int r = ap_sweep_meta_set(&e->name, name);
	r = r ? r : ap_sweep_meta_set(&e->label, label);
	r = r ? r : ap_sweep_meta_set(&e->torch, torch);
	if (!r && plugins && plugins->set) {
		e->plugins.set = 1;
		e->plugins.v = plugins->n ? calloc(plugins->n, sizeof(char *)) : NULL;
		r = plugins->n && !e->plugins.v ? -ENOMEM : 0;
		for (size_t i = 0; !r && i < plugins->n; i++)
			r = ap_sweep_meta_set(&e->plugins.v[e->plugins.n++], plugins->v[i]);
	}
	return r;
}

void ap_sweep_meta_free(struct ap_sweep_meta *m)
{
	free(m->tool);
	free(m->version);
	free(m->commit);
	for (size_t i = 0; i < m->nenvs; i++)
		env_free(&m->envs[i]);
	free(m->envs);
	free(m->depth);
	free(m->catalog);
	*m = (struct ap_sweep_meta){ 0 };
}

/* Sets key to the string s in o, unless s is NULL. */
static void set_str(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_string(s));
}

static json_t *env_json(const struct ap_sweep_meta_env *e)
{
	json_t *o = json_object();
	set_str(o, "name", e->name);
	set_str(o, "label", e->label);
	set_str(o, "torch", e->torch);
	if (e->plugins.set)
		json_object_set_new(o, "plugins", strs_json(&e->plugins));
	set_str(o, "adapter", e->adapter);
	return o;
}

static json_t *meta_json(const struct ap_sweep_meta *m)
{
	json_t *o = json_object(), *tool = json_object(), *envs = json_array();
	set_str(o, "schema", AP_SWEEP_SCHEMA);
	set_str(tool, "name", m->tool);
	set_str(tool, "version", m->version);
	set_str(tool, "commit", m->commit);
	json_object_set_new(o, "tool", tool);
	for (size_t i = 0; i < m->nenvs; i++)
		json_array_append_new(envs, env_json(&m->envs[i]));
	json_object_set_new(o, "envs", envs);
	set_str(o, "depth", m->depth);
	set_str(o, "catalog", m->catalog);
	if (m->state != AP_SWEEP_STATE_UNKNOWN)
		set_str(o, "state", ap_sweep_state_name(m->state));
	json_object_set_new(o, "shard", m->sharded ? json_pack("{s:I, s:I}", "index",
				(json_int_t)m->index, "count", (json_int_t)m->count) : json_null());
	if (m->has_samples)
		json_object_set_new(o, "samples", json_integer(m->samples));
	return o;
}

int ap_sweep_meta_render(const struct ap_sweep_meta *m, struct ap_buf *out)
{
	json_t *o = meta_json(m);
	char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	json_decref(o);
	if (!s)
		return -ENOMEM;
	ap_buf_adds(out, s);
	ap_buf_adds(out, "\n");
	free(s);
	return 0;
}

static int take(char **dst, const json_t *o, const char *key)
{
	return ap_sweep_meta_set(dst, json_string_value(json_object_get(o, key)));
}

static int meta_envs(struct ap_sweep_meta *m, const json_t *envs)
{
	size_t i;
	json_t *e;
	int r = 0;
	json_array_foreach(envs, i, e) {
		struct ap_matrix_strs plugins = { 0 };
		const json_t *p = json_object_get(e, "plugins");
		r = json_is_array(p) ? strs_of(&plugins, p) : 0;
		r = r ? r : ap_sweep_meta_add_env(m, json_string_value(json_object_get(e, "name")),
				json_string_value(json_object_get(e, "label")),
				json_string_value(json_object_get(e, "torch")), &plugins);
		r = r ? r : ap_sweep_meta_set(&m->envs[m->nenvs - 1].adapter,
					      json_string_value(json_object_get(e, "adapter")));
		strs_free(&plugins);
		if (r)
			break;
	}
	return r;
}

static int meta_from_json(const json_t *o, struct ap_sweep_meta *m)
{
	const json_t *tool = json_object_get(o, "tool"), *sh = json_object_get(o, "shard");
	const json_t *samples = json_object_get(o, "samples");
	int r = take(&m->tool, tool, "name");
	r = r ? r : take(&m->version, tool, "version");
	r = r ? r : take(&m->commit, tool, "commit");
	r = r ? r : meta_envs(m, json_object_get(o, "envs"));
	r = r ? r : take(&m->depth, o, "depth");
	r = r ? r : take(&m->catalog, o, "catalog");
	m->state = state_parse(json_string_value(json_object_get(o, "state")));
	m->sharded = json_is_object(sh);
	m->index = json_integer_value(json_object_get(sh, "index"));
	m->count = json_integer_value(json_object_get(sh, "count"));
	m->has_samples = json_is_integer(samples);
	m->samples = json_integer_value(samples);
	return r;
}

int ap_sweep_meta_read(const char *dir, struct ap_sweep_meta *m, struct ap_buf *why)
{
	struct ap_buf path = { 0 }, text = { 0 };
	*m = (struct ap_sweep_meta){ 0 };
	ap_buf_addf(&path, "%s/%s", dir, AP_SWEEP_META_NAME);
	int r = ap_read_file_limited(ap_buf_str(&path), 1u << 20, &text);
	json_t *o = r ? NULL : json_loadb(ap_buf_str(&text), text.len, 0, NULL);
	const char *schema = json_string_value(json_object_get(o, "schema"));
	if (r)
		ap_buf_addf(why, "%s: %s", ap_buf_str(&path), ap_strerror(r));
	else if (!schema || strcmp(schema, AP_SWEEP_SCHEMA)) {
		ap_buf_addf(why, "%s: not a sweep's %s", ap_buf_str(&path), AP_SWEEP_META_NAME);
		r = -AP_EPROTO;
	} else if ((r = meta_from_json(o, m)))
		ap_buf_addf(why, "%s: %s", ap_buf_str(&path), ap_strerror(r));
	if (r)
		ap_sweep_meta_free(m);
	json_decref(o);
	ap_buf_free(&path);
	ap_buf_free(&text);
	return r;
}

/* --- journal records ----------------------------------------------------- */

static const char start_type[] = "sweep-start", api_type[] = "api", entry_type[] = "entry";
static const char entry_ok[] = "ok";

const char *ap_sweep_entry_status_name(enum ap_line_status s)
{
	return s == AP_LSTATUS_PRESENT ? entry_ok : ap_line_status_name(s);
}

/* The status of an entry record: ok when it says none. */
static enum ap_line_status entry_status_parse(const char *w)
{
	return !w || !strcmp(w, entry_ok) ? AP_LSTATUS_PRESENT : ap_line_status_parse(w);
}

static json_t *record(const char *type, json_t *data)
{
	return data ? json_pack("{s:s, s:o}", "type", type, "data", data) : NULL;
}

json_t *ap_sweep_start_json(const struct ap_sweep_start *s)
{
	json_t *d = json_pack("{s:s, s:s, s:s, s:s?}", "env", s->env, "catalog", s->catalog,
			      "depth", s->depth, "shard", s->shard);
	/* samples of another count would not be this run's lines either */
	if (d && s->has_samples)
		json_object_set_new(d, "samples", json_integer(s->samples));
	return record(start_type, d);
}

json_t *ap_sweep_api_json(const struct ap_matrix_line *l)
{
	return record(api_type, ap_matrix_line_json(l));
}

json_t *ap_sweep_entry_json(const struct ap_sweep_entry *e)
{
	return record(entry_type, json_pack("{s:s, s:s, s:s?, s:I}", "entry", e->entry, "status",
					    ap_sweep_entry_status_name(e->status), "reason",
					    e->reason, "apis", (json_int_t)e->apis));
}

void ap_sweep_entry_free(struct ap_sweep_entry *e)
{
	free(e->entry);
	free(e->reason);
	*e = (struct ap_sweep_entry){ 0 };
}

/* Reads an entry record's data d into *e: 0, 1 when it names no entry,
 * -ENOMEM. */
static int entry_read(const json_t *d, struct ap_sweep_entry *e)
{
	const char *name = json_string_value(json_object_get(d, "entry"));
	const json_t *apis = json_object_get(d, "apis");
	*e = (struct ap_sweep_entry){ 0 };
	if (!name)
		return 1;
	e->status = entry_status_parse(json_string_value(json_object_get(d, "status")));
	e->apis = (size_t)json_integer_value(apis);
	if (ap_sweep_meta_set(&e->entry, name) ||
	    ap_sweep_meta_set(&e->reason, json_string_value(json_object_get(d, "reason")))) {
		ap_sweep_entry_free(e);
		return -ENOMEM;
	}
	return 0;
}

/* Reads one record: 0, 1 when it is none of ours or not whole, -ENOMEM. */
static int record_read(const json_t *rec, struct ap_sweep_record *x)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	const json_t *d = json_object_get(rec, "data");
	int r = 1;
	*x = (struct ap_sweep_record){ 0 };
	if (type && !strcmp(type, api_type)) {
		x->type = AP_SWEEP_REC_API;
		r = ap_matrix_line_from_json(d, &x->line);
		r = r == -ENOMEM ? r : r ? 1 : 0;
	} else if (type && !strcmp(type, entry_type)) {
		x->type = AP_SWEEP_REC_ENTRY;
		r = entry_read(d, &x->entry);
	}
	return r;
}

static int same_start(const json_t *recs, const struct ap_sweep_start *start, int *same)
{
	json_t *want = ap_sweep_start_json(start);
	if (!want)
		return -ENOMEM;
	*same = !json_array_size(recs) || json_equal(json_array_get(recs, 0), want);
	json_decref(want);
	return 0;
}

int ap_sweep_journal_read(const char *path, const struct ap_sweep_start *start,
			  struct ap_sweep_records *out, int *same, struct ap_buf *err)
{
	json_t *recs = NULL, *rec;
	int torn = 0;
	size_t i;
	*out = (struct ap_sweep_records){ 0 };
	int r = ap_journal_read(path, &recs, &torn, err);
	r = r ? r : same_start(recs, start, same);
	if (!r && *same && json_array_size(recs) &&
	    !(out->v = calloc(json_array_size(recs), sizeof(*out->v))))
		r = -ENOMEM;
	json_array_foreach(recs, i, rec) {
		if (r || !*same)
			break;
		int k = record_read(rec, &out->v[out->n]);
		if (k < 0)
			r = k;
		else if (!k)
			out->n++;
	}
	json_decref(recs);
	if (r)
		ap_sweep_records_free(out);
	return r;
}

void ap_sweep_records_free(struct ap_sweep_records *r)
{
	for (size_t i = 0; i < r->n; i++) {
		ap_matrix_line_free(&r->v[i].line);
		ap_sweep_entry_free(&r->v[i].entry);
	}
	free(r->v);
	*r = (struct ap_sweep_records){ 0 };
}
