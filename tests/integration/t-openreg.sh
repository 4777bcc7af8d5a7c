#!/bin/bash
# trixie-openreg: trixie with upstream's own out-of-tree PrivateUse1 backend,
# pytorch_openreg, built in from the checked 2.6.0 test tree. Its device
# daemons are started with multiprocessing's spawn method from the process
# that first uses the device (a probe, the fingerprint's device query).
# Expected values are read from the environment and the test tree, not typed.
. "$(dirname "$0")/lib.sh"
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
TESTS_ROOT=${APIPARITY_TESTS_ROOT:-/var/cache/apiparity/tests}
EXT=cpp_extensions/open_registration_extension
sed "s|@FIX@|$FIX|g" "$FIX/openreg.ini" > "$T/openreg.ini"
plan 31

provisioned() {
	run 0 create_again_succeeds "$APIPARITY" env create trixie-openreg --suite trixie --backend openreg
	equals "$out" "$ENV_ROOT/trixie-openreg: already complete" create_again_says_already_complete
	# The stamp's digest is that of `sha256sum` over upstream's files, as the
	# test tree holds them (before -Werror is dropped).
	want=$(cd "$TESTS_ROOT/2.6.0+dfsg/test/$EXT" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum)
	contains "$(cat "$ENV_ROOT/trixie-openreg/.apiparity-env")" \
		"^backend_sha256=${want%% *}$" stamp_records_the_digest_of_the_upstream_source
	contains "$(cat "$ENV_ROOT/trixie-openreg/.apiparity-env")" \
		"^backend_source=2\.6\.0\+dfsg test/$(rx "$EXT")$" stamp_records_the_test_tree_built_from
	contains "$(cat "$ENV_ROOT/trixie-openreg/opt/apiparity/open_registration_extension/setup.py")" \
		'"-Wall"\]\},  # apiparity: -Werror dropped' built_setup_py_drops_only_werror_and_says_why
}
needs trixie-openreg -- provisioned

run 2 unknown_backend_is_a_usage_error "$APIPARITY" env create x --suite trixie --backend nope --root "$T/r"
contains "$err" "no backend 'nope' \(known: openreg\)" unknown_backend_names_the_known_ones
APIPARITY_TESTS_ROOT="$T/no-tests" run 11 backend_without_its_test_tree_fails_before_provisioning \
	"$APIPARITY" env create x --suite trixie --backend openreg --root "$T/r"
contains "$err" "2\.6\.0\+dfsg test tree, not fetched yet .*apiparity tests fetch trixie" \
	missing_test_tree_says_which_to_fetch
[ ! -e "$T/r/x" ] && [ ! -e "$T/r/.x.partial" ] && ok missing_test_tree_leaves_nothing \
	|| nok missing_test_tree_leaves_nothing "$(ls -a "$T/r" 2>&1)"

fingerprint() {
	local n
	n=$(in_chroot trixie-openreg python3 -c 'import pytorch_openreg; print(pytorch_openreg.NUM_DEVICES)' | tail -1)
	run 0 openreg_fingerprint_succeeds "$APIPARITY" env show trixie-openreg
	contains "$out" "^plugins +pytorch_openreg " plugins_row_names_the_backend_module
	contains "$out" "^devices +openreg $n x unknown$" devices_row_lists_the_openreg_devices
	contains "$out" "^  openreg +$n x unknown \(torch\.openreg has no is_available, device_count, get_device_name; count from torch\.accelerator\.device_count\(\); model: unknown\)$" \
		device_line_says_what_could_and_could_not_be_learned
}
needs trixie-openreg -- fingerprint

# A probe that uses the device, and the baseline of the gelu fixtures, in
# trixie-openreg and in one whose __main__ looks as `python3 -` makes it.
probes() {
	local b="$T/p/trixie-openreg/bundle.json" s="$T/p/openreg-stdin-main/bundle.json"
	run 0 probes_on_the_device_pass "$APIPARITY" check torch.utils.backend_registration._privateuse1_backend_name \
		--envs "$T/openreg.ini" --env trixie-openreg --env openreg-stdin-main --no-official --timeout 300 \
		--script "$FIX/probes/openreg-device.py" --script "$FIX/probes/openreg-gelu.py" --out "$T/p"
	equals "$(field "$b" '[(c["status"], c["trace"][0]["value"]) for c in b["checks"] if c["kind"] == "script"]')" \
		"[('PASS', 'openreg:0'), ('PASS', 'openreg:0')]" probe_moves_tensors_to_openreg
	equals "$(field "$b" '[c["device_trace"]["tensor_devices"].get("openreg", 0) > 0 for c in b["checks"] if c["kind"] == "script"]')" \
		"[True, True]" device_trace_sees_openreg_tensors
	equals "$(field "$b" '[s["value"] for c in b["checks"] if c["name"] == "script:openreg-gelu.py" for s in c["trace"][1:]]')" \
		"['torch.float32', '0.0e+00']" openreg_gelu_matches_the_cpu_exactly
	equals "$(field "$b" 'b["resolution"]["plugins_loaded"], b["resolution"]["patch"]["patched"], [c["what"] for c in b["resolution"]["patch"]["changes"]]')" \
		"(['pytorch_openreg'], True, ['id'])" resolution_sees_the_plugin_rename_privateuse1
	equals "$(field "$b" '[(d["available"], d["count"] > 0) for d in b["fingerprint"]["devices"] if d["type"] == "openreg"]')" \
		"[(True, True)]" check_fingerprint_lists_openreg
	# Spawn re-runs the parent's __main__ from its __file__: the worker drops
	# it, so the daemons start even where __main__ claims to be '<stdin>'.
	equals "$(field "$s" '[c["status"] for c in b["checks"] if c["kind"] == "script"]')" \
		"['PASS', 'PASS']" device_daemons_start_where_main_came_from_stdin
	equals "$(field "$s" '[d["available"] for d in b["fingerprint"]["devices"] if d["type"] == "openreg"]')" \
		"[True]" fingerprint_device_query_starts_the_daemons_too
}
needs trixie-openreg -- probes

# The README's example keeps its verdict with trixie-openreg in the set.
readme_example() {
	run 0 readme_example_with_openreg_succeeds "$APIPARITY" check $TARGET --env trixie --env trixie-openreg \
		--out "$T/ex"
	contains "$out" "^trixie-openreg +[0-9.]+ +[^ ]+ +pytorch_openreg [^ ]+ +openreg x[0-9]+ +10/10 +consistent$" \
		openreg_row_is_consistent_with_the_device
	contains "$out" "^trixie +[0-9.]+ +[^ ]+ +- +cpu +10/10 +consistent$" trixie_row_is_unchanged
}
needs trixie trixie-openreg -- readme_example

# The fault fixtures do at the torch level what they claim (their verdicts
# are the operator checks' tests): gelu of float32 on openreg against the CPU.
gelu_trace() { field "$T/f/$1/bundle.json" '[(c["status"], [s["value"] for s in c["trace"][1:]]) for c in b["checks"] if c["kind"] == "script"]'; }
faults() {
	run 1 spoiled_gelu_fixtures_run "$APIPARITY" check torch.utils.rename_privateuse1_backend \
		--envs "$T/openreg.ini" --env openreg-gelu-off --env openreg-gelu-close --no-official \
		--timeout 300 --script "$FIX/probes/openreg-gelu.py" --out "$T/f"
	equals "$(gelu_trace openreg-gelu-off)" "[('PASS', ['torch.float32', '1.0e-03'])]" gelu_off_is_off_by_1e-3
	equals "$(gelu_trace openreg-gelu-close)" "[('PASS', ['torch.float32', '1.2e-07'])]" gelu_close_is_within_float32_rtol
	run 1 wrong_gelu_fixtures_run "$APIPARITY" check torch.utils.rename_privateuse1_backend \
		--envs "$T/openreg.ini" --env openreg-gelu-dtype --env openreg-gelu-crash --no-official \
		--timeout 300 --script "$FIX/probes/openreg-gelu.py" --out "$T/f"
	equals "$(gelu_trace openreg-gelu-dtype)" "[('PASS', ['torch.float64', '0.0e+00'])]" gelu_dtype_returns_float64
	equals "$(field "$T/f/openreg-gelu-crash/bundle.json" '[(c["status"], c["reason"]) for c in b["checks"] if c["kind"] == "script"]')" \
		"[('CRASH', 'SIGABRT')]" gelu_crash_takes_the_probe_down
}
needs trixie-openreg -- faults
done_testing
