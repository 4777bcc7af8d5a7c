#!/bin/bash
# The numeric checks of operators, against backends that are wrong on
# purpose (tests/integration/fixtures/openreg-faults: upstream's openreg with
# one kernel or form spoiled, a daemon killed, a crash), and what a submitter
# relaxed (its own tolerances and limits) as verify sees it. Apart from
# t-numeric so that a mutant of the fault paths runs these alone.
. "$(dirname "$0")/lib.sh"
plan 38

# The fault fixtures (tests/integration/fixtures/openreg-faults): one sample
# per dtype, so that the tanh samples above stay out of the way.
faults() {
	sed "s|@FIX@|$FIX|g" "$FIX/openreg.ini" > "$T/openreg.ini"
	run 1 gelu_faults_are_found "$APIPARITY" check torch.nn.functional.gelu --envs "$T/openreg.ini" \
		--env trixie-openreg --env openreg-gelu-off --env openreg-gelu-crash \
		--env openreg-gelu-daemon-killed --env openreg-gelu-close --env openreg-gelu-dtype \
		--samples 1 --no-official --out "$T/f1"
	contains "$(sed -n '/^ENV/,/^$/p' <<<"$out")" "^trixie-openreg .* consistent$" baseline_openreg_is_consistent_with_one_sample_each
	# upstream's openreg itself: gelu of int64 and bool (which gelu's OpInfo
	# does not claim, and the CPU refuses) raise inside the device daemon,
	# which does not catch it and exits (the host would wait forever): the
	# built-in limit openreg-device-errors, and the CPU's part stands
	notpass='sorted(set((c["status"], c.get("form") or c["sample_kind"]) for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg" and c["status"] not in ("PASS", "NOTRUN")))'
	equals "$(field "$T/f1/trixie-openreg/bundle.json" 'sorted((c["status"], c["dtype"], c["limit"]["name"], c["limit"]["message"]) for c in b["checks"] if c["kind"] == "numeric" and c["sample_kind"] == "dtype")')" \
		"[('NOTRUN', 'bool', 'openreg-device-errors', 'exited with status 1 where the CPU raised RuntimeError'), ('NOTRUN', 'int64', 'openreg-device-errors', 'exited with status 1 where the CPU raised RuntimeError')]" \
		a_daemon_that_exits_where_the_cpu_raised_is_the_openreg_limit
	equals "$(field "$T/f1/openreg-gelu-off/bundle.json" 'sorted(c["status"] for c in b["checks"] if c["kind"] == "numeric" and c["sample_kind"] == "dtype" and c["against"] == "cpu" and c["device"] == "cpu")')" \
		"['PASS', 'PASS']" the_cpu_part_of_a_sample_lost_on_the_device_is_still_compared
	contains "$out" "^  openreg-gelu-off: check nn\.functional\.gelu float32 sample#0 openreg vs cpu: FAIL: out\[0\]: [0-9]+ of 100 elements out of tolerance \(first at [0-9]+\): max_abs [0-9.e-]+, max_rel 0\.001, [0-9.]+x the allowance of rtol 1\.3e-06 atol 1e-05 \(default\)$" \
		off_is_inconsistent_naming_gelu_sample_dtype_and_errors
	equals "$(field "$T/f1/openreg-gelu-off/bundle.json" 'b["verdict"], sorted(c["dtype"] for c in b["checks"] if c["status"] == "FAIL")')" \
		"('inconsistent', ['float32', 'float32'])" off_fails_float32_only
	# the spoiled kernel is aten::gelu's: its out= form (gelu.out) is right
	equals "$(field "$T/f1/openreg-gelu-off/bundle.json" "$notpass")" \
		"[('FAIL', 'noncontiguous'), ('FAIL', 'sample')]" off_fails_the_forms_it_spoils
	crashed="[('CRASH', 'float32'), ('CRASH', 'float32'), ('CRASH', 'float32'), ('NOTRUN', 'bool'), ('NOTRUN', 'int64'), ('PASS', '-'), ('PASS', 'bfloat16'), ('PASS', 'bfloat16'), ('PASS', 'bfloat16'), ('PASS', 'float16'), ('PASS', 'float16'), ('PASS', 'float16'), ('PASS', 'float64'), ('PASS', 'float64'), ('PASS', 'float64')]"
	equals "$(field "$T/f1/openreg-gelu-crash/bundle.json" 'sorted((c["status"], c["dtype"] or "-") for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg")')" \
		"$crashed" crash_is_crash_for_that_sample_and_keeps_the_others
	# a daemon killed mid-sample: noticed (not waited out), the rest run
	equals "$(field "$T/f1/openreg-gelu-daemon-killed/bundle.json" 'sorted((c["status"], c["dtype"] or "-") for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg")')" \
		"$crashed" daemon_killed_is_crash_for_that_sample_and_the_rest_run
	contains "$out" "^  openreg-gelu-daemon-killed: check nn\.functional\.gelu float32 sample#0 openreg vs cpu: CRASH: the sample was lost: the device's daemon died of SIGKILL; the runner, waiting on it, was stopped$" \
		daemon_killed_names_the_daemon_and_its_signal
	contains "$out" "^  openreg-gelu-crash: check nn\.functional\.gelu float32 sample#0 openreg vs cpu: CRASH: the sample was lost: SIGABRT$" \
		crash_names_the_signal
	contains "$(cat "$T/f1/openreg-gelu-crash/numeric.log")" "^openreg-gelu-crash: device [0-9] lost its daemon$" \
		crash_keeps_what_the_runner_said_in_numeric_log
	contains "$(cat "$T/f1/openreg-gelu-crash/MANIFEST.sha256")" "^[0-9a-f]{64}  numeric\.log$" \
		numeric_log_is_in_the_manifest
	# openreg's daemon says why it exited (the dtype samples): kept as data
	contains "$(cat "$T/f1/trixie-openreg/numeric.log")" "^RuntimeError: \"GeluKernelImpl\" not implemented for 'Long'$" \
		a_daemons_last_words_are_kept_in_numeric_log
	contains "$out" "^openreg-gelu-close .* consistent$" close_is_consistent
	equals "$(field "$T/f1/openreg-gelu-close/bundle.json" '[m["max_rel"] > 0 for c in b["checks"] if c["status"] == "PASS" and c.get("dtype") == "float32" and c.get("device") == "openreg" and c.get("form") is None for m in c["measurements"] if m["output"] == "out[0]"]')" \
		"[True]" close_measures_the_small_error
	contains "$out" "^openreg-gelu-dtype .* inconsistent$" dtype_is_inconsistent
	# The float32 sample fails on its output's dtype, not by a timeout (the
	# fixture's backward takes the float64 grad_output: see its module), and
	# only float32 samples fail: its out= form, given the float64 out its
	# wrong result asks for, kills openreg's daemon (a CRASH of the fault).
	contains "$out" "^  openreg-gelu-dtype: check nn\.functional\.gelu float32 sample#0 openreg vs cpu: FAIL: out\[0\]: dtype float64, expected float32$" \
		dtype_names_the_dtype_mismatch
	equals "$(field "$T/f1/openreg-gelu-dtype/bundle.json" 'sorted(set((c["status"], c["dtype"] or "-") for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg" and c["sample_kind"] != "dtype"))')" \
		"[('CRASH', 'float32'), ('FAIL', 'float32'), ('PASS', '-'), ('PASS', 'bfloat16'), ('PASS', 'float16'), ('PASS', 'float64')]" \
		dtype_fails_float32_samples_only
	equals "$(field "$T/f1/openreg-gelu-dtype/bundle.json" '[(m["output"], m["dtype"], m["dtype_expected"], m["dtype_match"]) for c in b["checks"] if c["status"] == "FAIL" and c.get("form") is None for m in c["measurements"]]')" \
		"[('out[0]', 'float64', 'float32', False), ('grad[0]', 'float32', 'float32', True)]" \
		dtype_measures_the_output_dtype_and_a_right_gradient
}
needs trixie-openreg -- faults

# Every form of a sample (fixture openreg_neg_faults: neg wrong in four
# forms, one fault each): each fault fails its own form and no other, naming
# it; the clean backend passes them all. The limit is generous (a bound on a
# hang: neg's float64 reference sample moves 8 MB through openreg's pipe each
# way), the derived one cuts it.
forms() {
	sed "s|@FIX@|$FIX|g" "$FIX/openreg.ini" > "$T/openreg.ini"
	run 1 neg_in_every_form "$APIPARITY" check torch.neg --envs "$T/openreg.ini" --timeout 300 \
		--env trixie-openreg --env openreg-neg-faults --samples 1 --no-official --out "$T/n1"
	equals "$(field "$T/n1/trixie-openreg/bundle.json" "b['verdict'], [(c['name'], c['reason']) for c in b['checks'] if c['kind'] == 'numeric' and c['status'] not in ('PASS', 'NOTRUN')]")" \
		"('consistent', [])" clean_openreg_passes_neg_in_every_form
	equals "$(field "$T/n1/trixie-openreg/bundle.json" 'sorted(set(c.get("form") or "-" for c in b["checks"] if c["kind"] == "numeric" and c["status"] == "PASS"))')" \
		"['-', 'inplace', 'method', 'noncontiguous', 'out']" each_form_of_neg_runs
	# what failed, by form (or kind) and dtype: every float and int dtype
	# fails in each spoiled form, bool in its dtype sample (and the error
	# input that is bool too); the method, and the function on contiguous
	# inputs, never
	b="$T/n1/openreg-neg-faults/bundle.json"
	equals "$(field "$b" 'sorted(set(c.get("form") or c["sample_kind"] for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg" and c["status"] not in ("PASS", "NOTRUN")))')" \
		"['dtype', 'error', 'inplace', 'noncontiguous', 'out']" each_fault_fails_its_own_form_only
	equals "$(field "$b" 'sorted(set(c["status"] for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg" and c.get("form") in (None, "method") and c["sample_kind"] in ("sample", "reference")))')" \
		"['PASS']" the_function_and_the_method_stay_right
	for f in noncontiguous out inplace; do
		equals "$(field "$b" "sorted(set(c['status'] for c in b['checks'] if c['kind'] == 'numeric' and c['device'] == 'openreg' and c.get('form') == '$f' and c['dtype'] == 'float32' and c['sample_kind'] == 'sample' and c['sample_index'] == 0))")" \
			"['FAIL']" "the_${f}_fault_fails_its_form"
	done
	contains "$out" "^  openreg-neg-faults: check neg float32 sample#0 inplace openreg vs cpu: FAIL: out\[0\]: [0-9]+ of [0-9]+ elements out of tolerance" \
		the_failure_names_the_form
	contains "$(field "$b" '[c["status"] + ": " + c["reason"] for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg" and c["sample_kind"] == "dtype"][0]')" \
		"^FAIL: dtype bool, which OpInfo does not claim for neg: did not raise on openreg, raised RuntimeError on cpu " \
		the_dtype_failure_names_the_dtype_and_the_claim
	contains "$(sed -n '/^ENV/,/^$/p' <<<"$out")" "^openreg-neg-faults .* inconsistent$" the_faulty_backend_is_inconsistent
}
needs trixie-openreg -- forms

# What the submitter relaxed is evidence about the submitter: a tolerance
# file that loosens every operator to 1e300 turns the device that is 205x out
# of tolerance consistent, and a limits file of its own excuses a failure the
# built-in limits do not; verify names both, with what the defaults give, and
# a policy that accepts them by value lets them pass.
relaxed() {
	sed "s|@FIX@|$FIX|g" "$FIX/openreg.ini" > "$T/openreg.ini"
	printf '[everything]\nop = *\ndtype = *\ndevice = *\nrtol = 1e300\natol = 1e300\nreason = it fails otherwise\n' > "$T/loose.ini"
	# the submitter's own limit, then the built-in ones (a limits file
	# replaces them: openreg's daemon errors would crash otherwise)
	{ printf '[gelu-float32]\nbackend = openreg\nop = *\nwhat = float32 gelu\nraises = RuntimeError: not implemented for float32\nreason = the device has no float32 gelu\n\n'
	  cat "$TOP/specs/backend-limits.ini"; } > "$T/excuse.ini"
	run 0 a_1e300_tolerance_hides_the_205x_device "$APIPARITY" check torch.nn.functional.gelu --envs "$T/openreg.ini" \
		--env openreg-gelu-off --env openreg-gelu-raise --samples 1 --no-official \
		--tolerances "$T/loose.ini" --limits "$T/excuse.ini" --out "$T/r"
	contains "$out" "^openreg-gelu-off .* consistent$" the_submitters_tolerance_made_it_consistent
	contains "$out" "^  openreg-gelu-raise: 3 samples not run on openreg, known limit gelu-float32 \(float32 gelu\): the device has no float32 gelu$" \
		the_submitters_limit_excused_the_raise
	sed 's/^require_official: .*/require_official: "no"/' "$TOP/policies/default.yaml" > "$T/policy.yaml"
	run 1 verify_refuses_what_the_submitter_relaxed "$APIPARITY" verify "$T/r" --policy "$T/policy.yaml"
	contains "$out" "^- openreg-gelu-off: [0-9]+ measurements judged with rtol 1e\+300 atol 1e\+300 \($(rx "$T")/loose\.ini:1: it fails otherwise\), looser than the built-in tolerance and than any the policy accepts; under the dtype's default, 2 FAIL: nn\.functional\.gelu float32 sample.{1,2}0 openreg vs cpu out.{1,2}0.{1,2} \([0-9]+ elements, 2[0-9][0-9]x the allowance\); nn\.functional\.gelu float32 sample.{1,2}0 noncontiguous openreg vs cpu out.{1,2}0.{1,2} \([0-9]+ elements, 2[0-9][0-9]x the allowance\)$" \
		the_loose_tolerance_is_named_with_the_default_verdict
	contains "$out" "^- openreg-gelu-raise: check nn\.functional\.gelu float32 sample.{1,2}0 openreg vs cpu: excused as NOTRUN by limit gelu-float32 \($(rx "$T")/excuse\.ini:1\), which neither the built-in limits nor the policy accept; without it the check FAILs: openreg raised RuntimeError \(gelu is not implemented for float32 on this device\) where the CPU raised nothing$" \
		the_submitters_limit_is_named_with_the_failure
	{ grep -v '^accept_\(tolerances\|limits\):' "$T/policy.yaml"; printf 'accept_tolerances:\n  - {op: torch.nn.functional.gelu, dtype: "*", device: "*", rtol: "1e300", atol: "1e300"}\naccept_limits:\n  - {backend: openreg, op: torch.nn.functional.gelu, raises: "RuntimeError: not implemented for float32"}\n'; } > "$T/accepting.yaml"
	run 0 a_policy_that_accepts_them_by_value_passes "$APIPARITY" verify "$T/r" --policy "$T/accepting.yaml"
}
needs trixie-openreg -- relaxed

done_testing
