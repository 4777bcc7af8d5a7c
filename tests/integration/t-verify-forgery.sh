#!/bin/bash
# verify against forged evidence, on real check output: a bundle edited alone
# and resealed, a bad journal line, a manifest line listed twice; and signed
# evidence: accepted with the trusted key, refused when the bundle and the
# journal were edited together and resealed, required by a policy.
. "$(dirname "$0")/lib.sh"
plan 47
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
# fresh FROM TO: a copy of a submission to tamper with
fresh() { rm -rf "$T/$2"; cp -a "$T/$1" "$T/$2"; }
# reseal DIR ENV: rewrite ENV's manifest with sha256sum, as a careful forger would
reseal() { (cd "$1/$2" && find . -type f ! -name 'MANIFEST.sha256*' | sed 's|^\./||' | LC_ALL=C sort \
	| xargs sha256sum > MANIFEST.sha256); }

forgeries() {
printf '[trixie]\nchroot = trixie\n[sid]\nchroot = sid\n' > "$T/envs.ini"

# A real run with a failure in both environments (the script crashes).
run 1 run_with_a_crashing_script_is_inconsistent "$APIPARITY" check $TARGET --envs "$T/envs.ini" \
	--env trixie --env sid --no-official --script "$FIX/probes/segfault.py" --out "$T/fail"
equals "$(field "$T/fail/trixie/bundle.json" '[c["status"] for c in b["checks"] if c["name"] == "script:segfault.py"], b["verdict"]')" \
	"(['CRASH'], 'inconsistent')" the_crash_is_measured

# The forgery of issue 9: CRASH made PASS, the verdict made consistent, and an
# official test that never ran added; only bundle.json is edited, then resealed.
fresh fail forged
for e in trixie sid; do
	py 'import json,sys; p=sys.argv[1]; b=json.load(open(p))
for c in b["checks"]:
    if c["name"] == "script:segfault.py": c.update(status="PASS", reason=None)
b["checks"].append({"name": "test/test_autograd.py::TestAutograd::test_forged", "kind": "official",
    "status": "PASS", "reason": None, "trace": [], "duration_ms": 12, "output": "", "reference_status": "PASS"})
b["checks"].append({"name": "test/test_autograd.py::TestAutograd::test_forged_skip", "kind": "official",
    "status": "SKIP", "reason": "forged", "trace": [], "duration_ms": 1, "output": "", "reference_status": "SKIP"})
b["verdict"] = "consistent"; b["verdict_reasons"] = []
json.dump(b, open(p, "w"), indent=2)' "$T/forged/$e/bundle.json"
	reseal "$T/forged" $e
done
run 1 bundle_forged_alone_is_refused "$APIPARITY" verify "$T/forged"
contains "$out" "^## apiparity review: CHANGES-NEEDED$" forged_bundle_review_says_changes_needed
lacks "$out" "sha256 does not match" resealed_manifest_matches_so_only_the_contents_can_tell
contains "$out" "^- trixie: check script:segfault\.py \(script\) in bundle\.json is not as journal\.jsonl recorded it when measured: status \"PASS\" here, measured \"CRASH\"" \
	status_edited_to_pass_is_named_with_the_measured_status
contains "$out" "^- sid: check script:segfault\.py \(script\)" every_forged_environment_is_named
contains "$out" "^- trixie: check test/test_autograd\.py::TestAutograd::test_forged \(official\) is PASS in bundle\.json, but journal\.jsonl has no record of it: it was never measured$" \
	official_test_that_never_ran_is_named
contains "$out" "^- trixie: official test test/test_autograd\.py::TestAutograd::test_forged is PASS, but there is no readable official\.log to show that it ran$" \
	official_result_without_official_log_is_named
contains "$out" "^- trixie: official test test/test_autograd\.py::TestAutograd::test_forged_skip is SKIP, but there is no readable official\.log to show that it ran$" \
	skipped_official_test_without_official_log_is_named
contains "$out" "^- trixie: the verdict in bundle\.json is consistent, but its measured checks make it inconsistent$" \
	verdict_is_judged_again_from_the_measured_checks

fresh fail verdict
py 'import json,sys; p=sys.argv[1]; b=json.load(open(p)); b["verdict"] = "consistent-with-limits"
json.dump(b, open(p, "w"), indent=2)' "$T/verdict/sid/bundle.json"
reseal "$T/verdict" sid
run 1 verdict_edited_alone_is_refused "$APIPARITY" verify "$T/verdict"
contains "$out" "^- sid: the verdict in bundle\.json is consistent-with-limits, but its measured checks make it inconsistent$" \
	edited_verdict_is_named

fresh fail garbage
printf 'garbage\n' >> "$T/garbage/trixie/journal.jsonl"
reseal "$T/garbage" trixie
run 1 journal_with_a_garbage_line_is_refused "$APIPARITY" verify "$T/garbage"
lines=$(wc -l < "$T/garbage/trixie/journal.jsonl")
contains "$out" "^- trixie/journal\.jsonl: line $lines: " garbage_journal_line_is_named_by_its_number

fresh fail dup
head -1 "$T/dup/sid/MANIFEST.sha256" >> "$T/dup/sid/MANIFEST.sha256"
run 1 manifest_line_listed_twice_is_refused "$APIPARITY" verify "$T/dup"
contains "$out" "^- sid/MANIFEST\.sha256:[0-9]+: [a-z.]+ is listed a second time$" duplicate_manifest_line_is_named
}
needs trixie sid -- forgeries

# Signed evidence. The keys are made here, fresh.
signed_evidence() {
openssl genpkey -algorithm ed25519 -out "$T/ci.pem" 2> /dev/null
openssl pkey -in "$T/ci.pem" -pubout -out "$T/ci.pub" 2> /dev/null
openssl genpkey -algorithm ed25519 -out "$T/other.pem" 2> /dev/null
{ echo "# the CI machines"; cat "$T/ci.pub"; } > "$T/trusted.pem"
openssl pkey -in "$T/other.pem" -pubout -out "$T/other.pub" 2> /dev/null
fpr="sha256:$(openssl pkey -in "$T/ci.pem" -pubout -outform DER 2> /dev/null | sha256sum | cut -d' ' -f1)"
# traces and statuses as the default policy has them; official tests left out (faster)
printf 'policy: ci\nstatuses:\n  probe: [PASS]\n  script: [PASS]\n  official: [PASS, SKIP, NOTRUN]\n  claim: [PASS]\n  resolution: [NOTRUN]\n  plan: [NOTRUN]\n  signature: [PASS, WARN, NOTRUN]\nrequire_kinds: [probe]\ntraces_agree: "yes"\n' \
	> "$T/ci.yaml"
{ cat "$T/ci.yaml"; printf 'require_signature: "yes"\n'; } > "$T/signed.yaml"

openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 -out "$T/rsa.pem" 2> /dev/null
run 4 check_refuses_a_key_that_is_not_ed25519_before_running "$APIPARITY" check $TARGET --envs "$T/envs.ini" \
	--env trixie --no-official --sign "$T/rsa.pem" --out "$T/rsa"
contains "$err" "rsa\.pem: key type RSA; signing needs an Ed25519 key" key_type_is_named
[ ! -e "$T/rsa" ] && ok nothing_ran_with_a_bad_key || nok nothing_ran_with_a_bad_key

run 0 signed_run_is_consistent "$APIPARITY" check $TARGET --envs "$T/envs.ini" --env trixie --env sid \
	--no-official --script "$FIX/probes/clone-mode.py" --sign "$T/ci.pem" --out "$T/signed"
equals "$(field "$T/signed/trixie/bundle.json" 'b["signer"]')" "{'algorithm': 'ed25519', 'key': '$fpr'}" \
	bundle_names_the_signer_by_the_sha256_of_its_der_public_key
base64 -d "$T/signed/trixie/MANIFEST.sha256.sig" > "$T/sig.bin"
openssl pkeyutl -verify -pubin -inkey "$T/ci.pub" -rawin -in "$T/signed/trixie/MANIFEST.sha256" \
	-sigfile "$T/sig.bin" > /dev/null 2>&1 && ok openssl_verifies_the_signature || nok openssl_verifies_the_signature
(cd "$T/signed/sid" && sha256sum -c --quiet MANIFEST.sha256) > /dev/null 2>&1 \
	&& ok sha256sum_still_checks_a_signed_manifest || nok sha256sum_still_checks_a_signed_manifest

run 0 signed_run_is_accepted_with_the_trusted_key "$APIPARITY" verify --policy "$T/ci.yaml" --trust "$T/trusted.pem" "$T/signed"
contains "$out" "^Every environment's manifest is signed by a trusted key \(1 in the trust list\)\.$" \
	accept_says_the_signatures_were_checked
run 0 signed_run_without_trust_is_accepted_as_unsigned "$APIPARITY" verify --policy "$T/ci.yaml" "$T/signed"
contains "$out" "^Unsigned: no signature was checked\." accept_without_trust_says_what_it_cannot_prove
run 1 signed_run_is_refused_with_another_key "$APIPARITY" verify --policy "$T/ci.yaml" --trust "$T/other.pub" "$T/signed"
contains "$out" "^- trixie: MANIFEST\.sha256\.sig was not made by a trusted key \(bundle\.json names the signer $fpr\)$" \
	untrusted_signer_is_named

# The forgery no consistency check can see: bundle.json and journal.jsonl
# edited together (torch version in the fingerprint), then resealed.
fresh signed together
py 'import json,sys
p = sys.argv[1] + "/bundle.json"; b = json.load(open(p)); b["fingerprint"]["torch"]["version"] = "9.9.9"
json.dump(b, open(p, "w"), indent=2)
p = sys.argv[1] + "/journal.jsonl"; recs = [json.loads(l) for l in open(p)]
for r in recs:
    if r["type"] == "fingerprint": r["data"]["torch"]["version"] = "9.9.9"
open(p, "w").write("".join(json.dumps(r) + "\n" for r in recs))' "$T/together/trixie"
reseal "$T/together" trixie
run 0 bundle_and_journal_edited_together_pass_every_consistency_check "$APIPARITY" verify --policy "$T/ci.yaml" "$T/together"
run 1 bundle_and_journal_edited_together_are_refused_with_trust "$APIPARITY" verify --policy "$T/ci.yaml" --trust "$T/trusted.pem" "$T/together"
contains "$out" "^- trixie: MANIFEST\.sha256\.sig is not a valid signature of MANIFEST\.sha256 by trusted key $fpr: the evidence changed after it was signed$" \
	broken_signature_is_named
lacks "$out" "^- sid:" untouched_environment_still_verifies

fresh signed unsigned
rm "$T/unsigned/trixie/MANIFEST.sha256.sig" "$T/unsigned/sid/MANIFEST.sha256.sig"
run 0 unsigned_run_is_accepted_by_a_policy_without_signatures "$APIPARITY" verify --policy "$T/ci.yaml" "$T/unsigned"
run 1 unsigned_run_is_refused_when_the_policy_requires_signatures "$APIPARITY" verify --policy "$T/signed.yaml" "$T/unsigned"
contains "$out" "^- the policy requires evidence signed by a trusted key: give the trusted public keys with --trust FILE$" \
	policy_asks_for_trusted_keys
run 1 unsigned_run_is_refused_with_trust "$APIPARITY" verify --policy "$T/signed.yaml" --trust "$T/trusted.pem" "$T/unsigned"
contains "$out" "^- trixie: not signed \(no MANIFEST\.sha256\.sig\): only evidence signed by a trusted key is accepted$" \
	unsigned_environment_is_named
run 4 missing_trust_file_is_a_usage_error "$APIPARITY" verify --trust "$T/nonexistent.pem" "$T/signed"

# Identity is the evidence's: sid's folder renamed bookworm, every signature
# intact, does not satisfy a policy that requires bookworm; and a label does
# not stand in for a device its fingerprint lacks.
fresh signed renamed
mv "$T/renamed/sid" "$T/renamed/bookworm"
{ cat "$T/ci.yaml"; printf 'require_envs: [bookworm]\n'; } > "$T/bookworm.yaml"
run 1 renamed_folder_is_refused_though_signed "$APIPARITY" verify --policy "$T/bookworm.yaml" --trust "$T/trusted.pem" "$T/renamed"
contains "$out" "^- bookworm: the folder is named bookworm, but its bundle is of environment sid: " \
	renamed_folder_is_named
contains "$out" "^- environment bookworm is required by the policy and missing$" \
	renamed_folder_does_not_meet_the_policy
{ cat "$T/ci.yaml"; printf 'require_facts: [{env: trixie, device: npu}, {env: sid, torch: "2"}]\n'; } > "$T/npu.yaml"
run 1 a_label_without_the_device_is_refused "$APIPARITY" verify --policy "$T/npu.yaml" --trust "$T/trusted.pem" "$T/signed"
contains "$out" "^- the policy requires an environment with \\\{env trixie, device npu\\\} \(line 12\), and none has it: .*trixie: bundle env trixie, label '[^']*'; but its fingerprint shows no 1 npu device available" \
	the_missing_device_is_named
{ cat "$T/ci.yaml"; printf 'require_facts: [{env: sid, torch: "2"}]\n'; } > "$T/sid2.yaml"
run 0 facts_the_evidence_has_are_met "$APIPARITY" verify --policy "$T/sid2.yaml" --trust "$T/trusted.pem" "$T/signed"
contains "$out" "^- requirement \\\{env sid, torch 2\\\} \(policy line 12\): met by sid \(bundle env sid, label '[^']*', fingerprint torch 2\.[0-9]+" \
	the_evidence_that_meets_a_requirement_is_said
}
if command -v openssl > /dev/null; then
	needs trixie sid -- signed_evidence
else
	while IFS= read -r name; do skip "$name" "the openssl command is not installed"; done \
		< <(count_tests signed_evidence)
fi
done_testing
