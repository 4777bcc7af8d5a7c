/* testgen.h - an operator's tests as upstream generates them: the test
 * templates an @ops(op_db...) or @modules(module_db...) decorator
 * parametrizes, instantiated per device by instantiate_device_type_tests
 * (test/test_ops.py::TestCommonCPU::test_out_nn_functional_gelu_cpu_float32).
 *
 * A text search for the operator's name cannot see them: they name no
 * operator. The usage index holds each decorator's source ("D", "G FID");
 * the worker evaluates it in the environment's own Python with upstream's
 * own parametrizer, narrowed to the target's OpInfo entries, so the names
 * are exactly upstream's (official.c asks it, and makes the hits); here is
 * the policy: which device decorators and
 * which files leave a test out on a device (it is then listed with why,
 * never run as if it could pass), and how the generated tests rank (above
 * any test that merely mentions the name).
 */
#ifndef AP_TESTGEN_H
#define AP_TESTGEN_H

#include <jansson.h>

/* The least score of a generated test; a text match scores 7 at most. */
#define AP_SCORE_GENERATED 20

/* Whether device (an environment's: "cpu", "openreg") is a PrivateUse1
 * backend's: none of the device types upstream's tests know by name. */
int ap_testgen_is_privateuse1(const char *device);

/* Why a template with the device decorators decorators (their sources, an
 * array of strings: "onlyCUDA", "onlyNativeDeviceTypesAnd([\"hpu\"])")
 * does not run on device (the environment's: "cpu", "cuda", or a
 * PrivateUse1 backend's name): NULL when it may, else a new string
 * "no-device: ...". Only the decorators that name devices count
 * (onlyCPU, onlyCUDA, onlyMPS, onlyXPU, onlyHPU, onlyPRIVATEUSE1,
 * onlyCUDAAndPRIVATEUSE1, onlyNativeDeviceTypes[And], onlyOn). */
char *ap_testgen_device_skip(const json_t *decorators, const char *device);

/* Why test file file (test/...) cannot run in an environment of device,
 * by what the file is for: one for MPS or CUDA only (a "mps" or "cuda"
 * word in its name) where the device is another, an ONNX test
 * (test/onnx/) where onnxruntime does not import (onnxruntime 0). NULL
 * when none of these, else a new string ("no-device: ..." or
 * "missing-dependency: ..."). */
char *ap_testgen_file_skip(const char *file, const char *device, int onnxruntime);

/* The score of a generated test: AP_SCORE_GENERATED, more for
 * test/test_ops.py, for its TestCommon templates, and for float32 or no
 * dtype (the instance upstream's any_one picks first). */
int ap_testgen_score(const char *file, const char *generic_cls, const char *dtype);

#endif
