#!/bin/bash
# Official upstream tests: fetched from Debian's source packages, found, claimed,
# preflighted and run in isolation, in the real reference environments.
. "$(dirname "$0")/lib.sh"
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
NODE=test/test_autograd.py::TestMultithreadAutograd::test_set_multithreading_enabled_as_context_manager_and_function
WRONG=test/test_autograd.py::TestAutograd::test_set_multithreading_enabled_as_context_manager_and_function
TESTS_ROOT=${APIPARITY_TESTS_ROOT:-/var/cache/apiparity/tests}
mkdir -p "$T/stub"
cp "$FIX/stub-state/sitecustomize.py" "$T/stub/"
printf '[trixie]\nchroot = trixie\n[faulty]\nchroot = trixie\nbind = %s:/mnt\nsetenv = PYTHONPATH=/mnt\n' "$T/stub" > "$T/ref.ini"
check_of() { field "$1" "[(c['status'], c['reason']) for c in b['checks'] if c['name'] == '$2']"; }
plan 40

in_trixie() {
	run 0 tests_fetch_gets_the_trixie_tree "$APIPARITY" tests fetch trixie
	pkg=$(in_chroot trixie dpkg-query -W -f '${Version}' python3-torch)
	up=${pkg%-*}
	contains "$out" "^trixie: tests of pytorch $(rx "$pkg"): $(rx "$TESTS_ROOT/$up")/test \((fetched and verified against its .dsc|already cached)\)$" \
		fetch_names_version_and_cache
	[ -f "$TESTS_ROOT/$up/test/test_autograd.py" ] && [ -d "$TESTS_ROOT/$up/test/autograd" ] \
		&& ok fetched_tree_has_the_test_and_its_helpers || nok fetched_tree_has_the_test_and_its_helpers

	run 1 tests_find_flags_a_wrong_claim "$APIPARITY" tests find $TARGET --env trixie --claimed $WRONG
	first=$(printf '%s\n' "$out" | grep -E '^ *[0-9]+  test/' | head -1 | awk '{print $2}')
	equals "$first" "$NODE" find_ranks_the_class_that_really_holds_the_test_first
	contains "$out" "^ +[0-9]+: with torch\.autograd\.set_multithreading_enabled\(False\):" find_shows_the_lines_that_use_it
	contains "$out" "^WARN claimed:$(rx "$WRONG"): no such test at torch $(rx "$pkg"); the same test name exists as $(rx "$NODE")$" \
		wrong_claim_names_the_node_that_exists
	run 0 right_claim_passes "$APIPARITY" tests find $TARGET --env trixie --claimed $NODE
	contains "$out" "^PASS claimed:$(rx "$NODE")$" right_claim_is_confirmed

	run 0 check_runs_the_official_test "$APIPARITY" check $TARGET --env trixie --out "$T/c"
	b="$T/c/trixie/bundle.json"
	equals "$(check_of "$b" "$NODE")" "[('PASS', None)]" official_test_passes_in_trixie
	contains "$(cat "$T/c/trixie/official.log")" "^=== end $(rx "$NODE"): PASS$" official_log_has_begin_end_markers
	contains "$(cat "$T/c/trixie/MANIFEST.sha256")" "  official.log$" official_log_is_in_the_manifest
	equals "$(field "$b" "b['official']['package_version']")" "$pkg" bundle_records_the_test_version
	equals "$(field "$b" "b['official']['isolation']")" "per-file, re-forked after crash/timeout" \
		bundle_says_how_official_tests_were_isolated

	# A trimmed tree: the test file without the test/autograd/ helpers it imports.
	mkdir -p "$T/trimmed/test"
	cp "$TESTS_ROOT/$up/test/test_autograd.py" "$T/trimmed/test/"
	run 0 trimmed_tree_is_not_an_error "$APIPARITY" check $TARGET --env trixie --torch-src "$T/trimmed" --out "$T/t"
	equals "$(check_of "$T/t/trixie/bundle.json" "$NODE")" \
		"[('NOTRUN', 'missing-fixture: test/autograd/test_complex.py (imported by test_autograd.py), test/autograd/test_functional.py (imported by test_autograd.py), test/autograd/test_logging.py (imported by test_autograd.py)')]" \
		missing_helpers_are_named_as_missing_fixtures

	# A tree without the test file: the claimed node says which file is missing.
	mkdir -p "$T/nofile/test"
	cp -r "$TESTS_ROOT/$up/test/autograd" "$T/nofile/test/"
	run 0 tree_without_the_test_file_is_not_an_error "$APIPARITY" check $TARGET --env trixie \
		--torch-src "$T/nofile" --claimed $NODE --out "$T/n"
	equals "$(check_of "$T/n/trixie/bundle.json" "$NODE")" \
		"[('NOTRUN', 'missing-fixture: test/test_autograd.py (the test file itself)')]" missing_test_file_is_named

	# Files that cannot start for a missing third-party module: named by the
	# preflight when the file imports it, by the import when a helper does.
	run 0 missing_modules_are_not_an_error "$APIPARITY" check $TARGET --env trixie \
		--torch-src "$FIX/official-missing" --out "$T/m"
	equals "$(field "$T/m/trixie/bundle.json" "sorted((c['name'], c['reason']) for c in b['checks'] if c['kind'] == 'official')")" \
		"[('test/test_needs_helper.py::TestNeedsHelper::test_uses_target', 'missing-fixture: module apiparity_absent_module (needed to import test_needs_helper.py)'), ('test/test_needs_module.py::TestNeedsModule::test_uses_target', 'missing-fixture: apiparity_absent_module (imported by test_needs_module.py)')]" \
		missing_third_party_modules_are_missing_fixtures

	# The preflight's import is the run's: a file is imported once.
	run 0 check_of_a_file_that_counts_its_imports "$APIPARITY" check $TARGET --env trixie \
		--torch-src "$FIX/official-once" --out "$T/o"
	equals "$(check_of "$T/o/trixie/bundle.json" test/test_imported_once.py::TestImportedOnce::test_file_was_imported_once)" \
		"[('PASS', None)]" test_file_is_imported_once

	# Fault fixture tests: every outcome, and no result lost to a crash or hang.
	start=$(date +%s)
	# trixie is its own reference here: a failing official test says as much
	# about the environment as about the API, so it is a stated limit.
	run 0 failing_official_tests_in_the_reference_are_limits "$APIPARITY" check $TARGET --env trixie \
		--torch-src "$FIX/official" --timeout 3 --out "$T/f"
	contains "$out" "^trixie .* consistent-with-limits$" verdict_states_limits
	took=$(( $(date +%s) - start ))
	equals "$(field "$T/f/trixie/bundle.json" "sorted((c['name'].split('::')[-1], c['status']) for c in b['checks'] if c['kind'] == 'official')")" \
		"[('test_fails', 'FAIL'), ('test_hangs', 'TIMEOUT'), ('test_passes', 'PASS'), ('test_segfaults', 'CRASH'), ('test_skips', 'SKIP')]" \
		each_official_outcome_is_reported
	equals "$(field "$T/f/trixie/bundle.json" "[c['reason'] for c in b['checks'] if c['name'].endswith('test_segfaults')]")" \
		"['SIGSEGV']" crash_names_the_signal
	[ "$took" -lt 30 ] && ok hanging_test_is_cut_at_the_timeout || nok hanging_test_is_cut_at_the_timeout "took ${took}s"

	# A file's tests run one after another in one child: a crash or a hang
	# costs only its own test, and a fresh child runs the rest.
	run 1 sequence_with_a_crash_and_a_hang_fails "$APIPARITY" tests run test/test_sequence.py \
		--env trixie --torch-src "$FIX/official-sequence" --timeout 3
	statuses() { printf '%s\n' "$out" | grep -E "::$1::" | awk '{print $1}' | tr '\n' ' '; }
	equals "$(statuses TestCrashSecond)" "PASS CRASH PASS PASS " segfault_in_the_second_of_four_costs_only_that_test
	equals "$(statuses TestHangSecond)" "PASS TIMEOUT PASS PASS " hang_in_the_second_of_four_is_cut_and_the_rest_run
	equals "$(statuses TestGlobalCarries)" "PASS PASS " global_a_test_changed_is_seen_by_the_next_test_of_its_file

}
needs trixie -- in_trixie

against_the_reference() {
	# A failure where the reference passes the same test is an inconsistency.
	run 1 official_failure_where_the_reference_passes_is_inconsistent "$APIPARITY" check $TARGET \
		--envs "$T/ref.ini" --env trixie --env faulty --out "$T/r"
	contains "$out" "^faulty .* inconsistent$" faulty_environment_is_inconsistent
	equals "$(field "$T/r/faulty/bundle.json" "[(c['status'], c['reference_status']) for c in b['checks'] if c['name'] == '$NODE']")" \
		"[('FAIL', 'PASS')]" failing_official_test_is_compared_with_the_reference
	contains "$(field "$T/r/faulty/bundle.json" "b['verdict_reasons']")" "check $(rx "$NODE"): FAIL" \
		failing_official_test_is_a_reason
	run 12 sid_has_no_fetchable_test_source "$APIPARITY" tests fetch sid
	contains "$err" "no test source: the archive's sid does not serve source pytorch=" sid_says_why_and_what_to_do
	run 0 sid_check_is_consistent_without_tests "$APIPARITY" check $TARGET --env sid --out "$T/s"
	sid_pkg=$(in_chroot sid dpkg-query -W -f '${Version}' python3-torch)
	sid_up=${sid_pkg%-*}; sid_up=${sid_up#*:}
	contains "$(field "$T/s/sid/bundle.json" "[c['reason'] for c in b['checks'] if c['kind'] == 'official']")" \
		"no-test-source: no upstream tests for pytorch $(rx "$sid_up") in " sid_official_is_notrun_no_test_source
}
needs trixie sid -- against_the_reference
done_testing
