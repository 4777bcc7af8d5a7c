/* view.c - bundle.json's keys as view.h's fields: the one place a reader's
 * keys are spelled (bundle.c spells the writer's). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/bundle.h"
#include "evidence/view.h"

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
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

static int device_trace_read(const json_t *dt, struct ap_device_trace_view *v)
{
	memset(v, 0, sizeof(*v));
	if (!dt)
		return 0;
	v->present = 1;
	v->available = json_is_true(json_object_get(dt, "available"));
	v->why = str(dt, "why");
	if (counts_read(json_object_get(dt, "ops"), &v->ops, &v->nops) ||
	    counts_read(json_object_get(dt, "tensor_devices"), &v->devices, &v->ndevices)) {
		free(v->ops);
		memset(v, 0, sizeof(*v));
		return -ENOMEM;
	}
	return 0;
}

static int steps_read(const json_t *trace, struct ap_step_view **out, size_t *n)
{
	size_t i;
	json_t *s;
	*out = NULL;
	*n = json_array_size(trace);
	if (!*n)
		return 0;
	if (!(*out = calloc(*n, sizeof(**out))))
		return -ENOMEM;
	json_array_foreach(trace, i, s) {
		(*out)[i].step = str(s, "step");
		(*out)[i].value = json_object_get(s, "value");
	}
	return 0;
}

int ap_check_view_read(const json_t *c, struct ap_check_view *v)
{
	const json_t *ref = json_object_get(c, "reference_status");
	memset(v, 0, sizeof(*v));
	v->obj = c;
	v->name = str(c, "name");
	v->reason = str(c, "reason");
	v->kind = ap_check_kind_parse(str(c, "kind"));
	v->status_value = json_object_get(c, "status");
	v->status_word = json_string_value(v->status_value);
	v->status = ap_status_parse(v->status_word);
	v->has_reference_status = ref != NULL;
	v->reference_status = json_string_value(ref);
	v->against = str(c, "against");
	v->across = str(c, "across");
	v->across_torch_differs = json_is_false(json_object_get(c, "same_torch"));
	v->has_limit = json_object_get(c, "limit") != NULL;
	if (steps_read(json_object_get(c, "trace"), &v->steps, &v->nsteps))
		return -ENOMEM;
	if (device_trace_read(json_object_get(c, "device_trace"), &v->device_trace)) {
		free(v->steps);
		return -ENOMEM;
	}
	return 0;
}

void ap_check_view_free(struct ap_check_view *v)
{
	free(v->steps);
	free(v->device_trace.ops);
	free(v->device_trace.devices);
	memset(v, 0, sizeof(*v));
}

static int differences_read(const json_t *diffs, struct ap_bundle_view *v)
{
	size_t i;
	json_t *d;
	v->ndifferences = json_array_size(diffs);
	if (!v->ndifferences)
		return 0;
	if (!(v->differences = calloc(v->ndifferences, sizeof(*v->differences))))
		return -ENOMEM;
	json_array_foreach(diffs, i, d) {
		v->differences[i].check = str(d, "check");
		v->differences[i].step = str(d, "step");
		v->differences[i].expected = json_object_get(d, "expected");
		v->differences[i].seen = json_object_get(d, "seen");
	}
	return 0;
}

static int checks_read(const json_t *checks, struct ap_bundle_view *v)
{
	size_t i;
	json_t *c;
	if (!json_array_size(checks))
		return 0;
	if (!(v->checks = calloc(json_array_size(checks), sizeof(*v->checks))))
		return -ENOMEM;
	json_array_foreach(checks, i, c) {
		if (ap_check_view_read(c, &v->checks[i]))
			return -ENOMEM;
		v->nchecks++;
	}
	return 0;
}

int ap_bundle_view_read(const json_t *b, struct ap_bundle_view *v)
{
	const json_t *res = json_object_get(b, "resolution");
	const json_t *cmp = json_object_get(b, "comparison");
	memset(v, 0, sizeof(*v));
	v->target = str(b, "target");
	v->env_name = ap_bundle_env_name(b);
	v->failed = ap_bundle_failed(b);
	v->error_message = str(json_object_get(b, "error"), "message");
	v->resolved = ap_resolved(res);
	v->patched = json_is_true(json_object_get(json_object_get(res, "patch"), "patched"));
	v->canonical = str(res, "canonical");
	v->torch_version = ap_bundle_torch_version(b);
	v->reference = str(cmp, "reference");
	if (differences_read(json_object_get(cmp, "differences"), v) ||
	    checks_read(json_object_get(b, "checks"), v)) {
		ap_bundle_view_free(v);
		return -ENOMEM;
	}
	return 0;
}

void ap_bundle_view_free(struct ap_bundle_view *v)
{
	for (size_t i = 0; i < v->nchecks; i++)
		ap_check_view_free(&v->checks[i]);
	free(v->checks);
	free(v->differences);
	memset(v, 0, sizeof(*v));
}

const struct ap_check_view *ap_bundle_view_check(const struct ap_bundle_view *v,
						 const char *name)
{
	for (size_t i = 0; name && i < v->nchecks; i++)
		if (v->checks[i].name && !strcmp(v->checks[i].name, name))
			return &v->checks[i];
	return NULL;
}
