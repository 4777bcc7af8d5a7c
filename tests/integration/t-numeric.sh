#!/bin/bash
# The numeric checks of operators: OpInfo samples made once in the reference
# environment, run on CPU and on every device of every environment, compared
# in C (device against CPU, each environment's CPU against the reference's).
. "$(dirname "$0")/lib.sh"
plan 50

across_envs() {
	run 0 gelu_is_consistent_in_trixie_and_sid "$APIPARITY" check torch.nn.functional.gelu --env trixie --env sid --no-official --out "$T/g"
	contains "$out" "^trixie .* consistent$" gelu_trixie_consistent
	contains "$out" "^sid .* consistent$" gelu_sid_consistent
	b="$T/g/sid/bundle.json"
	equals "$(field "$b" 'sum(1 for c in b["checks"] if c["kind"] == "numeric" and c["across"] == "trixie" and c["status"] == "PASS" and c["dtype"] and not c.get("form") and c["sample_kind"] != "dtype")')" 8 \
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
		run 0 "${t##*.}_is_consistent" "$APIPARITY" check $t --env trixie --env sid --samples 1 --no-official --out "$T/t"
		# matmul's float16 on noncontiguous inputs moved between torch 2.6
		# and 2.14 (a change between versions, said, not counted)
		contains "$out" "^sid .* consistent(-with-limits)?$" "${t##*.}_sid_consistent"
		equals "$(field "$T/t/sid/bundle.json" 'sum(1 for c in b["checks"] if c["kind"] == "numeric" and c["across"] == "trixie" and c["status"] == "PASS") >= 8')" \
			True "${t##*.}_sid_compared_with_trixie_on_8_samples"
	done
	equals "$(field "$T/t/trixie/bundle.json" 'b["verdict"], b["operators"]["opinfo"]["ops"][0]["name"]')" \
		"('consistent', 'nn.functional.relu')" relu_no_longer_unverified
	run 0 samples_bounds_the_samples "$APIPARITY" check torch.nn.functional.relu --env trixie --samples 1 --no-official --out "$T/s1"
	equals "$(field "$T/s1/trixie/bundle.json" 'max(__import__("collections").Counter((c["dtype"], c["sample_kind"], c.get("form")) for c in b["checks"] if c["kind"] == "numeric").values())')" \
		2 samples_1_takes_one_of_each_kind_per_dtype_and_the_first_empty_one
	equals "$(field "$T/t/sid/bundle.json" 'b["operators"]["opinfo"]["inplace"], b["operators"]["opinfo"]["ops"][0]["name"]')" \
		"(False, 'nn.functional.relu')" relu_is_not_inplace
	run 0 index_add__runs_in_place "$APIPARITY" check torch.Tensor.index_add_ --env sid --samples 1 --no-official --out "$T/ia"
	equals "$(field "$T/ia/sid/bundle.json" 'b["operators"]["opinfo"]["inplace"], b["operators"]["opinfo"]["ops"][0]["name"]')" \
		"(True, 'index_add')" index_add__is_the_inplace_variant_of_index_add
}
needs trixie sid -- across_envs

# The done-when run: trixie, trixie-openreg and sid with the default samples.
# openreg's device pipe cannot carry a str argument, so gelu's
# approximate='tanh' samples raise there and nowhere else: a known limit of
# the backend (specs/backend-limits.ini), so those samples are NOTRUN naming
# it, and the verdict stands on the samples compared.
on_openreg() {
	run 0 gelu_on_openreg_is_consistent "$APIPARITY" check torch.nn.functional.gelu --env trixie --env trixie-openreg --env sid --no-official --out "$T/o"
	contains "$out" "^trixie-openreg .* openreg x[0-9]+ .* consistent$" gelu_openreg_row_is_consistent
	b="$T/o/trixie-openreg/bundle.json"
	# gelu's OpInfo gives two distinct samples per float dtype (it reseeds
	# each, so more are the same bytes), approximate='none' and 'tanh', and
	# one error input: the four 'none' ones and the error input are
	# compared openreg against CPU, every other one is the str limit.
	equals "$(field "$b" '(lambda d: (sum(c["status"] == "PASS" for c in d) >= 5, sum(c["status"] == "NOTRUN" and "limit" in c for c in d) >= 4, len(d)))([c for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg" and c["against"] == "cpu"])')" \
		"(True, True, $(field "$b" 'b["operators"]["count"]'))" gelu_every_sample_without_a_str_compared_openreg_against_cpu
	equals "$(field "$b" '[(c["status"], c["exception"]) for c in b["checks"] if c.get("sample_kind") == "error" and c["device"] == "openreg"]')" \
		"[('PASS', {'seen': 'RuntimeError', 'expected': 'RuntimeError'})]" gelu_openreg_error_input_raises_as_cpu
	# Every sample not compared is one the str limit excuses, and says so.
	equals "$(field "$b" 'sorted(set((c["status"], c["reason"].split(":")[0], c["limit"]["name"]) for c in b["checks"] if c["kind"] == "numeric" and c["status"] != "PASS"))')" \
		"[('NOTRUN', 'known limit of openreg', 'openreg-device-errors'), ('NOTRUN', 'known limit of openreg', 'openreg-str-arguments')]" gelu_openreg_tanh_samples_are_a_known_limit
	contains "$(field "$b" '[c["limit"]["seen"] for c in b["checks"] if c["kind"] == "numeric" and c["status"] == "NOTRUN"][0]')" \
		"^raised RuntimeError on openreg \(Cannot send object of type <class 'str'> over openreg device pipe" \
		gelu_openreg_limit_keeps_what_the_device_said
	contains "$out" "^  trixie-openreg: [0-9]+ samples? not run on openreg, known limit openreg-str-arguments \(str arguments\): upstream's test backend" \
		gelu_summary_names_the_limit
	equals "$(field "$b" 'b["device_trace"]["tensor_devices"].get("openreg", 0) > 0, b["device_trace"]["ops"].get("gelu.default", 0) > 0')" \
		"(True, True)" gelu_device_trace_shows_openreg_tensors
	equals "$(field "$b" 'sum(1 for c in b["checks"] if c["kind"] == "numeric" and c["across"] == "trixie" and c["status"] == "PASS") >= 8')" \
		True gelu_openreg_cpu_matches_trixie_cpu
	# openreg's daemons are forked from the runner (apiparity's adapter):
	# stated in the bundle, done in the runner (its log), and only there.
	equals "$(field "$b" 'b["operators"]["adapter"]["name"]')" openreg-forked-daemons \
		gelu_bundle_states_the_daemons_adapter
	contains "$(cat "$T/o/trixie-openreg/numeric.log")" "^apiparity adapter: openreg-forked-daemons: pytorch_openreg's device daemons are forked from the runner, not spawned$" \
		gelu_runner_log_says_the_daemons_were_forked
	equals "$(field "$T/o/trixie/bundle.json" '"adapter" in b["operators"]')" False \
		gelu_no_adapter_without_openreg
	contains "$out" "^sid .* consistent$" gelu_sid_still_consistent
	run 0 gelu_report_is_written "$APIPARITY" report "$T/o" --lang en --format md
	out=$(cat "$T/o/report.md")
	contains "$out" "^- Known backend limits applied .*:$" report_md_lists_the_limits_applied
	contains "$out" "^  - \`openreg-str-arguments\` \(openreg, str arguments\): samples not run: [0-9]+; upstream's test backend .* \(\`specs/backend-limits\.ini:[0-9]+\`\)$" \
		report_md_names_the_limit_its_samples_and_reason
	"$APIPARITY" report "$T/o" --lang en > /dev/null 2>&1
	contains "$(cat "$T/o/report.html")" "<li class=\"limit\"><code>openreg-str-arguments</code> \(openreg, str arguments\)" \
		report_html_lists_the_limit
}
needs trixie trixie-openreg sid -- on_openreg

# digamma's backward raises on openreg in most of its samples: with the
# adapter's driver lock the runner goes on after each (one runner, where
# there was one per raise), and each raise is still that sample's failure.
backward_raises() {
	run 1 digamma_is_inconsistent_on_openreg "$APIPARITY" check torch.special.digamma \
		--env trixie-openreg --samples 2 --no-official --out "$T/dg"
	contains "$out" "openreg vs cpu: FAIL: raised RuntimeError on openreg .*did not raise on cpu$" \
		digamma_backward_raise_is_the_samples_failure
	equals "$(grep -c "driver answers one thread at a time" "$T/dg/trixie-openreg/numeric.log")" 1 \
		one_runner_goes_on_after_backward_raises
}
needs trixie-openreg -- backward_raises

usage() {
	run 2 samples_must_be_a_count "$APIPARITY" check torch.matmul --samples 0
	contains "$err" "--samples wants a number from 1 to 64" samples_usage_says_the_range
	run 2 samples_refuses_words "$APIPARITY" check torch.matmul --samples 4x
}
usage

done_testing
