#!/bin/bash
# Upstream's own test tree: test_ops' generated gelu tests, on CPU and on
# openreg (through apiparity's stated adapter), among the first official
# tests; ONNX, MPS and CUDA-only tests never run as failures.
. "$(dirname "$0")/lib.sh"
plan 9
GELU=torch.nn.functional.gelu
nodes() { printf '%s\n' "$1" | grep -E '^ *[0-9]+  test/' | awk '{print $2}'; }

upstream_tree() {
	run 0 tests_fetch_has_the_trixie_tree "$APIPARITY" tests fetch trixie
	run 0 find_in_upstreams_tree "$APIPARITY" tests find $GELU --env trixie
	contains "$(nodes "$out" | head -1)" "^test/test_ops\.py::TestCommonCPU::test_[a-z_]+_nn_functional_gelu_cpu" \
		upstream_first_is_a_test_ops_generated_id
	contains "$(nodes "$out" | head -10)" "^test/test_ops\.py::TestCommonCPU::test_noncontiguous_samples_nn_functional_gelu_cpu_float32$" \
		noncontiguous_samples_is_among_the_first_ten
	run 0 check_in_upstreams_tree_on_both "$APIPARITY" check $GELU --env trixie --env trixie-openreg \
		--timeout 15 --out "$T/u"
	first_run() { field "$1" "[c['name'] for c in b['checks'] if c['kind'] == 'official' and c['status'] != 'NOTRUN'][0]"; }
	contains "$(first_run "$T/u/trixie/bundle.json")" "^test/test_ops\.py::TestCommonCPU::test_[a-z_]+_nn_functional_gelu_cpu" \
		first_official_test_run_on_cpu_is_test_ops_generated
	contains "$(first_run "$T/u/trixie-openreg/bundle.json")" "^test/test_ops\.py::TestCommonPRIVATEUSE1::test_[a-z_]+_nn_functional_gelu_openreg" \
		first_official_test_run_on_openreg_is_its_own_class
	equals "$(field "$T/u/trixie-openreg/bundle.json" "[c['name'] for c in b['checks'] if c['kind'] == 'official' and c['status'] != 'NOTRUN' and ('onnx' in c['name'] or 'mps' in c['name'] or 'cuda' in c['name'])]")" \
		"[]" no_onnx_mps_or_cuda_test_runs
	equals "$(field "$T/u/trixie-openreg/bundle.json" "'adapter' in b['official']")" "True" upstream_run_names_the_adapter
}
needs trixie trixie-openreg -- upstream_tree
done_testing
