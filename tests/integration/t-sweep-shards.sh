#!/bin/bash
# apiparity sweep --shard and apiparity merge: n shards merged equal the
# unsharded run; missing, overlapping, changed and unfinished shards named;
# the shard taken from Slurm's variables.
. "$(dirname "$0")/lib.sh"
SW="$FIX/sweep"
SMALL="$SW/catalog-small.txt"
printf '[trixie]\nchroot = trixie\nbind = %s:/mnt\nsetenv = PYTHONPATH=/mnt\n' "$SW/faults" > "$T/faults.ini"
plan 21

# jq-less reading of a matrix: a Python expression over L, its lines.
mx() { py "import json,sys; L=[json.loads(x) for x in open(sys.argv[1])]; print(($2))" "$1"; }
MT=torch.autograd.grad_mode.set_multithreading_enabled

# Shards: three merged equal the unsharded run; what merge refuses.
shards() {
	run 0 unsharded_run_succeeds "$APIPARITY" sweep --env trixie --env sid --catalog "$SMALL" --out "$T/u"
	for i in 0 1 2; do
		"$APIPARITY" sweep --env trixie --env sid --catalog "$SMALL" --shard $i/3 --out "$T/sh" > /dev/null 2>&1
	done
	equals "$(ls "$T/sh")" "$(printf 'shard-0-of-3\nshard-1-of-3\nshard-2-of-3')" each_shard_writes_its_own_dir
	equals "$(mx "$T/sh/shard-1-of-3/matrix.jsonl" 'sorted(set(l["module"] for l in L))')" \
		"['torch.autograd.grad_mode', 'torch.linalg', 'torch.special']" shard_holds_every_third_entry_by_name
	run 0 merge_succeeds "$APIPARITY" merge "$T/sh" --out "$T/m"
	for f in matrix.jsonl matrix.md matrix.html; do
		cmp -s "$T/u/$f" "$T/m/$f" && ok merged_${f/./_}_equals_unsharded || nok merged_${f/./_}_equals_unsharded \
			"$(diff "$T/u/$f" "$T/m/$f" | head -5)"
	done
	run 1 merge_names_a_missing_shard "$APIPARITY" merge "$T/sh/shard-0-of-3" "$T/sh/shard-2-of-3" --out "$T/m2"
	contains "$out" "^shard 1/3 is missing$" missing_shard_is_named
	run 1 merge_names_a_missing_last_shard "$APIPARITY" merge "$T/sh/shard-0-of-3" "$T/sh/shard-1-of-3" --out "$T/m2"
	contains "$out" "^shard 2/3 is missing$" missing_last_shard_is_named
	run 1 merge_names_an_overlap "$APIPARITY" merge "$T/sh" "$T/sh/shard-1-of-3" --out "$T/m2"
	contains "$out" "^shard 1/3 is given twice \(overlap\)" overlapping_shard_is_named
	# The second copy right after the first (a check that starts a place
	# too late misses only this one).
	mkdir -p "$T/dup" && cp -r "$T/sh/shard-1-of-3" "$T/dup/"
	run 1 merge_names_an_overlap_next_to_its_first "$APIPARITY" merge "$T/sh/shard-0-of-3" \
		"$T/sh/shard-1-of-3" "$T/dup/shard-1-of-3" "$T/sh/shard-2-of-3" --out "$T/m2"
	contains "$out" "^shard 1/3 is given twice \(overlap\): $(rx "$T/dup/shard-1-of-3")" \
		overlap_next_to_its_first_is_named
	cp -r "$T/sh" "$T/bad"
	sed -i 's/"consistent"/"inconsistent"/' "$T/bad/shard-2-of-3/matrix.jsonl"
	run 1 merge_refuses_a_changed_shard "$APIPARITY" merge "$T/bad" --out "$T/m2"
	contains "$out" "^shard 2/3: checksums do not match: matrix\.jsonl$" changed_shard_is_named
	py 'import json,sys; p=sys.argv[1]; m=json.load(open(p)); m["state"]="running"; json.dump(m, open(p, "w"))' \
		"$T/bad/shard-0-of-3/sweep.json"
	run 1 merge_refuses_an_unfinished_shard "$APIPARITY" merge "$T/bad" --out "$T/m2"
	contains "$out" "^shard 0/3 \($(rx "$T/bad/shard-0-of-3")\) did not finish" unfinished_shard_is_named
	SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3 \
		run 0 slurm_array_variables_pick_the_shard "$APIPARITY" sweep --env trixie --catalog "$SMALL" \
		--depth resolve --out "$T/sl"
	equals "$(field "$T/sl/shard-1-of-3/sweep.json" 'b["shard"]')" "{'index': 1, 'count': 3}" slurm_task_5_of_4_to_6_is_shard_1
}
needs trixie sid -- shards

done_testing
