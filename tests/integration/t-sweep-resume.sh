#!/bin/bash
# apiparity sweep --resume after a kill -9, an entry cut between its APIs and
# its record, and catalog entries that crash the interpreter or hang.
. "$(dirname "$0")/lib.sh"
SW="$FIX/sweep"
SMALL="$SW/catalog-small.txt"
printf '[trixie]\nchroot = trixie\nbind = %s:/mnt\nsetenv = PYTHONPATH=/mnt\n' "$SW/faults" > "$T/faults.ini"
plan 21

# jq-less reading of a matrix: a Python expression over L, its lines.
mx() { py "import json,sys; L=[json.loads(x) for x in open(sys.argv[1])]; print(($2))" "$1"; }
MT=torch.autograd.grad_mode.set_multithreading_enabled

# kill -9 in the middle, then --resume: the same matrix, nothing measured twice.
# Every line of the matrix is an API record of the journal but the own line
# of a module entry whose walk failed (a walk that worked records its module,
# with what getattr reaches there; a class entry's own line is the class).
resume_after_kill() {
	run 0 uninterrupted_run_succeeds "$APIPARITY" sweep --env trixie --catalog "$SMALL" --out "$T/full1"
	"$APIPARITY" sweep --env trixie --catalog "$SMALL" --out "$T/k" > /dev/null 2>&1 &
	local pid=$! i
	for i in $(seq 1200); do
		c=$(grep -c '"type":"entry"' "$T/k/journal/trixie.jsonl" 2> /dev/null)
		[ "${c:-0}" -ge 2 ] && break
		sleep 0.05
	done
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	equals "$(field "$T/k/sweep.json" 'b["state"]')" running kill_lands_mid_sweep
	run 0 resume_completes "$APIPARITY" sweep --env trixie --catalog "$SMALL" --out "$T/k" --resume
	contains "$out" "^trixie +2\.6\.[^ ]+ +[0-9]+ +0 +1 +[0-9]+ +[1-9][0-9]* +0$" resume_reads_back_journaled_apis
	cmp -s "$T/full1/matrix.jsonl" "$T/k/matrix.jsonl" && ok resumed_matrix_equals_uninterrupted \
		|| nok resumed_matrix_equals_uninterrupted "$(diff "$T/full1/matrix.jsonl" "$T/k/matrix.jsonl" | head -5)"
	equals "$(py 'import json,sys,collections; c=collections.Counter((r["data"]["module"], r["data"]["api"]) for r in map(json.loads, open(sys.argv[1])) if r["type"] == "api"); print(max(c.values()), len(c))' "$T/k/journal/trixie.jsonl")" \
		"1 $(mx "$T/full1/matrix.jsonl" 'sum(1 for l in L if not (l["api"] == l["module"] and l["kind"] == "module" and l["status"] != "present"))')" \
		no_api_measured_twice_and_none_lost
	equals "$(py 'import json,sys,collections; c=collections.Counter(r["data"]["entry"] for r in map(json.loads, open(sys.argv[1])) if r["type"] == "entry"); print(max(c.values()))' "$T/k/journal/trixie.jsonl")" \
		1 no_entry_walked_twice
	# An entry cut between its APIs and its entry record (the last entry
	# that has APIs loses its record): its APIs are kept and the worker
	# skips them.
	mkdir -p "$T/cut/journal"
	py 'import json,sys; L=open(sys.argv[1]).read().splitlines(True); i=max(k for k,l in enumerate(L) if json.loads(l)["type"] == "entry" and json.loads(l)["data"]["apis"] > 0); open(sys.argv[2], "w").writelines(L[:i] + L[i+1:])' \
		"$T/full1/journal/trixie.jsonl" "$T/cut/journal/trixie.jsonl"
	cp "$T/full1/sweep.json" "$T/cut/"
	run 0 resume_of_a_cut_entry_completes "$APIPARITY" sweep --env trixie --catalog "$SMALL" --out "$T/cut" --resume
	cmp -s "$T/full1/matrix.jsonl" "$T/cut/matrix.jsonl" && ok cut_entry_matrix_equals_uninterrupted \
		|| nok cut_entry_matrix_equals_uninterrupted "$(diff "$T/full1/matrix.jsonl" "$T/cut/matrix.jsonl" | head -5)"
	contains "$out" "^trixie +2\.6\.[^ ]+ +[0-9]+ +0 +1 +0 +[1-9][0-9]* +0$" cut_entry_measures_nothing_again
	run 4 resume_with_another_depth_is_refused "$APIPARITY" sweep --env trixie --catalog "$SMALL" --out "$T/k" \
		--resume --depth resolve
	contains "$err" "another catalog, depth or shard; run without --resume" resume_refusal_says_why
}
needs trixie -- resume_after_kill

# A catalog entry that crashes the interpreter, one that hangs, then a good one.
faults() {
	run 0 sweep_survives_crash_and_hang "$APIPARITY" sweep --envs "$T/faults.ini" --env trixie \
		--catalog "$SW/catalog-faults.txt" --timeout 5 --out "$T/f"
	m="$T/f/matrix.jsonl"
	equals "$(mx "$m" '[(l["api"], l["status"], l["verdict"]) for l in L if l["api"].startswith("apiparity_fault")]')" \
		"[('apiparity_fault_crash', 'crash', 'not-run'), ('apiparity_fault_hang', 'timeout', 'not-run')]" \
		crash_and_hang_are_their_entries_results
	contains "$(mx "$m" '[l["reason"] for l in L if l["api"] == "apiparity_fault_crash"][0]')" "SIGSEGV" crash_reason_names_the_signal
	equals "$(mx "$m" 'sum(1 for l in L if l["module"] == "torch.fft" and l["status"] == "present") > 20')" True \
		the_entry_after_them_is_measured
	contains "$out" "^trixie .* 2$" worker_was_restarted_twice
}
needs trixie -- faults

# An environment that cannot start fails its shard with its own exit code
# (one the deploy files do not retry), and merge names the shard as failed.
failed_shard() {
	printf '[broken]\nchroot = trixie\npython = /nonexistent/python3\n' > "$T/broken.ini"
	run 6 broken_environment_fails_the_shard_with_its_code "$APIPARITY" sweep --envs "$T/broken.ini" \
		--env broken --catalog "$SW/catalog-faults.txt" --shard 0/2 --out "$T/br"
	equals "$(field "$T/br/shard-0-of-2/sweep.json" 'b["state"]')" failed failed_shard_says_so
	run 1 merge_refuses_a_failed_shard "$APIPARITY" merge "$T/br" --out "$T/brm"
	contains "$out" "^shard 0/2 \(.*\) failed; see its output, then run it again with --resume$" \
		merge_names_the_failed_shard
}
needs trixie -- failed_shard

done_testing
