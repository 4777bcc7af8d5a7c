#!/bin/bash
# The sweep on a real Slurm cluster: a one-node cluster on localhost
# (tests/cluster/slurm-up, all of it in $T), deploy/slurm/apiparity-sweep.sbatch
# submitted with sbatch --array=0-3; the merge of the four tasks equals the
# unsharded run; a task cancelled while it runs and resubmitted alone resumes;
# a task whose worker crashes is not retried and merge names its shard failed.
# Skipped, with the reason, where no cluster can be brought up here.
#
# sacct has no slurmdbd here: it reads the job completion log
# (JobCompType=jobcomp/filetxt, sacct -c), which names no array index, so the
# indices are read from the same log's ArrayJobId/ArrayTaskId fields.
. "$(dirname "$0")/lib.sh"
SB="$TOP/deploy/slurm/apiparity-sweep.sbatch"
SF="$FIX/slurm"
C="$T/cluster"
PATH="$TOP/tests/cluster:$PATH"
trap '"$TOP/tests/cluster/slurm-down" "$C"; rm -rf "$T"' EXIT
plan 32

mx() { py "import json,sys; L=[json.loads(x) for x in open(sys.argv[1])]; print(($2))" "$1"; }
# submit OUT SBATCH-OPTION... - submits the deploy script as tested in the
# README (the logs in $T), sets $job to the array's job id.
submit() {
	local o=$1; shift
	job=$(cd "$T" && APIPARITY_OUT=$o sbatch --parsable --gres=none "$@" "$SB" 2> "$T/sbatch.err")
}
# finish JOB - waits (at most 10 minutes) until no task of JOB is queued or running.
finish() {
	local i
	for i in $(seq 1200); do
		[ -z "$(squeue -h -j "$1" 2> /dev/null)" ] && return 0
		sleep 0.5
	done
	return 1
}
# tasks JOB - "INDEX STATE EXIT" of each finished task of JOB, from the job
# completion log.
tasks() {
	sed -n "s/.* JobState=\([A-Z]*\) .* ArrayJobId=$1 ArrayTaskId=\([0-9]*\) .* ExitCode=\([0-9:]*\) .*/\2 \1 \3/p" \
		"$C/jobcomp.txt" | sort -n | tr '\n' ',' | sed 's/,$//'
}
merged_equal() {
	local f
	for f in matrix.jsonl matrix.md matrix.html; do
		cmp -s "$T/u/$f" "$1/$f" || { nok "$2" "$f: $(diff "$T/u/$f" "$1/$f" | head -5)"; return; }
	done
	ok "$2"
}

on_cluster() {
	cp -r "$SF/modules" "$T/mods"
	for e in trixie sid; do
		printf '[%s]\nchroot = %s\nbind = %s:/mnt\nsetenv = PYTHONPATH=/mnt\n' "$e" "$e" "$T/mods"
	done > "$T/envs.ini"
	export APIPARITY APIPARITY_ENVS="$T/envs.ini" APIPARITY_CATALOG="$SF/catalog.txt" \
		APIPARITY_SWEEP_ENVS="trixie sid"
	run 0 unsharded_run_succeeds "$APIPARITY" sweep --env trixie --env sid --catalog "$SF/catalog.txt" --out "$T/u"

	# Four array tasks, four shards, merged.
	submit "$T/sw" --array=0-3
	contains "$job" "^[0-9]+$" sbatch_accepts_the_array
	finish "$job" && ok array_finishes || nok array_finishes "$(squeue 2>&1)"
	equals "$(tasks "$job")" "0 COMPLETED 0:0,1 COMPLETED 0:0,2 COMPLETED 0:0,3 COMPLETED 0:0" \
		four_tasks_completed_by_index
	equals "$(sacct -c -n -P -o JobName,State,ExitCode 2> /dev/null | grep -c '^apiparity-sweep|COMPLETED|0:0$')" 4 \
		sacct_shows_four_completed_tasks
	equals "$(ls "$T/sw" | tr '\n' ' ')" "shard-0-of-4 shard-1-of-4 shard-2-of-4 shard-3-of-4 " \
		each_task_writes_its_own_shard_from_slurms_variables
	run 0 merge_succeeds "$APIPARITY" merge "$T/sw" --out "$T/m"
	merged_equal "$T/m" merged_array_equals_unsharded

	# A task cancelled while it runs, then that index alone resubmitted.
	: > "$T/mods/hold"
	submit "$T/c" --array=0-3
	local i state="" done_entries j="$T/c/shard-1-of-4/journal/trixie.jsonl"
	for i in $(seq 1200); do
		state=$(squeue -h -j "${job}_1" -o %T 2> /dev/null)
		done_entries=$(grep -c '"type":"entry"' "$j" 2> /dev/null)
		[ "$state" = RUNNING ] && [ "${done_entries:-0}" -ge 2 ] && break
		sleep 0.5
	done
	equals "$state" RUNNING task_1_runs_held
	# The task's processes as Slurm tracks them (the script, apiparity, its
	# workers): none may outlive the cancel, even while the entry still holds.
	local pids
	pids=$(scontrol listpids "$(squeue -h -j "${job}_1" -o %A)" 2> /dev/null | awk 'NR > 1 { print $1 }')
	contains "$pids" "^[0-9]+$" slurm_lists_the_running_tasks_processes
	scancel "${job}_1"
	finish "${job}_1"
	sleep 1
	# (A zombie is dead already: it waits for this machine's init to reap it.)
	equals "$(for p in $pids; do ps -o stat=,pid=,args= -p "$p" | grep -v '^ *Z'; done)" "" \
		cancel_leaves_no_process_of_the_task
	rm -f "$T/mods/hold"
	finish "$job" && ok cancelled_array_finishes || nok cancelled_array_finishes "$(squeue 2>&1)"
	contains "$(tasks "$job")" "^0 COMPLETED 0:0,1 CANCELLED [0-9:]+,2 COMPLETED 0:0,3 COMPLETED 0:0$" \
		task_1_is_cancelled_the_others_complete
	local st
	st=$(field "$T/c/shard-1-of-4/sweep.json" 'b["state"]')
	if [ "$st" = running ]; then ok cancelled_shard_is_unfinished; else
		nok cancelled_shard_is_unfinished "state '$st', wanted 'running'; the task's log:" \
			"$(cat "$T/apiparity-sweep-${job}_1.log" 2>&1)"; fi
	run 1 merge_refuses_the_cancelled_shard "$APIPARITY" merge "$T/c" --out "$T/m2"
	contains "$out$err" "shard 1/4 \($(rx "$T/c/shard-1-of-4")\) did not finish" merge_names_the_cancelled_shard
	local resumed
	resumed=$(grep -c '"type":"api"' "$j")
	APIPARITY_SHARD_COUNT=4 submit "$T/c" --array=1
	finish "$job" && ok resubmitted_index_finishes || nok resubmitted_index_finishes "$(squeue 2>&1)"
	equals "$(tasks "$job")" "1 COMPLETED 0:0" resubmitted_index_1_completes
	contains "$(cat "$T/apiparity-sweep-${job}_1.log")" "^trixie .* $resumed +0$" resubmission_resumes_the_journal
	run 0 merge_after_resubmission_succeeds "$APIPARITY" merge "$T/c" --out "$T/m2"
	merged_equal "$T/m2" merged_after_cancel_equals_unsharded
	equals "$(for e in trixie sid; do py 'import json,sys,collections; c=collections.Counter((r["data"]["module"], r["data"]["api"]) for r in map(json.loads, open(sys.argv[1])) if r["type"] == "api"); print(max(c.values()))' "$T/c/shard-1-of-4/journal/$e.jsonl"; done | tr '\n' ' ')" \
		"1 1 " no_api_measured_twice
	equals "$(mx "$T/m2/matrix.jsonl" 'len(L)')" "$(mx "$T/u/matrix.jsonl" 'len(L)')" no_api_lost

	# A task whose worker crashes at start: exit 8, not retried, shard failed.
	mkdir -p "$T/f"
	cp -r "$T/sw/shard-0-of-4" "$T/sw/shard-1-of-4" "$T/sw/shard-2-of-4" "$T/f/"
	for e in trixie sid; do
		printf '[%s]\nchroot = %s\nbind = %s:/mnt\nsetenv = PYTHONPATH=/mnt\n' "$e" "$e" "$SF/crash"
	done > "$T/crash.ini"
	APIPARITY_ENVS="$T/crash.ini" APIPARITY_SHARD_COUNT=4 submit "$T/f" --array=3
	finish "$job" && ok crashing_task_finishes || nok crashing_task_finishes "$(squeue 2>&1)"
	equals "$(tasks "$job")" "3 FAILED 8:0" crashing_task_fails_with_exit_8
	contains " $(sed -n 's/^NORETRY="\(.*\)"$/\1/p' "$SB") " " 8 " exit_8_is_one_the_deploy_files_do_not_retry
	local log
	log=$(cat "$T/apiparity-sweep-${job}_3.log")
	contains "$log" "worker killed by SIGSEGV" crashing_tasks_worker_is_killed_by_sigsegv
	equals "$(printf '%s\n' "$log" | grep -c '^ENV ')" 1 crashing_task_runs_apiparity_once
	contains "$log" "task 3: exit 8, not retried" crashing_task_says_it_is_not_retried
	run 1 merge_refuses_the_failed_shard "$APIPARITY" merge "$T/f" --out "$T/m3"
	contains "$out$err" "shard 3/4 \($(rx "$T/f/shard-3-of-4")\) failed" merge_names_the_failed_shard

	local pids
	pids=$(cat "$C/slurmctld.pid" "$C/slurmd.pid" "$C/munge/munged.pid" 2> /dev/null)
	slurm-down "$C"
	equals "$(for p in $pids; do kill -0 "$p" 2> /dev/null && echo "$p"; done)" "" cluster_stops_leaving_no_daemon
}

# The cluster, where one can run; otherwise every test skipped with the reason.
if ! have_env trixie || ! have_env sid; then
	needs trixie sid -- on_cluster
else
	# One test cluster at a time on this machine (make mutants runs this
	# script in two trees at once): the second waits for the first.
	exec 9> "${TMPDIR:-/tmp}/apiparity-t-slurm.lock"
	flock -w 1800 9
	slurm-up "$C" 2> "$T/up.err"
	up=$?
	if [ "$up" = 0 ]; then
		export SLURM_CONF="$C/slurm.conf"
		on_cluster
	else
		why=$(tail -1 "$T/up.err")
		while IFS= read -r name; do
			if [ "$up" = 77 ]; then skip "$name" "$why"; else nok "$name" "slurm-up failed ($up): $why"; fi
		done < <(count_tests on_cluster)
	fi
fi

done_testing
