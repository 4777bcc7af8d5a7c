#!/bin/bash
# Signatures compared across environments: every callable target gets a
# "signature" check; a difference at the same torch release is an
# inconsistency (a plugin changed the API), at another release a stated limit.
. "$(dirname "$0")/lib.sh"
sed "s|@FIX@|$FIX|g" "$FIX/check.ini" > "$T/check.ini"
plan 39

# sig CHECK-DIR ENV EXPR - a value of ENV's signature check, by Python
# expression on c (the check).
sig() { field "$1/$2/bundle.json" "[($3) for c in b['checks'] if c['kind'] == 'signature'][0]"; }

# Targets no family covers are verified by their signature now.
no_family_targets() {
	run 0 builtin_without_family_is_verified_by_its_signature "$APIPARITY" check torch._C._is_multithreading_enabled \
		--env trixie --env sid --no-official --out "$T/mt"
	contains "$out" "^trixie .* consistent$" reference_row_is_consistent
	contains "$out" "^sid .* consistent$" sid_row_is_consistent
	lacks "$out" "no probe applies" nothing_says_no_probe_applies
	equals "$(sig "$T/mt" sid 'c["status"], c["signature"]["reference"], c["signature"]["source"], c["signature"]["differences"]')" \
		"('PASS', 'trixie', 'inspect', [])" sid_signature_is_compared_with_trixie
	equals "$(sig "$T/mt" trixie 'c["status"], c["signature"]["compared"]')" "('PASS', ['sid'])" \
		reference_names_what_was_compared_with_it
	equals "$(field "$T/mt/sid/bundle.json" '[(p["name"], p["kind"]) for p in b["resolution"]["signature_data"]["overloads"][0]["params"]], b["resolution"]["signature"]')" \
		"([], '_is_multithreading_enabled()')" signature_data_is_in_the_resolution
	contains "$(cat "$T/mt/sid/run.log")" "^== check signature \(signature\): PASS" run_log_shows_the_signature_check

	run 0 context_manager_class_is_verified_by_its_signature "$APIPARITY" check torch.autograd.forward_ad.dual_level \
		--env trixie --env sid --no-official --out "$T/dl"
	contains "$out" "^sid .* consistent$" class_target_is_consistent_in_sid

	# A builtin operator without a Python signature: its aten schemas.
	run 0 operator_schemas_are_compared "$APIPARITY" check torch.Tensor.index_add_ --env trixie --env sid --no-official --samples 1 --out "$T/ia"
	equals "$(sig "$T/ia" sid 'c["status"], c["signature"]["source"]')" "('PASS', 'schema')" \
		builtin_method_signature_comes_from_its_schema
	equals "$(field "$T/ia/trixie/bundle.json" 'b["resolution"]["signature_data"]["op"], [(p["name"], p["kind"], p.get("default")) for p in b["resolution"]["signature_data"]["overloads"][0]["params"]][-1]')" \
		"('aten::index_add_', ('alpha', 'keyword-only', 1))" schema_parameters_have_kinds_and_defaults

	# Annotations differ between Python 3.13 and 3.14 (Sequence[int] and
	# collections.abc.Sequence[int]); they are not compared.
	run 0 annotation_text_is_not_a_difference "$APIPARITY" check torch.nn.AdaptiveLogSoftmaxWithLoss \
		--env trixie --env sid --no-official --samples 1 --out "$T/an"
	equals "$(sig "$T/an" sid 'c["status"]')" PASS annotation_only_change_passes
}
needs trixie sid -- no_family_targets

# torch 2.14 added a keyword-only bias to GroupNorm: a stated limit.
other_release() {
	run 0 change_at_another_release_is_not_a_failure "$APIPARITY" check torch.nn.GroupNorm --env trixie --env sid --no-official --samples 1 --out "$T/gn"
	contains "$out" "^sid .* consistent-with-limits$" sid_is_consistent_with_limits
	contains "$out" "^  sid: signature: differs from trixie's at another torch release \(2\.14\.[^ ]+ here\): parameter 'bias' added \(keyword-only, default true\) \(a limit: another torch release\)$" \
		limit_names_the_added_parameter
	equals "$(sig "$T/gn" sid 'c["status"], c["signature"]["same_torch"], [(d["what"], d["param"]) for d in c["signature"]["differences"]]')" \
		"('WARN', False, [('added', 'bias')])" bundle_holds_the_difference
	"$APIPARITY" report "$T/gn" --lang en > /dev/null 2>&1
	contains "$(cat "$T/gn/report.md")" "^- sid \(inspect\): .*: WARN, another torch release than trixie: a difference is a stated limit$" \
		report_states_the_limit
	contains "$(cat "$T/gn/report.md")" "^  - parameter 'bias' added \(keyword-only, default true\)$" report_lists_the_difference
	equals "$(field "$T/gn/report.json" '[(g["env"], g["status"], len(g["differences"] or [])) for g in b["signatures"]]')" \
		"[('trixie', 'PASS', 0), ('sid', 'WARN', 1)]" report_json_has_the_signatures
	contains "$(cat "$T/gn/report.html")" "<li>parameter &#39;bias&#39; added \(keyword-only, default true\)</li>" \
		html_lists_the_difference_escaped
	"$APIPARITY" report "$T/gn" > /dev/null 2>&1
	contains "$(cat "$T/gn/report.md")" "^## 签名比较$" zh_report_has_the_signature_section

	# verify judges the signature check again from the journaled resolutions.
	run 1 verify_still_asks_for_probes "$APIPARITY" verify "$T/gn"
	lacks "$out" "signature" honest_signature_checks_pass_review
	py 'import json, sys
p = sys.argv[1]; b = json.load(open(p))
for c in b["checks"]:
    if c["kind"] == "signature": c["status"] = "PASS"; c["reason"] = None; c["signature"]["differences"] = []
b["verdict"] = "consistent"; b["verdict_reasons"] = []
json.dump(b, open(p, "w"))' "$T/gn/sid/bundle.json"
	(cd "$T/gn/sid" && grep -v ' bundle.json$' MANIFEST.sha256 > M && sha256sum bundle.json >> M && mv M MANIFEST.sha256)
	run 1 forged_signature_check_is_refused "$APIPARITY" verify "$T/gn"
	contains "$out" "sid: the signature check in bundle.json is not the one the measured resolutions give" \
		verify_names_the_forged_signature_check
}
needs trixie sid -- other_release

# The fixture plugin changes hardtanh's default and renames leaky_relu's
# parameter, at trixie's own torch: inconsistent, naming the parameter.
plugin_changes() {
	run 1 changed_default_is_inconsistent "$APIPARITY" check torch.nn.functional.hardtanh --envs "$T/check.ini" \
		--env trixie --env sig-plugin --no-official --samples 1 --out "$T/ht"
	contains "$out" "^sig-plugin .* sig_plugin 0\.1 .* inconsistent$" plugin_row_is_inconsistent
	equals "$(field "$T/ht/sig-plugin/bundle.json" '[r for r in b["verdict_reasons"] if r.startswith("check signature")]')" \
		"[\"check signature: FAIL: differs from trixie's at the same torch release ($(field "$T/ht/sig-plugin/bundle.json" 'b["fingerprint"]["torch"]["version"]') here): default of 'max_val' changed: 1.0 -> 2.0\"]" \
		reason_names_the_parameter_and_both_defaults
	contains "$out" "^trixie .* consistent$" reference_stays_consistent
	equals "$(sig "$T/ht" sig-plugin '[(d["what"], d["param"], d["expected"], d["seen"]) for d in c["signature"]["differences"]]')" \
		"[('default', 'max_val', '1.0', '2.0')]" bundle_records_expected_and_seen_default
	contains "$(cat "$T/ht/sig-plugin/run.log")" "^   differs: default of 'max_val' changed: 1\.0 -> 2\.0$" \
		run_log_lists_the_difference

	run 1 renamed_parameter_is_inconsistent "$APIPARITY" check torch.nn.functional.leaky_relu --envs "$T/check.ini" \
		--env trixie --env sig-plugin --no-official --samples 1 --out "$T/lr"
	contains "$(field "$T/lr/sig-plugin/bundle.json" '"\n".join(b["verdict_reasons"])')" \
		"^check signature: FAIL: .*parameter 'negative_slope' renamed to 'slope'$" reason_names_the_renamed_parameter
}
needs trixie -- plugin_changes

# Where the target is absent, it has no signature; compared with nothing,
# the reference's signature verifies nothing, and is not a check.
absent_elsewhere() {
	run 13 signature_compared_with_nothing_verifies_nothing "$APIPARITY" check torch._C._is_multithreading_enabled \
		--env bookworm --env trixie --no-official --out "$T/bw"
	equals "$(field "$T/bw/trixie/bundle.json" '[c["kind"] for c in b["checks"] if c["kind"] == "signature"]')" "[]" \
		lone_reference_gets_no_signature_check
	equals "$(field "$T/bw/bookworm/bundle.json" '[c["kind"] for c in b["checks"]]')" "['resolution']" \
		absent_target_gets_no_signature_check
}
needs bookworm trixie -- absent_elsewhere

done_testing
