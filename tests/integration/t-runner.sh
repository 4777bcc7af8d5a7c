#!/bin/bash
# tests/run cannot be fooled: each broken test program of tests/runner/fixtures
# is a failure named with its cause; real sanitizer exits are caught; clean
# programs, cmocka's skips and lib.sh's computed skips pass.
. "$(dirname "$0")/lib.sh"
plan 28
R="$TOP/tests/runner/fixtures"
runner() { "$TOP/tests/run" build "$@"; }
failed() { contains "$out" "^FAILED $(rx "$1"): $2" "$3"; }

run 1 broken_programs_fail_the_run runner "$R/segv-after-last-ok" "$R/exit-23-like-lsan" \
	"$R/sanitizer-report-exit-0" "$R/sanitizer-log-exit-0" "$R/early-stop-set-u.sh" \
	"$R/early-stop-no-plan.sh" "$R/missing-plan.sh" "$R/plan-mismatch.sh" \
	"$R/plan-at-the-end.sh" "$R/exit-1-after-plan.sh" "$R/not-ok-skip.sh"
failed unit/segv-after-last-ok "killed by SIGSEGV after 2 of 2 tests$" crash_after_the_last_ok_is_a_failure
failed unit/exit-23-like-lsan "exited 23 after 2 of 2 tests$" lsan_exit_after_passing_tests_is_a_failure
failed unit/sanitizer-report-exit-0 "sanitizer report in its output: .*ERROR: AddressSanitizer" \
	sanitizer_report_in_the_output_is_a_failure
failed unit/sanitizer-log-exit-0 "sanitizer report: .*runtime error: signed integer overflow" \
	sanitizer_report_in_its_log_is_a_failure
failed integration/early-stop-set-u "exited 1 after 1 of 3 tests$" set_u_stop_after_the_plan_is_a_failure
failed integration/early-stop-no-plan "exited 1 after 1 of \? tests$" set_u_stop_without_a_plan_is_a_failure
failed integration/missing-plan "no plan \(1\.\.N\): ran 2 tests, planned none$" missing_plan_is_a_failure
failed integration/plan-mismatch "planned 3 tests, ran 2$" plan_mismatch_is_a_failure
failed integration/plan-at-the-end "plan printed after 2 tests, not up front" plan_at_the_end_is_a_failure
failed integration/exit-1-after-plan "exited 1 after 2 of 2 tests$" exit_1_after_a_complete_plan_is_a_failure
failed integration/not-ok-skip "2 - second # SKIP not really \(a skip must be an ok line\)$" not_ok_skip_is_a_failure
contains "$out" "^[0-9]+ passed, 11 failed, 0 skipped$" every_broken_program_is_one_failure

# A mutant's verdict is its first failure: with AP_END_AT_FAILURE=1 a script
# ends there, and is still failed for it; without, every test runs.
run 1 script_with_failures_fails runner "$R/two-failures.sh"
contains "$out" "^FAILED integration/two-failures: 3 - third_fails" every_failure_is_named_by_default
AP_END_AT_FAILURE=1 run 1 script_ending_at_its_first_failure_fails runner "$R/two-failures.sh"
failed integration/two-failures "exited 1 after 2 of 3 tests$" end_at_failure_stops_at_the_first_failure

run 0 clean_programs_pass runner "$R/cmocka-skip" "$R/passes.sh" "$R/sanitizer-options.sh"
contains "$out" "^5 passed, 0 failed, 5 skipped$" cmocka_and_computed_skips_are_skips
RUNNER_MARK="$T/mark" run 0 skipped_block_script_passes bash "$R/passes.sh"
[ ! -e "$T/mark" ] && ok counting_a_skipped_block_runs_none_of_its_commands \
	|| nok counting_a_skipped_block_runs_none_of_its_commands "$T/mark was touched"
equals "$(grep -c ' # SKIP reference environment no-such-environment is not provisioned' <<< "$out")" 4 \
	needs_skips_each_test_of_the_block
contains "$out" "^ok 5 - no-such-environment_has_a_clock # SKIP" skipped_tests_keep_their_names

# Real sanitizer exits, as the runner's options make them: a leak found at exit
# and an overflow, each after every test printed ok.
san() { cc -g -fsanitize=address,undefined -fno-sanitize-recover=all -o "$T/$1" -x c - 2>&1; }
san leaks <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) { (void)argv; puts("1..1\nok 1 - leaks at exit"); fflush(stdout);
	char *p = malloc(64 + argc); p[0] = 1; p = 0; return 0; }
C
san overflows <<'C'
#include <limits.h>
#include <stdio.h>
int main(int argc, char **argv) { (void)argv; puts("1..1\nok 1 - overflows at exit"); fflush(stdout);
	int x = INT_MAX - 1 + argc; x += argc; return x == 0; }
C
if [ -x "$T/leaks" ] && [ -x "$T/overflows" ]; then
	run 1 real_sanitizer_exits_fail_the_run runner "$T/leaks" "$T/overflows"
	failed unit/leaks "exited 99 \(the sanitizers' exit status\)" leak_at_exit_gets_the_sanitizer_exit_status
	failed unit/leaks "sanitizer report[^:]*: .*ERROR: LeakSanitizer" leak_report_is_named
	failed unit/overflows "exited 99 \(the sanitizers' exit status\)" overflow_gets_the_sanitizer_exit_status
	failed unit/overflows "sanitizer report[^:]*: .*runtime error: signed integer overflow" overflow_report_is_named
else
	for t in real_sanitizer_exits_fail_the_run leak_at_exit_gets_the_sanitizer_exit_status leak_report_is_named \
		overflow_gets_the_sanitizer_exit_status overflow_report_is_named; do
		skip $t "cc cannot build with -fsanitize=address,undefined"; done
fi
done_testing
