#!/bin/bash
# The worker's pure functions (tests/worker/test_worker.py), run by each
# reference environment's own Python: the worker runs on Python 3.11 to 3.14,
# and ast, unittest and json differ between them. Nothing is copied into a
# chroot: both sources go in on stdin, as the worker itself does.
. "$(dirname "$0")/lib.sh"
plan 11

# Loads the worker, the program the binary embeds (its modules joined by the
# build), as the module apiparity_worker and runs the tests verbosely; fails
# when no test ran.
boot='import json, sys, types, unittest
src = json.load(sys.stdin)
def load(name, text):
    m = types.ModuleType(name)
    m.__file__ = name + ".py"
    sys.modules[name] = m
    exec(compile(text, name + ".py", "exec"), m.__dict__)
    return m
load("apiparity_worker", src["worker"])
t = load("test_worker", src["test"])
r = unittest.TextTestRunner(verbosity=2).run(unittest.defaultTestLoader.loadTestsFromModule(t))
sys.exit(0 if r.wasSuccessful() and r.testsRun else 1)'

/usr/bin/python3 -c 'import json, sys
print(json.dumps({"worker": open(sys.argv[1]).read(), "test": open(sys.argv[2]).read()}))' \
	"$(dirname "$APIPARITY")/apiparity_worker.py" "$TOP/tests/worker/test_worker.py" > "$T/sources.json"

run 0 worker_unit_tests_pass_with_this_machines_python /usr/bin/python3 -c "$boot" < "$T/sources.json"
contains "$err" "^Ran [1-9][0-9]* tests" worker_unit_tests_ran_here
want=$(printf '%s\n' "$err" | sed -n 's/^Ran \([0-9]*\) tests.*/\1/p')

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
