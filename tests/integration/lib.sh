# lib.sh - a small TAP library for integration tests (git's test-lib, smaller).
#
#   . "$(dirname "$0")/lib.sh"
#   plan 3
#   trixie_show() {
#       run 0 trixie_show_succeeds "$APIPARITY" env show trixie
#       contains "$out" "python" python_row_is_printed
#   }
#   needs trixie -- trixie_show
#   run 2 no_command_is_a_usage_error "$APIPARITY"
#   done_testing
#
# Each test name states the behaviour. run() keeps stdout in $out, stderr in
# $err and the exit status in $rc, so later checks can look at them.
#
# The plan comes first: tests/run fails a script that prints its tests before
# its plan, runs another number of tests than planned, or exits other than 0,
# so a script that stops half-way can never pass.
#
# Tests that need a reference environment live in a function run by needs().
# Where an environment is missing, needs() skips exactly the tests the
# function would have run, by name: it counts them by running the function in
# count mode, where the test helpers only record their names and no command is
# run (commands found by PATH, $APIPARITY and $PYTHON are not found there).
# So inside a block, call programs by name or through py/$APIPARITY, never by
# absolute path.
set -u
: "${APIPARITY:?set by tests/run}"
: "${TOP:?set by tests/run}"
FIX="$TOP/tests/integration/fixtures"
ENV_ROOT=${APIPARITY_ENV_ROOT:-/var/cache/apiparity/envs}
export APIPARITY_ENV_ROOT="$ENV_ROOT"
PYTHON=/usr/bin/python3
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
# Why the tests of the PNG pictures cannot run (empty: they can): a build
# without them (make PNG=0) says so in --version.
PNG_WHY=""
"$APIPARITY" --version 2> /dev/null | grep -q '^pictures: PNG' ||
	PNG_WHY="PNG pictures are not built into this apiparity (make PNG=0)"
n=0 planned="" out="" err="" rc=0

# plan N - declares the number of tests, before the first one.
plan() {
	if [ -n "$planned" ] || [ "$n" != 0 ]; then
		echo "Bail out! plan $1 declared after $n tests or twice"; exit 1; fi
	planned=$1; echo "1..$1"
}

ok()   { n=$((n+1)); echo "ok $n - $1"; }
nok()  { n=$((n+1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done
	at_failure; }
# With AP_END_AT_FAILURE=1 (tests/mutants/run: one failure is the verdict) a
# script ends at its first failure instead of running the rest: its exit
# status and its plan unmet fail it in tests/run as before, its EXIT trap
# still cleans up. A nok in a subshell ends only the subshell. The variable
# is this script's alone: what it runs (t-runner's own scripts) runs whole.
end_at_failure=${AP_END_AT_FAILURE:-0}
unset AP_END_AT_FAILURE
at_failure() {
	[ "$end_at_failure" = 1 ] || return 0
	echo "# ended at the first failure (AP_END_AT_FAILURE=1)"; exit 1
}
skip() { n=$((n+1)); echo "ok $n - $1 # SKIP $2"; }

# run EXPECTED_RC NAME CMD... - runs CMD, checks its exit status.
run() {
	local want=$1 name=$2; shift 2
	"$@" > "$T/out" 2> "$T/err"; rc=$?
	out=$(cat "$T/out"); err=$(cat "$T/err")
	if [ "$rc" = "$want" ]; then ok "$name"; else
		nok "$name" "exit $rc, wanted $want" "stderr: $(head -c 600 "$T/err")"; fi
}

# contains TEXT PATTERN NAME - an extended regex matches somewhere in TEXT.
contains() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then ok "$3"; else
		nok "$3" "no match for /$2/ in:" "$(printf '%s' "$1" | head -c 800)"; fi
}

lacks() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		nok "$3" "unexpected /$2/ in:" "$(printf '%s' "$1" | head -c 800)"; else ok "$3"; fi
}

# equals GOT WANT NAME
equals() {
	if [ "$1" = "$2" ]; then ok "$3"; else nok "$3" "got '$1'" "wanted '$2'"; fi
}

# have_env NAME - whether a reference environment is provisioned.
have_env() { [ -f "$ENV_ROOT/$1/.apiparity-env" ]; }

# py CODE ARG... - the host's Python (for reading bundles and reports).
py() { "$PYTHON" -c "$@"; }

# script_py SCRIPT TOPDIR CODE ARGS... - runs the Python CODE with m, the
# Python script SCRIPT (one of tests/, not a module) loaded as a module
# whose TOP is TOPDIR, and ARGS in sys.argv[1:]: a test of its functions on
# a tree of the test's own.
script_py() {
	local script=$1 top=$2 code=$3
	shift 3
	py "import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader('m', sys.argv[1])
m = importlib.util.module_from_spec(importlib.util.spec_from_loader('m', loader))
loader.exec_module(m)
m.TOP = sys.argv[2]
del sys.argv[1:3]
$code" "$script" "$top" "$@"
}

# field FILE EXPR - a value of a JSON file, by Python expression on b.
field() { py "import json,sys; b=json.load(open(sys.argv[1])); print(($2))" "$1"; }

# rx TEXT - TEXT as an extended regex that matches it literally.
rx() { printf '%s' "$1" | sed 's/[][()./*+?^$|{}\\]/\\&/g'; }

# count_tests FUNC ARG... - the names of the tests FUNC would run, one a line,
# found by running it in count mode (see the top of this file).
count_tests() {
	local scratch="$T/.count"
	mkdir -p "$scratch"
	(
		set +u
		T=$scratch APIPARITY=/nonexistent/apiparity PYTHON=/nonexistent/python3
		PATH=/nonexistent
		command_not_found_handle() { return 127; }
		ok() { echo "$1" >&3; }; nok() { echo "$1" >&3; }; skip() { echo "$1" >&3; }
		run() { echo "$2" >&3; }; contains() { echo "$3" >&3; }
		lacks() { echo "$3" >&3; }; equals() { echo "$3" >&3; }
		needs() { while [ "$1" != -- ]; do shift; done; shift; "$@"; }
		"$@"
	) 3> "$scratch/names" > /dev/null 2>&1 < /dev/null
	cat "$scratch/names"
}

# needs ENV... -- FUNC ARG... - runs FUNC ARG... when every reference
# environment ENV is provisioned; otherwise skips each test it would run.
needs() {
	local e why="" name
	while [ "$1" != -- ]; do
		e=$1; shift
		have_env "$e" && continue
		why="${why:+$why; }reference environment $e is not provisioned (make envs)"
		[ -f "$ENV_ROOT/$e.error" ] && why="$why: $(head -1 "$ENV_ROOT/$e.error")"
	done
	shift
	if [ -z "$why" ]; then "$@"; return; fi
	while IFS= read -r name; do
		skip "${name:-(a test whose name is computed)}" "$why"
	done < <(count_tests "$@")
}

# unless WHY -- FUNC ARG... - runs FUNC ARG... when WHY is empty; otherwise
# skips each test it would run, with WHY as the reason (a condition that is
# not an environment: root, a tool, this machine's torch).
unless() {
	local why=$1 name
	shift 2
	if [ -z "$why" ]; then "$@"; return; fi
	while IFS= read -r name; do
		skip "${name:-(a test whose name is computed)}" "$why"
	done < <(count_tests "$@")
}

# in_chroot NAME CMD... - runs CMD inside a reference chroot (for values the
# test compares against, so they are read, not assumed).
in_chroot() { local e=$1; shift; chroot "$ENV_ROOT/$e" "$@" 2>/dev/null; }

# done_testing - the script's last line: fails it unless the plan was met.
done_testing() {
	[ -n "$planned" ] || { echo "Bail out! no plan (call plan N first)"; exit 1; }
	[ "$n" = "$planned" ] && return 0
	echo "# planned $planned tests, ran $n"
	exit 1
}
