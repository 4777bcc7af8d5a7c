# lib.sh - a small TAP library for integration tests (git's test-lib, smaller).
#
#   . "$(dirname "$0")/lib.sh"
#   run 0 trixie_show_succeeds "$APIPARITY" env show trixie
#   contains "$out" "python" python_row_is_printed
#   done_testing
#
# Each test name states the behaviour. run() keeps stdout in $out, stderr in
# $err and the exit status in $rc, so later checks can look at them.
set -u
: "${APIPARITY:?set by tests/run}"
: "${TOP:?set by tests/run}"
FIX="$TOP/tests/integration/fixtures"
ENV_ROOT=${APIPARITY_ENV_ROOT:-/var/cache/apiparity/envs}
export APIPARITY_ENV_ROOT="$ENV_ROOT"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
n=0 out="" err="" rc=0

ok()   { n=$((n+1)); echo "ok $n - $1"; }
nok()  { n=$((n+1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }
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

# skip_without_env NAME COUNT - skips COUNT tests when NAME is missing; true if skipped.
skip_without_env() {
	have_env "$1" && return 1
	local why="reference environment $1 is not provisioned (make envs)"
	[ -f "$ENV_ROOT/$1.error" ] && why="$why: $(head -1 "$ENV_ROOT/$1.error")"
	for _ in $(seq "$2"); do skip "needs $1" "$why"; done
	return 0
}

# in_chroot NAME CMD... - runs CMD inside a reference chroot (for values the
# test compares against, so they are read, not assumed).
in_chroot() { local e=$1; shift; chroot "$ENV_ROOT/$e" "$@" 2>/dev/null; }

done_testing() { echo "1..$n"; }
