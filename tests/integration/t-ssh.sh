#!/bin/bash
# Environments over ssh, against a real OpenSSH server: sshd on 127.0.0.1 with
# its own keys and config in this test's directory (tests/tools/sshd.sh),
# whose far side enters the trixie reference environment as apiparity enters
# a chroot. Over ssh, apiparity must measure what it measures directly, pass
# every byte through the remote shell unchanged, fail each way a user meets
# with one line and its exit code, never hang, and leave nothing behind.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/tools/sshd.sh"
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
TESTS_ROOT=${APIPARITY_TESTS_ROOT:-/var/cache/apiparity/tests}
mark=ssh-$$-$RANDOM$RANDOM
plan 50

# Processes this test started on the far side carry the mark; none may stay.
marked() { grep -lszx "APIPARITY_TEST_MARK=$mark" /proc/[0-9]*/environ 2> /dev/null | cut -d/ -f3; }
cleanup() {
	local p
	sshd_stop
	for p in $(marked); do kill -9 "$p" 2> /dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

sshd_start "$T/sshd" || echo "# sshd cannot start: $sshd_why"
# apiparity's control sockets go under $TMPDIR: here, where they can be seen.
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"

# with_sshd ENV... -- FUNC: FUNC under needs(), or every test it would run
# skipped, by name, with the reason sshd could not start.
with_sshd() {
	local name
	if [ -z "$sshd_why" ]; then needs "$@"; return; fi
	while [ "$1" != -- ]; do shift; done
	shift
	while IFS= read -r name; do skip "$name" "sshd cannot start: $sshd_why"; done < <(count_tests "$@")
}

# Bytes that a shell would act on: blanks, quotes, $, backticks, ;, globs,
# redirections, a backslash, and UTF-8. Each would touch the canary if a
# shell ran it.
canary="$T/canary"
hostile="sp  ace 'sq' \"dq\" \$HOME \${PATH} \`touch $canary\` \$(touch $canary) ; touch $canary; | & < > * ? [a] ~ # \\ é ü 中 \\n"
# ini_word S: S as one word of the environments file (each ASCII character
# but letters, digits and ./_- escaped with a backslash).
ini_word() { "$PYTHON" -c 'import re, sys; print(re.sub(r"([\x00-\x7f])", lambda m: m.group(1) if re.match(r"[A-Za-z0-9./_-]", m.group(1)) else "\\" + m.group(1), sys.argv[1]))' "$1"; }
q=$(ini_word "$hostile")

if [ -z "$sshd_why" ]; then
	o=$(ssh_opts)
	enter="$sshd_dir/enter $ENV_ROOT/trixie $TESTS_ROOT"
	other=$(sshd_free_port)
	ssh-keygen -q -t ed25519 -N '' -f "$T/stranger_key" < /dev/null
	ssh-keygen -q -t ed25519 -N '' -f "$T/impostor_key" < /dev/null
	printf '[127.0.0.1]:%s %s\n' "$sshd_port" "$(cut -d' ' -f1,2 "$T/impostor_key.pub")" > "$T/changed_hosts"
	common="-F /dev/null -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes"
	cat > "$T/envs.ini" <<-EOF
	[trixie]
	chroot = trixie
	python = /usr/bin/env AP_P=$q python3
	setenv = APIPARITY_TEST_MARK=$mark AP_Q=$q

	[rt]
	label  = trixie over ssh
	exec   = ssh $o root@127.0.0.1 -- $enter
	python = /usr/bin/env AP_P=$q python3
	setenv = APIPARITY_TEST_MARK=$mark AP_Q=$q
	tests_root = /run/apiparity/tests

	[rt-no-tests]
	exec   = ssh $o root@127.0.0.1 -- $enter

	[unknown-host]
	exec = ssh $common -i $sshd_dir/client_key root@no-such-host.invalid --

	[refused]
	exec = ssh $common -p $other -i $sshd_dir/client_key -o UserKnownHostsFile=$sshd_dir/known_hosts root@127.0.0.1 --

	[auth-refused]
	exec = ssh $common -p $sshd_port -i $T/stranger_key -o UserKnownHostsFile=$sshd_dir/known_hosts root@127.0.0.1 --

	[host-key-changed]
	exec = ssh $common -p $sshd_port -i $sshd_dir/client_key -o UserKnownHostsFile=$T/changed_hosts root@127.0.0.1 --

	[no-python]
	exec   = ssh $o root@127.0.0.1 --
	python = /nonexistent/python3
	EOF
	# A probe that shows, in its trace, what reached the far side.
	script="$T/a dir; \$(touch $canary)/it's \"q\" \`touch $canary\` é.py"
	mkdir -p "$(dirname "$script")"
	cat > "$script" <<-'EOF'
	import os
	trace("AP_Q", os.environ.get("AP_Q"))
	trace("AP_P", os.environ.get("AP_P"))
	trace("literal", "two\nlines $HOME `x` ; 'q' \"d\" é 中")
	EOF
fi

# What may differ between the same environment reached two ways: when and how
# fast it was measured, and how it was reached (the env block: name, label,
# exec line).
same_py='
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def fp(f):
    f = dict(f or {})
    for k in ("time_utc", "torch_import_ms"):
        f.pop(k, None)
    return f
def check(c):
    c = dict(c)
    c.pop("duration_ms", None)
    if c.get("kind") == "official":
        c.pop("output", None)   # the test runner prints its own timings
    return c
bad = []
if "fingerprint" in a or "fingerprint" in b:
    a, b = {"fingerprint": a.get("fingerprint")}, {"fingerprint": b.get("fingerprint")}
for k in sorted(set(a) | set(b)):
    if k in ("env", "started_utc", "finished_utc", "tool"):
        continue
    x, y = a.get(k), b.get(k)
    if k == "fingerprint":
        x, y = fp(x), fp(y)
    if k == "checks":
        x, y = [check(c) for c in x], [check(c) for c in y]
    if x != y:
        bad.append(k)
print(" ".join(bad) or "same")
'
# Fingerprint, verdict, checks and traces: over ssh as in the direct chroot.
over_ssh_as_direct() {
	run 0 env_show_over_ssh_succeeds "$APIPARITY" env show --json --envs "$T/envs.ini" rt trixie
	printf '%s' "$out" > "$T/show.json"
	equals "$(py 'import json,sys; d=json.load(open(sys.argv[1])); json.dump({"fingerprint": d["rt"]}, open(sys.argv[2], "w")); json.dump({"fingerprint": d["trixie"]}, open(sys.argv[3], "w"))' \
		"$T/show.json" "$T/fp-rt.json" "$T/fp-trixie.json"; py "$same_py" "$T/fp-rt.json" "$T/fp-trixie.json")" same \
		fingerprint_over_ssh_equals_the_direct_one
	run 0 check_over_ssh_succeeds "$APIPARITY" check "$TARGET" --envs "$T/envs.ini" --env trixie --env rt \
		--script "$script" --out "$T/eq"
	contains "$out" "^rt +3\.13\.[0-9]+ +2\.6\.[^ ]+ +- +cpu +11/11 +consistent$" ssh_row_passes_every_probe
	equals "$(py "$same_py" "$T/eq/rt/bundle.json" "$T/eq/trixie/bundle.json")" same \
		bundle_over_ssh_equals_the_direct_one
	b="$T/eq/rt/bundle.json"
	equals "$(field "$b" 'b["verdict"], len(b["comparison"]["differences"]), b["comparison"]["reference"]')" \
		"('consistent', 0, 'trixie')" ssh_traces_are_identical_to_the_direct_ones
	equals "$(field "$b" 'sorted(set(c["status"] for c in b["checks"] if c["kind"] == "official"))')" \
		"['PASS', 'SKIP']" official_tests_run_over_ssh
	equals "$(field "$b" 'b["official"]["root"]')" "/run/apiparity/tests/$(field "$T/eq/trixie/bundle.json" 'b["official"]["root"].split("/")[4]')/test" \
		official_tests_run_from_tests_root
	equals "$(field "$b" 'b["env"]["where"].split()[0]')" ssh ssh_bundle_says_how_it_was_reached
}
with_sshd trixie -- over_ssh_as_direct

# Every byte of the setenv values and the python words (quoted by apiparity
# for the remote shell), of the script's name and of its code reaches the far
# side as written, and nothing in them runs.
quoting_under_fire() {
	b="$T/eq/rt/bundle.json"
	sc='[c for c in b["checks"] if c["kind"] == "script"][0]'
	equals "$(field "$b" "$sc[\"trace\"][0][\"value\"]")" "$hostile" setenv_value_reaches_the_far_side_unchanged
	equals "$(field "$b" "$sc[\"trace\"][1][\"value\"]")" "$hostile" python_word_reaches_the_far_side_unchanged
	equals "$(field "$b" "$sc[\"trace\"][2][\"value\"] == 'two\\nlines \$HOME \`x\` ; \\'q\\' \"d\" é 中'")" True \
		script_code_with_a_newline_reaches_the_far_side_unchanged
	equals "$(field "$b" "$sc[\"name\"]")" "script:$(basename "$script")" script_name_is_kept_as_given
	nasty=$'torch.no_such\n$(touch '"$canary"$');`touch '"$canary"$'` \'q\' "d"'
	# A target is a dotted ASCII name: any other is refused before it leaves.
	run 2 target_that_is_no_python_name_is_refused_here "$APIPARITY" check "$nasty" --envs "$T/envs.ini" --env rt \
		--no-official --out "$T/nasty"
	[ -e "$canary" ] && nok nothing_the_user_did_not_write_runs "$canary exists" || ok nothing_the_user_did_not_write_runs
}
with_sshd trixie -- quoting_under_fire

# A remote environment without tests_root runs no official tests, and says
# why: this machine's trees are not on the far side.
remote_without_tests_root() {
	run 0 check_over_ssh_without_tests_root_succeeds "$APIPARITY" check "$TARGET" --envs "$T/envs.ini" \
		--env rt-no-tests --out "$T/nt"
	equals "$(field "$T/nt/rt-no-tests/bundle.json" '[(c["status"], c["reason"].split(":")[0]) for c in b["checks"] if c["kind"] == "official"]')" \
		"[('NOTRUN', 'no-test-source')]" official_tests_need_tests_root_over_ssh
	contains "$(field "$T/nt/rt-no-tests/bundle.json" '[c["reason"] for c in b["checks"] if c["kind"] == "official"][0]')" \
		"not on the far side of rt-no-tests's remote shell .*tests_root" notrun_reason_says_what_to_do
}
with_sshd trixie -- remote_without_tests_root

# One connection per environment: concurrent processes in one environment
# share the master apiparity starts first, which it ends at the end.
one_connection() {
	c0=$(grep -c "Connection from" "$sshd_dir/sshd.log")
	s0=$(grep -c "Starting session" "$sshd_dir/sshd.log")
	run 0 two_workers_in_one_environment "$APIPARITY" env show --envs "$T/envs.ini" rt rt
	equals "$(( $(grep -c "Connection from" "$sshd_dir/sshd.log") - c0 ))" 1 one_connection_for_the_environment
	equals "$(( $(grep -c "Starting session" "$sshd_dir/sshd.log") - s0 ))" 2 each_worker_has_its_session
	equals "$(ls -A "$TMPDIR" | wc -l)" 0 control_directory_is_removed
	equals "$(ps -eo comm=,args= | grep '^ssh ' | grep -cF "$TMPDIR/apiparity-")" 0 master_connection_is_ended
}
with_sshd trixie -- one_connection

# failure NAME CODE REGEX: env show of NAME exits CODE, within 20 s, with one
# line that matches REGEX.
failure() {
	local s=$(date +%s)
	run "$2" "${1}_exits_$2" "$APIPARITY" env show --envs "$T/envs.ini" "$1"
	contains "$err" "$3" "${1}_is_said_in_its_own_words"
	equals "$(printf '%s\n' "$err" | wc -l)" 1 "${1}_is_one_line"
	local took=$(( $(date +%s) - s ))
	[ "$took" -le 20 ] && ok "${1}_does_not_hang" || nok "${1}_does_not_hang" "took ${took}s"
}
failures() {
	failure unknown-host 3 "^apiparity: env unknown-host: environment unreachable: exec prefix 'ssh' exited with status 255 before python answered: ssh: Could not resolve hostname no-such-host.invalid"
	failure refused 3 "^apiparity: env refused: environment unreachable: exec prefix 'ssh' exited with status 255 before python answered: ssh: connect to host 127.0.0.1 port $other: Connection refused$"
	failure auth-refused 3 "^apiparity: env auth-refused: environment unreachable: exec prefix 'ssh' exited with status 255 before python answered: root@127.0.0.1: Permission denied \(publickey\)\.$"
	failure host-key-changed 3 "^apiparity: env host-key-changed: environment unreachable: exec prefix 'ssh' exited with status 255 before python answered: Host key verification failed\.$"
	failure no-python 6 "^apiparity: env no-python: python not found in the environment: '/nonexistent/python3' \(exit status 127\): .*/nonexistent/python3: No such file or directory$"
}
with_sshd -- failures

# The connection drops in the middle of a probe (its sshd is killed): the
# run ends at once with one line, and what was measured before is kept.
dropped_connection() {
	cat > "$T/slow.py" <<-'EOF'
	import time
	trace("before the drop", 1)
	time.sleep(60)
	EOF
	"$APIPARITY" check "$TARGET" --envs "$T/envs.ini" --env rt --script "$T/slow.py" --no-official --timeout 8 \
		--out "$T/drop" > "$T/drop.out" 2> "$T/drop.err" &
	local pid=$! i
	for i in $(seq 600); do
		[ "$(grep -c '"kind":"probe"' "$T/drop/rt/journal.jsonl" 2> /dev/null)" -ge 10 ] && break
		sleep 0.2
	done
	sleep 1   # the script is running now
	local s=$(date +%s%N) p
	for p in $(sshd_sessions); do
		[ "$(cat /proc/"$p"/comm 2> /dev/null)" = sshd ] && kill -9 "$p"
	done
	wait "$pid"; rc=$?
	local took=$(( ($(date +%s%N) - s) / 1000000 ))
	echo "# the dropped connection was noticed after $took ms"
	equals "$rc" 3 dropped_connection_exits_3
	err=$(cat "$T/drop.err")
	contains "$err" "^apiparity: env rt: environment unreachable: ssh lost the connection while the worker was answering \(ssh exited with status 255\)" \
		dropped_connection_is_said_in_one_line
	[ "$took" -lt 5000 ] && ok dropped_connection_is_noticed_within_five_seconds \
		|| nok dropped_connection_is_noticed_within_five_seconds "took $took ms"
	equals "$(field "$T/drop/rt/bundle.json" 'sum(c["kind"] == "probe" and c["status"] == "PASS" for c in b["checks"])')" 10 \
		probes_measured_before_the_drop_are_kept
	equals "$(field "$T/drop/rt/bundle.json" 'b["error"]["exit_code"]')" 3 \
		bundle_records_the_drop
	equals "$(ls -A "$TMPDIR" | wc -l)" 0 control_directory_is_removed_after_the_drop
}
with_sshd trixie -- dropped_connection

# Nothing this test started through ssh is left running: the worker whose
# connection dropped ends by itself once its probe's timeout has passed.
if [ -z "$sshd_why" ] && have_env trixie; then
	for i in $(seq 300); do [ -z "$(marked)" ] && break; sleep 0.1; done
	equals "$(marked | wc -l)" 0 no_process_is_left_on_the_far_side
elif [ -n "$sshd_why" ]; then
	skip no_process_is_left_on_the_far_side "sshd cannot start: $sshd_why"
else
	skip no_process_is_left_on_the_far_side "reference environment trixie is not provisioned (make envs)"
fi
done_testing
