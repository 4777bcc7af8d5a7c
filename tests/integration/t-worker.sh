#!/bin/bash
# The worker's unit tests (tests/worker/test_<module>.py, one file for each
# module of worker/), run by each reference environment's own Python: the
# worker runs on Python 3.11 to 3.14, and ast, unittest and json differ
# between them. Nothing is copied into a chroot: every source goes in on
# stdin, as the worker itself does.
. "$(dirname "$0")/lib.sh"
plan 12

# Loads the worker, the program the binary embeds (its modules joined by the
# build), as the module apiparity_worker, then the tests' helpers
# (workertest), then every test file, and runs them all verbosely; fails when
# no test ran.
boot='import json, sys, types, unittest
src = json.load(sys.stdin)
def load(name, text):
    m = types.ModuleType(name)
    m.__file__ = name + ".py"
    sys.modules[name] = m
    exec(compile(text, name + ".py", "exec"), m.__dict__)
    return m
load("apiparity_worker", src["worker"])
load("workertest", src["workertest"])
suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromModule(load(n, t))
                           for n, t in sorted(src["tests"].items()))
r = unittest.TextTestRunner(verbosity=2).run(suite)
sys.exit(0 if r.wasSuccessful() and r.testsRun else 1)'

/usr/bin/python3 -c 'import json, os, sys
tests = dict((os.path.basename(p)[:-len(".py")], open(p).read()) for p in sys.argv[3:])
print(json.dumps({"worker": open(sys.argv[1]).read(), "workertest": open(sys.argv[2]).read(),
                  "tests": tests}))' \
	"$(dirname "$APIPARITY")/apiparity_worker.py" "$TOP/tests/worker/workertest.py" \
	"$TOP"/tests/worker/test_*.py > "$T/sources.json"

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
want=$(printf '%s\n' "$err" | sed -n 's/^Ran \([0-9]*\) tests.*/\1/p')
# Each module of the worker has its test file, and each file ran a test.
untested=""
for m in $(make -s --no-print-directory -C "$TOP" worker-modules); do
	m=$(basename "$m" .py)
	printf '%s\n' "$err" | grep -q "(test_$m\." || untested="$untested $m"
done
equals "$untested" "" every_worker_module_s_tests_ran_here

worker_tests_in() {
	local e=$1 ver
	ver=$(in_chroot $e python3 -c 'import platform; print(platform.python_version())')
	run 0 "${e}_worker_unit_tests_pass_with_python_${ver//./_}" \
		chroot "$ENV_ROOT/$e" python3 -c "$boot" < "$T/sources.json"
	contains "$err" "^Ran $want tests" ${e}_ran_every_worker_unit_test
	lacks "$err" "(FAIL|ERROR):" ${e}_no_worker_unit_test_failed
}
for e in bookworm trixie sid; do
	needs $e -- worker_tests_in $e
done

done_testing
