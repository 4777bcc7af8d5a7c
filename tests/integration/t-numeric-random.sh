#!/bin/bash
# Values that differ by design are no finding: an operator whose result is
# uninitialised memory (torch.empty_like) or the random generator's
# (torch.randn) on openreg against the CPU, and each environment's CPU
# against the reference's. Upstream's own device test, TestCommon's
# test_compare_cpu, is skipped for such entries by their OpInfo ("output is
# non-deterministic"): the check quotes that, does not compare the values,
# and keeps what still agrees (both ran, neither raised). randn's OpInfo
# says nothing; its device trace shows the random operator. The CPUs draw
# alike: each side of a sample runs after the same seed.
. "$(dirname "$0")/lib.sh"
plan 7

random_and_empty() {
	run 0 empty_like_is_consistent "$APIPARITY" check torch.empty_like --env trixie-openreg --env trixie \
		--samples 1 --no-official --out "$T/e"
	b="$T/e/trixie-openreg/bundle.json"
	equals "$(field "$b" 'sorted(set((c["status"], c["reason"]) for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg" and c["sample_kind"] != "error"))')" \
		"[('NOTRUN', \"values not compared: this torch's OpInfo for empty_like skips TestCommon.test_compare_cpu (output is non-deterministic)\")]" \
		empty_like_values_are_not_compared_with_upstreams_reason
	equals "$(field "$T/e/trixie/bundle.json" 'sorted(set(c["status"] for c in b["checks"] if c["kind"] == "numeric" and c.get("across")))')" \
		"['NOTRUN']" empty_like_cpu_against_the_reference_not_compared_either
	run 0 randn_is_consistent "$APIPARITY" check torch.randn --env trixie-openreg --env trixie \
		--samples 1 --no-official --out "$T/r"
	b="$T/r/trixie-openreg/bundle.json"
	contains "$(field "$b" '"\n".join(sorted(set(c["reason"] or "" for c in b["checks"] if c["kind"] == "numeric" and c["device"] == "openreg" and c["status"] == "NOTRUN")))')" \
		"^values not compared: the device ran randn\.default, which draws from its own random generator, not the CPU's$" \
		randn_on_openreg_names_the_random_operator
	equals "$(field "$b" 'sum(1 for c in b["checks"] if c["kind"] == "numeric" and c["status"] == "FAIL")')" 0 \
		randn_has_no_failure
	# trixie's CPU against trixie-openreg's: the same torch, the same seed,
	# the same draws, although openreg's side drew between them there
	equals "$(field "$T/r/trixie/bundle.json" '(lambda a: (len(a) >= 4, set(c["status"] for c in a)))([c for c in b["checks"] if c["kind"] == "numeric" and c.get("across") == "trixie-openreg" and c["sample_kind"] != "error"])')" \
		"(True, {'PASS'})" randn_cpus_draw_alike
}
needs trixie trixie-openreg -- random_and_empty
done_testing
