#!/bin/bash
# tests/mutants/run on a tree of the test's own (a Makefile, the runner, a
# source file, scripts that pass, sleep or hang): a mutant no test kills
# survives; with MUTANT_BUDGET, one whose tests outlast the budget is
# UNDECIDED, the tests after it not run; each verdict is on stderr as it is
# known; stopped, it leaves no test running and no copy behind.
. "$(dirname "$0")/lib.sh"
plan 9
W=$T/tree
mkdir -p "$W/src" "$W/build" "$W/tests/integration" "$W/tests/mutants" "$T/tmp"
cp "$TOP/tests/run" "$W/tests/run"
cp "$TOP/tests/integration/lib.sh" "$W/tests/integration/lib.sh"
cp "$TOP/tests/mutants/run" "$W/tests/mutants/run"
printf 'int a;\n' > "$W/src/a.c"
printf 'build/apiparity: src/a.c\n\tprintf "#!/bin/sh\\n" > $@ && chmod +x $@\n' > "$W/Makefile"
make -s -C "$W" build/apiparity
script() { printf '. "$(dirname "$0")/lib.sh"\nplan 1\n%s\ndone_testing\n' "$2" > "$W/tests/integration/$1.sh"; }
script t-fast 'ok fast'
script t-slow 'sleep 2; ok slow'
# The hanging test says, in a file, its pid and its child's, then waits.
script t-hang 'sleep 300 & echo "$$ $!" > "$HANG_MARK.new"; mv "$HANG_MARK.new" "$HANG_MARK"; wait; ok hung'
mutant() {
	printf '# mutant: %s\n# feature: f\n# mutation: m\n# tests: %s\n--- a/src/a.c\n+++ b/src/a.c\n@@ -1,1 +1,1 @@\n-int a;\n+int a = 1;\n' \
		"$1" "$2" > "$T/$1.patch"
}
mutant m-fast "integration/t-fast integration/t-slow"
mutant m-slow "integration/t-slow integration/t-fast"
mutant m-hang "integration/t-hang"
mrun() { (cd "$W" && TMPDIR="$T/tmp" MUTANT_BASELINE=0 MUTANT_JOBS=1 tests/mutants/run build "$@"); }

run 1 a_mutant_no_test_kills_survives mrun "$T/m-fast.patch"
contains "$out" "^m-fast +f +SURVIVED: passes: integration/t-fast integration/t-slow$" survivor_ran_every_test
contains "$err" "^\[1/1\] m-fast: SURVIVED \(passes: integration/t-fast integration/t-slow\), [0-9]+ s$" \
	each_verdict_is_on_stderr_when_known
MUTANT_BUDGET=1 run 1 spent_budget_is_no_kill mrun "$T/m-slow.patch"
contains "$out" "^m-slow +f +UNDECIDED: its budget of 1 s spent after 1 of 2 tests: integration/t-slow$" \
	the_tests_after_a_spent_budget_are_not_run
MUTANT_BUDGET=soon run 2 a_budget_is_a_number_of_seconds mrun "$T/m-fast.patch"

# Stopped while a test hangs: the test's processes are gone, and so is the
# folder of copies (the runner's own temporary folder is the test's TMPDIR).
export HANG_MARK=$T/hang
(cd "$W" && TMPDIR="$T/tmp" MUTANT_BASELINE=0 exec tests/mutants/run build "$T/m-hang.patch") \
	> /dev/null 2>&1 & pid=$!
for _ in $(seq 600); do [ -f "$HANG_MARK" ] && break; sleep 0.1; done
kill -TERM "$pid"; wait "$pid"; rc=$?
equals "$rc" 143 stopped_run_exits_143
alive=""
for p in $(cat "$HANG_MARK" 2> /dev/null || echo none); do
	for _ in $(seq 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
	kill -0 "$p" 2> /dev/null && alive="$alive $p"
done
equals "$(cat "$HANG_MARK" 2> /dev/null | wc -w):$alive" "2:" stopped_run_leaves_no_test_running
equals "$(find "$T/tmp" -maxdepth 2 -name results)" "" stopped_run_removes_its_copies
done_testing
