#!/bin/bash
# The worker's unit tests, run by each reference environment's own Python:
# the worker runs on Python 3.11 to 3.14, and ast, unittest and json differ
# between them (t-worker runs them with this machine's Python). Nothing is
# copied into a chroot: every source goes in on stdin, as the worker itself
# does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/worker-tests.sh"
plan 9

# How many tests the files hold, as this machine's Python loads them
# (without running them): each environment must run as many.
want=$(/usr/bin/python3 -c "${boot%%suite = *}"'
print(sum(unittest.defaultTestLoader.loadTestsFromModule(load(n, t)).countTestCases()
          for n, t in sorted(src["tests"].items())))' < "$T/sources.json")

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
