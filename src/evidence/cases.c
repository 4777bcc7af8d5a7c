#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/text.h"
#include "evidence/cases.h"

static const char *const case_kinds[AP_CASE_KIND_COUNT] = {
	[AP_CASE_FUNCTION] = "function",
	[AP_CASE_MODULE] = "module",
};

const char *ap_case_kind_name(enum ap_case_kind k)
{
	return k >= 0 && k < AP_CASE_KIND_COUNT ? case_kinds[k] : "?";
}

static enum ap_case_kind case_kind_parse(const char *w)
{
	for (int k = 0; w && k < AP_CASE_KIND_COUNT; k++)
		if (!strcmp(case_kinds[k], w))
			return (enum ap_case_kind)k;
	return AP_CASE_KIND_UNKNOWN;
}

/* The longest API name kept: torch's longest is about 100 bytes. */
#define AP_CASE_API_MAX 256

/* Takes the case record rec (from the tracer's journal or a cases file)
 * as t's next case, with count. 0, -EINVAL (not a case, or not the next
 * id), -E2BIG, -ENOMEM. */
static int case_take(struct ap_trace *t, const json_t *rec, long count)
{
	const json_t *id = json_object_get(rec, "id"), *args = json_object_get(rec, "args");
	const json_t *kwargs = json_object_get(rec, "kwargs"), *aten = json_object_get(rec, "aten");
	const char *api = json_string_value(json_object_get(rec, "api"));
	enum ap_case_kind kind = case_kind_parse(json_string_value(json_object_get(rec, "kind")));
	if (!json_is_integer(id) || json_integer_value(id) != (json_int_t)t->n || !api ||
	    strlen(api) > AP_CASE_API_MAX || ap_text_has_control(api) ||
	    kind == AP_CASE_KIND_UNKNOWN || !json_is_array(args) || !json_is_object(kwargs) ||
	    (aten && !json_is_array(aten)))
		return -EINVAL;
	if (t->n >= AP_CASES_MAX)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct ap_case *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	struct ap_case *c = &t->v[t->n];
	if (!(c->api = strdup(api)))
		return -ENOMEM;
	c->id = (long)t->n;
	c->kind = kind;
	c->count = count > 0 ? count : 1;
	c->args = json_incref((json_t *)args);
	c->kwargs = json_incref((json_t *)kwargs);
	c->aten = aten ? json_incref((json_t *)aten) : json_array();
	t->n++;
	return 0;
}

/* A counts record: each case's count (never below 1: the case was seen),
 * the aten operators under it, the calls past max_cases. */
static int counts_take(struct ap_trace *t, const json_t *rec)
{
	const json_t *counts = json_object_get(rec, "counts"), *aten = json_object_get(rec, "aten");
	const json_t *over = json_object_get(rec, "over");
	if (!json_is_array(counts) || !json_is_object(over) || (aten && !json_is_array(aten)))
		return -EINVAL;
	for (size_t i = 0; i < t->n && i < json_array_size(counts); i++) {
		json_int_t k = json_integer_value(json_array_get(counts, i));
		t->v[i].count = k > 0 ? (long)k : 1;
		const json_t *a = json_array_get(aten, i);
		if (json_is_array(a))
			json_decref(t->v[i].aten), t->v[i].aten = json_incref((json_t *)a);
	}
	const char *api;
	const json_t *n;
	json_object_foreach((json_t *)over, api, n)
		if (json_is_integer(n) && json_integer_value(n) > 0)
			json_object_set_new(t->over, api, json_integer(json_integer_value(n)));
	return 0;
}

int ap_trace_apply(struct ap_trace *t, const char *line, size_t len)
{
	json_t *rec = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *type = json_string_value(json_object_get(rec, "t"));
	int r = -EINVAL;
	if (!t->over && !(t->over = json_object())) {
		json_decref(rec);
		return -ENOMEM;
	}
	if (type && !strcmp(type, "case"))
		r = case_take(t, rec, 1);
	else if (type && !strcmp(type, "counts"))
		r = counts_take(t, rec);
	if (!r && type)
		t->torch = 1; /* the tracer's first line: it started, after torch */
	json_decref(rec);
	if (r == -EINVAL || r == -E2BIG) /* not a record, or past AP_CASES_MAX */
		t->bad_lines++;
	return r == -EINVAL || r == -E2BIG ? 0 : r;
}

long ap_trace_calls(const struct ap_trace *t)
{
	long n = 0;
	const char *api;
	const json_t *k;
	for (size_t i = 0; i < t->n; i++)
		n += t->v[i].count;
	json_object_foreach(t->over, api, k)
		n += (long)json_integer_value(k);
	return n;
}

/* --- the file ----------------------------------------------------------- */

static json_t *header_of(const struct ap_trace *t)
{
	json_t *cmd = json_array();
	for (size_t i = 0; i < t->command.n; i++)
		json_array_append_new(cmd, json_string(t->command.v[i]));
	json_t *h = json_pack("{s:s, s:s, s:o, s:s?}", "format", AP_CASES_FORMAT, "about",
			      "this header, then one line per case: {id, api, kind, count, args, "
			      "kwargs, aten}; tensors are described ($desc), not stored",
			      "command", cmd, "env", t->env);
	struct ap_buf exit = { 0 };
	if (t->has_returncode) {
		if (t->returncode >= 0)
			ap_buf_addf(&exit, "exited with status %d", t->returncode);
		else
			ap_buf_addf(&exit, "killed by signal %d", -t->returncode);
	}
	json_object_set_new(h, "exit", t->has_returncode ? json_string(ap_buf_str(&exit))
							  : json_null());
	json_object_set_new(h, "returncode", t->has_returncode ? json_integer(t->returncode)
								: json_null());
	json_object_set_new(h, "limited", json_boolean(t->limited));
	json_object_set_new(h, "torch", json_boolean(t->torch));
	json_object_set(h, "fingerprint", t->fingerprint ? t->fingerprint : json_null());
	json_object_set_new(h, "max_cases", json_integer(t->max_cases));
	json_object_set(h, "over", t->over ? t->over : json_object());
	ap_buf_free(&exit);
	return h;
}

static int add_line(struct ap_buf *out, json_t *rec)
{
	char *s = rec ? json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	int r = s ? ap_buf_addf(out, "%s\n", s) : -ENOMEM;
	free(s);
	json_decref(rec);
	return r;
}

int ap_trace_write(const struct ap_trace *t, const char *path)
{
	struct ap_buf out = { 0 };
	int r = add_line(&out, header_of(t));
	for (size_t i = 0; !r && i < t->n; i++) {
		const struct ap_case *c = &t->v[i];
		r = add_line(&out, json_pack("{s:I, s:s, s:s, s:I, s:O, s:O, s:O}", "id",
					     (json_int_t)c->id, "api", c->api, "kind",
					     ap_case_kind_name(c->kind), "count", (json_int_t)c->count,
					     "args", c->args, "kwargs", c->kwargs, "aten", c->aten));
	}
	r = r ? r : ap_write_atomic(path, out.data ? out.data : "", out.len);
	ap_buf_free(&out);
	return r;
}

/* The header's fields into t. 0 or -EINVAL. */
static int header_take(struct ap_trace *t, const json_t *h)
{
	const json_t *cmd = json_object_get(h, "command"), *rc = json_object_get(h, "returncode");
	const json_t *fp = json_object_get(h, "fingerprint"), *over = json_object_get(h, "over");
	const char *fmt = json_string_value(json_object_get(h, "format"));
	const char *env = json_string_value(json_object_get(h, "env"));
	size_t i;
	const json_t *w;
	if (!fmt || strcmp(fmt, AP_CASES_FORMAT) || !json_is_array(cmd) ||
	    !(json_is_integer(rc) || json_is_null(rc)) || !json_is_object(over) ||
	    !(json_is_object(fp) || json_is_null(fp)))
		return -EINVAL;
	json_array_foreach(cmd, i, w)
		if (!json_is_string(w) || ap_argv_push(&t->command, json_string_value(w)))
			return -EINVAL;
	if (env && !(t->env = strdup(env)))
		return -ENOMEM;
	t->has_returncode = json_is_integer(rc);
	t->returncode = (int)json_integer_value(rc);
	t->limited = json_is_true(json_object_get(h, "limited"));
	t->torch = json_is_true(json_object_get(h, "torch"));
	t->max_cases = (long)json_integer_value(json_object_get(h, "max_cases"));
	t->fingerprint = json_is_object(fp) ? json_incref((json_t *)fp) : NULL;
	json_decref(t->over);
	t->over = json_deep_copy(over);
	return t->over ? 0 : -ENOMEM;
}

/* Line k (1-based) of a cases file, p[0..len). */
static int line_take(struct ap_trace *t, const char *p, size_t len, size_t k)
{
	json_t *rec = json_loadb(p, len, JSON_REJECT_DUPLICATES, NULL);
	int r = !json_is_object(rec) ? -EINVAL : k == 1 ? header_take(t, rec) :
		case_take(t, rec, (long)json_integer_value(json_object_get(rec, "count")));
	if (!r && k > 1 && json_integer_value(json_object_get(rec, "count")) < 1)
		r = -EINVAL;
	json_decref(rec);
	return r;
}

int ap_trace_load(struct ap_trace *t, const char *path, struct ap_buf *err)
{
	struct ap_buf text = { 0 };
	memset(t, 0, sizeof(*t));
	int r = ap_read_file_limited(path, AP_CASES_MAX_BYTES, &text);
	if (r) {
		/* a directory, a device, a file past the bound: not a trace */
		int input = r == -EISDIR || r == -AP_ENOTREG || r == -EFBIG;
		ap_buf_addf(err, "%s%s%s", path, input ? ": " : "", input ? ap_strerror(r) : "");
		return input ? -AP_EINPUT : r;
	}
	t->over = json_object();
	const char *p = text.data ? text.data : "", *end = p + text.len;
	size_t k = 0;
	while (!r && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		r = line_take(t, p, len, ++k);
		p += len + 1;
	}
	if (!r && !k)
		r = -EINVAL, k = 1;
	if (r) {
		ap_buf_addf(err, "%s:%zu: %s", path, k,
			    r == -EINVAL ? (k == 1 ? "not a " AP_CASES_FORMAT " header"
						   : "not a case of this trace")
					 : ap_strerror(r));
		ap_trace_free(t);
		r = r == -ENOMEM ? r : -AP_EINPUT;
	}
	ap_buf_free(&text);
	return r;
}

void ap_trace_free(struct ap_trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].api);
		json_decref(t->v[i].args);
		json_decref(t->v[i].kwargs);
		json_decref(t->v[i].aten);
	}
	free(t->v);
	ap_argv_free(&t->command);
	free(t->env);
	json_decref(t->fingerprint);
	json_decref(t->over);
	memset(t, 0, sizeof(*t));
}

/* --- the APIs ----------------------------------------------------------- */

static int api_order(const void *a, const void *b)
{
	const struct ap_trace_api *x = a, *y = b;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->api, y->api);
}

int ap_trace_apis(const struct ap_trace *t, struct ap_trace_api **v, size_t *n)
{
	*n = 0;
	*v = calloc(t->n + json_object_size(t->over) + 1, sizeof(**v));
	if (!*v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct ap_case *c = &t->v[i];
		size_t k = 0;
		while (k < *n && strcmp((*v)[k].api, c->api))
			k++;
		if (k == *n)
			(*v)[(*n)++] = (struct ap_trace_api){ c->api, c->kind, 0, 0, i };
		(*v)[k].calls += c->count;
		(*v)[k].ncases++;
	}
	for (size_t k = 0; k < *n; k++)
		(*v)[k].calls += (long)json_integer_value(json_object_get(t->over, (*v)[k].api));
	qsort(*v, *n, sizeof(**v), api_order);
	return 0;
}

/* --- what can be replayed ----------------------------------------------- */

/* The aten operators whose values are the random generator's: a device's
 * generator is not the CPU's, so no comparison of them says anything about
 * a kernel. */
static const char *const random_ops[] = {
	"uniform", "normal", "bernoulli", "rand", "randn", "randint", "randperm",
	"multinomial", "native_dropout", "exponential", "random", "geometric", "cauchy",
	"log_normal", "poisson", "rrelu_with_noise", NULL
};

int ap_aten_is_random(const char *name)
{
	if (!strncmp(name, "aten.", 5))
		name += 5;
	for (size_t k = 0; random_ops[k]; k++) {
		size_t n = strlen(random_ops[k]);
		const char *end = name + n;
		if (strncmp(name, random_ops[k], n))
			continue;
		end += *end == '_';
		if (*end == '.' || !*end)
			return 1;
	}
	return 0;
}

/* The first random operator of c's, or NULL. */
static const char *random_op(const struct ap_case *c)
{
	size_t i;
	const json_t *a;
	json_array_foreach(c->aten, i, a)
		if (json_is_string(a) && !strncmp(json_string_value(a), "aten.", 5) &&
		    ap_aten_is_random(json_string_value(a)))
			return json_string_value(a);
	return NULL;
}

#define AP_DESC_DEPTH_MAX 32

/* Gives fn each tensor, opaque value and overlong nesting of v, in order. */
static void desc_walk(const json_t *v, ap_desc_fn *fn, void *ctx, int depth)
{
	size_t i;
	const char *k;
	const json_t *x, *d = json_object_get(v, "$desc"), *opaque = json_object_get(v, "$opaque");
	struct ap_desc_item it = { AP_DESC_TENSOR, NULL, NULL, 0, { 0 } };
	if (depth > AP_DESC_DEPTH_MAX) {
		it.kind = AP_DESC_TOO_DEEP;
		fn(ctx, &it);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			desc_walk(x, fn, ctx, depth + 1);
	} else if (opaque) {
		it.kind = AP_DESC_OPAQUE;
		it.name = json_is_string(opaque) ? json_string_value(opaque) : "?";
		fn(ctx, &it);
	} else if (d) {
		it.name = json_string_value(json_object_get(d, "dtype"));
		if (!json_is_array(json_object_get(d, "strides")))
			it.layout = json_is_string(json_object_get(d, "layout"))
				    ? json_string_value(json_object_get(d, "layout")) : "?";
		json_array_foreach(json_object_get(d, "shape"), i, x)
			if (it.ndim < AP_DESC_DIMS_MAX)
				it.dims[it.ndim++] = (long long)json_integer_value(x);
		fn(ctx, &it);
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
			desc_walk(x, fn, ctx, depth + 1);
	}
}

void ap_case_desc_foreach(const struct ap_case *c, int kwargs, ap_desc_fn *fn, void *ctx)
{
	desc_walk(c->args, fn, ctx, 0);
	if (kwargs)
		desc_walk(c->kwargs, fn, ctx, 0);
}

/* What makes a case replayable or not, as its descriptions are walked:
 * how many tensors, and the first thing that cannot be made again. */
struct replay_walk {
	size_t tensors;
	struct ap_buf *why;
};

static void replay_item(void *ctx, const struct ap_desc_item *it)
{
	struct replay_walk *w = ctx;
	w->tensors += it->kind == AP_DESC_TENSOR;
	if (w->why->len)
		return;
	if (it->kind == AP_DESC_TOO_DEEP)
		ap_buf_adds(w->why, "an argument nested too deep");
	else if (it->kind == AP_DESC_OPAQUE)
		ap_buf_addf(w->why, "an argument of type %s, which the tracer cannot describe",
			    it->name);
	else if (it->layout)
		ap_buf_addf(w->why, "a tensor of layout %s", it->layout);
}

static const struct { const char *dtype; int size; } dtype_sizes[] = {
	{ "bool", 1 }, { "uint8", 1 }, { "int8", 1 }, { "int16", 2 }, { "int32", 4 },
	{ "int64", 8 }, { "float16", 2 }, { "bfloat16", 2 }, { "float32", 4 },
	{ "float64", 8 }, { "complex64", 8 }, { "complex128", 16 },
};

static void bytes_item(void *ctx, const struct ap_desc_item *it)
{
	double elems = 1;
	int size = 8;
	if (it->kind != AP_DESC_TENSOR)
		return;
	for (size_t i = 0; i < it->ndim; i++)
		elems *= (double)it->dims[i];
	for (size_t j = 0; it->name && j < sizeof(dtype_sizes) / sizeof(dtype_sizes[0]); j++)
		if (!strcmp(it->name, dtype_sizes[j].dtype))
			size = dtype_sizes[j].size;
	*(double *)ctx += elems * size;
}

double ap_case_tensor_bytes(const struct ap_case *c)
{
	double n = 0;
	ap_case_desc_foreach(c, 1, bytes_item, &n);
	return n;
}

int ap_case_replayable(const struct ap_case *c, struct ap_buf *why)
{
	const char *rnd;
	if (c->kind == AP_CASE_MODULE) {
		ap_buf_adds(why, "a module call: replayed through the functions it calls");
		return 0;
	}
	if (!ap_dotted_name_ok(c->api, AP_CASE_API_MAX)) {
		ap_buf_adds(why, "not a dotted name apiparity can call");
		return 0;
	}
	if (!json_array_size(c->args)) {
		ap_buf_adds(why, "called with keyword arguments only");
		return 0;
	}
	if ((rnd = random_op(c))) {
		ap_buf_addf(why, "random: its values are the generator's (%s)", rnd);
		return 0;
	}
	struct replay_walk w = { 0, why };
	ap_case_desc_foreach(c, 1, replay_item, &w);
	if (!why->len && !w.tensors)
		ap_buf_adds(why, "no tensor among its arguments: nothing of it runs on a device");
	return !why->len;
}
