/* numeric.h - the operator checks: OpInfo samples, run everywhere, compared here.
 *
 * A target that one of the reference environment's OpInfo entries stands for
 * (op_db of torch.testing._internal.common_methods_invocations: matched by the
 * object itself, any of its variants, its name or an alias) is checked on
 * numbers, with no spec needed:
 *
 *   1. the reference environment makes the samples (sample_inputs and
 *      reference_inputs, at most --samples of each per dtype, and
 *      error_inputs), after torch.manual_seed(seed), as data (tagged JSON,
 *      tensors as raw bytes); each gets an id and the sha256 of its bytes;
 *   2. every environment runs those same bytes on CPU and on each device it
 *      claims (the env's `device`), and ships every output and the gradients
 *      of the inputs (a fixed grad_output) as dtype, shape, strides and raw
 *      bytes, or the type of the exception raised; one frame per sample;
 *   3. here each device's part is compared with the same environment's CPU
 *      part, and each environment's CPU part with the reference's, with
 *      compare.h's rule and tolerances.
 *
 * Each comparison is one check of kind "numeric" (its shape: evidence/bundle.h).
 * Its status: PASS (every output within tolerance and the same exception
 * type, or none, on both sides); FAIL (an element out of tolerance, another
 * dtype or shape, another number of outputs, a different exception type, or
 * one side raising alone); NOTRUN (this environment's OpInfo says the dtype
 * does not run on that device, or the device raised where the CPU did not
 * as a known limit of its backend says it does: struct ap_numeric_ctx; the
 * reason says which); CRASH, TIMEOUT (the
 * runner died or hung during the sample: only that sample is lost); ERROR
 * (what the worker shipped could not be read, or the harness failed).
 *
 * Everything the worker sends is data: every tensor is checked (its dtype,
 * its shape and strides against its bytes, ap_tensor_check) before it is
 * compared, and a bad one makes its check ERROR, never a read out of bounds.
 */
#ifndef AP_NUMERIC_H
#define AP_NUMERIC_H

#include <jansson.h>

#include "base/buf.h"
#include "base/outcome.h"
#include "check/compare.h"

#define AP_NUMERIC_SAMPLES 4   /* --samples: per OpInfo entry, dtype and kind */
#define AP_NUMERIC_SAMPLES_MAX 64
#define AP_NUMERIC_SEED 0
/* A sample's limit on the devices, once the CPU has run it: this floor plus
 * this many times the CPU's time (never more than the timeout). A device
 * that hangs then costs its sample about the floor, not the whole timeout;
 * the floor is for a backend's slow first call (openreg's goes to a daemon
 * per operator). */
#define AP_NUMERIC_DEVICE_FLOOR_S 15
#define AP_NUMERIC_DEVICE_FACTOR 200

/* The opinfo request: the OpInfo entries of target in an environment, with
 * the dtypes each supports on CPU and on each device of devices (a string
 * of names separated by spaces or commas, or NULL). */
json_t *ap_numeric_opinfo_request(const char *target, const char *devices);

/* Whether an opinfo answer found an entry for the target. */
int ap_numeric_covered(const json_t *opinfo);

/* The samples request, for the reference environment: the default dtypes
 * (float32, float64, bfloat16, float16, int64, bool: those the op supports
 * on CPU there), max_samples of each kind per dtype, seed. */
json_t *ap_numeric_samples_request(const char *target, int max_samples, long seed);

/* The samples of a samples answer made ready to send and to judge: each
 * with "id" (the check name's stem, e.g. "nn.functional.gelu float32
 * sample#0") and "input_digest" (sha256 of its sample as sent). A new
 * array, or NULL with why when the answer is not as the worker makes it. */
json_t *ap_numeric_prepare(const json_t *answer, struct ap_buf *why);

/* Where each of samples (as prepared) is not run, in an environment whose
 * opinfo answer is opinfo (NULL: none): for each sample an object naming
 * each side ("cpu", a device of devices) whose dtypes that environment's
 * entry for the sample names without the sample's dtype, with the reason
 * ("dtype D is not supported on SIDE by this torch's OpInfo for OP"), which
 * its check then gives as NOTRUN. An entry not there, or one that says
 * nothing of a side, runs it. A new array, or NULL when out of memory. */
json_t *ap_numeric_notrun(const json_t *samples, const json_t *opinfo, const char *devices);

/* The adapter apiparity applies to the numeric runner of an environment
 * whose devices (as above) name openreg, upstream's out-of-tree backend:
 * its device daemons forked from the runner rather than spawned (see
 * ap_numeric_adapter's "why" and "what", which the bundle states and
 * worker/numeric_run.py's _forked_daemons applies; keep them in step). */
#define AP_NUMERIC_ADAPTER_OPENREG "openreg-forked-daemons"

/* The name of the adapter ap_numeric_run_request asks for devices
 * (AP_NUMERIC_ADAPTER_OPENREG), or NULL where nothing is adapted. */
const char *ap_numeric_adapter_name(const char *devices);

/* What ap_numeric_run_request asks the runner to adapt for devices, as the
 * bundle states it ({name, why, what, where}): a new object, or NULL where
 * nothing is adapted. */
json_t *ap_numeric_adapter(const char *devices);

/* The run request: samples (as prepared) on CPU and devices (as above),
 * each within timeout_s (the devices' part within AP_NUMERIC_DEVICE_FLOOR_S
 * + AP_NUMERIC_DEVICE_FACTOR x the CPU's time, if less), once the devices
 * have started (within start_s),
 * except where opinfo (the environment's opinfo answer) says a sample's
 * dtype does not run (ap_numeric_notrun). */
json_t *ap_numeric_run_request(const char *target, const json_t *samples, const json_t *opinfo,
			       const char *devices, int timeout_s, int start_s);

/* Whether frame (one the run request streams) is about a sample of samples:
 * its index, or -1. */
long ap_numeric_frame_index(const json_t *frame, const json_t *samples);

/* Judges what frame says of its sample's loss, where the worker sent facts
 * (how the runner ended: protocol.h, struct ap_proto_lost): its "lost"
 * becomes {status, reason}, decided here. During the sample: TIMEOUT ("no
 * result within LIMIT s"), CRASH (the signal's name, or "the runner exited
 * with status N during the sample"); before the runner's first sample:
 * TIMEOUT ("the devices did not start within LIMIT s") or ERROR ("the
 * runner ended before the sample began"). A frame that says no loss is left
 * as it is. A runner the worker stopped because its device's daemon died
 * makes it CRASH ("the device's daemon died of SIGNAL; ..."); a
 * limit derived from the CPU's time says so. 0, or -ENOMEM.
 * Every frame is judged so before its checks. */
int ap_numeric_frame_judge(json_t *frame);

/* A frame, judged, that says sample k was lost (its frame never came, or
 * could not be read): status st, for reason. NULL when out of memory. */
json_t *ap_numeric_lost_frame(size_t k, enum ap_status st, const char *reason);

struct ap_tolerances;
struct ap_limits;

/* What every comparison below looks up, passed down through the calls (no
 * comparison reads a global): the tolerance overrides (check/tolerances.h;
 * NULL: the dtypes' defaults) and the backend limits (check/limits.h; NULL:
 * none), both for op, the API the check verifies (NULL: ""). A device that
 * raised where the CPU did not, as a limit of its backend describes, makes
 * its check NOTRUN ("known limit of BACKEND: REASON") with "limit" {name,
 * backend, what, reason, where, seen}, seen being the failure it excuses.
 * The caller owns all three; they must outlive the calls. */
struct ap_numeric_ctx {
	const struct ap_tolerances *tol;
	const struct ap_limits *limits;
	const char *op;
};

/* The checks one sample's frame gives in its environment: for each device
 * of devices its part against the CPU part (with ctx's tolerances, for the
 * device that computed the output, and its limits); with no device, the CPU
 * part alone (against null: it ran, and its outputs' digests are kept).
 * Appended to out (new references). */
void ap_numeric_device_checks(const struct ap_numeric_ctx *ctx, const json_t *sample,
			      const json_t *frame, const char *devices, long seed, json_t *out);

/* The check that compares the CPU part of frame with the CPU part of
 * ref_frame (the same sample in the reference environment ref_env, whose
 * torch is the same version as this one's when same_torch), with ctx's
 * tolerances for "cpu". NULL when out of memory. */
json_t *ap_numeric_cross_check(const struct ap_numeric_ctx *ctx, const json_t *sample,
			       const json_t *frame, const json_t *ref_frame, const char *ref_env,
			       int same_torch, long seed);

/* Decodes a tagged tensor ({"$tensor": {dtype, shape, strides, data}}) into
 * t, its bytes into store (which t->data then points into; the caller frees
 * store). 0, or -EINVAL with why when anything in it is not as stated
 * (dtype, dimensions, a length, a stride, base64, the bytes the view
 * reads). */
int ap_numeric_tensor(const json_t *v, struct ap_tensor *t, struct ap_buf *store,
		      struct ap_buf *why);

#endif
