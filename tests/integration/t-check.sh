#!/bin/bash
# apiparity check on the real reference environments, and with faults injected.
. "$(dirname "$0")/lib.sh"
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
sed "s|@FIX@|$FIX|g" "$FIX/check.ini" > "$T/check.ini"
plan 75

# The README's example on the three reference environments.
example_check() {
	run 0 example_check_is_consistent "$APIPARITY" check $TARGET --env bookworm --env trixie --env sid --out "$T/ex"
	contains "$out" "^bookworm +3\.11\.[0-9]+ +1\.13\.[^ ]+ +- +cpu +0/0 +unverified" bookworm_row_is_unverified
	contains "$out" "^trixie +3\.13\.[0-9]+ +2\.6\.[^ ]+ +- +cpu +10/10 +consistent$" trixie_row_passes_every_probe
	contains "$out" "^sid +3\.14\.[0-9]+ +2\.14\.[^ ]+ +- +cpu +10/10 +consistent$" sid_row_passes_every_probe
	contains "$out" "^  bookworm: did you mean torch\.autograd\.grad_mode\.set_grad_enabled\?$" summary_shows_did_you_mean
	b="$T/ex/bookworm/bundle.json"
	equals "$(field "$b" '[(c["name"], c["status"], c["reason"]) for c in b["checks"]]')" \
		"[('resolve', 'NOTRUN', 'absent-in-this-version')]" bookworm_target_is_notrun_absent
	equals "$(field "$b" 'b["resolution"]["nearest"]')" "['torch.autograd.grad_mode.set_grad_enabled']" \
		bookworm_suggests_the_nearest_name
	contains "$(cat "$T/ex/bookworm/run.log")" "nearest names: torch.autograd.grad_mode.set_grad_enabled" \
		run_log_shows_did_you_mean
	for e in trixie sid; do
		b="$T/ex/$e/bundle.json"
		equals "$(field "$b" 'sorted(set(c["status"] for c in b["checks"] if c["kind"] == "probe"))')" "['PASS']" ${e}_every_probe_passes
		equals "$(field "$b" 'len(b["comparison"]["differences"]), b["comparison"]["reference"]')" "(0, 'trixie')" \
			${e}_traces_identical_to_reference
		equals "$(field "$b" 'b["device_trace"]["available"], b["device_trace"]["ops"], b["device_trace"]["tensor_devices"]')" \
			"(True, {}, {})" ${e}_device_trace_is_empty
		equals "$(field "$b" 'b["resolution"]["patch"]["patched"], b["adaptation"]["device_independent"]')" \
			"(False, True)" ${e}_not_patched_and_device_independent
		(cd "$T/ex/$e" && sha256sum --quiet --strict -c MANIFEST.sha256) \
			&& ok ${e}_manifest_checks_with_sha256sum || nok ${e}_manifest_checks_with_sha256sum
	done
	b="$T/ex/sid/bundle.json"
	equals "$(field "$b" 'b["schema"], b["tool"]["name"], b["target"], b["env"]["name"], b["verdict"]')" \
		"('apiparity.bundle/1', 'apiparity', '$TARGET', 'sid', 'consistent')" bundle_has_schema_tool_target_env_verdict
	want_py=$(in_chroot sid /usr/bin/python3 -c 'import platform; print(platform.python_version())')
	equals "$(field "$b" 'b["fingerprint"]["python"]["version"]')" "$want_py" bundle_fingerprint_is_measured
	equals "$(field "$b" 'b["resolution"]["kind"], b["resolution"]["owner"], b["resolution"]["file"], b["resolution"]["pure_python"]')" \
		"('method', 'torch.autograd.grad_mode.set_multithreading_enabled', 'torch/autograd/grad_mode.py', True)" \
		resolution_names_kind_owner_and_source
	equals "$(field "$b" 'all(set(c) >= {"name","kind","status","reason","trace","duration_ms"} for c in b["checks"])')" True \
		every_check_has_the_bundle_fields
	equals "$(py 'import json,sys; print(sum(json.loads(l)["type"] == "check" and json.loads(l)["data"]["kind"] == "probe" for l in open(sys.argv[1])))' "$T/ex/sid/journal.jsonl")" 10 \
		journal_has_a_record_per_probe
	contains "$(cat "$T/ex/sid/run.log")" "state inside clone context, mode False = false" run_log_shows_trace_steps
	contains "$(cat "$T/ex/sid/run.log")" "^device-independent: no tensors, no operators, not patched" run_log_states_adaptation
	contains "$(cat "$T/ex/sid/run.log")" "^== traces against trixie: identical" run_log_states_comparison
	run 1 require_present_fails_an_absent_target "$APIPARITY" check $TARGET --env bookworm --env trixie --require-present --out "$T/rp"
}
needs bookworm trixie sid -- example_check

family_members() {
	for t in torch.autograd.grad_mode.set_grad_enabled.clone torch.autograd.grad_mode.inference_mode.clone torch.no_grad; do
		run 0 "family_member_${t##*grad_mode.}_is_consistent" "$APIPARITY" check $t --env trixie --env sid --no-official --out "$T/m"
		contains "$out" "^sid .* 10/10 +consistent$" "family_member_${t##*grad_mode.}_passes_in_sid"
	done
	run 0 anomaly_mode_checks_only_what_applies "$APIPARITY" check torch.autograd.set_detect_anomaly --env trixie --no-official --out "$T/an"
	equals "$(field "$T/an/trixie/bundle.json" 'sorted(c["name"] for c in b["checks"] if c["status"] == "NOTRUN")')" \
		"['clone-as-context-restores', 'clone-keeps-mode', 'clone-returns-same-class', 'decorates-function', 'decorates-generator', 'other-thread-unaffected']" \
		not_applicable_probes_are_notrun
	run 13 target_without_family_verifies_nothing "$APIPARITY" check torch.is_grad_enabled --env trixie --no-official --out "$T/nf"
	contains "$out" "^trixie .* unverified$" target_without_family_says_unverified
	equals "$(field "$T/nf/trixie/bundle.json" '[(c["status"], c["reason"]) for c in b["checks"]]')" \
		"[('NOTRUN', 'no-family: no spec has a member for torch.is_grad_enabled'), ('NOTRUN', 'no-opinfo: no OpInfo entry stands for torch.is_grad_enabled in the reference trixie')]" \
		no_family_and_no_opinfo_are_notrun_with_reasons
}
needs trixie sid -- family_members

summary_notes() {
	# A misspelled target everywhere: nothing verified has its own exit code.
	run 13 misspelled_target_everywhere_exits_13 "$APIPARITY" check ${TARGET/enabled/enabld} --env trixie --env sid --no-official --out "$T/typo"
	contains "$out" "^  trixie: did you mean torch\.autograd\.grad_mode\.set_multithreading_enabled" misspelled_target_gets_did_you_mean
	contains "$err" "^apiparity: check: nothing verified: " nothing_verified_is_said_once_on_stderr
	# A claimed node id that does not exist is shown under the table.
	run 0 wrong_claim_does_not_fail_the_check "$APIPARITY" check $TARGET --env trixie --out "$T/claim" \
		--claimed test/test_autograd.py::TestAutograd::test_set_multithreading_enabled_as_context_manager_and_function
	contains "$out" "^  trixie: claimed node id test/test_autograd\.py::TestAutograd::test_set_multithreading_enabled_as_context_manager_and_function: no such test at torch .*TestMultithreadAutograd" \
		wrong_claim_is_shown_in_the_summary
	# The bundle records the --env order, for the report.
	run 0 env_order_is_kept "$APIPARITY" check $TARGET --env sid --env trixie --no-official --out "$T/order"
	equals "$(field "$T/order/trixie/bundle.json" 'b["env"]["order"]'),$(field "$T/order/sid/bundle.json" 'b["env"]["order"]')" "1,0" \
		bundle_records_the_env_order
	"$APIPARITY" report "$T/order" --format json > /dev/null 2>&1
	equals "$(field "$T/order/report.json" '[e["name"] for e in b["environments"]]')" "['sid', 'trixie']" \
		report_lists_envs_in_the_order_given
}
needs trixie sid -- summary_notes

faults() {
	start=$(date +%s)
	# A mark in the environment of every process of this run tells its
	# leftovers apart from those of other runs on the machine.
	mark=$RANDOM$RANDOM
	printf '[trixie]\nchroot = trixie\nsetenv = APIPARITY_TEST_MARK=%s\n' "$mark" > "$T/mark.ini"
	run 1 crashing_and_hanging_probes_fail_the_check "$APIPARITY" check $TARGET --envs "$T/mark.ini" --env trixie --timeout 3 \
		--script "$FIX/probes/segfault.py" --script "$FIX/probes/hang.py" --script "$FIX/probes/clone-mode.py" --out "$T/f"
	took=$(( $(date +%s) - start ))
	b="$T/f/trixie/bundle.json"
	equals "$(field "$b" '[(c["name"], c["status"], c["reason"]) for c in b["checks"] if c["kind"] == "script"]')" \
		"[('script:segfault.py', 'CRASH', 'SIGSEGV'), ('script:hang.py', 'TIMEOUT', 'no result within 3 s'), ('script:clone-mode.py', 'PASS', None)]" \
		crash_is_crash_hang_is_timeout_and_next_probe_runs
	equals "$(field "$b" 'sum(c["status"] == "PASS" for c in b["checks"] if c["kind"] != "official")')" 11 family_probes_still_pass_beside_faults
	equals "$(field "$b" '[c["trace"] for c in b["checks"] if c["status"] in ("CRASH", "TIMEOUT")]')" \
		"[[{'step': 'before the crash', 'value': True}], [{'step': 'before the hang', 'value': True}]]" \
		steps_traced_before_a_crash_or_hang_are_kept
	# The hang is cut at its own 3 s timeout (the probe's measured duration,
	# not the whole check's, so machine load cannot make it pass or fail).
	hung=$(field "$b" '[c["duration_ms"] for c in b["checks"] if c["status"] == "TIMEOUT"][0]')
	[ "$hung" -ge 3000 ] && [ "$hung" -lt 6000 ] && ok hang_is_cut_at_the_timeout ||
		nok hang_is_cut_at_the_timeout "the hanging probe took ${hung} ms (check: ${took}s)"
	sleep 0.5
	equals "$(grep -ls "APIPARITY_TEST_MARK=$mark" /proc/[0-9]*/environ 2>/dev/null | wc -l)" 0 \
		no_probe_process_is_left_behind

	run 1 fake_plugin_that_patches_clone_is_inconsistent "$APIPARITY" check $TARGET --envs "$T/check.ini" --env trixie --env fake-npu --out "$T/p"
	contains "$out" "^fake-npu +3\.13\.[0-9]+ +2\.6\.[^ ]+ +fake_npu 0\.1 +npu x1 +[0-9]+/10 +inconsistent$" \
		fake_plugin_row_shows_plugin_device_and_verdict
	b="$T/p/fake-npu/bundle.json"
	equals "$(field "$b" 'b["resolution"]["patch"]["patched"], b["resolution"]["canonical"]')" \
		"(True, 'fake_npu._clone_dropping_mode')" plugin_patch_is_detected
	equals "$(field "$b" '[d for d in b["comparison"]["differences"] if d["step"] == "mode of clone, mode False"]')" \
		"[{'check': 'clone-keeps-mode', 'step': 'mode of clone, mode False', 'expected': False, 'seen': True}]" \
		differing_trace_step_is_named_with_expected_and_seen
	equals "$(field "$b" '[(d["type"], d["count"], d["names"]) for d in b["fingerprint"]["devices"] if d["type"] == "npu"]')" \
		"[('npu', 1, ['FakeNPU 910B3'])]" renamed_privateuse1_device_is_fingerprinted

	run 1 stub_state_query_is_inconsistent "$APIPARITY" check $TARGET --envs "$T/check.ini" --env trixie --env stub-state --out "$T/s"
	equals "$(field "$T/s/stub-state/bundle.json" '[d["expected"], d["seen"]] if (d := [d for d in b["comparison"]["differences"] if d["step"] == "state inside, mode True"][0]) else None')" \
		"[True, False]" stub_state_is_caught_by_the_trace
}
needs trixie -- faults

killed_midway() {
	# Killed midway (kill -9): what was measured is in the journal, whole.
	kmark=$RANDOM$RANDOM
	printf '[trixie]\nchroot = trixie\nsetenv = APIPARITY_TEST_MARK=%s\n' "$kmark" > "$T/kmark.ini"
	"$APIPARITY" check $TARGET --envs "$T/kmark.ini" --env trixie --timeout 60 \
		--script "$FIX/probes/hang.py" --out "$T/k" > /dev/null 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		[ "$(grep -c '"type": *"check"' "$T/k/trixie/journal.jsonl" 2>/dev/null)" = 10 ] && break
		sleep 0.2
	done
	sleep 0.5
	kill -KILL $pid; wait $pid 2>/dev/null
	for f in $(grep -ls "APIPARITY_TEST_MARK=$kmark" /proc/[0-9]*/environ 2>/dev/null); do
		f=${f#/proc/}; kill -KILL "${f%%/*}" 2>/dev/null
	done
	checks=$(py 'import json,sys; print(sum(json.loads(l)["type"] == "check" and json.loads(l)["data"]["kind"] == "probe" for l in open(sys.argv[1])))' "$T/k/trixie/journal.jsonl")
	equals "$checks" 10 journal_keeps_every_result_measured_before_a_kill
	[ ! -e "$T/k/trixie/bundle.json" ] && ok killed_run_writes_no_bundle_that_looks_complete \
		|| nok killed_run_writes_no_bundle_that_looks_complete
	equals "$(tail -c 1 "$T/k/trixie/journal.jsonl" | od -An -c | tr -d ' ')" '\n' journal_ends_with_a_whole_record
}
needs trixie -- killed_midway

unreachable_and_full_disk() {
	run 3 unreachable_environment_exits_3 "$APIPARITY" check $TARGET --envs "$T/check.ini" --env trixie --env gone --out "$T/u"
	contains "$err" "env gone: environment unreachable: cannot run exec prefix '/nonexistent/ssh'" unreachable_environment_is_named
	equals "$(field "$T/u/trixie/bundle.json" 'b["verdict"]')" consistent reachable_environment_is_still_measured
	equals "$(field "$T/u/gone/bundle.json" 'b["verdict"], b["error"]["kind"]')" "('unverified', 'environment unreachable')" \
		unreachable_environment_bundle_records_the_error

	# A disk that fills: an error naming the file, exit 10, and the journal
	# written so far stays.
	mkdir -p "$T/full"
	if mount -t tmpfs -o size=48k tmpfs "$T/full" 2>/dev/null; then
		head -c 40000 /dev/zero > "$T/full/ballast"
		run 10 full_disk_exits_10 "$APIPARITY" check $TARGET --env trixie --out "$T/full/out"
		contains "$err" "No space left on device" full_disk_is_reported
		lacks "$out" "consistent|evidence:" full_disk_claims_no_verdict_and_no_evidence_path
		contains "$out" "^no evidence could be written for trixie" full_disk_says_no_evidence_was_written
		umount "$T/full"
	else
		for t in exits_10 is_reported claims_no_verdict_and_no_evidence_path says_no_evidence_was_written; do
			skip "full_disk_$t" "cannot mount a tmpfs here"; done
	fi
}
needs trixie -- unreachable_and_full_disk

run 2 target_that_is_not_a_dotted_name_is_a_usage_error "$APIPARITY" check 'torch;rm -rf x'
run 2 check_without_target_is_a_usage_error "$APIPARITY" check
run 5 check_of_unknown_environment_exits_5 "$APIPARITY" check $TARGET --env a5
printf 'family: x\n' > "$T/specs-bad.yaml"; mkdir -p "$T/specs"; cp "$T/specs-bad.yaml" "$T/specs/x.yaml"
run 4 malformed_spec_is_a_config_error "$APIPARITY" check $TARGET --specs "$T/specs" --env trixie
contains "$err" "x.yaml:1: 'bind' \(name: expression\) is missing" malformed_spec_names_file_and_line
done_testing
