# bench/lib.sh - what the benches share (sourced, bash): the commit and date a
# bench measures, timing and medians, entering a reference chroot the way
# apiparity enters it, and the lines a bench prints for tools/bench-rows:
#
#   bench NAME: apiparity COMMIT, measured DATE      (first)
#   ratio NAME = 1.234 (target <= 1.25): met       (or MISSED)
#   row NAME | DATE | COMMIT | RUNS | ... |          (its row of bench/RESULTS.md)
#
# A measured command that fails makes the bench exit 1 before it prints any
# figure: a figure is only ever printed for runs that all worked.
set -eu
ap=${1:-build/apiparity}
envroot=${APIPARITY_ENV_ROOT:-/var/cache/apiparity/envs}
testsroot=${APIPARITY_TESTS_ROOT:-/var/cache/apiparity/tests}
runs=${RUNS:-7}
bench_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bench_start NAME - prints what is measured, and when.
bench_start() {
	bench_name=$1
	bench_date=$(date -u +%Y-%m-%d)
	local v
	if ! v=$("$ap" --version); then
		echo "bench/$bench_name: $ap does not run" >&2
		exit 1
	fi
	bench_commit=$(printf '%s\n' "$v" | sed -n 's/^apiparity [^ ]* (\(.*\))$/\1/p')
	# A build from a changed tree is not that commit: say so.
	if [ -n "$(git -C "$bench_top" status --porcelain --untracked-files=no -- src worker 2>/dev/null)" ]; then
		bench_commit="$bench_commit+changes"
	fi
	echo "bench $bench_name: apiparity ${bench_commit:-unknown}, measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores"
}

# need_env NAME... - every named reference environment is provisioned.
need_env() {
	local e
	for e in "$@"; do
		if [ ! -f "$envroot/$e/.apiparity-env" ]; then
			echo "bench/$bench_name: $e is not provisioned (make envs)" >&2
			exit 1
		fi
	done
}

# us CMD... - runs CMD and prints how long it took in microseconds; exits 1
# (so the bench prints no figure) when CMD fails. Call it as
# v=$(us ...) || exit 1. The clock is bash's own (EPOCHREALTIME): a
# $(date) on each side would add two forks, ~10 ms, to every figure.
us() {
	local s rc=0
	s=${EPOCHREALTIME/[.,]/}
	"$@" || rc=$?
	local e=${EPOCHREALTIME/[.,]/}
	if [ "$rc" != 0 ]; then
		echo "bench/$bench_name: '$*' failed (exit $rc); no figure" >&2
		exit 1
	fi
	echo $(( e - s ))
}

# ms CMD... - as us, in milliseconds.
ms() {
	local v
	v=$(us "$@") || exit 1
	echo $(( v / 1000 ))
}

# warm CMD... - one untimed run of CMD before the timed ones (the page cache,
# the usage index); like ms, it exits 1 when CMD fails. A smoke run
# (BENCH_SMOKE=1: make bench-smoke) skips it: its one figure is kept by
# nobody, it only shows that the bench runs. Call it as warm ... || exit 1.
warm() {
	[ "${BENCH_SMOKE:-0}" = 1 ] && return 0
	(ms "$@") > /dev/null
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# in_chroot ENV CMD... - runs CMD in a reference chroot as apiparity enters
# it: a private mount namespace, /proc, a tmpfs on /run with the test trees
# bound read-only at /run/apiparity/tests, chroot, a clean environment.
# With BENCH_LIMIT_S set, CMD (and what it starts) is killed after that many
# seconds, and in_chroot returns 124. CMD is the first process of a PID
# namespace of its own: what it starts (openreg's device daemons, which a
# plain loop that openreg took down leaves behind) ends with it.
in_chroot() {
	local e=$1 limit=()
	shift
	[ -n "${BENCH_LIMIT_S:-}" ] && limit=(timeout -k 5 "$BENCH_LIMIT_S")
	"${limit[@]}" unshare -m -p -f --kill-child --propagation private sh -c '
		r=$1 t=$2; shift 2
		mount -t proc proc "$r/proc" || exit 125
		if [ -d "$t" ]; then
			mount -t tmpfs tmpfs "$r/run" && mkdir -p "$r/run/apiparity/tests" &&
			mount --bind "$t" "$r/run/apiparity/tests" &&
			mount -o remount,bind,ro "$r/run/apiparity/tests" || exit 125
		fi
		exec chroot "$r" /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"' \
		sh "$envroot/$e" "$testsroot" "$@"
}

# ratio NAME MEASURED BASE TARGET - prints measured/base against the target.
ratio() {
	awk -v n="$1" -v m="$2" -v b="$3" -v t="$4" 'BEGIN {
		r = m / b
		printf "ratio %s = %.3f (target <= %s): %s\n", n, r, t, r <= t + 0 ? "met" : "MISSED" }'
}

# row CELL... - this bench's row of bench/RESULTS.md: date, commit, the
# number of runs each median is of, then the cells.
row() {
	local line="row $bench_name | $bench_date | $bench_commit | $runs |" c
	for c in "$@"; do line="$line $c |"; done
	echo "$line"
}
