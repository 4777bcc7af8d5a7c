#!/bin/bash
# env create: idempotent on a complete environment, never half-complete.
. "$(dirname "$0")/lib.sh"
plan 9

create_on_complete() {
	start=$(date +%s)
	run 0 create_on_complete_environment_succeeds "$APIPARITY" env create trixie --suite trixie
	took=$(( $(date +%s) - start ))
	[ "$took" -le 2 ] && [ "$out" = "$ENV_ROOT/trixie: already complete" ] \
		&& ok create_on_complete_environment_returns_at_once \
		|| nok create_on_complete_environment_returns_at_once "took ${took}s: $out"
}
needs trixie -- create_on_complete

# Interrupt a provisioning run: what it leaves must not pass for an environment.
root="$T/root"
"$APIPARITY" env create cut --suite trixie --root "$root" > "$T/c.out" 2> "$T/c.err" &
pid=$!
for _ in $(seq 50); do [ -d "$root/.cut.partial" ] && break; sleep 0.1; done
sleep 1
pkill -KILL -P $pid 2>/dev/null; kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
pkill -KILL -f "debootstrap.*$root" 2>/dev/null; sleep 0.5
[ -d "$root/.cut.partial" ] && ok interrupted_create_leaves_only_a_partial_tree \
	|| nok interrupted_create_leaves_only_a_partial_tree "$(ls -a "$root" 2>&1)"
[ ! -e "$root/cut" ] && ok interrupted_create_leaves_no_environment \
	|| nok interrupted_create_leaves_no_environment "$root/cut exists"
printf '[cut]\nchroot = cut\n' > "$T/cut.ini"
run 3 interrupted_environment_is_not_usable "$APIPARITY" env show --envs "$T/cut.ini" --root "$root" cut
contains "$(cat "$T/c.err")" "env cut: debootstrap" progress_names_the_phase_without_a_tty

run 11 create_of_unknown_suite_fails "$APIPARITY" env create bad --suite no-such-suite --root "$root"
contains "$err" "^apiparity: env create bad: provisioning failed: debootstrap exited with status 1 \(log: .*/bad.log\)" \
	failed_create_names_the_step_and_the_log
[ ! -e "$root/bad" ] && ok failed_create_leaves_no_environment || nok failed_create_leaves_no_environment
done_testing
