#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "check/testgen.h"

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
