#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "check/testgen.h"
#include "env/protocol.h"
#include "env/worker.h"

/* Device types upstream's device-generic tests know by name; any other is
 * a PrivateUse1 backend's (openreg, npu). */
static const char *const known_devices[] = { "cpu", "cuda", "mps", "xpu", "hpu", "meta", "xla",
					     "lazy", NULL };
/* What onlyNativeDeviceTypes admits: common_utils.NATIVE_DEVICES. */
static const char *const native_devices[] = { "cpu", "cuda", "xpu", "meta", "privateuse1", NULL };

static int listed(const char *const *v, const char *s)
{
	for (; *v; v++)
		if (!strcmp(*v, s))
			return 1;
	return 0;
}

/* device as the decorators name its kind: itself, or "privateuse1". */
static const char *device_kind(const char *device)
{
	return listed(known_devices, device) ? device : "privateuse1";
}

int ap_testgen_is_privateuse1(const char *device)
{
	return !listed(known_devices, device);
}

/* Whether the quoted words of args (a decorator's arguments) include
 * device or its kind. */
static int args_name(const char *args, const char *device)
{
	const char *kind = device_kind(device);
	for (const char *p = args; (p = strpbrk(p, "\"'"));) {
		const char *end = strchr(p + 1, *p);
		if (!end)
			break;
		size_t n = (size_t)(end - p - 1);
		if ((strlen(device) == n && !strncmp(p + 1, device, n)) ||
		    (strlen(kind) == n && !strncmp(p + 1, kind, n)))
			return 1;
		p = end + 1;
	}
	return 0;
}

/* The device kinds a device decorator admits, as words, into out; -1 for a
 * decorator that names no devices. */
static int admits(const char *name, const char *args, const char *device, struct ap_buf *out,
		  int *ok)
{
	static const struct {
		const char *name, *devices;
	} only[] = {
		{ "onlyCPU", "cpu" }, { "onlyCUDA", "cuda" }, { "onlyMPS", "mps" },
		{ "onlyXPU", "xpu" }, { "onlyHPU", "hpu" }, { "onlyPRIVATEUSE1", "privateuse1" },
		{ "onlyCUDAAndPRIVATEUSE1", "cuda, privateuse1" },
	};
	const char *kind = device_kind(device);
	for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++)
		if (!strcmp(name, only[i].name)) {
			ap_buf_adds(out, only[i].devices);
			*ok = strstr(only[i].devices, kind) != NULL;
			return 0;
		}
	if (!strcmp(name, "onlyNativeDeviceTypes") || !strcmp(name, "onlyNativeDeviceTypesAnd")) {
		ap_buf_adds(out, "the native device types (cpu, cuda, xpu, meta, privateuse1)");
		if (*args)
			ap_buf_addf(out, " and %s", args);
		*ok = listed(native_devices, kind) || args_name(args, device);
		return 0;
	}
	if (!strcmp(name, "onlyOn")) {
		ap_buf_adds(out, args);
		*ok = args_name(args, device);
		return 0;
	}
	return -1;
}

/* A decorator's source split into its last name and its arguments'
 * source (without the parentheses), into name and args. */
static void split_decorator(const char *src, struct ap_buf *name, struct ap_buf *args)
{
	size_t n = strcspn(src, "(");
	const char *dot = src;
	for (const char *p = src; p < src + n; p++)
		if (*p == '.')
			dot = p + 1;
	ap_buf_add(name, dot, (size_t)(src + n - dot));
	if (src[n] == '(') {
		const char *close = strrchr(src + n, ')');
		size_t len = close ? (size_t)(close - src - n - 1) : strlen(src + n + 1);
		ap_buf_add(args, src + n + 1, len);
	}
}

char *ap_testgen_device_skip(const json_t *decorators, const char *device)
{
	const json_t *d;
	size_t i;
	json_array_foreach(decorators, i, d) {
		const char *src = json_string_value(d);
		struct ap_buf name = { 0 }, args = { 0 }, devs = { 0 }, why = { 0 };
		int ok = 1;
		if (src) {
			split_decorator(src, &name, &args);
			if (admits(ap_buf_str(&name), ap_buf_str(&args), device, &devs, &ok))
				ok = 1;
		}
		if (!ok)
			ap_buf_addf(&why, "no-device: upstream runs it only on %s (@%s); this "
				    "environment's device is %s", ap_buf_str(&devs), ap_buf_str(&name),
				    device);
		ap_buf_free(&name);
		ap_buf_free(&args);
		ap_buf_free(&devs);
		if (!ok)
			return why.data;
	}
	return NULL;
}

/* Whether the file name of path (its last part, without ".py") has word
 * as one of its words (separated by '_'). */
static int name_has_word(const char *path, const char *word)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t len = strlen(base), wl = strlen(word);
	if (len > 3 && !strcmp(base + len - 3, ".py"))
		len -= 3;
	for (size_t i = 0; i + wl <= len; i++)
		if (!strncmp(base + i, word, wl) && (i == 0 || base[i - 1] == '_') &&
		    (i + wl == len || base[i + wl] == '_'))
			return 1;
	return 0;
}

char *ap_testgen_file_skip(const char *file, const char *device, int onnxruntime)
{
	static const char *const only_for[] = { "mps", "cuda", NULL };
	struct ap_buf why = { 0 };
	for (size_t i = 0; only_for[i]; i++)
		if (name_has_word(file, only_for[i]) && strcmp(device, only_for[i])) {
			ap_buf_addf(&why, "no-device: %s is for %s only; this environment's device "
				    "is %s", file, only_for[i], device);
			return why.data;
		}
	if (!strncmp(file, "test/onnx/", 10) && !onnxruntime) {
		ap_buf_addf(&why, "missing-dependency: %s is an ONNX test, and onnxruntime does "
			    "not import in this environment", file);
		return why.data;
	}
	return NULL;
}

int ap_testgen_score(const char *file, const char *generic_cls, const char *dtype)
{
	int s = AP_SCORE_GENERATED;
	s += !strcmp(file, "test/test_ops.py") ? 2 : 0;
	s += generic_cls && !strcmp(generic_cls, "TestCommon") ? 1 : 0;
	s += !dtype || !strcmp(dtype, "float32") ? 1 : 0;
	return s;
}

/* ---- finding them: the index's templates, evaluated by the worker ---- */

/* The templates of the tree as the worker is asked about them, and what
 * each stands for here. */
struct gen_tpl {
	const char *file, *cls, *test, *source;
	long long line, def_line;
	const json_t *devices;
};

/* A file of the templates: its id and record. */
struct gen_file {
	long long fid;
	struct ap_index_rec rec;
};

struct gen_req {
	json_t *templates, *facts;  /* the request's */
	size_t n, nfiles;
	struct gen_tpl *v;
	struct gen_file *files;     /* in the order met (the index's "D" is by file) */
	struct ap_index_rec gens;
};

static void gen_req_free(struct gen_req *g)
{
	for (size_t i = 0; i < g->nfiles; i++)
		ap_index_rec_free(&g->files[i].rec);
	free(g->files);
	free(g->v);
	ap_index_rec_free(&g->gens);
	json_decref(g->templates);
	json_decref(g->facts);
}

/* The facts of file fid for the worker: its decorators' assigns and
 * instantiations, and its bindings. */
static int file_facts(struct ap_testindex *ix, long long fid, const struct ap_index_rec *f,
		      json_t **out)
{
	struct ap_index_rec g;
	int r = ap_testindex_gen_facts(ix, fid, &g);
	*out = r ? NULL : g.found ? json_deep_copy(g.doc) : json_object();
	if (*out)
		json_object_set(*out, "bindings", json_object_get(f->doc, "bindings"));
	ap_index_rec_free(&g);
	return r ? r : *out ? 0 : -ENOMEM;
}

/* The record of file fid (named file), read when it is not the last one. */
static int gen_file(struct ap_testindex *ix, struct gen_req *g, long long fid, const char *file,
		    const struct ap_index_rec **out)
{
	json_t *facts = NULL;
	if (g->nfiles && g->files[g->nfiles - 1].fid == fid) {
		*out = &g->files[g->nfiles - 1].rec;
		return 0;
	}
	struct gen_file *f = &g->files[g->nfiles++];
	f->fid = fid;
	int r = ap_testindex_file_rec(ix, file, &f->rec);
	r = r ? r : !f->rec.found ? -EBADMSG : file_facts(ix, fid, &f->rec, &facts);
	if (!r && json_object_set_new(g->facts, file, facts))
		r = -ENOMEM;
	*out = &f->rec;
	return r;
}

/* Adds template i of the index (gens.gens[i]) to the request. */
static int gen_add(struct ap_testindex *ix, struct gen_req *g, size_t i)
{
	const struct ap_index_gen *x = &g->gens.gens[i];
	const struct ap_index_rec *f;
	const char *file = ap_testindex_file(ix, x->fid);
	int r = file ? gen_file(ix, g, x->fid, file, &f) : -EBADMSG;
	if (r)
		return r;
	if (f->error || x->ti < 0 || (size_t)x->ti >= f->ntests || !f->tests[x->ti].cls ||
	    !x->source)
		return 0; /* module-level, or too long to evaluate: no device class */
	const struct ap_index_test *t = &f->tests[x->ti];
	g->v[g->n++] = (struct gen_tpl){ file, t->cls, t->name, x->source, x->line, t->line,
					 x->devices };
	return json_array_append_new(g->templates, json_pack("[s,s,s,s]", file, t->cls, t->name,
							     x->source)) ? -ENOMEM : 0;
}

/* The request for every template of the index, into g (release it
 * whatever is returned). */
static int gen_request(struct ap_testindex *ix, struct gen_req *g)
{
	memset(g, 0, sizeof(*g));
	g->templates = json_array();
	g->facts = json_object();
	int r = g->templates && g->facts ? ap_testindex_gens(ix, &g->gens) : -ENOMEM;
	size_t n = g->gens.ngens;
	if (!r && n) {
		g->v = calloc(n, sizeof(*g->v));
		g->files = calloc(n, sizeof(*g->files));
		r = g->v && g->files ? 0 : -ENOMEM;
	}
	for (size_t i = 0; !r && i < n; i++)
		r = gen_add(ix, g, i);
	return r;
}

/* The decorator's source on one line, after "@". */
static char *decorator_line(const char *source)
{
	struct ap_buf out = { 0 };
	int space = 0;
	ap_buf_adds(&out, "@");
	for (const char *p = source; *p; p++) {
		int ws = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
		if (ws && !space && out.len > 1)
			ap_buf_add(&out, " ", 1);
		else if (!ws)
			ap_buf_add(&out, p, 1);
		space = ws;
	}
	return out.data;
}

/* found grown by one hit, zeroed; NULL when memory is short. */
static struct ap_official_hit *found_add(struct ap_official_found *found)
{
	struct ap_official_hit *v = realloc(found->hits, (found->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	found->hits = v;
	memset(&v[found->n], 0, sizeof(*v));
	return &v[found->n++];
}

/* A hit for the generated test [class, test, dtype] of template t. */
static int gen_hit(const struct gen_tpl *t, const json_t *name, const char *device,
		   const char *not_for, struct ap_official_found *found)
{
	const char *cls = json_string_value(json_array_get(name, 0));
	const char *test = json_string_value(json_array_get(name, 1));
	const char *dtype = json_string_value(json_array_get(name, 2));
	if (!cls || !test)
		return -EBADMSG;
	struct ap_official_hit *h = found_add(found);
	if (!h)
		return -ENOMEM;
	h->file = strdup(t->file);
	h->cls = strdup(cls);
	h->test = strdup(test);
	h->line = t->def_line;
	h->generated = 1;
	h->score = ap_testgen_score(t->file, t->cls, dtype);
	h->matches = calloc(1, sizeof(*h->matches));
	if (not_for) {
		struct ap_buf why = { 0 };
		ap_buf_addf(&why, "no-device: not instantiated for %s: %s", device, not_for);
		h->notrun = why.data;
	} else
		h->notrun = ap_testgen_device_skip(t->devices, device);
	if (h->notrun) /* listed after the ones that run here, above any mention */
		h->score -= AP_SCORE_GENERATED / 2;
	if (!h->file || !h->cls || !h->test || !h->matches)
		return -ENOMEM;
	h->matches[0] = (struct ap_official_match){ t->line, "generated",
						    decorator_line(t->source) };
	h->nmatches = h->matches[0].text ? 1 : 0;
	return h->nmatches ? 0 : -ENOMEM;
}

/* The hits of the worker's answer to g; the templates it could not
 * evaluate are counted into why, with the first one's error. */
static int gen_hits(const struct gen_req *g, const json_t *reply, const char *device,
		    struct ap_official_found *found, struct ap_buf *why)
{
	struct ap_proto_generated gr;
	ap_proto_tests_generated_read(reply, &gr);
	int r = 0;
	size_t failed = 0;
	struct ap_buf first = { 0 };
	for (size_t i = 0; !r && i < g->n; i++) {
		struct ap_proto_generated_template t;
		const json_t *name;
		size_t k;
		ap_proto_generated_template(&gr, i, &t);
		if (t.error && !failed++)
			ap_buf_addf(&first, "%s::%s::%s: %s", g->v[i].file, g->v[i].cls, g->v[i].test,
				    t.error);
		json_array_foreach(t.names, k, name) {
			r = gen_hit(&g->v[i], name, device, t.not_for_device, found);
			if (r)
				break;
		}
	}
	if (failed)
		ap_buf_addf(why, "%zu of %zu test templates could not be evaluated here (the "
			    "first: %s)", failed, g->n, ap_buf_str(&first));
	ap_buf_free(&first);
	return r;
}

int ap_testgen_find(struct ap_worker *w, struct ap_testindex *ix, const char *target,
		    const char *device, struct ap_official_found *found, int *onnxruntime,
		    struct ap_buf *why)
{
	struct gen_req g = { 0 };
	json_t *reply = NULL, *modules = json_pack("[s]", "onnxruntime");
	device = device ? device : "cpu";
	*onnxruntime = 0;
	int r = modules ? gen_request(ix, &g) : -ENOMEM;
	if (!r && g.n) {
		json_t *req = ap_proto_tests_generated(target, device, g.templates, g.facts, modules);
		r = req ? ap_worker_call(w, req, &reply) : -ENOMEM;
		json_decref(req);
	}
	if (!r && reply) {
		struct ap_proto_generated gr;
		ap_proto_tests_generated_read(reply, &gr);
		*onnxruntime = ap_proto_generated_present(&gr, "onnxruntime");
		if (gr.error)
			ap_buf_addf(why, "no tests generated from OpInfo: %s", gr.error);
		r = gen_hits(&g, reply, device, found, why);
	}
	json_decref(reply);
	json_decref(modules);
	gen_req_free(&g);
	return r;
}
