#!/bin/bash
# apiparity sweep --depth probe and --depth numeric on the real trixie and
# trixie-openreg: each API's automatic checks in the matrix (a family's
# probes, OpInfo's samples device against CPU), a resume that measures
# nothing twice, and a backend whose gelu kills the device: that API's crash,
# and the sweep goes on. The catalogs are small: torch.autograd.grad_mode
# (the mode-context family) and apiparity_sweep_ops (torch's gelu and relu
# under a module of their own, fixtures/sweep/ops).
. "$(dirname "$0")/lib.sh"
SW="$FIX/sweep"
sed -e "s|@SW@|$SW|g" -e "s|@FIX@|$FIX|g" "$SW/depth.ini" > "$T/depth.ini"
printf 'torch.autograd.grad_mode module\napiparity_sweep_ops module\n' > "$T/probe.txt"
printf 'apiparity_sweep_ops module\n' > "$T/ops.txt"
plan 44

# jq-less reading of a matrix: a Python expression over L, its lines, and
# C(env, api), the check of api in env.
mx() {
	py "import json,sys; L=[json.loads(x) for x in open(sys.argv[1])]
C=lambda e, a: [l['check'] for l in L if l['env'] == e and l['api'] == a][0]
print(($2))" "$1"
}
MT=torch.autograd.grad_mode.set_multithreading_enabled
RELU=apiparity_sweep_ops.relu
GELU=apiparity_sweep_ops.gelu

probe() {
	run 0 probe_sweep_succeeds "$APIPARITY" sweep --envs "$T/depth.ini" --env trixie --env trixie-openreg \
		--catalog "$T/probe.txt" --depth probe --out "$T/p"
	m="$T/p/matrix.jsonl"
	equals "$(mx "$m" "[(C(e, '$MT')['status'], C(e, '$MT')['family'], C(e, '$MT')['failed'], C(e, '$MT')['passed'] > 0) for e in ('trixie', 'trixie-openreg')]")" \
		"[('consistent', 'mode-context', 0, True), ('consistent', 'mode-context', 0, True)]" \
		family_member_gets_its_probe_verdict_in_each_environment
	equals "$(mx "$m" "(C('trixie', '$MT.clone')['status'], C('trixie', '$MT.clone')['family'])")" \
		"('consistent', 'mode-context')" a_member_of_a_family_class_gets_its_probes
	equals "$(mx "$m" "(C('trixie', '$RELU')['status'], C('trixie', '$RELU')['operators'], C('trixie', '$RELU')['samples'])")" \
		"('not-run', ['nn.functional.relu'], 0)" probe_depth_names_the_opinfo_entry_and_runs_no_sample
	contains "$(mx "$m" "C('trixie', '$RELU')['reason']")" "--depth numeric" probe_depth_says_where_samples_run
	equals "$(mx "$m" "sorted(set(l['check'] is None for l in L if l['kind'] in ('module', 'value')))")" "[True]" \
		modules_and_values_have_no_check
	contains "$(cat "$T/p/matrix.md")" "^\| apiparity_sweep_ops \| trixie \| 1 \| 0 \| 2 \| 0 \|$" \
		md_counts_unchecked_apis_as_not_run
	contains "$out" "^trixie checks: [1-9][0-9]* consistent, 0 inconsistent, [1-9][0-9]* not run, 0 crash, 0 timeout$" \
		summary_counts_the_checks_per_environment
	equals "$(field "$T/p/sweep.json" 'b["depth"], b["state"]')" "('probe', 'complete')" sweep_json_says_probe
	run 0 diff_reads_a_probe_matrix_back "$APIPARITY" diff "$T/p:trixie" "$T/p:trixie-openreg"
}

# An entry cut in the middle of its checks (its last APIs and its record not
# journaled, as a kill leaves it): the resume checks those APIs only.
probe_resume() {
	mkdir -p "$T/cut/journal"
	cp "$T/p/sweep.json" "$T/cut/"
	cp "$T/p/journal/trixie-openreg.jsonl" "$T/cut/journal/"
	py 'import json,sys
L=open(sys.argv[1]).read().splitlines(True)
i=max(k for k,l in enumerate(L) if json.loads(l)["type"] == "entry" and json.loads(l)["data"]["apis"] > 2)
open(sys.argv[2], "w").writelines(L[:i-2] + L[i+1:])' "$T/p/journal/trixie.jsonl" "$T/cut/journal/trixie.jsonl"
	run 0 resume_of_a_cut_probe_entry_completes "$APIPARITY" sweep --envs "$T/depth.ini" --env trixie \
		--env trixie-openreg --catalog "$T/probe.txt" --depth probe --out "$T/cut" --resume
	cmp -s "$T/p/matrix.jsonl" "$T/cut/matrix.jsonl" && ok resumed_probe_matrix_equals_uninterrupted \
		|| nok resumed_probe_matrix_equals_uninterrupted "$(diff "$T/p/matrix.jsonl" "$T/cut/matrix.jsonl" | head -5)"
	contains "$out" "^trixie +2\.6\.[^ ]+ +[0-9]+ +0 +0 +2 +[1-9][0-9]* +0$" resume_checks_only_the_two_unjournaled_apis
	equals "$(py 'import json,sys,collections; c=collections.Counter(r["data"]["api"] for r in map(json.loads, open(sys.argv[1])) if r["type"] == "api"); print(max(c.values()))' "$T/cut/journal/trixie.jsonl")" \
		1 no_api_journaled_twice
	run 4 resume_at_another_depth_is_refused "$APIPARITY" sweep --envs "$T/depth.ini" --env trixie \
		--catalog "$T/probe.txt" --depth numeric --out "$T/cut" --resume
}
needs trixie trixie-openreg -- probe
needs trixie trixie-openreg -- probe_resume

numeric() {
	run 0 numeric_sweep_succeeds "$APIPARITY" sweep --envs "$T/depth.ini" --env trixie --env trixie-openreg \
		--env openreg-gelu-crash --catalog "$T/ops.txt" --depth numeric --out "$T/n"
	m="$T/n/matrix.jsonl"
	equals "$(mx "$m" "(C('trixie-openreg', '$RELU')['status'], C('trixie-openreg', '$RELU')['operators'], C('trixie-openreg', '$RELU')['samples'] > 0, C('trixie-openreg', '$RELU')['failed'])")" \
		"('consistent', ['nn.functional.relu'], True, 0)" relu_is_consistent_on_openreg_with_samples
	equals "$(mx "$m" "C('trixie-openreg', '$RELU')['passed'] >= C('trixie-openreg', '$RELU')['samples'] // 2")" True \
		relu_samples_pass_device_against_cpu
	equals "$(mx "$m" "(C('trixie', '$RELU')['status'], C('trixie', '$RELU')['samples'] > 0)")" "('consistent', True)" \
		relu_runs_on_cpu_alone_in_trixie
	equals "$(mx "$m" "C('trixie', '$RELU')['digest'] == C('trixie-openreg', '$RELU')['digest'] != None")" True \
		same_torch_same_samples_same_cpu_digest
	equals "$(mx "$m" "[(C('openreg-gelu-crash', '$GELU')['status'], l['verdict']) for l in L if l['env'] == 'openreg-gelu-crash' and l['api'] == '$GELU']")" \
		"[('crash', 'inconsistent')]" gelu_crash_is_that_apis_crash_and_inconsistent
	contains "$(mx "$m" "[l['reason'] for l in L if l['env'] == 'openreg-gelu-crash' and l['api'] == '$GELU'][0]")" \
		"^check crash: .*float32.*openreg.*(SIG|abort|exited)" crash_reason_names_the_sample_and_the_signal
	equals "$(mx "$m" "(C('openreg-gelu-crash', '$RELU')['status'], C('trixie-openreg', '$GELU')['status'])")" \
		"('consistent', 'consistent')" the_sweep_goes_on_after_the_crash
	contains "$(cat "$T/n/matrix.md")" "^\| \`$(rx "$GELU")\` \| openreg-gelu-crash \| inconsistent \| check crash: " \
		md_lists_the_crash
	contains "$(cat "$T/n/matrix.html")" "<svg[^>]*><title>consistent 8, inconsistent 1, not-run 0, absent 0</title>" \
		html_bar_counts_the_real_statuses
	equals "$(field "$T/n/sweep.json" 'b["depth"], b["samples"]')" "('numeric', 1)" sweep_json_says_numeric_and_samples
	equals "$(field "$T/n/sweep.json" '[(e["name"], e.get("adapter")) for e in b["envs"]]')" \
		"[('trixie', None), ('trixie-openreg', 'openreg-forked-daemons'), ('openreg-gelu-crash', 'openreg-forked-daemons')]" \
		sweep_json_states_the_daemons_adapter_where_openreg_runs
	# tools/op-causes (bench/op-sweep's list): the crash under its cause,
	# with the command that reproduces it; a clean environment has none
	out=$("$TOP/tools/op-causes" "$m" openreg-gelu-crash)
	contains "$out" "^### crash \(1\)$" op_causes_puts_the_crash_under_crash
	contains "$out" "^- \`$(rx "$GELU")\` \(openreg-gelu-crash\): .*SIG.*; \`apiparity check $(rx "$GELU") --env openreg-gelu-crash --samples 1 --no-official\`$" \
		op_causes_gives_the_reason_and_the_command
	contains "$("$TOP/tools/op-causes" "$m" trixie-openreg)" "^0 of [0-9]+ operators whose samples ran are not consistent$" \
		op_causes_finds_nothing_where_all_is_consistent
}
needs trixie trixie-openreg -- numeric

# APIs whose checks kill the worker or hang it (fixtures/sweep/ops/
# apiparity_sweep_faults.py): each is that API's crash or timeout, the worker
# is started again, and the next API is checked (one worker: with more, the
# next API may go to another).
worker_faults() {
	printf 'apiparity_sweep_faults module\n' > "$T/faults.txt"
	run 0 sweep_survives_apis_that_kill_or_hang_the_worker "$APIPARITY" sweep --envs "$T/depth.ini" \
		--env trixie --catalog "$T/faults.txt" --depth numeric --timeout 20 --jobs 1 --out "$T/wf"
	m="$T/wf/matrix.jsonl"
	equals "$(mx "$m" "[(l['api'].split('.')[1], l['check']['status'], l['verdict']) for l in L if l['check']]")" \
		"[('apply', 'consistent', 'consistent'), ('boom', 'crash', 'inconsistent'), ('hang', 'timeout', 'inconsistent'), ('relu', 'consistent', 'consistent')]" \
		worker_crash_and_hang_are_those_apis_and_the_next_is_checked
	contains "$(mx "$m" "C('trixie', 'apiparity_sweep_faults.boom')['reason']")" "^the worker died during its checks" \
		crash_reason_says_the_worker_died
	contains "$out" "^trixie .* 2$" worker_was_started_again_after_each
}
needs trixie -- worker_faults

# --jobs: an entry's checks run in several workers at once (fixtures/sweep/
# ops/apiparity_sweep_lanes.py: a_waits resolves only while b_signals is
# looked up in another worker, and ends last), journaled in the walk's order;
# what each API's check says does not depend on the number of workers.
lanes() {
	printf 'apiparity_sweep_lanes module\n' > "$T/lanes.txt"
	run 0 sweep_with_two_workers_succeeds "$APIPARITY" sweep --envs "$T/depth.ini" --env trixie \
		--catalog "$T/lanes.txt" --depth numeric --jobs 2 --out "$T/l2"
	equals "$(mx "$T/l2/matrix.jsonl" "[(l['api'].split('.')[1], l['check']['status']) for l in L if l['check']]")" \
		"[('a_waits', 'consistent'), ('b_signals', 'consistent'), ('c', 'consistent'), ('d', 'consistent')]" \
		two_workers_check_two_apis_at_once
	contains "$err" "^trixie: apiparity_sweep_lanes: 5/5 APIs done \(apiparity_sweep_lanes\.d\), ETA 0 s \[0/1\]$" \
		progress_inside_an_entry_names_each_api_journaled
	equals "$(py 'import json,sys; print([r["data"]["api"].split(".")[1] for r in map(json.loads, open(sys.argv[1])) if r["type"] == "api" and "." in r["data"]["api"]])' "$T/l2/journal/trixie.jsonl")" \
		"['a_waits', 'b_signals', 'c', 'd']" journal_keeps_the_walks_order_whatever_ends_first
	run 0 numeric_sweep_with_three_workers "$APIPARITY" sweep --envs "$T/depth.ini" --env trixie-openreg \
		--env openreg-gelu-crash --catalog "$T/ops.txt" --depth numeric --jobs 3 --out "$T/n3"
	# (the crash's too: its reason and digest name no pid, no time)
	checks='[(l["env"], l["api"], l["check"]) for l in L if l["env"] != "trixie"]'
	equals "$(mx "$T/n3/matrix.jsonl" "$checks")" "$(mx "$T/n/matrix.jsonl" "$checks")" \
		checks_are_the_same_with_three_workers
}
needs trixie trixie-openreg -- lanes

run 2 samples_zero_is_refused "$APIPARITY" sweep --env trixie --out "$T/x" --depth numeric --samples 0
contains "$err" "--samples wants a number from 1 to 64" samples_refusal_says_the_range
run 2 jobs_zero_is_refused "$APIPARITY" sweep --env trixie --out "$T/x" --depth numeric --jobs 0
contains "$err" "--jobs wants a number from 1 to 16" jobs_refusal_says_the_range

done_testing
