#!/bin/bash
# nn modules on numbers: ModuleInfo's samples, the module built once in the
# reference and its state shipped, so every environment and device runs the
# same parameters; forward outputs and the gradients of the inputs and the
# parameters compared device against CPU and across environments.
. "$(dirname "$0")/lib.sh"
plan 21

# num DIR ENV EXPR - the numeric checks of ENV, by Python expression on n
# (the list of them).
num() { field "$1/$2/bundle.json" "(lambda n: ($3))([c for c in b['checks'] if c['kind'] == 'numeric'])"; }

across_versions() {
	run 0 linear_is_consistent_in_trixie_and_sid "$APIPARITY" check torch.nn.Linear --env trixie --env sid --no-official --out "$T/lin"
	contains "$out" "^trixie .* consistent$" trixie_row_is_consistent
	contains "$out" "^sid .* consistent$" sid_row_is_consistent
	equals "$(field "$T/lin/sid/bundle.json" 'b["operators"]["opinfo"]["ops"][0]["name"], b["operators"]["opinfo"]["ops"][0]["module"], b["operators"]["reference"]')" \
		"('nn.Linear', True, 'trixie')" samples_come_from_module_db_in_the_reference
	equals "$(num "$T/lin" sid 'sorted(set(c["status"] for c in n if c["across"] == "trixie")), len([c for c in n if c["across"] == "trixie"]) >= 4')" \
		"(['PASS'], True)" sid_cpu_is_compared_with_trixie_sample_by_sample
	# Linear(10, 8) with a bias: the output, the input's gradient and both
	# parameters' gradients; identical bytes, so the same state was loaded.
	equals "$(num "$T/lin" sid '[(m["output"], m["numel"], m["max_abs"]) for c in n if c["name"] == "nn.Linear float32 sample#0 cpu vs trixie" for m in c["measurements"]]')" \
		"[('out[0]', 32, 0.0), ('grad[0]', 40, 0.0), ('grad[1]', 80, 0.0), ('grad[2]', 8, 0.0)]" \
		outputs_and_parameter_gradients_agree_exactly
	equals "$(num "$T/lin" trixie 'all(len(c["input_digest"]) == 64 for c in n) and len(n) >= 4')" True \
		samples_carry_their_digest
	equals "$(py 'import json, sys
d = lambda e: {c["name"].split(" cpu")[0]: c["input_digest"] for c in json.load(open(sys.argv[1] + "/" + e + "/bundle.json"))["checks"] if c["kind"] == "numeric"}
print(d("trixie") == d("sid"))' "$T/lin")" True every_environment_ran_the_same_sample_bytes
	equals "$(num "$T/lin" sid '[c["status"] for c in n if c["name"] == "nn.Linear float32 sample#0 cpu"]')" "['PASS']" \
		each_sample_ran_on_cpu_in_sid
	equals "$(field "$T/lin/sid/bundle.json" '[(c["status"], c["signature"]["source"]) for c in b["checks"] if c["kind"] == "signature"]')" \
		"[('PASS', 'inspect')]" constructor_signature_is_compared_too
}
needs trixie sid -- across_versions

# On upstream's out-of-tree backend: a module without parameters is consistent;
# nn.Linear's parameters reach the device as plain tensors, so its samples
# without a bias compare openreg against CPU, parameter gradients included.
# The gradient of a bias is a reduction given a bool (keepdim), which
# openreg's device pipe cannot carry: a known limit of the backend
# (specs/backend-limits.ini), so those samples are NOTRUN naming it, and
# nn.Linear is consistent on the samples compared. The device trace covers
# the forward only: with it around the backward, openreg aborted the runner
# there (SIGABRT) instead of raising.
on_openreg() {
	run 0 gelu_module_is_consistent_on_openreg "$APIPARITY" check torch.nn.GELU --env trixie --env trixie-openreg --no-official --out "$T/gelu"
	contains "$out" "^trixie-openreg .* openreg x[0-9]+ .* consistent$" openreg_row_is_consistent
	equals "$(num "$T/gelu" trixie-openreg 'sorted(set(c["status"] for c in n if c["device"] == "openreg")), len([c for c in n if c["device"] == "openreg"]) >= 4')" \
		"(['PASS'], True)" gelu_samples_compare_openreg_against_cpu
	equals "$(field "$T/gelu/trixie-openreg/bundle.json" '"openreg" in b["device_trace"]["tensor_devices"]')" True \
		device_trace_sees_openreg_tensors
	run 0 linear_is_consistent_on_openreg "$APIPARITY" check torch.nn.Linear --env trixie --env trixie-openreg --no-official --out "$T/lor"
	contains "$out" "^trixie-openreg .* openreg x[0-9]+ .* consistent$" linear_openreg_row_is_consistent
	equals "$(num "$T/lor" trixie-openreg '[(c["status"], [m["output"] for m in c["measurements"]]) for c in n if c["name"] == "nn.Linear float32 sample#1 openreg vs cpu"]')" \
		"[('PASS', ['out[0]', 'grad[0]', 'grad[1]'])]" linear_without_bias_compares_weight_gradient_on_openreg
	equals "$(num "$T/lor" trixie-openreg 'len([c for c in n if c["device"] == "openreg"]) == len([c for c in n if c["across"] == "trixie"]) > 0')" True \
		every_sample_has_its_result_on_openreg
	equals "$(num "$T/lor" trixie-openreg 'sorted(set((c["status"], (c.get("limit") or {}).get("name")) for c in n if c["device"] == "openreg"))')" \
		"[('NOTRUN', 'openreg-bool-arguments'), ('PASS', None)]" linear_bias_samples_are_the_bool_limit_and_no_crash
	contains "$(num "$T/lor" trixie-openreg '[c["limit"]["seen"] for c in n if c["status"] == "NOTRUN"][0]')" \
		"^raised RuntimeError on openreg \(Cannot send object of type <class 'bool'> over openreg device pipe" \
		linear_limit_keeps_what_the_device_said
	contains "$out" "^  trixie-openreg: [0-9]+ samples? not run on openreg, known limit openreg-bool-arguments \(bool arguments\): " \
		linear_summary_names_the_limit
}
needs trixie trixie-openreg -- on_openreg

done_testing
