/* test-testgen.c - unit tests for src/check/testgen.h: which device
 * decorators and which test files leave a device out, how generated tests
 * score and rank against mere mentions, and the adapter a PrivateUse1
 * backend's tests get (ap_official_adapter). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/official.h"
#include "check/testgen.h"

/* Why decorators (sources) leave device out; NULL when they do not. The
 * answer is kept until the next call. */
static const char *skip_of(const char *device, const char *a, const char *b)
{
	static char *last;
	json_t *v = json_pack("[s?,s?]", a, b);
	assert_non_null(v);
	for (size_t i = json_array_size(v); i-- > 0;)
		if (json_is_null(json_array_get(v, i)))
			json_array_remove(v, i);
	free(last);
	last = ap_testgen_device_skip(v, device);
	json_decref(v);
	return last;
}

static void only_cuda_leaves_cpu_and_openreg_out_and_admits_cuda(void **state)
{
	(void)state;
	assert_string_equal(skip_of("cpu", "onlyCUDA", NULL),
			    "no-device: upstream runs it only on cuda (@onlyCUDA); this "
			    "environment's device is cpu");
	assert_non_null(skip_of("openreg", "onlyCUDA", NULL));
	assert_null(skip_of("cuda", "onlyCUDA", NULL));
}

static void only_cpu_admits_cpu_only(void **state)
{
	(void)state;
	assert_null(skip_of("cpu", "onlyCPU", NULL));
	assert_non_null(skip_of("openreg", "onlyCPU", NULL));
	assert_non_null(skip_of("cuda", "onlyCPU", NULL));
}

static void native_device_types_admit_a_privateuse1_backend_but_not_mps(void **state)
{
	(void)state;
	assert_null(skip_of("openreg", "onlyNativeDeviceTypes", NULL));
	assert_null(skip_of("cpu", "onlyNativeDeviceTypes", NULL));
	assert_non_null(skip_of("mps", "onlyNativeDeviceTypes", NULL));
	assert_null(skip_of("openreg", "onlyNativeDeviceTypesAnd([\"hpu\"])", NULL));
	assert_null(skip_of("hpu", "onlyNativeDeviceTypesAnd([\"hpu\"])", NULL));
	assert_non_null(skip_of("mps", "onlyNativeDeviceTypesAnd([\"hpu\"])", NULL));
}

static void only_on_admits_the_named_device_only(void **state)
{
	(void)state;
	assert_null(skip_of("openreg", "onlyOn(\"openreg\")", NULL));
	assert_null(skip_of("openreg", "onlyOn('privateuse1')", NULL));
	assert_non_null(skip_of("cpu", "onlyOn(\"openreg\")", NULL));
	assert_non_null(skip_of("openreg", "onlyOn('cuda')", NULL));
}

static void cuda_and_privateuse1_admit_a_backend_and_not_cpu(void **state)
{
	(void)state;
	assert_null(skip_of("openreg", "onlyCUDAAndPRIVATEUSE1", NULL));
	assert_null(skip_of("npu", "onlyPRIVATEUSE1", NULL));
	assert_non_null(skip_of("cpu", "onlyCUDAAndPRIVATEUSE1", NULL));
	assert_non_null(skip_of("cpu", "onlyPRIVATEUSE1", NULL));
}

static void decorators_that_name_no_device_leave_none_out(void **state)
{
	(void)state;
	assert_null(skip_of("cpu", "skipMeta", "deviceCountAtLeast(2)"));
	assert_null(skip_of("openreg", "skipCUDAIf(True, \"onlyCUDA\")", NULL));
	assert_null(skip_of("cpu", NULL, NULL));
}

static void any_decorator_of_several_leaves_the_device_out(void **state)
{
	(void)state;
	assert_non_null(skip_of("cpu", "skipMeta", "onlyCUDA"));
	assert_non_null(skip_of("cpu", "onlyCUDA", "skipMeta"));
}

static void dotted_decorator_counts_as_its_last_name(void **state)
{
	(void)state;
	assert_non_null(skip_of("cpu", "common_device_type.onlyCUDA", NULL));
	assert_null(skip_of("cuda", "common_device_type.onlyCUDA", NULL));
}

/* ---- ap_testgen_file_skip ---- */

static void file_for_mps_or_cuda_is_left_out_elsewhere(void **state)
{
	(void)state;
	char *s = ap_testgen_file_skip("test/test_mps.py", "cpu", 1);
	assert_string_equal(s, "no-device: test/test_mps.py is for mps only; this "
			       "environment's device is cpu");
	free(s);
	assert_null(ap_testgen_file_skip("test/test_mps.py", "mps", 1));
	s = ap_testgen_file_skip("test/inductor/test_cuda_repro.py", "openreg", 1);
	assert_non_null(s);
	free(s);
	assert_null(ap_testgen_file_skip("test/inductor/test_cuda_repro.py", "cuda", 1));
}

static void mps_or_cuda_counts_only_as_a_whole_word_of_the_name(void **state)
{
	(void)state;
	assert_null(ap_testgen_file_skip("test/test_cudart.py", "cpu", 1));
	assert_null(ap_testgen_file_skip("test/test_mpsx.py", "cpu", 1));
	assert_null(ap_testgen_file_skip("test/cuda/test_ops.py", "cpu", 1));
	assert_null(ap_testgen_file_skip("test/test_ops.py", "openreg", 0));
	char *s = ap_testgen_file_skip("test/x/test_a_cuda.py", "cpu", 1);
	assert_non_null(s);
	free(s);
}

static void onnx_test_is_left_out_only_without_onnxruntime(void **state)
{
	(void)state;
	char *s = ap_testgen_file_skip("test/onnx/test_op.py", "cpu", 0);
	assert_string_equal(s, "missing-dependency: test/onnx/test_op.py is an ONNX test, and "
			       "onnxruntime does not import in this environment");
	free(s);
	assert_null(ap_testgen_file_skip("test/onnx/test_op.py", "cpu", 1));
	assert_null(ap_testgen_file_skip("test/test_onnx.py", "cpu", 0));
}

/* ---- scores, ranking ---- */

static void test_ops_common_float32_scores_highest(void **state)
{
	(void)state;
	int common32 = ap_testgen_score("test/test_ops.py", "TestCommon", "float32");
	int common_none = ap_testgen_score("test/test_ops.py", "TestCommon", NULL);
	int common64 = ap_testgen_score("test/test_ops.py", "TestCommon", "float64");
	int other_cls = ap_testgen_score("test/test_ops.py", "TestTags", "float32");
	int other_file = ap_testgen_score("test/test_decomp.py", "TestCommon", "float32");
	assert_int_equal(common32, common_none);
	assert_true(common32 > common64);
	assert_true(common64 >= other_cls);
	assert_true(common32 > other_cls);
	assert_true(other_cls > ap_testgen_score("test/test_decomp.py", "TestDecomp", "float32"));
	assert_true(common32 > other_file);
	assert_true(ap_testgen_score("test/x.py", "X", "int8") >= AP_SCORE_GENERATED);
}

static void privateuse1_is_any_device_tests_do_not_name(void **state)
{
	(void)state;
	assert_false(ap_testgen_is_privateuse1("cpu"));
	assert_false(ap_testgen_is_privateuse1("cuda"));
	assert_false(ap_testgen_is_privateuse1("mps"));
	assert_true(ap_testgen_is_privateuse1("openreg"));
	assert_true(ap_testgen_is_privateuse1("npu"));
}

static void generated_test_keeps_its_score_and_ranks_above_a_mention(void **state)
{
	(void)state;
	struct ap_official_found f = { 2, calloc(2, sizeof(struct ap_official_hit)) };
	assert_non_null(f.hits);
	f.hits[0] = (struct ap_official_hit){ .file = strdup("test/test_nn.py"),
		.cls = strdup("TestNN"), .test = strdup("test_gelu"), .uses_leaf = 1 };
	f.hits[0].matches = calloc(1, sizeof(*f.hits[0].matches));
	f.hits[0].matches[0] = (struct ap_official_match){ 3, "qualified", strdup("F.gelu(x)") };
	f.hits[0].nmatches = 1;
	f.hits[1] = (struct ap_official_hit){ .file = strdup("test/test_ops.py"),
		.cls = strdup("TestCommonCPU"), .test = strdup("test_out_nn_functional_gelu_cpu_float32"),
		.generated = 1, .score = ap_testgen_score("test/test_ops.py", "TestCommon", "float32") };
	assert_int_equal(ap_official_rank(&f, "gelu"), 0);
	assert_string_equal(f.hits[0].node,
			    "test/test_ops.py::TestCommonCPU::test_out_nn_functional_gelu_cpu_float32");
	assert_int_equal(f.hits[0].score, AP_SCORE_GENERATED + 4);
	assert_true(f.hits[1].score < AP_SCORE_GENERATED);
	json_t *j = ap_official_found_json(&f);
	assert_true(json_is_true(json_object_get(json_array_get(j, 0), "generated")));
	assert_true(json_is_false(json_object_get(json_array_get(j, 1), "generated")));
	json_decref(j);
	ap_official_found_free(&f);
}

/* ---- ap_official_adapter ---- */

static void adapter_is_stated_for_a_privateuse1_backend_only(void **state)
{
	(void)state;
	struct ap_official_opts o = { 0 };
	o.device = "cpu";
	assert_null(ap_official_adapter(&o));
	o.device = "cuda";
	assert_null(ap_official_adapter(&o));
	o.device = NULL;
	assert_null(ap_official_adapter(&o));
	o.device = "openreg";
	json_t *a = ap_official_adapter(&o);
	assert_non_null(a);
	assert_string_equal(json_string_value(json_object_get(a, "module")), "torch.openreg");
	const json_t *adds = json_object_get(a, "adds");
	assert_int_equal(json_object_size(adds), 3);
	assert_non_null(json_object_get(adds, "is_available"));
	assert_non_null(json_object_get(adds, "current_device"));
	assert_non_null(json_object_get(adds, "device_count"));
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(only_cuda_leaves_cpu_and_openreg_out_and_admits_cuda),
		cmocka_unit_test(only_cpu_admits_cpu_only),
		cmocka_unit_test(native_device_types_admit_a_privateuse1_backend_but_not_mps),
		cmocka_unit_test(only_on_admits_the_named_device_only),
		cmocka_unit_test(cuda_and_privateuse1_admit_a_backend_and_not_cpu),
		cmocka_unit_test(decorators_that_name_no_device_leave_none_out),
		cmocka_unit_test(any_decorator_of_several_leaves_the_device_out),
		cmocka_unit_test(dotted_decorator_counts_as_its_last_name),
		cmocka_unit_test(file_for_mps_or_cuda_is_left_out_elsewhere),
		cmocka_unit_test(mps_or_cuda_counts_only_as_a_whole_word_of_the_name),
		cmocka_unit_test(onnx_test_is_left_out_only_without_onnxruntime),
		cmocka_unit_test(test_ops_common_float32_scores_highest),
		cmocka_unit_test(privateuse1_is_any_device_tests_do_not_name),
		cmocka_unit_test(generated_test_keeps_its_score_and_ranks_above_a_mention),
		cmocka_unit_test(adapter_is_stated_for_a_privateuse1_backend_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
