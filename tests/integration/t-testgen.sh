#!/bin/bash
# An operator's device tests found by what generates them (@ops over op_db),
# named as upstream instantiates them per device, ranked above mere mentions,
# run on the environment's device (openreg through apiparity's stated
# adapter); tests for a device or dependency the environment lacks are
# listed with why and never run.
. "$(dirname "$0")/lib.sh"
plan 25
GELU=torch.nn.functional.gelu
SRC="$FIX/official-generated"
F=test/test_fake_ops.py
nodes() { printf '%s\n' "$1" | grep -E '^ *[0-9]+  test/' | awk '{print $2}'; }
official() { field "$1" "sorted((c['name'], c['status']) for c in b['checks'] if c['kind'] == 'official')"; }

generated_on_cpu() {
	run 0 find_lists_the_generated_tests "$APIPARITY" tests find $GELU --env trixie --torch-src "$SRC"
	equals "$(nodes "$out" | head -5 | tr '\n' ' ')" \
		"$F::TestCpuOnlyOpsCPU::test_cpu_class_nn_functional_gelu_cpu_float32 $F::TestFakeOpsCPU::test_matches_cpu_nn_functional_gelu_cpu_float32 $F::TestFakeOpsCPU::test_no_dtype_nn_functional_gelu_cpu $F::TestFakeOpsCPU::test_through_alias_nn_functional_gelu_cpu_float32 $F::TestFakeOpsCPU::test_matches_cpu_nn_functional_gelu_cpu_float64 " \
		generated_ids_come_first_float32_before_float64
	contains "$out" "^ +[0-9]+: @_float_ops\(_with_out\)$" a_partial_of_ops_and_a_module_level_list_are_followed
	lacks "$out" "test_unary_only" a_list_without_the_operator_generates_nothing_for_it
	contains "$(printf '%s\n' "$out" | grep -A1 'test_cuda_only_nn_functional_gelu_cpu_float32$')" \
		"not run here: no-device: upstream runs it only on cuda \(@onlyCUDA\); this environment's device is cpu" \
		cuda_only_template_is_listed_with_why
	mention=$(nodes "$out" | grep -n 'TestFakeOps::test_mentions_gelu$' | cut -d: -f1)
	last_gen=$(nodes "$out" | grep -n '_nn_functional_gelu_' | tail -1 | cut -d: -f1)
	[ -n "$mention" ] && [ -n "$last_gen" ] && [ "$mention" -gt "$last_gen" ] &&
		ok a_mere_mention_ranks_below_every_generated_test ||
		nok a_mere_mention_ranks_below_every_generated_test "mention at $mention, last generated at $last_gen"
	lacks "$out" $'\x1b' an_escape_byte_of_a_test_file_never_reaches_the_terminal
	contains "$out" "not run here: no-device: upstream runs it only on \"\\\\x1b\[2Jmps\" \(@onlyOn\)" \
		a_device_decorators_argument_is_shown_escaped
	contains "$out" "not run here: no-device: test/test_mps_gelu\.py is for mps only; this environment's device is cpu" \
		mps_file_is_listed_as_for_mps
	contains "$out" "not run here: missing-dependency: test/onnx/test_onnx_gelu\.py is an ONNX test, and onnxruntime does not import in this environment" \
		onnx_test_is_listed_as_needing_onnxruntime

	CLAIM=$F::TestFakeOpsCPU::test_no_dtype_nn_functional_gelu_cpu
	run 0 claim_of_a_generated_id_passes "$APIPARITY" tests find $GELU --env trixie --torch-src "$SRC" \
		--claimed $CLAIM
	contains "$out" "^PASS claimed:$(rx "$CLAIM")$" generated_id_is_a_test_that_exists
	run 1 claim_of_an_id_upstream_does_not_generate_warns "$APIPARITY" tests find $GELU --env trixie \
		--torch-src "$SRC" --claimed ${CLAIM}_float32

	run 0 check_runs_the_generated_tests_on_cpu "$APIPARITY" check $GELU --env trixie --torch-src "$SRC" --out "$T/c"
	equals "$(official "$T/c/trixie/bundle.json")" \
		"[('test/onnx/test_onnx_gelu.py::TestOnnxGelu::test_export_gelu', 'NOTRUN'), ('$F::TestCpuOnlyOpsCPU::test_cpu_class_nn_functional_gelu_cpu_float32', 'PASS'), ('$F::TestFakeOpsCPU::test_cuda_only_nn_functional_gelu_cpu_float32', 'NOTRUN'), ('$F::TestFakeOpsCPU::test_hostile_device_nn_functional_gelu_cpu_float32', 'NOTRUN'), ('$F::TestFakeOpsCPU::test_matches_cpu_nn_functional_gelu_cpu_float32', 'PASS'), ('$F::TestFakeOpsCPU::test_matches_cpu_nn_functional_gelu_cpu_float64', 'PASS'), ('$F::TestFakeOpsCPU::test_mentions_gelu_cpu', 'PASS'), ('$F::TestFakeOpsCPU::test_no_dtype_nn_functional_gelu_cpu', 'PASS'), ('$F::TestFakeOpsCPU::test_through_alias_nn_functional_gelu_cpu_float32', 'PASS'), ('test/test_mps_gelu.py::TestMPSGelu::test_gelu_on_mps', 'NOTRUN')]" \
		generated_tests_run_by_their_ids_and_the_unrunnable_are_notrun
	equals "$(field "$T/c/trixie/bundle.json" "[c.get('generic') for c in b['checks'] if c['name'].endswith('test_no_dtype_nn_functional_gelu_cpu')]")" \
		"['$F::TestFakeOps::test_no_dtype_nn_functional_gelu']" the_id_on_no_device_is_the_same_on_cpu
	equals "$(field "$T/c/trixie/bundle.json" "b['official'].get('adapter')")" "None" cpu_needs_no_adapter
	equals "$(field "$T/c/trixie/bundle.json" "[f['generated'] for f in b['official']['found']][:5]")" \
		"[True, True, True, True, True]" bundle_marks_the_generated_tests
}
needs trixie -- generated_on_cpu

generated_on_openreg() {
	run 0 check_runs_the_generated_tests_on_openreg "$APIPARITY" check $GELU --env trixie-openreg \
		--torch-src "$SRC" --out "$T/o"
	b="$T/o/trixie-openreg/bundle.json"
	equals "$(field "$b" "sorted(c['name'] for c in b['checks'] if c['kind'] == 'official' and c['status'] == 'PASS')")" \
		"['$F::TestFakeOpsPRIVATEUSE1::test_matches_cpu_nn_functional_gelu_openreg_float32', '$F::TestFakeOpsPRIVATEUSE1::test_matches_cpu_nn_functional_gelu_openreg_float64', '$F::TestFakeOpsPRIVATEUSE1::test_mentions_gelu_openreg', '$F::TestFakeOpsPRIVATEUSE1::test_no_dtype_nn_functional_gelu_openreg', '$F::TestFakeOpsPRIVATEUSE1::test_through_alias_nn_functional_gelu_openreg_float32']" \
		device_class_of_the_privateuse1_base_runs_and_passes
	equals "$(field "$b" "sorted(c['generic'] for c in b['checks'] if c['kind'] == 'official' and c['status'] == 'PASS' and 'generic' in c)")" \
		"['$F::TestFakeOps::test_matches_cpu_nn_functional_gelu_float32', '$F::TestFakeOps::test_matches_cpu_nn_functional_gelu_float64', '$F::TestFakeOps::test_no_dtype_nn_functional_gelu', '$F::TestFakeOps::test_through_alias_nn_functional_gelu_float32']" \
		a_generated_test_carries_its_id_on_no_device
	equals "$(field "$b" "sorted(b['official']['adapter']['adds'])")" \
		"['current_device', 'device_count', 'is_available']" bundle_names_what_the_adapter_adds
	equals "$(field "$b" "b['official']['adapter']['module']")" "torch.openreg" adapter_names_the_device_module
	contains "$(cat "$T/o/trixie-openreg/official.log")" \
		"^apiparity adapter: added to torch\.openreg for upstream's PrivateUse1TestBase: is_available, device_count, current_device$" \
		runner_log_says_what_it_added
	equals "$(field "$b" "[c['reason'] for c in b['checks'] if 'TestCpuOnlyOps' in c['name']]")" \
		"['no-device: not instantiated for openreg: instantiate_device_type_tests(TestCpuOnlyOps, globals(), only_for=\"cpu\")']" \
		a_class_instantiated_for_cpu_only_is_notrun_on_openreg
}
needs trixie-openreg -- generated_on_openreg

done_testing
