#!/bin/bash
# Each fault an environment can have gets its own one-line error and exit code.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
mark=faults-$$-$RANDOM$RANDOM
sed -e "s|@FIX@|$FIX|g" -e "s|@PY@|$PY|g" -e "s|@MARK@|$mark|g" "$FIX/faults.ini" > "$T/faults.ini"
show() { "$APIPARITY" env show --envs "$T/faults.ini" "$@"; }
plan 35

run 8 python_that_segfaults_on_start_is_a_worker_error show segv
contains "$err" "^apiparity: env segv: worker died: python killed by SIGSEGV before answering" \
	segfault_is_named_as_sigsev_before_answering

run 7 torch_import_that_raises_exits_7 show torch-raises
contains "$err" "^apiparity: env torch-raises: torch failed to import: ImportError: libtorch_cpu.so: cannot open shared object file" \
	torch_import_error_is_quoted
lacks "$err" "Traceback" no_traceback_reaches_the_user

run 7 python_without_torch_exits_7 show no-torch
contains "$err" "torch failed to import: ModuleNotFoundError: No module named 'torch'" \
	missing_torch_module_is_quoted

run 3 missing_exec_prefix_is_unreachable show no-prefix
contains "$err" "^apiparity: env no-prefix: environment unreachable: cannot run exec prefix '/nonexistent/ssh': No such file or directory$" \
	missing_exec_prefix_is_named

run 3 refused_connection_is_unreachable show refused
contains "$err" "exec prefix '.*fake-ssh-refused' exited with status 255 before python answered: ssh: connect to host a2-host port 22: Connection refused" \
	refused_connection_quotes_the_prefix_error

run 6 python_missing_behind_exec_prefix_exits_6 show no-python-exec
contains "$err" "python not found in the environment: '/nonexistent/python3' \(exit status 127\): env: .*No such file or directory" \
	missing_python_behind_prefix_is_named

missing_python_in_chroot() {
	run 6 python_missing_in_chroot_exits_6 show no-python-chroot
	contains "$err" "python not found in the environment: cannot run 'python9' in chroot .*/trixie: No such file or directory" \
		missing_python_in_chroot_is_named
}
needs trixie -- missing_python_in_chroot

run 3 unprovisioned_chroot_is_unreachable show no-chroot
contains "$err" "chroot .*/never-provisioned does not exist \(provision it with .apiparity env create no-chroot --suite SUITE.\)" \
	unprovisioned_chroot_says_how_to_create_it

run 8 worker_killed_mid_message_exits_8 show cut
contains "$err" "^apiparity: env cut: worker died: worker died mid-message \(truncated frame: [0-9]+ of [0-9]+ bytes\)" \
	truncated_frame_is_reported_with_sizes

# The sync marker split by the pipe one byte before its end, after noise: the
# noise goes to the log, the part of the marker read so far is kept.
run 7 marker_split_one_byte_short_is_still_found show --timeout 20 split
contains "$err" "No module named 'torch'" worker_behind_a_split_marker_answers

start=$(date +%s)
run 9 worker_that_stops_answering_times_out show --timeout 2 hang
contains "$err" "^apiparity: env hang: worker stopped answering: no answer from the worker within 2 s" \
	timeout_is_reported_with_its_limit
took=$(( $(date +%s) - start ))
# 2 s of silence, plus starting the fixture's environment: well under the
# default limits a hang would otherwise run into, with room for a loaded
# machine running the sanitized build (7 s was seen there).
[ "$took" -le 15 ] && ok timeout_returns_promptly || nok timeout_returns_promptly "took ${took}s"
sleep 0.5
left=$(pgrep -f 'worker-proxy hang' | wc -l)
equals "$left" 0 timed_out_worker_group_is_killed

# The worker's own end is noticed at once, even while a process it left holds
# its pipe open; that process goes with the worker's process group.
run 8 worker_gone_while_its_pipe_is_held_exits_8 show --timeout 30 orphan
took=$(printf '%s\n' "$err" | sed -n 's/.*worker killed at \([0-9.]*\)$/\1/p' |
	awk -v now="$(date +%s.%N)" '{ printf "%d", (now - $1) * 1000 }')
echo "# the gone worker was noticed after ${took:-?} ms"
contains "$err" "^apiparity: env orphan: worker died: worker exited with status 0 while answering: .*worker killed at" \
	gone_worker_is_reported_as_dead
[ -n "$took" ] && [ "$took" -lt 2000 ] && ok gone_worker_is_noticed_within_two_seconds \
	|| nok gone_worker_is_noticed_within_two_seconds "took ${took:-?} ms after the kill"
sleep 0.5
equals "$(grep -lszx "APIPARITY_TEST_MARK=$mark" /proc/[0-9]*/environ | wc -l)" 0 \
	process_left_by_a_gone_worker_is_killed

# One bad environment does not hide a good one's measurement.
mixed_run() {
	sed -e "s|@FIX@|$FIX|g" -e "s|@PY@|$PY|g" -e "s|@MARK@|$mark|g" "$FIX/faults.ini" > "$T/mixed.ini"
	printf '[trixie]\nchroot = trixie\n' >> "$T/mixed.ini"
	run 3 mixed_run_exits_with_the_failure_code "$APIPARITY" env show --envs "$T/mixed.ini" trixie no-prefix
	contains "$out" "python +3\.13" good_environment_is_still_shown
	contains "$err" "env no-prefix: environment unreachable" bad_environment_is_reported
}
needs trixie -- mixed_run

run 0 env_list_probes_every_environment "$APIPARITY" env list --envs "$T/faults.ini" --timeout 8
contains "$out" "^no-prefix +unreachable +environment unreachable" list_marks_unreachable_environment
contains "$out" "^local +reachable +python 3" list_includes_local
done_testing
