/* fingerprint.h - what an environment is: OS, Python, torch, plugins, devices.
 *
 * The worker measures; this module decodes the measurement (JSON, as `env show
 * --json` prints it) into fields and lays them out for people, one environment
 * as a list or several side by side. Decoding is strict about types and lenient
 * about absence: a missing field is "-", a field of the wrong type is an error.
 */
#ifndef AP_FINGERPRINT_H
#define AP_FINGERPRINT_H

#include <jansson.h>

#include "base/buf.h"
#include "env/envs.h"

/* The rows shown for a fingerprint, in order. */
enum ap_fp_row {
	AP_FP_OS, AP_FP_KERNEL, AP_FP_PYTHON, AP_FP_TORCH, AP_FP_TORCH_GIT,
	AP_FP_TORCH_BUILD, AP_FP_PLUGINS, AP_FP_DEVICES, AP_FP_CPU, AP_FP_HOST,
	AP_FP_TIME, AP_FP_NROWS
};

struct ap_fp_device {
	char *type; /* cuda, npu, xpu, mps, the PrivateUse1 name */
	char *text; /* "2 x NVIDIA H200" or "unavailable: why" */
};

struct ap_fingerprint {
	char *row[AP_FP_NROWS];       /* each a display string, never NULL once decoded */
	struct ap_fp_device *devices; /* every device type torch was asked about */
	size_t ndevices;
};

/* The worker request that measures env's fingerprint: which device backends
 * and which plugin modules to ask about is policy, so it is decided here. New
 * reference, NULL when out of memory. */
json_t *ap_fingerprint_request(const struct ap_env *env);

/* The plugin modules that apiparity looks for besides the torch.backends entry
 * points: the well-known ones, then env's own `plugins`, in the order to
 * import them (a new array, NULL when out of memory). */
json_t *ap_plugin_modules(const struct ap_env *env);

/* Decodes j. 0, or -AP_EPROTO with the offending field named in err. */
int ap_fingerprint_decode(struct ap_fingerprint *fp, const json_t *j, struct ap_buf *err);

/* The name of a row, as printed: "python", "torch", ... */
const char *ap_fingerprint_row_name(enum ap_fp_row row);

/* One environment: a line per row, the row name padded to a column, then a
 * line per device type. */
void ap_fingerprint_render(const struct ap_fingerprint *fp, struct ap_buf *out);

/* n environments side by side, a column each, headed by names[i], with a row
 * per device type seen in any of them; an entry of fps that is NULL shows
 * errors[i] instead. */
void ap_fingerprint_table(const struct ap_fingerprint *const *fps, const char *const *names,
			  const char *const *errors, size_t n, struct ap_buf *out);

void ap_fingerprint_free(struct ap_fingerprint *fp);

#endif
