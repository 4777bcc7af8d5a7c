#!/bin/bash
# The worker's unit tests (tests/worker/test_<module>.py, one file for each
# module of worker/), run by this machine's Python (t-worker-envs runs them
# in each reference environment's own). Nothing is copied into a chroot:
# every source goes in on stdin, as the worker itself does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/worker-tests.sh"
plan 3

# Under make coverage (AP_COVERAGE), this run also records which lines of
# the worker its tests executed, in this process and in the children its
# runners fork (which end with os._exit: each writes its own file first),
# for tests/coverage-report.
traced=""
if [ -n "${AP_COVERAGE:-}" ]; then
	mkdir -p "$AP_COVERAGE/worker-lines"
	traced='import atexit, json, os, sys, threading
_lines, _exit = set(), os._exit
def _trace(frame, event, arg):
    if frame.f_code.co_filename != "apiparity_worker.py":
        return None
    if event == "line":
        _lines.add(frame.f_lineno)
    return _trace
def _dump():
    path = "%s/worker-lines/%d.json" % (os.environ["AP_COVERAGE"], os.getpid())
    with open(path + ".tmp", "w") as f:
        json.dump(sorted(_lines), f)
    os.rename(path + ".tmp", path)  # a process killed while writing leaves no half file
def _dump_and_exit(status):
    try:
        _dump()
    finally:
        _exit(status)
os._exit = _dump_and_exit
atexit.register(_dump)
sys.settrace(_trace)
threading.settrace(_trace)
'
fi
run 0 worker_unit_tests_pass_with_this_machines_python /usr/bin/python3 -c "$traced$boot" < "$T/sources.json"
contains "$err" "^Ran [1-9][0-9]* tests" worker_unit_tests_ran_here
# Each module of the worker has its test file, and each file ran a test.
untested=""
for m in $(make -s --no-print-directory -C "$TOP" worker-modules); do
	m=$(basename "$m" .py)
	printf '%s\n' "$err" | grep -q "(test_$m\." || untested="$untested $m"
done
equals "$untested" "" every_worker_module_s_tests_ran_here

done_testing
