#!/bin/bash
# apiparity check --cases: resnet18's traced cases replayed on trixie and
# openreg, its evidence read by report and verify; and an openreg whose relu
# is wrong only for a shape the model uses, right on every OpInfo sample,
# caught by the replay.
. "$(dirname "$0")/lib.sh"
plan 13
MODELS=$FIX/models

# the resnet18 step's trace, for the replays below
trace_resnet() {
	c=$T/rn/cases.jsonl
	"$APIPARITY" trace --env trixie --out "$T/rn" -- python3 /dev/stdin \
		< "$MODELS/resnet18_step.py" > /dev/null 2>&1
}

replay() {
	trace_resnet
	run 1 resnet18_replays_on_openreg "$APIPARITY" check --cases "$c" --env trixie --env trixie-openreg \
		--out "$T/rr"
	contains "$out" "^ +20  torch\.nn\.functional\.conv2d +trixie consistent: [0-9]+ PASS; trixie-openreg unverified: [0-9]+ PASS, [0-9]+ NOTRUN$" \
		openregs_convolutions_are_not_run_and_say_so
	contains "$(cat "$T/rr/cases.md")" "known limit of openreg: a PrivateUse1 device's convolutions" the_page_gives_the_reason
	equals "$(field "$T/rr/torch.nn.functional.relu/trixie/bundle.json" 'sorted(set((c["status"], c["sample_kind"]) for c in b["checks"] if c["kind"] == "numeric"))')" \
		"[('PASS', 'case')]" relu_cases_pass_on_the_cpu
	lacks "$out" "trixie consistent: 0 PASS|trixie no verdict" every_replayed_api_has_its_cases_measured_on_the_cpu
	contains "$out" "torch\.randn +not replayed: random: its values are the generator's \(aten\.randn\.default\)" random_apis_are_not_replayed_and_say_why
	contains "$out" "torch\.nn\.Conv2d +not replayed: a module call" module_calls_are_listed_not_replayed
	run 0 report_works_on_a_replayed_api "$APIPARITY" report "$T/rr/torch.nn.functional.relu"
	run 0 verify_works_on_a_replayed_api "$APIPARITY" verify "$T/rr/torch.nn.functional.relu"
}

shape_fault() {
	[ -f "$T/rn/cases.jsonl" ] || trace_resnet
	sed "s|@FIX@|$FIX|g" "$FIX/openreg.ini" > "$T/openreg.ini"
	run 0 relu_is_consistent_on_opinfo_samples "$APIPARITY" check torch.nn.functional.relu \
		--envs "$T/openreg.ini" --env trixie --env openreg-relu-64ch --samples 2 --no-official --out "$T/of"
	run 1 the_models_cases_catch_it "$APIPARITY" check --cases "$T/rn/cases.jsonl" torch.nn.functional.relu \
		--envs "$T/openreg.ini" --env trixie --env openreg-relu-64ch --out "$T/sf"
	contains "$out" "openreg-relu-64ch inconsistent: [0-9]+ PASS, [1-9][0-9]* FAIL" relu_is_inconsistent_on_the_replay
	contains "$(cat "$T/sf/cases.md")" 'torch\.nn\.functional\.relu float32 case\\#[0-9]+ openreg vs cpu: out\\\[0\\\]: [0-9]+ of [0-9]+ elements out of tolerance' the_page_names_the_case_that_differs
}

needs trixie trixie-openreg -- replay
needs trixie trixie-openreg -- shape_fault
done_testing
