#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "env/fingerprint.h"
#include "env/protocol.h"

/* One component of a fingerprint's dotted key ("torch.version"): its words
 * are short; a longer one is cut and found in no fingerprint. */
#define AP_FP_KEY_MAX 64
/* The table's first column: the longest row name ("torch build") or device
 * type, and room before the first environment's column. */
#define AP_FP_HEAD_WIDTH 14
/* The device types a table shows rows for; more are left out. */
#define AP_FP_DEVTYPES_MAX 32

static const char *const ap_row_names[AP_FP_NROWS] = {
	"os", "kernel", "python", "torch", "torch git", "torch build", "plugins",
	"devices", "cpu", "host", "time (UTC)",
};

json_t *ap_plugin_modules(const struct ap_env *env)
{
	json_t *a = json_pack("[s,s,s,s,s]", "torch_npu", "intel_extension_for_pytorch",
			      "torch_mlu", "torch_musa", "torch_gcu");
	for (size_t i = 0; a && env && i < env->plugins.n; i++)
		if (json_array_append_new(a, json_string(env->plugins.v[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* How long the worker's device query may take: a backend known only by using
 * its device starts it there (openreg spawns a daemon interpreter per device,
 * each importing torch: seconds). */
#define AP_DEVICE_QUERY_S 60

json_t *ap_fingerprint_request(const struct ap_env *env)
{
	return ap_proto_fingerprint(json_pack("[s,s,s,s]", "cuda", "npu", "xpu", "mps"),
				    ap_plugin_modules(env), AP_DEVICE_QUERY_S);
}

const char *ap_fingerprint_row_name(enum ap_fp_row row)
{
	return ap_row_names[row];
}

/* Reads a string at a dotted path; absent or null gives NULL, another type fails. */
static int get_str(const json_t *j, const char *path, const char **out,
		      struct ap_buf *err)
{
	const json_t *v = j;
	char key[AP_FP_KEY_MAX];
	for (const char *p = path; v && *p;) {
		size_t n = strcspn(p, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		v = json_is_object(v) ? json_object_get(v, key) : NULL;
		p += n + (p[n] == '.');
	}
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		*out = json_string_value(v);
		return 0;
	}
	ap_buf_addf(err, "fingerprint field '%s' is not a string", path);
	return -AP_EPROTO;
}

static int row_set(struct ap_fingerprint *fp, enum ap_fp_row row, struct ap_buf *b)
{
	free(fp->row[row]);
	fp->row[row] = strdup(b->len ? ap_buf_str(b) : "-");
	ap_buf_reset(b);
	return fp->row[row] ? 0 : -ENOMEM;
}

/* row_set() after a step that built b, unless that step failed. */
static int row_take(struct ap_fingerprint *fp, enum ap_fp_row row, struct ap_buf *b,
		       int built)
{
	return built ? built : row_set(fp, row, b);
}

static const char *fingerprint_or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

static int fp_strings(struct ap_fingerprint *fp, const json_t *j, struct ap_buf *err)
{
	static const struct { enum ap_fp_row row; const char *path; } simple[] = {
		{ AP_FP_OS, "os.name" }, { AP_FP_HOST, "host" }, { AP_FP_TIME, "time_utc" },
		{ AP_FP_TORCH_GIT, "torch.git_version" },
	};
	struct ap_buf b = { 0 };
	const char *s, *t;
	int r = 0;

	for (size_t i = 0; !r && i < sizeof(simple) / sizeof(simple[0]); i++)
		if (!(r = get_str(j, simple[i].path, &s, err)) && s)
			r = row_take(fp, simple[i].row, &b, ap_buf_adds(&b, s));
	if (!r && !(r = get_str(j, "os.kernel", &s, err)) &&
	    !(r = get_str(j, "os.machine", &t, err)) && s)
		r = row_take(fp, AP_FP_KERNEL, &b, ap_buf_addf(&b, "%s %s", s, fingerprint_or(t, "")));
	if (!r && !(r = get_str(j, "python.version", &s, err)) && s &&
	    !(r = get_str(j, "python.implementation", &t, err)))
		r = row_take(fp, AP_FP_PYTHON, &b, ap_buf_addf(&b, "%s%s%s", s,
				t && strcmp(t, "CPython") ? " " : "",
				t && strcmp(t, "CPython") ? t : ""));
	ap_buf_free(&b);
	return r;
}

static int fp_torch(struct ap_fingerprint *fp, const json_t *j, struct ap_buf *b)
{
	const json_t *t = json_object_get(j, "torch");
	if (!json_is_object(t))
		return 0;
	const char *v = json_string_value(json_object_get(t, "version"));
	json_int_t ms = json_integer_value(json_object_get(j, "torch_import_ms"));
	ap_buf_addf(b, "%s (import %lld ms)", fingerprint_or(v, "?"), (long long)ms);
	int r = row_set(fp, AP_FP_TORCH, b);
	const char *cuda = json_string_value(json_object_get(t, "cuda"));
	const json_t *dbg = json_object_get(t, "debug"), *abi = json_object_get(t, "cxx11_abi");
	ap_buf_addf(b, "%s", json_is_true(dbg) ? "debug" : json_is_false(dbg) ? "release" : "?");
	if (abi)
		ap_buf_addf(b, ", cxx11 abi %s", json_is_true(abi) ? "yes" : "no");
	ap_buf_addf(b, ", cuda %s", fingerprint_or(cuda, "none"));
	return r ? r : row_set(fp, AP_FP_TORCH_BUILD, b);
}

static int fp_plugins(struct ap_fingerprint *fp, const json_t *j, struct ap_buf *b)
{
	const json_t *pl = json_object_get(j, "plugins");
	size_t i;
	json_t *p;
	json_array_foreach(pl, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *ver = json_string_value(json_object_get(p, "version"));
		const char *err = json_string_value(json_object_get(p, "error"));
		ap_buf_addf(b, "%s%s %s%s%s%s", i ? ", " : "", fingerprint_or(name, "?"), fingerprint_or(ver, "?"),
			    err ? " (import failed: " : "", fingerprint_or(err, ""), err ? ")" : "");
	}
	if (!b->len && json_is_array(pl))
		ap_buf_adds(b, "none");
	return row_set(fp, AP_FP_PLUGINS, b);
}

/* One line for one device type: "2 x NVIDIA H200" or "unavailable: why",
 * then what the worker could not learn of it and how it learned the rest
 * ("(torch.openreg has no device_count; count from ...)"). */
static int fp_device(struct ap_fp_device *dev, const json_t *d, size_t *head)
{
	struct ap_buf b = { 0 };
	const char *type = json_string_value(json_object_get(d, "type"));
	json_int_t count = json_integer_value(json_object_get(d, "count"));
	const json_t *notes = json_object_get(d, "notes"), *note;
	size_t i;
	if (json_is_true(json_object_get(d, "available"))) {
		const char *model = json_string_value(json_array_get(json_object_get(d, "names"), 0));
		ap_buf_addf(&b, "%lld x %s", (long long)count, fingerprint_or(model, "?"));
	} else {
		const char *why = json_string_value(json_object_get(d, "reason"));
		ap_buf_addf(&b, "unavailable: %s", fingerprint_or(why, "no reason given"));
	}
	*head = b.len;
	json_array_foreach(notes, i, note)
		ap_buf_addf(&b, "%s%s", i ? "; " : " (", fingerprint_or(json_string_value(note), "?"));
	if (json_array_size(notes))
		ap_buf_adds(&b, ")");
	dev->type = strdup(fingerprint_or(type, "?"));
	dev->text = b.data ? b.data : strdup("?");
	return dev->type && dev->text ? 0 : -ENOMEM;
}

static int fp_devices(struct ap_fingerprint *fp, const json_t *j, struct ap_buf *b)
{
	const json_t *devs = json_object_get(j, "devices");
	size_t i, avail = 0;
	json_t *d;
	fp->ndevices = json_array_size(devs);
	fp->devices = calloc(fp->ndevices ? fp->ndevices : 1, sizeof(*fp->devices));
	if (!fp->devices)
		return -ENOMEM;
	json_array_foreach(devs, i, d) {
		size_t head;
		if (fp_device(&fp->devices[i], d, &head))
			return -ENOMEM;
		if (json_is_true(json_object_get(d, "available"))) /* the notes: on its own line */
			ap_buf_addf(b, "%s%s %.*s", avail++ ? ", " : "", fp->devices[i].type,
				    (int)head, fp->devices[i].text);
	}
	if (!avail && json_is_array(devs))
		ap_buf_adds(b, "cpu only");
	return row_set(fp, AP_FP_DEVICES, b);
}

int ap_fingerprint_decode(struct ap_fingerprint *fp, const json_t *j, struct ap_buf *err)
{
	struct ap_buf b = { 0 };
	const char *model;
	memset(fp, 0, sizeof(*fp));
	if (!json_is_object(j))
		return ap_buf_adds(err, "fingerprint is not a JSON object"), -AP_EPROTO;
	int r = fp_strings(fp, j, err);
	r = r ? r : fp_torch(fp, j, &b);
	r = r ? r : fp_plugins(fp, j, &b);
	r = r ? r : fp_devices(fp, j, &b);
	r = r ? r : get_str(j, "cpu.model", &model, err);
	if (!r && json_is_object(json_object_get(j, "cpu"))) {
		json_int_t n = json_integer_value(json_object_get(json_object_get(j, "cpu"), "count"));
		ap_buf_addf(&b, "%s x %lld", fingerprint_or(model, "?"), (long long)n);
		r = row_set(fp, AP_FP_CPU, &b);
	}
	for (int i = 0; !r && i < AP_FP_NROWS; i++)
		if (!fp->row[i])
			r = row_set(fp, (enum ap_fp_row)i, &b);
	ap_buf_free(&b);
	if (r)
		ap_fingerprint_free(fp);
	return r;
}

void ap_fingerprint_render(const struct ap_fingerprint *fp, struct ap_buf *out)
{
	for (int i = 0; i < AP_FP_NROWS; i++)
		ap_buf_addf(out, "%-12s %s\n", ap_row_names[i], fp->row[i]);
	for (size_t d = 0; d < fp->ndevices; d++)
		ap_buf_addf(out, "  %-10s %s\n", fp->devices[d].type, fp->devices[d].text);
}

static size_t fingerprint_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80; /* count UTF-8 characters */
	return w;
}

static void cell(struct ap_buf *out, const char *s, size_t width)
{
	ap_buf_adds(out, s);
	for (size_t w = fingerprint_width(s); w < width; w++)
		ap_buf_adds(out, " ");
}

/* The text of one table row for column c: a fixed row, or a device type. */
static const char *table_text(const struct ap_fingerprint *fp, const char *error,
				 int row, const char *devtype)
{
	if (!fp)
		return row == 0 ? (error ? error : "(no fingerprint)") : "";
	if (!devtype)
		return row >= 0 && row < AP_FP_NROWS ? fp->row[row] : "";
	for (size_t d = 0; d < fp->ndevices; d++)
		if (!strcmp(fp->devices[d].type, devtype))
			return fp->devices[d].text;
	return "-";
}

/* The device types named by any column, each once, in first-seen order. */
static size_t table_devtypes(const struct ap_fingerprint *const *fps, size_t n,
				const char **types, size_t max)
{
	size_t nt = 0;
	for (size_t c = 0; c < n; c++)
		for (size_t d = 0; fps[c] && d < fps[c]->ndevices; d++) {
			size_t k = 0;
			while (k < nt && strcmp(types[k], fps[c]->devices[d].type))
				k++;
			if (k == nt && nt < max)
				types[nt++] = fps[c]->devices[d].type;
		}
	return nt;
}

static void table_line(struct ap_buf *out, const char *head,
			  const struct ap_fingerprint *const *fps, const char *const *errors,
			  size_t n, const size_t *width, int row, const char *devtype)
{
	cell(out, head, AP_FP_HEAD_WIDTH);
	for (size_t c = 0; c < n; c++)
		cell(out, table_text(fps[c], errors[c], row, devtype),
			c + 1 < n ? width[c] + 2 : 0);
	ap_buf_adds(out, "\n");
}

void ap_fingerprint_table(const struct ap_fingerprint *const *fps, const char *const *names,
			  const char *const *errors, size_t n, struct ap_buf *out)
{
	const char *types[AP_FP_DEVTYPES_MAX];
	size_t nt = table_devtypes(fps, n, types, AP_FP_DEVTYPES_MAX);
	size_t *width = calloc(n ? n : 1, sizeof(*width));
	if (!width)
		return;
	for (size_t c = 0; c < n; c++) {
		width[c] = fingerprint_width(names[c]);
		for (size_t i = 0; i < AP_FP_NROWS + nt; i++) {
			const char *s = i < AP_FP_NROWS
				? table_text(fps[c], errors[c], (int)i, NULL)
				: table_text(fps[c], errors[c], -1, types[i - AP_FP_NROWS]);
			if (fingerprint_width(s) > width[c])
				width[c] = fingerprint_width(s);
		}
	}
	cell(out, "", AP_FP_HEAD_WIDTH);
	for (size_t c = 0; c < n; c++)
		cell(out, names[c], c + 1 < n ? width[c] + 2 : 0);
	ap_buf_adds(out, "\n");
	for (int i = 0; i < AP_FP_NROWS; i++)
		table_line(out, ap_row_names[i], fps, errors, n, width, i, NULL);
	for (size_t t = 0; t < nt; t++) {
		struct ap_buf head = { 0 };
		ap_buf_addf(&head, "  %s", types[t]);
		table_line(out, ap_buf_str(&head), fps, errors, n, width, -1, types[t]);
		ap_buf_free(&head);
	}
	free(width);
}

void ap_fingerprint_free(struct ap_fingerprint *fp)
{
	for (int i = 0; i < AP_FP_NROWS; i++)
		free(fp->row[i]);
	for (size_t d = 0; fp->devices && d < fp->ndevices; d++) {
		free(fp->devices[d].type);
		free(fp->devices[d].text);
	}
	free(fp->devices);
	memset(fp, 0, sizeof(*fp));
}
