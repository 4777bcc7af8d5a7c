#!/bin/bash
# The numeric checks of operators: OpInfo samples made once in the reference
# environment, run on CPU and on every device of every environment, compared
# in C (device against CPU, each environment's CPU against the reference's).
. "$(dirname "$0")/lib.sh"
plan 30

# A bundle's numeric checks, as "STATUS:count" sorted.
statuses() { field "$1" '" ".join(sorted(set("%s:%d" % (s, [c["status"] for c in b["checks"] if c["kind"] == "numeric"].count(s)) for s in [c["status"] for c in b["checks"] if c["kind"] == "numeric"])))'; }

across_envs() {
	run 0 gelu_is_consistent_in_trixie_and_sid "$APIPARITY" check torch.nn.functional.gelu --env trixie --env sid --no-official --out "$T/g"
	contains "$out" "^trixie .* consistent$" gelu_trixie_consistent
	contains "$out" "^sid .* consistent$" gelu_sid_consistent
	b="$T/g/sid/bundle.json"
	equals "$(field "$b" 'sum(1 for c in b["checks"] if c["kind"] == "numeric" and c["across"] == "trixie" and c["status"] == "PASS" and c["dtype"])')" 8 \
		gelu_sid_cpu_compared_with_trixie_on_8_float_samples
	equals "$(py 'import json,sys
r = {c["name"].rsplit(" cpu", 1)[0]: c["input_digest"] for c in json.load(open(sys.argv[1]))["checks"] if c["kind"] == "numeric"}
s = {c["name"].rsplit(" cpu", 1)[0]: c["input_digest"] for c in json.load(open(sys.argv[2]))["checks"] if c["kind"] == "numeric"}
print(len(r) >= 8 and r == s)' "$T/g/trixie/bundle.json" "$b")" True gelu_same_input_digests_in_both
	equals "$(field "$b" 'sorted(set(k for c in b["checks"] if c["kind"] == "numeric" for m in c["measurements"] for k in ("max_abs","max_rel","worst_ratio","mismatches","first_mismatch","rtol","atol","tol_source","digest","digest_expected") if k in m))')" \
		"['atol', 'digest', 'digest_expected', 'first_mismatch', 'max_abs', 'max_rel', 'mismatches', 'rtol', 'tol_source', 'worst_ratio']" \
		gelu_bundle_keeps_the_measurements
	equals "$(field "$b" '[(m["rtol"], m["atol"]) for c in b["checks"] if c.get("dtype") == "float32" and c["across"] for m in c["measurements"]][0]')" \
		"(1.3e-06, 1e-05)" gelu_float32_compared_with_assert_close_defaults
	equals "$(field "$b" 'sorted(set(m["output"] for c in b["checks"] if c.get("dtype") == "float32" and c["across"] for m in c["measurements"]))')" \
		"['grad[0]', 'out[0]']" gelu_outputs_and_gradients_compared
	equals "$(field "$b" '[c["exception"] for c in b["checks"] if c.get("sample_kind") == "error" and c["across"]]')" \
		"[{'seen': 'RuntimeError', 'expected': 'RuntimeError'}]" gelu_error_input_raises_the_same_type
	equals "$(field "$b" 'b["operators"]["reference"], b["operators"]["seed"], b["operators"]["count"] >= 8')" \
		"('trixie', 0, True)" gelu_bundle_records_reference_and_seed
	equals "$(py 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["type"] == "check" and json.loads(l)["data"]["kind"] == "numeric"))' "$T/g/sid/journal.jsonl")" \
		"$(field "$b" 'sum(1 for c in b["checks"] if c["kind"] == "numeric")')" gelu_every_numeric_check_journaled
	sed 's/^require_official: .*/require_official: "no"/' "$TOP/policies/default.yaml" > "$T/policy.yaml"
	run 0 gelu_evidence_passes_verify "$APIPARITY" verify "$T/g" --policy "$T/policy.yaml"

	for t in torch.Tensor.index_add_ torch.matmul torch.nn.functional.relu; do
		run 0 "${t##*.}_is_consistent" "$APIPARITY" check $t --env trixie --env sid --no-official --out "$T/t"
		contains "$out" "^sid .* consistent$" "${t##*.}_sid_consistent"
		equals "$(field "$T/t/sid/bundle.json" 'sum(1 for c in b["checks"] if c["kind"] == "numeric" and c["across"] == "trixie" and c["status"] == "PASS") >= 8')" \
			True "${t##*.}_sid_compared_with_trixie_on_8_samples"
	done
	equals "$(field "$T/t/trixie/bundle.json" 'b["verdict"], b["operators"]["opinfo"]["ops"][0]["name"]')" \
		"('consistent', 'nn.functional.relu')" relu_no_longer_unverified
	run 0 samples_bounds_the_samples "$APIPARITY" check torch.nn.functional.relu --env trixie --samples 1 --no-official --out "$T/s1"
	equals "$(field "$T/s1/trixie/bundle.json" 'max(__import__("collections").Counter((c["dtype"], c["sample_kind"]) for c in b["checks"] if c["kind"] == "numeric").values())')" \
		1 samples_1_takes_one_of_each_kind_per_dtype
	equals "$(field "$T/t/sid/bundle.json" 'b["operators"]["opinfo"]["inplace"], b["operators"]["opinfo"]["ops"][0]["name"]')" \
		"(False, 'nn.functional.relu')" relu_is_not_inplace
	run 0 index_add__runs_in_place "$APIPARITY" check torch.Tensor.index_add_ --env sid --samples 1 --no-official --out "$T/ia"
	equals "$(field "$T/ia/sid/bundle.json" 'b["operators"]["opinfo"]["inplace"], b["operators"]["opinfo"]["ops"][0]["name"]')" \
		"(True, 'index_add')" index_add__is_the_inplace_variant_of_index_add
}
needs trixie sid -- across_envs

usage() {
	run 2 samples_must_be_a_count "$APIPARITY" check torch.matmul --samples 0
	contains "$err" "--samples wants a number from 1 to 64" samples_usage_says_the_range
	run 2 samples_refuses_words "$APIPARITY" check torch.matmul --samples 4x
}
usage

done_testing
