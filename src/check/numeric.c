#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/jsonutil.h"
#include "base/sha256.h"
#include "check/limits.h"
#include "check/numeric.h"
#include "check/probe.h"
#include "check/tolerances.h"
#include "env/frame.h"
#include "env/protocol.h"
#include "evidence/bundle.h"
#include "evidence/cases.h"

#define MAX_DEVICES 8
#define DEVICE_NAME_MAX 32
/* A dimension past this is no OpInfo sample: refused before any arithmetic. */
#define DIM_MAX (INT64_C(1) << 40)
/* The tag of a tensor's payload in the frames: the one key of its object. */
#define TENSOR_TAG "$tensor"

static const char *const default_dtypes[] = { "float32", "float64", "bfloat16", "float16",
					      "int64", "bool" };

/* The device names of a devices string (spaces or commas between), "cpu"
 * left out: it is always run. The count. */
static size_t device_list(const char *devices, char out[MAX_DEVICES][DEVICE_NAME_MAX])
{
	size_t n = 0;
	const char *p = devices ? devices : "";
	while (*p && n < MAX_DEVICES) {
		size_t k = strcspn(p, " ,\t");
		if (k && k < DEVICE_NAME_MAX && !(k == 3 && !strncmp(p, "cpu", 3))) {
			memcpy(out[n], p, k);
			out[n++][k] = '\0';
		}
		p += k;
		p += strspn(p, " ,\t");
	}
	return n;
}

static json_t *device_array(const char *devices)
{
	char d[MAX_DEVICES][DEVICE_NAME_MAX];
	size_t n = device_list(devices, d);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(d[i]));
	return a;
}

json_t *ap_numeric_opinfo_request(const char *target, const char *devices)
{
	return ap_proto_opinfo(target, device_array(devices));
}

int ap_numeric_covered(const json_t *opinfo)
{
	return ap_proto_opinfo_count(opinfo) > 0;
}

json_t *ap_numeric_samples_request(const char *target, int max_samples, long seed)
{
	json_t *dt = json_array();
	for (size_t i = 0; i < sizeof(default_dtypes) / sizeof(default_dtypes[0]); i++)
		json_array_append_new(dt, json_string(default_dtypes[i]));
	return ap_proto_samples(target, dt, max_samples, seed);
}

/* A text field as the checks word it: "-" when absent. */
static const char *txt(const char *s)
{
	return s ? s : "-";
}

/* The entry of opinfo sample s is of (the last of its name and variant, as
 * the worker keys them), into op; 0 when none. */
static int entry_of(const json_t *opinfo, const struct ap_proto_sample *s,
		    struct ap_proto_opinfo_op *op)
{
	int found = 0;
	for (size_t i = 0; i < ap_proto_opinfo_count(opinfo); i++) {
		struct ap_proto_opinfo_op o;
		ap_proto_opinfo_op(opinfo, i, &o);
		if (o.name && !strcmp(o.name, txt(s->op)) && !strcmp(o.variant, txt(s->variant))) {
			*op = o;
			found = 1;
		}
	}
	return found;
}

/* Whether sample s runs on side (the policy: not where this environment's
 * OpInfo entry names the dtypes it supports there, and not s's); why
 * says so when not. An entry that is not there, or says nothing of side,
 * lets it run. */
static int runs_on(const json_t *opinfo, const struct ap_proto_sample *s, const char *side,
		   struct ap_buf *why)
{
	const char *dt = s->dtype;
	struct ap_proto_opinfo_op op;
	/* A dtype sample is there to see who accepts what is not claimed. */
	if (!dt || s->kind == AP_SAMPLE_DTYPE || !entry_of(opinfo, s, &op) ||
	    ap_proto_opinfo_claims(&op, side, dt))
		return 1;
	ap_buf_addf(why, "dtype %s is not supported on %s by this torch's OpInfo for %s", dt, side,
		    txt(s->op));
	return 0;
}

json_t *ap_numeric_notrun(const json_t *samples, const json_t *opinfo, const char *devices)
{
	char d[MAX_DEVICES][DEVICE_NAME_MAX];
	size_t n = device_list(devices, d);
	json_t *out = json_array();
	for (size_t k = 0; out && k < json_array_size(samples); k++) {
		json_t *skip = json_object();
		struct ap_proto_sample s;
		ap_proto_sample_read(json_array_get(samples, k), &s);
		for (size_t i = 0; skip && i <= n; i++) {
			struct ap_buf why = { 0 };
			const char *side = i ? d[i - 1] : "cpu";
			if (!runs_on(opinfo, &s, side, &why))
				json_object_set_new(skip, side, json_string(ap_buf_str(&why)));
			ap_buf_free(&why);
		}
		if (!skip || json_array_append_new(out, skip)) {
			json_decref(out);
			out = NULL;
		}
	}
	return out;
}

const char *ap_numeric_adapter_name(const char *devices)
{
	char d[MAX_DEVICES][DEVICE_NAME_MAX];
	size_t n = device_list(devices, d);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(d[i], "openreg"))
			return AP_NUMERIC_ADAPTER_OPENREG;
	return NULL;
}

json_t *ap_numeric_adapter(const char *devices)
{
	if (!ap_numeric_adapter_name(devices))
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:s}", "name", AP_NUMERIC_ADAPTER_OPENREG, "why",
			 "pytorch_openreg starts each device's daemon with multiprocessing's "
			 "\"spawn\": a new interpreter that imports torch, some 2 s a daemon and "
			 "two daemons, every time a runner starts the device (after a sample that "
			 "took the device down, and openreg's daemon exits on any operator's error); "
			 "and its driver, used from two threads at once (autograd's device thread "
			 "frees what a backward that raised held while the runner goes on), takes "
			 "one thread's answer for the other's and aborts or hangs",
			 "what", "pytorch_openreg._device_daemon.mp_context made multiprocessing's "
			 "\"fork\" context: each daemon is forked from the runner, whose torch is "
			 "already imported, and runs the same code (the runner's own pipes are "
			 "closed in it, as spawn would not pass them); applied only where the "
			 "module is there with a \"spawn\" context, and the runner's log says so; "
			 "and pytorch_openreg._device_daemon.Driver.run_on_executor (a request "
			 "put, its answer got) made one step under a re-entrant lock, so that a "
			 "backward that raised on the device does not end the runner",
			 "where", "the numeric runner only, before its devices start");
}

json_t *ap_numeric_run_request(const char *target, const json_t *samples, const json_t *opinfo,
			       const char *devices, int timeout_s, int start_s)
{
	json_t *notrun = ap_numeric_notrun(samples, opinfo, devices);
	struct ap_proto_run_limits lim = { timeout_s, start_s, AP_NUMERIC_DEVICE_FLOOR_S,
					   AP_NUMERIC_DEVICE_FACTOR };
	return notrun ? ap_proto_run(target, samples, device_array(devices), notrun, &lim,
				     ap_numeric_adapter_name(devices))
		      : NULL;
}

static void sample_id(const struct ap_proto_sample *s, struct ap_buf *id)
{
	const char *var = s->variant;
	ap_buf_addf(id, "%s%s%s", s->op, *var ? "." : "", var);
	if (s->dtype)
		ap_buf_addf(id, " %s", s->dtype);
	ap_buf_addf(id, " %s#%lld", s->kind_word, s->index);
	if (s->form != AP_FORM_TARGET)
		ap_buf_addf(id, " %s", ap_proto_form_name(s->form));
}

json_t *ap_numeric_prepare(const json_t *answer, struct ap_buf *why)
{
	struct ap_proto_samples r;
	json_t *out = json_array();
	ap_proto_samples_read(answer, &r);
	if (!r.samples) {
		ap_buf_adds(why, "the samples answer has no list of samples");
		json_decref(out);
		return NULL;
	}
	for (size_t i = 0; i < r.n; i++) {
		const json_t *x = json_array_get(r.samples, i);
		struct ap_proto_sample s;
		ap_proto_sample_read(x, &s);
		if (!s.ok) {
			ap_buf_addf(why, "sample %zu is not as the worker makes samples", i);
			json_decref(out);
			return NULL;
		}
		struct ap_buf id = { 0 };
		char hex[65];
		char *text = json_dumps(s.input, JSON_COMPACT | JSON_SORT_KEYS);
		ap_sha256_mem(text ? text : "", text ? strlen(text) : 0, hex);
		free(text);
		sample_id(&s, &id);
		json_array_append_new(out, ap_proto_sample_prepared(x, ap_buf_str(&id), hex));
		ap_buf_free(&id);
	}
	return out;
}

long ap_numeric_frame_index(const json_t *frame, const json_t *samples)
{
	struct ap_proto_run_frame f;
	ap_proto_run_frame_read(frame, &f);
	long long k = f.has_index ? f.index : -1;
	return k >= 0 && (size_t)k < json_array_size(samples) ? (long)k : -1;
}

/* The status of a sample the worker says was lost (l), its reason in why. */
static enum ap_status lost_status(const struct ap_proto_lost *l, struct ap_buf *why)
{
	/* The runner stopped by the worker a second after its device's daemon
	 * died: the daemon's death is the crash. (A runner that ended itself,
	 * as a driver aborts when it loses its device, says so below.) */
	if (l->daemon_died && l->ended.timed_out) {
		/* No pid: it is this run's, and the reason lands in the matrix,
		 * which a rerun must write the same (the frame keeps it). */
		ap_buf_adds(why, "the device's daemon died");
		if (l->daemon_signal)
			ap_buf_addf(why, " of %s", l->daemon_signal);
		else if (l->daemon_has_exit)
			ap_buf_addf(why, " with status %lld", l->daemon_exit);
		ap_buf_adds(why, "; the runner, waiting on it, was stopped");
		return AP_CRASH;
	}
	if (l->before_start) {
		if (l->ended.timed_out) {
			ap_buf_addf(why, "the devices did not start within %g s", l->ended.limit_s);
			return AP_TIMEOUT;
		}
		ap_buf_adds(why, "the runner ended before the sample began");
		return AP_ERROR;
	}
	enum ap_status st = ap_child_end(&l->ended, why);
	if (st == AP_TIMEOUT && l->has_cpu_s)
		ap_buf_addf(why, " (%d s + %d x the CPU's %.3g s)", AP_NUMERIC_DEVICE_FLOOR_S,
			    AP_NUMERIC_DEVICE_FACTOR, l->cpu_s);
	if (st != AP_STATUS_UNKNOWN)
		return st;
	if (!l->ended.has_exit_status) {
		ap_buf_adds(why, "the worker said neither how the runner ended nor the sample's result");
		return AP_ERROR;
	}
	ap_buf_addf(why, "the runner exited with status %lld during the sample",
		    l->ended.exit_status);
	return AP_CRASH;
}

int ap_numeric_frame_judge(json_t *frame)
{
	struct ap_proto_lost l;
	struct ap_buf why = { 0 };
	if (!ap_proto_frame_lost(frame, &l))
		return 0;
	enum ap_status st = lost_status(&l, &why);
	int exited = l.daemon_died && l.ended.timed_out && !l.daemon_signal && l.daemon_has_exit;
	int r = ap_proto_frame_set_lost(frame, ap_status_name(st), ap_buf_str(&why), why.len,
					exited ? l.daemon_exit : -1);
	ap_buf_free(&why);
	return r ? -ENOMEM : 0;
}

json_t *ap_numeric_lost_frame(size_t k, enum ap_status st, const char *reason)
{
	return ap_proto_lost_frame((long long)k, ap_status_name(st), reason);
}

/* --- tensors ------------------------------------------------------------ */

/* An array of at most AP_TENSOR_MAX_DIM integers in [0, DIM_MAX] into v. */
static int dims(const json_t *a, int64_t *v, int *n)
{
	size_t i;
	json_t *x;
	if (!json_is_array(a) || json_array_size(a) > AP_TENSOR_MAX_DIM)
		return -EINVAL;
	json_array_foreach(a, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) > DIM_MAX)
			return -EINVAL;
		v[i] = json_integer_value(x);
	}
	*n = (int)json_array_size(a);
	return 0;
}

int ap_numeric_tensor(const json_t *v, struct ap_tensor *t, struct ap_buf *store,
		      struct ap_buf *why)
{
	const json_t *d = json_object_get(v, TENSOR_TAG);
	const json_t *data = json_object_get(d, "data");
	int nshape = -1, nstrides = -2;
	memset(t, 0, sizeof(*t));
	if (!json_is_object(d) || json_object_size(v) != 1) {
		ap_buf_adds(why, "not a tensor");
		return -EINVAL;
	}
	if (ap_dtype_parse(ap_json_text(d, "dtype"), &t->dtype)) {
		ap_buf_addf(why, "a tensor of dtype '%s', which apiparity does not decode",
			    ap_json_text(d, "dtype"));
		return -EINVAL;
	}
	if (dims(json_object_get(d, "shape"), t->shape, &nshape) ||
	    dims(json_object_get(d, "strides"), t->strides, &nstrides) || nshape != nstrides) {
		ap_buf_adds(why, "a tensor whose shape or strides are not a list of sizes each");
		return -EINVAL;
	}
	t->ndim = nshape;
	int r = json_is_string(data) ? ap_base64_decode(json_string_value(data),
							json_string_length(data), AP_FRAME_MAX, store)
				     : -EINVAL;
	if (r) {
		ap_buf_adds(why, "a tensor whose data is not base64");
		return -EINVAL;
	}
	t->data = store->data;
	t->nbytes = store->len;
	if (ap_tensor_check(t)) {
		ap_buf_adds(why, "a tensor whose shape and strides read past its bytes");
		return -EINVAL;
	}
	return 0;
}

/* --- comparing ------------------------------------------------------------ */

static int is_tensor(const json_t *v)
{
	return json_is_object(v) && json_object_get(v, TENSOR_TAG);
}

static json_t *shape_of(const struct ap_tensor *t)
{
	json_t *a = json_array();
	for (int i = 0; i < t->ndim; i++)
		json_array_append_new(a, json_integer(t->shape[i]));
	return a;
}

/* One sentence on measurement m for a reason. */
static void say_measure(const struct ap_measure *m, struct ap_buf *out)
{
	ap_buf_addf(out, "%s: ", m->output);
	if (!m->dtype)
		ap_buf_adds(out, "a different value");
	else if (!m->dtype_match)
		ap_buf_addf(out, "dtype %s, expected %s", m->dtype, m->dtype_expected);
	else if (!m->shape_match)
		ap_buf_adds(out, "a different shape");
	else
		ap_buf_addf(out, "%llu of %llu elements out of tolerance (first at %lld): max_abs "
			    "%.3g, max_rel %.3g, %.3gx the allowance of rtol %.3g atol %.3g (%s)",
			    m->mismatches, m->numel, m->first_mismatch, m->max_abs, m->max_rel,
			    m->worst_ratio, m->rtol, m->atol, m->tol_source);
}

/* When tol is not the dtype's default (an override), m gets the same
 * comparison under the default: what the built-in tolerance gives, for
 * the reviewer, whose policy decides which overrides it accepts. */
static void by_default(const struct ap_tensor *a, const struct ap_tensor *e,
		       const struct ap_tolerance *tol, struct ap_measure *m)
{
	struct ap_tolerance d = ap_tolerance_default(e->dtype);
	struct ap_compare_result res;
	if ((d.rtol == tol->rtol && d.atol == tol->atol && d.equal_nan == tol->equal_nan) ||
	    ap_compare(a, e, &d, &res))
		return;
	m->has_default = 1;
	m->default_rtol = d.rtol;
	m->default_atol = d.atol;
	m->default_mismatches = res.mismatches;
	m->default_worst_ratio = res.worst_ratio;
}

/* The API ctx's overrides and limits are looked up for. */
static const char *ctx_op(const struct ap_numeric_ctx *ctx)
{
	return ctx->op ? ctx->op : "";
}

/* Compares output a against e (tagged values), computed on device, into c as
 * the measurement named what. 1 if they match, 0 if not (why says how), -1 if
 * either could not be read (why says so). */
static int measure(const struct ap_numeric_ctx *ctx, json_t *c, const char *what,
		   const char *device, const json_t *a, const json_t *e, struct ap_buf *why)
{
	struct ap_measure m = { .output = what, .first_mismatch = -1, .tol_source = "default" };
	if (!is_tensor(a) || !is_tensor(e)) {
		int same = json_equal(a, e);
		m.dtype_match = m.shape_match = same;
		m.numel = 1;
		m.mismatches = !same;
		ap_numeric_add_measure(c, &m);
		if (!same)
			say_measure(&m, why);
		return same;
	}
	struct ap_tensor ta, te;
	struct ap_buf sa = { 0 }, se = { 0 }, bad = { 0 };
	struct ap_compare_result res;
	int r = ap_numeric_tensor(a, &ta, &sa, &bad);
	r = r ? r : ap_numeric_tensor(e, &te, &se, &bad);
	struct ap_tolerance tol = ap_tolerance_for(ctx->tol, ctx_op(ctx),
						   r ? AP_DT_FLOAT64 : te.dtype, device,
						   &m.tol_source);
	r = r ? r : ap_compare(&ta, &te, &tol, &res);
	if (r) {
		ap_buf_addf(why, "%s: unreadable: %s", what, bad.len ? ap_buf_str(&bad) : "refused");
		r = -1;
	} else {
		m.dtype = ap_dtype_name(ta.dtype);
		m.dtype_expected = ap_dtype_name(te.dtype);
		m.dtype_match = res.dtype_match;
		m.shape_match = res.shape_match;
		m.numel = res.numel;
		m.mismatches = res.mismatches;
		m.first_mismatch = res.first_mismatch;
		m.max_abs = res.max_abs;
		m.max_rel = res.max_rel;
		m.worst_ratio = res.worst_ratio;
		m.rtol = tol.rtol;
		m.atol = tol.atol;
		m.digest = res.digest_actual;
		m.digest_expected = res.digest_expected;
		by_default(&ta, &te, &tol, &m);
		ap_numeric_add_measure(c, &m);
		r = ap_compare_consistent(&res);
		if (!r)
			say_measure(&m, why);
	}
	ap_buf_free(&sa);
	ap_buf_free(&se);
	ap_buf_free(&bad);
	return r;
}

/* Compares the lists la and le (a part's outputs or grads, what naming
 * them in a reason) into c. The number of failures; each says why
 * (appended to why, "; " between). */
static int measure_list(const struct ap_numeric_ctx *ctx, json_t *c, const char *what,
			const char *label, const char *device, const json_t *la, const json_t *le,
			int *errors, struct ap_buf *why)
{
	size_t na = json_array_size(la), ne = json_array_size(le);
	int bad = 0;
	if (na != ne) {
		ap_buf_addf(why, "%s%zu %s here, %zu expected", why->len ? "; " : "", na, what, ne);
		return 1;
	}
	for (size_t k = 0; k < na; k++) {
		struct ap_buf name = { 0 }, one = { 0 };
		ap_buf_addf(&name, "%s[%zu]", label, k);
		int r = measure(ctx, c, ap_buf_str(&name), device, json_array_get(la, k),
				json_array_get(le, k), &one);
		if (r < 0)
			(*errors)++;
		if (r <= 0 && one.len)
			ap_buf_addf(why, "%s%s", why->len ? "; " : "", ap_buf_str(&one));
		bad += r <= 0;
		ap_buf_free(&name);
		ap_buf_free(&one);
	}
	return bad;
}

/* "raised TYPE on WHERE (message)" or "did not raise on WHERE". */
static void say_raised(const struct ap_proto_part *p, const char *where, struct ap_buf *out)
{
	if (p->status != AP_PART_RAISED) {
		ap_buf_addf(out, "did not raise on %s", where);
		return;
	}
	ap_buf_addf(out, "raised %s on %s", txt(p->exception), where);
	if (p->message && *p->message)
		ap_buf_addf(out, " (%.200s)", p->message);
}

/* Whether part a, as against e, did not write into the tensor it was given
 * (in place, or out=) where e did; why says so. */
static int alias_differs(const struct ap_proto_part *a, const struct ap_proto_part *e,
			 const struct ap_proto_sample *s, const char *where, const char *against,
			 struct ap_buf *why)
{
	if (!a->has_alias || !e->has_alias || a->alias == e->alias)
		return 0;
	ap_buf_addf(why, "%sthe %s form returned %s on %s, %s on %s", why->len ? "; " : "",
		    ap_proto_form_name(s->form),
		    a->alias ? "the tensor it was given" : "a new tensor", where,
		    e->alias ? "the tensor it was given" : "a new tensor", against);
	return 1;
}

/* Compares part a (where) against part e (against) of sample s into check
 * c: sets its status and reason. A dtype sample (one the CPU's OpInfo does
 * not claim) asks only who accepts it: raising on both sides, of any type,
 * agrees; one side alone is a dtype its OpInfo claims wrongly. */
static void compare_parts(const struct ap_numeric_ctx *ctx, json_t *c,
			  const struct ap_proto_sample *s, const struct ap_proto_part *a,
			  const struct ap_proto_part *e, const char *where, const char *against,
			  const char *no_values)
{
	struct ap_buf why = { 0 };
	enum ap_status st = AP_PASS;
	int ra = a->status == AP_PART_RAISED, re = e->status == AP_PART_RAISED, errors = 0;
	int dtype = s->kind == AP_SAMPLE_DTYPE;
	if (ra || re) {
		const char *xa = ra ? txt(a->exception) : NULL;
		const char *xe = re ? txt(e->exception) : NULL;
		ap_numeric_set_exception(c, xa, xe);
		if (!ra || !re || (!dtype && strcmp(xa, xe))) {
			st = AP_FAIL;
			if (dtype)
				ap_buf_addf(&why, "dtype %s, which OpInfo does not claim for %s: ",
					    txt(s->dtype), txt(s->op));
			say_raised(a, where, &why);
			ap_buf_adds(&why, ", ");
			say_raised(e, against, &why);
		}
	} else if (a->status != AP_PART_OK || e->status != AP_PART_OK) {
		st = AP_ERROR;
		ap_buf_addf(&why, "%s part: %s; %s part: %s", where, txt(a->status_word), against,
			    txt(e->status_word));
	} else if (no_values) {
		/* Values that differ by design (uninitialised memory, another
		 * generator) are no finding. Both ran, and neither raised: that
		 * much agrees. */
		st = AP_NOTRUN;
		ap_buf_addf(&why, "values not compared: %s", no_values);
	} else {
		int bad = measure_list(ctx, c, "outputs", "out", where, a->outputs, e->outputs,
				       &errors, &why);
		bad += measure_list(ctx, c, "grads", "grad", where, a->grads, e->grads, &errors,
				    &why);
		bad += alias_differs(a, e, s, where, against, &why);
		st = errors ? AP_ERROR : bad ? AP_FAIL : AP_PASS;
	}
	ap_check_set_status(c, st);
	json_object_set_new(c, "reason", why.len ? json_string(ap_buf_str(&why)) : json_null());
	ap_buf_free(&why);
}

/* Why the values of sample s cannot be compared between where (part a) and
 * the CPU, into why; 0 when they can. Upstream's own device test does not
 * compare them where this torch's OpInfo skips TestCommon.test_compare_cpu
 * for the sample's dtype (empty: uninitialised memory; dropout: random);
 * on a device, a random aten operator in its trace (randn, normal_...) draws
 * from the device's generator, not the CPU's. */
static int values_differ_by_design(const struct ap_proto_sample *s, const struct ap_proto_part *a,
				   int device, struct ap_buf *why)
{
	const char *rnd;
	if (s->compare_skip) {
		ap_buf_addf(why, "this torch's OpInfo for %s skips TestCommon.test_compare_cpu (%s)",
			    txt(s->op), s->compare_skip);
		return 1;
	}
	if (!device || !(rnd = ap_proto_part_op_where(a, ap_aten_is_random)))
		return 0;
	ap_buf_addf(why, "the device ran %s, which draws from its own random generator, not the "
		    "CPU's", rnd);
	return 1;
}

/* The CPU part of a sample that ran with nothing to compare it with: its
 * outputs' digests are kept, for a later comparison by eye or by tool. */
static void record_outputs(json_t *c, const struct ap_proto_part *part)
{
	size_t k;
	json_t *v;
	json_array_foreach(part->outputs, k, v) {
		struct ap_buf name = { 0 }, store = { 0 }, why = { 0 };
		struct ap_tensor t;
		struct ap_compare_result res;
		struct ap_tolerance tol = { 0, 0, 1 };
		ap_buf_addf(&name, "out[%zu]", k);
		if (is_tensor(v) && !ap_numeric_tensor(v, &t, &store, &why) &&
		    !ap_compare(&t, &t, &tol, &res))
			ap_numeric_add_output(c, ap_buf_str(&name), ap_dtype_name(t.dtype),
					      shape_of(&t), res.digest_actual);
		else
			ap_numeric_add_output(c, ap_buf_str(&name), NULL, NULL, NULL);
		ap_buf_free(&name);
		ap_buf_free(&store);
		ap_buf_free(&why);
	}
}

static void meta_of(const struct ap_proto_sample *s, long seed, struct ap_numeric_meta *m)
{
	m->op = txt(s->op);
	m->variant = txt(s->variant);
	m->dtype = s->dtype;
	m->kind = txt(s->kind_word);
	m->form = s->form == AP_FORM_TARGET ? NULL : ap_proto_form_name(s->form);
	m->index = s->index;
	m->seed = seed;
	m->input_digest = txt(s->input_digest);
}

/* The reason of the part that stops a comparison of a and e with status
 * ps (the expected side's first), or NULL when neither has it. */
static const char *stopped_by(const struct ap_proto_part *a, const struct ap_proto_part *e,
			      enum ap_proto_part_status ps)
{
	if (e->status == ps)
		return txt(e->reason);
	return a->status == ps ? txt(a->reason) : NULL;
}

/* Sets c's status from what stops a comparison of parts a and e of frame f
 * before it starts (the sample lost, a side not run or missing); 1 if so. */
static int not_compared(json_t *c, const struct ap_proto_run_frame *f,
			const struct ap_proto_part *a, const char *where,
			const struct ap_proto_part *e, const char *against)
{
	enum ap_status st = AP_STATUS_UNKNOWN;
	struct ap_buf why = { 0 };
	const char *reason;
	if (f->lost && (!a->present || !e->present)) { /* a part that came stands */
		enum ap_status s = ap_status_parse(f->lost_status);
		st = s == AP_CRASH || s == AP_TIMEOUT ? s : AP_ERROR;
		ap_buf_addf(&why, "the sample was lost: %s", txt(f->lost_reason));
	} else if (!e->present || !a->present) {
		st = AP_ERROR;
		ap_buf_addf(&why, "no result from %s", !a->present ? where : against);
	} else if ((reason = stopped_by(a, e, AP_PART_NOTRUN))) {
		st = AP_NOTRUN;
		ap_buf_adds(&why, reason);
	} else if ((reason = stopped_by(a, e, AP_PART_ERROR))) {
		st = AP_ERROR;
		ap_buf_adds(&why, reason);
	}
	if (st != AP_STATUS_UNKNOWN) {
		ap_check_set_status(c, st);
		json_object_set_new(c, "reason", json_string(ap_buf_str(&why)));
	}
	ap_buf_free(&why);
	return st != AP_STATUS_UNKNOWN;
}

/* Makes check c NOTRUN, "known limit of BACKEND: REASON", excused by limit
 * l for the failure it saw (raised, message). */
static void excuse(json_t *c, const struct ap_limit *l, const char *raised, const char *message)
{
	struct ap_buf why = { 0 };
	ap_buf_addf(&why, "known limit of %s: %s", l->backend, l->reason);
	ap_check_excuse(c, l->name, l->backend, l->what, l->reason, l->where, raised, message,
			ap_buf_str(&why));
	ap_buf_free(&why);
}

/* Check c of device part a against the CPU part e, failed where the CPU
 * ran: when a known limit of the backend describes the device's failure
 * (it raised, as the limit says), the check is NOTRUN, "known limit of
 * BACKEND: REASON", and keeps the limit and what the device said. */
static void apply_limit(const struct ap_numeric_ctx *ctx, json_t *c,
			const struct ap_proto_part *a, const struct ap_proto_part *e,
			const char *device)
{
	if (ap_check_status(c) != AP_FAIL || e->status != AP_PART_OK)
		return;
	int raised = a->status == AP_PART_RAISED;
	const struct ap_limit *l = ap_limit_match(ctx->limits, device, ctx_op(ctx),
						  raised ? txt(a->exception) : NULL,
						  txt(a->message));
	if (l)
		excuse(c, l, raised ? txt(a->exception) : NULL, txt(a->message));
}

/* Check c of a sample lost on device, where the CPU raised (e) and the
 * device's daemon then exited of itself: a backend whose daemon cannot
 * survive an operator's error cannot say that it raised too. A limit of the
 * backend that names that failure (raises = DaemonExit: TEXT; the message
 * matched is "exited with status N where the CPU raised TYPE") makes it
 * NOTRUN, as apply_limit does. */
static void apply_exit_limit(const struct ap_numeric_ctx *ctx, json_t *c,
			     const struct ap_proto_run_frame *f, const struct ap_proto_part *e,
			     const char *device)
{
	if (ap_check_status(c) != AP_CRASH || f->lost_daemon_exit < 0 ||
	    e->status != AP_PART_RAISED)
		return;
	struct ap_buf msg = { 0 };
	ap_buf_addf(&msg, "exited with status %lld where the CPU raised %s", f->lost_daemon_exit,
		    txt(e->exception));
	const struct ap_limit *l = ap_limit_match(ctx->limits, device, ctx_op(ctx), "DaemonExit",
						  ap_buf_str(&msg));
	if (l)
		excuse(c, l, "DaemonExit", ap_buf_str(&msg));
	ap_buf_free(&msg);
}

/* The CPU part alone (no device): what it raised against what the sample
 * expects, or its outputs kept. */
static void cpu_alone(json_t *c, const struct ap_proto_sample *s, const struct ap_proto_part *cpu)
{
	if (cpu->status == AP_PART_RAISED)
		ap_numeric_set_exception(c, txt(cpu->exception), s->error_type);
	else
		record_outputs(c, cpu);
}

void ap_numeric_device_checks(const struct ap_numeric_ctx *ctx, const json_t *sample,
			      const json_t *frame, const char *devices, long seed, json_t *out)
{
	char d[MAX_DEVICES][DEVICE_NAME_MAX];
	size_t n = device_list(devices, d);
	struct ap_numeric_meta m;
	struct ap_proto_sample s;
	struct ap_proto_run_frame f;
	struct ap_proto_part cpu;
	ap_proto_sample_read(sample, &s);
	ap_proto_run_frame_read(frame, &f);
	ap_proto_run_frame_part(&f, "cpu", &cpu);
	meta_of(&s, seed, &m);
	for (size_t i = 0; i < (n ? n : 1); i++) {
		const char *dev = n ? d[i] : "cpu";
		struct ap_buf name = { 0 };
		struct ap_proto_part p;
		ap_buf_addf(&name, "%s %s%s", txt(s.id), dev, n ? " vs cpu" : "");
		json_t *c = ap_numeric_check_new(ap_buf_str(&name), AP_PASS, NULL, &m, dev,
						 n ? "cpu" : NULL, NULL, 1);
		ap_proto_run_frame_part(&f, dev, &p);
		if (!c)
			break;
		if (!not_compared(c, &f, &p, dev, &cpu, "cpu")) {
			if (n) {
				struct ap_buf nv = { 0 };
				compare_parts(ctx, c, &s, &p, &cpu, dev, "cpu",
					      values_differ_by_design(&s, &p, 1, &nv) ? ap_buf_str(&nv)
										     : NULL);
				ap_buf_free(&nv);
				apply_limit(ctx, c, &p, &cpu, dev);
			} else
				cpu_alone(c, &s, &cpu);
		} else if (n)
			apply_exit_limit(ctx, c, &f, &cpu, dev);
		if (p.device_trace)
			json_object_set(c, "device_trace", (json_t *)p.device_trace);
		json_array_append_new(out, c);
		ap_buf_free(&name);
	}
}

json_t *ap_numeric_cross_check(const struct ap_numeric_ctx *ctx, const json_t *sample,
			       const json_t *frame, const json_t *ref_frame, const char *ref_env,
			       int same_torch, long seed)
{
	struct ap_numeric_meta m;
	struct ap_buf name = { 0 }, ref = { 0 };
	struct ap_proto_sample s;
	struct ap_proto_run_frame f, rf = { 0 };
	struct ap_proto_part a, e;
	ap_proto_sample_read(sample, &s);
	ap_proto_run_frame_read(frame, &f);
	if (ref_frame)
		ap_proto_run_frame_read(ref_frame, &rf);
	ap_proto_run_frame_part(&f, "cpu", &a);
	ap_proto_run_frame_part(&rf, "cpu", &e);
	meta_of(&s, seed, &m);
	ap_buf_addf(&name, "%s cpu vs %s", txt(s.id), ref_env);
	ap_buf_addf(&ref, "cpu of %s", ref_env);
	json_t *c = ap_numeric_check_new(ap_buf_str(&name), AP_PASS, NULL, &m, "cpu", "cpu",
					 ref_env, same_torch);
	if (c && rf.lost && !e.present && !(f.lost && !a.present)) {
		ap_check_set_status(c, AP_NOTRUN);
		json_object_set_new(c, "reason", json_string("the sample was lost in the reference"));
	} else if (c && !not_compared(c, &f, &a, "cpu", &e, ap_buf_str(&ref))) {
		struct ap_buf nv = { 0 };
		compare_parts(ctx, c, &s, &a, &e, "cpu", ap_buf_str(&ref),
			      values_differ_by_design(&s, &a, 0, &nv) ? ap_buf_str(&nv) : NULL);
		ap_buf_free(&nv);
	}
	ap_buf_free(&name);
	ap_buf_free(&ref);
	return c;
}
