#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonutil.h"
#include "evidence/bundle.h"
#include "evidence/facts.h"

static const json_t *get(const json_t *o, const char *key)
{
	return json_object_get(o, key);
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(get(o, key));
}

static struct ap_number number(const json_t *v)
{
	if (json_is_integer(v))
		return (struct ap_number){ AP_NUM_INT, (long long)json_integer_value(v), 0 };
	if (json_is_real(v))
		return (struct ap_number){ AP_NUM_REAL, 0, json_real_value(v) };
	return (struct ap_number){ AP_NUM_NONE, 0, 0 };
}

/* A measurement's number: a JSON number, or the tag of inf/nan (taken as
 * the largest), as a double. */
static double worst(const json_t *v)
{
	if (json_is_number(v))
		return json_number_value(v);
	return json_is_object(v) ? HUGE_VAL : 0;
}

/* A new array of n elements of size each (n may be 0); NULL sets *oom. */
static void *array(size_t n, size_t size, int *oom)
{
	void *p = calloc(n ? n : 1, size);
	*oom |= !p;
	return p;
}

/* The strings of JSON array a (NULL for an element that is not one). */
static const char **strings(const json_t *a, size_t *n, int *oom)
{
	*n = json_array_size(a);
	const char **v = array(*n, sizeof(*v), oom);
	for (size_t i = 0; v && i < *n; i++)
		v[i] = json_string_value(json_array_get(a, i));
	return v;
}

static void read_devices(const json_t *fp, struct ap_bundle_facts *f, int *oom)
{
	size_t i;
	json_t *d;
	f->devices_json = get(fp, "devices");
	f->ndevices = json_array_size(f->devices_json);
	f->devices = array(f->ndevices, sizeof(*f->devices), oom);
	json_array_foreach(f->devices_json, i, d) {
		if (!f->devices)
			break;
		f->devices[i] = (struct ap_fact_device){
			ap_json_text(d, "type"), (long long)json_integer_value(get(d, "count")),
			json_string_value(json_array_get(get(d, "names"), 0)),
			json_array_size(get(d, "names")), json_is_true(get(d, "available")),
			ap_json_text(d, "reason") };
	}
}

static void read_fingerprint(const json_t *fp, struct ap_bundle_facts *f, int *oom)
{
	size_t i;
	json_t *p;
	f->python = str(get(fp, "python"), "version");
	f->torch = str(get(fp, "torch"), "version");
	f->os = str(get(fp, "os"), "name");
	f->nplugins = json_array_size(get(fp, "plugins"));
	f->plugins = array(f->nplugins, sizeof(*f->plugins), oom);
	json_array_foreach(get(fp, "plugins"), i, p)
		if (f->plugins)
			f->plugins[i] = (struct ap_fact_plugin){ ap_json_text(p, "name"),
								 ap_json_text(p, "version") };
	f->fingerprint_json = fp;
	read_devices(fp, f, oom);
}

static void read_resolution(const json_t *b, struct ap_bundle_facts *f, int *oom)
{
	const json_t *r = get(b, "resolution"), *a = get(b, "adaptation");
	f->resolution_json = r;
	f->found = ap_resolved(r);
	f->patched = json_is_true(get(get(r, "patch"), "patched"));
	f->canonical = str(r, "canonical");
	f->nearest_json = get(r, "nearest");
	f->nearest = strings(f->nearest_json, &f->nnearest, oom);
	f->impl_file = str(r, "file");
	f->impl_line = (long long)json_integer_value(get(r, "line"));
	f->impl_kind = str(r, "kind");
	f->owner = str(r, "owner");
	f->signature_text = str(r, "signature");
	f->doc = json_is_boolean(get(r, "doc")) ? json_is_true(get(r, "doc")) : -1;
	f->adaptation_json = a;
	f->conclusion_en = str(a, "conclusion_en");
	f->conclusion_zh = str(a, "conclusion_zh");
	f->device_independent = json_is_true(get(a, "device_independent"));
}

static void read_numeric(const json_t *c, struct ap_fact_check *k, int *oom)
{
	size_t i;
	json_t *m;
	if (k->kind == AP_KIND_NUMERIC) {
		k->across = str(c, "across");
		k->across_torch_differs = json_is_false(get(c, "same_torch"));
		k->device_vs_cpu = !k->across && str(c, "against") &&
				   !strcmp(str(c, "against"), "cpu");
	}
	k->numeric = k->kind == AP_KIND_NUMERIC && get(c, "op");
	if (!k->numeric)
		return;
	k->op = str(c, "op");
	k->device = str(c, "device");
	k->dtype = str(c, "dtype");
	k->against = str(c, "across") ? str(c, "across") : str(c, "against");
	k->nmeasures = json_array_size(get(c, "measurements"));
	k->measures = array(k->nmeasures, sizeof(*k->measures), oom);
	json_array_foreach(get(c, "measurements"), i, m) {
		const json_t *d = get(m, "default");
		if (k->measures)
			k->measures[i] = (struct ap_fact_measure){
				str(m, "output"), worst(get(m, "max_abs")), worst(get(m, "max_rel")),
				worst(get(m, "worst_ratio")), number(get(m, "rtol")),
				number(get(m, "atol")), str(m, "tol_source"), json_is_object(d),
				number(get(d, "rtol")), number(get(d, "atol")),
				number(get(d, "mismatches")), worst(get(d, "worst_ratio")) };
	}
}

static void read_signature(const json_t *c, struct ap_fact_check *k, int *oom)
{
	const json_t *d = get(c, "signature");
	size_t i;
	json_t *x;
	k->signature = k->kind == AP_KIND_SIGNATURE && json_is_object(d);
	if (!k->signature)
		return;
	const json_t *same = get(d, "same_torch");
	k->sig.source = str(d, "source");
	k->sig.reference = str(d, "reference");
	k->sig.torch = str(d, "torch");
	k->sig.same_torch = json_is_boolean(same) ? json_is_true(same) : -1;
	k->sig.differences_json = get(d, "differences");
	k->sig.ndifferences = json_array_size(k->sig.differences_json);
	k->sig.differences = array(k->sig.ndifferences, sizeof(char *), oom);
	json_array_foreach(k->sig.differences_json, i, x)
		if (k->sig.differences)
			k->sig.differences[i] = ap_json_text(x, "text");
}

/* The members of object o as counts, in o's order; 0 or -ENOMEM. */
static int counts_read(const json_t *o, struct ap_count_view **out, size_t *n)
{
	const char *k;
	json_t *x;
	size_t i = 0;
	*out = NULL;
	*n = 0;
	if (!json_object_size(o))
		return 0;
	if (!(*out = calloc(json_object_size(o), sizeof(**out))))
		return -ENOMEM;
	json_object_foreach((json_t *)o, k, x) {
		(*out)[i].name = k;
		(*out)[i++].n = (long long)json_integer_value(x);
	}
	*n = i;
	return 0;
}

static int read_device_trace(const json_t *dt, struct ap_device_trace_view *v)
{
	memset(v, 0, sizeof(*v));
	if (!dt)
		return 0;
	v->present = 1;
	v->available = json_is_true(get(dt, "available"));
	v->why = str(dt, "why");
	if (counts_read(get(dt, "ops"), &v->ops, &v->nops) ||
	    counts_read(get(dt, "tensor_devices"), &v->devices, &v->ndevices))
		return -ENOMEM;
	return 0;
}

static void read_check(const json_t *c, struct ap_fact_check *k, int *oom)
{
	size_t i;
	json_t *s;
	const json_t *ref = get(c, "reference_status");
	k->json = c;
	k->name = str(c, "name");
	k->kind_word = str(c, "kind");
	k->kind = ap_check_kind_parse(k->kind_word);
	k->status_json = get(c, "status");
	k->status_word = json_string_value(k->status_json);
	k->status = ap_status_parse(k->status_word);
	k->has_reference_status = ref != NULL;
	k->reference_status = json_string_value(ref);
	const json_t *l = get(c, "limit");
	k->has_limit = l != NULL;
	k->limit = (struct ap_fact_limit){ str(l, "name"), str(l, "backend"), str(l, "what"),
					   str(l, "reason"), str(l, "where"), str(l, "raised"),
					   str(l, "message") };
	k->node = str(c, "node");
	if (read_device_trace(get(c, "device_trace"), &k->device_trace))
		*oom = 1;
	k->reference_status_json = ref;
	k->reason = str(c, "reason");
	k->says_en = str(get(c, "says"), "en");
	k->says_zh = str(get(c, "says"), "zh");
	k->duration_ms = number(get(c, "duration_ms"));
	k->trace_json = get(c, "trace");
	k->nsteps = json_array_size(k->trace_json);
	k->steps = array(k->nsteps, sizeof(*k->steps), oom);
	json_array_foreach(k->trace_json, i, s)
		if (k->steps)
			k->steps[i] = (struct ap_fact_step){ str(s, "step"), get(s, "value") };
	read_numeric(c, k, oom);
	read_signature(c, k, oom);
}

static void read_comparison(const json_t *b, struct ap_bundle_facts *f, int *oom)
{
	const json_t *cmp = get(b, "comparison");
	size_t i;
	json_t *d;
	f->comparison_json = cmp;
	f->reference = str(cmp, "reference");
	f->differences_json = get(cmp, "differences");
	f->ndifferences = json_array_size(f->differences_json);
	f->differences = array(f->ndifferences, sizeof(*f->differences), oom);
	json_array_foreach(f->differences_json, i, d)
		if (f->differences)
			f->differences[i] = (struct ap_fact_difference){
				ap_json_text(d, "check"), ap_json_text(d, "step"), get(d, "expected"),
				get(d, "seen") };
}

static void read_checks(const json_t *b, struct ap_bundle_facts *f, int *oom)
{
	size_t i;
	json_t *c;
	f->checks_json = get(b, "checks");
	f->device_trace_json = get(b, "device_trace");
	f->nchecks = json_array_size(f->checks_json);
	f->checks = array(f->nchecks, sizeof(*f->checks), oom);
	json_array_foreach(f->checks_json, i, c)
		if (f->checks)
			read_check(c, &f->checks[i], oom);
}

int ap_bundle_facts(const json_t *b, struct ap_bundle_facts *f)
{
	const json_t *env = get(b, "env"), *err = get(b, "error");
	int oom = 0;
	memset(f, 0, sizeof(*f));
	f->target = str(b, "target");
	f->env_name = ap_bundle_env_name(b);
	f->tool_json = get(b, "tool");
	f->env_json = env;
	f->label = str(env, "label");
	f->signer_key = str(get(b, "signer"), "key");
	f->device = str(env, "device");
	f->verdict_word = str(b, "verdict");
	f->verdict = ap_bundle_verdict(b);
	f->verdict_reasons_json = get(b, "verdict_reasons");
	f->verdict_reasons = strings(f->verdict_reasons_json, &f->nverdict_reasons, &oom);
	f->error_json = err;
	f->failed = ap_bundle_failed(b);
	f->error = json_is_null(err) ? NULL : str(err, "message");
	f->exit_code = f->failed ? (long long)json_integer_value(get(err, "exit_code"))
				 : f->verdict == AP_INCONSISTENT;
	read_fingerprint(get(b, "fingerprint"), f, &oom);
	read_resolution(b, f, &oom);
	ap_bundle_probe_counts(b, &f->probes_passed, &f->probes_total);
	f->official_version = str(get(b, "official"), "package_version");
	read_comparison(b, f, &oom);
	read_checks(b, f, &oom);
	if (oom) {
		ap_bundle_facts_free(f);
		return -ENOMEM;
	}
	return 0;
}

static void check_free(struct ap_fact_check *k)
{
	free(k->steps);
	free(k->measures);
	free(k->sig.differences);
	free(k->device_trace.ops);
	free(k->device_trace.devices);
}

int ap_checks_facts(const json_t *checks, struct ap_fact_check **v, size_t *n)
{
	int oom = 0;
	*n = json_array_size(checks);
	*v = array(*n, sizeof(**v), &oom);
	for (size_t i = 0; *v && i < *n; i++)
		read_check(json_array_get(checks, i), &(*v)[i], &oom);
	if (oom) {
		ap_checks_facts_free(*v, *v ? *n : 0);
		*v = NULL;
		*n = 0;
		return -ENOMEM;
	}
	return 0;
}

void ap_checks_facts_free(struct ap_fact_check *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		check_free(&v[i]);
	free(v);
}

void ap_bundle_facts_free(struct ap_bundle_facts *f)
{
	for (size_t i = 0; f->checks && i < f->nchecks; i++)
		check_free(&f->checks[i]);
	free(f->checks);
	free(f->verdict_reasons);
	free(f->plugins);
	free(f->devices);
	free(f->nearest);
	free(f->differences);
	memset(f, 0, sizeof(*f));
}

const struct ap_fact_check *ap_facts_find_check(const struct ap_fact_check *v, size_t n,
						const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (v[i].name && !strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static int overload_read(const json_t *o, struct ap_fact_overload *v)
{
	const json_t *params = get(o, "params");
	size_t i;
	json_t *p;
	int oom = 0;
	v->name = ap_json_text(o, "name");
	v->text = ap_json_text(o, "text");
	v->has_params = json_is_array(params);
	v->nparams = json_array_size(params);
	v->params = array(v->nparams, sizeof(*v->params), &oom);
	json_array_foreach(params, i, p)
		if (v->params)
			v->params[i] = (struct ap_fact_param){
				ap_json_text(p, "name"), ap_json_text(p, "kind"), get(p, "default"),
				get(p, "default_repr") != NULL, ap_json_text(p, "default_repr") };
	return oom ? -ENOMEM : 0;
}

void ap_sigdata_free(struct ap_fact_sigdata *s)
{
	for (size_t i = 0; s->overloads && i < s->noverloads; i++)
		free(s->overloads[i].params);
	free(s->overloads);
	memset(s, 0, sizeof(*s));
}

int ap_sigdata_read(const json_t *sig, struct ap_fact_sigdata *s)
{
	const json_t *overloads = get(sig, "overloads");
	int oom = 0;
	memset(s, 0, sizeof(*s));
	s->callable = json_is_true(get(sig, "callable"));
	s->source_json = get(sig, "source");
	s->has_source = json_is_string(s->source_json);
	s->source = ap_json_text(sig, "source");
	s->why = str(sig, "why");
	s->noverloads = json_array_size(overloads);
	s->overloads = array(s->noverloads, sizeof(*s->overloads), &oom);
	for (size_t i = 0; s->overloads && i < s->noverloads; i++)
		if (overload_read(json_array_get(overloads, i), &s->overloads[i]))
			oom = 1;
	if (oom) {
		ap_sigdata_free(s);
		return -ENOMEM;
	}
	return 0;
}

int ap_found_facts(const json_t *found, struct ap_fact_found **v, size_t *n)
{
	int oom = 0;
	*n = json_array_size(found);
	*v = array(*n, sizeof(**v), &oom);
	for (size_t i = 0; *v && i < *n; i++) {
		const json_t *t = json_array_get(found, i), *uses = get(t, "matches");
		struct ap_fact_found *f = &(*v)[i];
		f->score = (long long)json_integer_value(get(t, "score"));
		f->node = str(t, "node");
		f->notrun = str(t, "notrun");
		f->nuses = json_array_size(uses);
		f->uses = array(f->nuses, sizeof(*f->uses), &oom);
		for (size_t k = 0; f->uses && k < f->nuses; k++) {
			const json_t *m = json_array_get(uses, k);
			f->uses[k] = (struct ap_fact_use){ (long long)json_integer_value(get(m, "line")),
							   str(m, "text") };
		}
	}
	if (oom) {
		ap_found_facts_free(*v, *v ? *n : 0);
		*v = NULL;
		*n = 0;
		return -ENOMEM;
	}
	return 0;
}

void ap_found_facts_free(struct ap_fact_found *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].uses);
	free(v);
}
