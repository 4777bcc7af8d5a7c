#!/bin/bash
# No process outlives the run: a chroot environment is a PID namespace whose
# PID 1 is the worker, apiparity's death takes the worker along, a probe's
# result counts when the probe ends, and a worker's death is noticed at once.
. "$(dirname "$0")/lib.sh"
plan 15
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone

# Every process of a run carries the run's own mark in its environment, so
# the test finds its own leftovers and never another test's.
marked() { grep -lszx "APIPARITY_TEST_MARK=$1" /proc/[0-9]*/environ | cut -d/ -f3; }
marks=""
sweep() { for m in $marks; do for p in $(marked "$m"); do kill -KILL "$p" 2>/dev/null; done; done; }
trap 'sweep; rm -rf "$T"' EXIT
# newenv FILE: an environments file with trixie under a new mark, in $mark.
newenv() {
	mark=procs-$$-$RANDOM$RANDOM
	marks="$marks $mark"
	printf '[trixie]\nchroot = trixie\nsetenv = APIPARITY_TEST_MARK=%s\n' "$mark" > "$1"
}
ppid_of() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f2; }
# start_hang DIR: a check in the background (pid in $cpid) that reaches the
# hanging probe (after the ten family probes) and stays there.
start_hang() {
	"$APIPARITY" check $TARGET --envs "$T/$1.ini" --env trixie --no-official --timeout 60 \
		--script "$FIX/probes/hang.py" --out "$T/$1" > /dev/null 2> "$T/$1.err" &
	cpid=$!
	for _ in $(seq 300); do
		local done
		done=$(grep -c '"type": *"check"' "$T/$1/trixie/journal.jsonl" 2>/dev/null)
		[ "${done:-0}" -ge 10 ] && break
		sleep 0.2
	done
	sleep 1
}

process_lifetimes() {
	newenv "$T/d.ini"
	run 0 probes_that_start_a_daemon_or_look_around_pass "$APIPARITY" check $TARGET --envs "$T/d.ini" \
		--env trixie --timeout 60 --torch-src "$FIX/official-tmp" \
		--script "$FIX/probes/daemon.py" --script "$FIX/probes/pidns.py" --out "$T/d"
	b="$T/d/trixie/bundle.json"
	took=$(field "$b" '[c["duration_ms"] for c in b["checks"] if c["name"] == "script:daemon.py"][0]')
	echo "# the daemon probe took $took ms"
	equals "$(field "$b" '[(c["name"], c["status"], c["reason"]) for c in b["checks"] if c["kind"] == "script"]')" \
		"[('script:daemon.py', 'PASS', None), ('script:pidns.py', 'PASS', None)]" \
		daemon_probe_passes_and_probe_sees_only_its_environment
	equals "$(field "$b" '[c["trace"] for c in b["checks"] if c["name"] == "script:daemon.py"]')" \
		"[[{'step': 'the daemon started', 'value': True}]]" daemon_really_started
	[ "$took" -lt 10000 ] 2>/dev/null && ok daemon_probe_counts_when_the_probe_ends \
		|| nok daemon_probe_counts_when_the_probe_ends "took ${took} ms (timeout 60 s)"
	# The worker, the runner importing the official test file, the probe.
	equals "$(field "$b" '[c["trace"] for c in b["checks"] if c["name"] == "script:pidns.py"]')" \
		"[[{'step': 'processes visible', 'value': 3}]]" daemon_is_gone_when_its_probe_has_ended
	equals "$(marked "$mark" | wc -l)" 0 daemon_does_not_outlive_the_run
	equals "$(field "$b" '[c["status"] for c in b["checks"] if c["kind"] == "official"]')" "['PASS']" \
		official_test_that_leaves_a_temp_dir_ran
	equals "$(ls -d "$ENV_ROOT/trixie/tmp/apiparity-test-$mark-"* 2>/dev/null | wc -l)" 0 \
		official_test_temp_dir_is_gone_from_the_environment

	# kill -9 of apiparity in the middle of a probe.
	newenv "$T/k.ini"
	start_hang k
	[ "$(marked "$mark" | wc -l)" -ge 2 ] && ok worker_and_probe_run_before_the_kill \
		|| nok worker_and_probe_run_before_the_kill "$(marked "$mark" | wc -l) marked processes"
	kill -KILL $cpid; wait $cpid 2>/dev/null
	sleep 2
	equals "$(marked "$mark" | wc -l)" 0 killing_apiparity_leaves_no_worker_or_probe

	# The worker killed in the middle of a probe: exit 8, at once.
	newenv "$T/w.ini"
	start_hang w
	worker=$(for p in $(marked "$mark"); do [ "$(ppid_of "$p")" = "$cpid" ] && echo "$p"; done)
	[ -n "$worker" ] && ok worker_is_found_by_its_mark || nok worker_is_found_by_its_mark
	start=$(date +%s%N)
	kill -KILL $worker
	wait $cpid; rc=$?
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	echo "# the killed worker was noticed after $took ms"
	equals "$rc" 8 killed_worker_exits_8
	[ "$took" -lt 2000 ] && ok killed_worker_is_noticed_at_once \
		|| nok killed_worker_is_noticed_at_once "took ${took} ms"
	contains "$(cat "$T/w.err")" "^apiparity: env trixie: worker died: worker killed by SIGKILL" \
		killed_worker_is_named
	sleep 0.5
	equals "$(marked "$mark" | wc -l)" 0 killed_worker_leaves_no_probe
}
needs trixie -- process_lifetimes
done_testing
