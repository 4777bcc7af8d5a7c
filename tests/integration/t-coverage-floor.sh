#!/bin/bash
# tests/coverage-report's floors: a figure below its floor fails make
# coverage; a sanitized build (make coverage SANITIZE=1, CI's pass) is held
# to a NAME-san floor where the file has one, its other figures to the plain
# floors; a floor with no figure fails too. The report's floors() on made-up
# figures, with a floor file of the test's own.
. "$(dirname "$0")/lib.sh"
plan 4
mkdir -p "$T/tests"
printf '# a comment\nsrc-lines 90\nsrc-branches 76\nsrc-branches-san 72\nworker-lines 50\n' > "$T/tests/coverage.floor"
# floors FIGURES SAN - what floors() returns, after what it printed.
floors() {
	script_py "$TOP/tests/coverage-report" "$T" 'print(m.floors(eval(sys.argv[1]), sys.argv[2] == "1"))' \
		"$1" "$2" 2>&1
}
figs='{"src-lines": (95, 100), "src-branches": (73, 100), "worker-lines": (60, 100)}'
contains "$(floors "$figs" 0)" "src-branches 73.0% is below its floor 76.0%" \
	a_plain_build_is_held_to_the_plain_floor
equals "$(floors "$figs" 1)" 0 a_sanitized_build_is_held_to_its_own_floor
contains "$(floors '{"src-lines": (80, 100), "src-branches": (73, 100), "worker-lines": (60, 100)}' 1)" \
	"src-lines 80.0% is below its floor 90.0%" a_sanitized_build_keeps_the_plain_floors_it_has_no_san_for
contains "$(floors '{"src-lines": (95, 100), "src-branches": (80, 100)}' 0)" "no figure worker-lines" \
	a_floor_without_its_figure_fails
done_testing
