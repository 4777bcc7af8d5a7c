#!/bin/bash
# report, verify and docs entry on real bundles from the reference environments.
. "$(dirname "$0")/lib.sh"
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
DOCS="$TOP/tests/data/backend-docs"
# fresh SUB: a copy of the clean submission to tamper with
fresh() { rm -rf "$T/$1"; cp -a "$T/sub" "$T/$1"; }
# reseal DIR ENV: rewrite ENV's manifest, as a careful forger would
reseal() { (cd "$1/$2" && find . -type f ! -name MANIFEST.sha256 | sed 's|^\./||' | sort | xargs sha256sum > MANIFEST.sha256); }

plan 87

report_suite() {
# trixie and sid labelled as two products of the docs pages
printf '[trixie]\nchroot = trixie\nlabel = Atlas A2 (trixie)\n[sid]\nchroot = sid\nlabel = Atlas A3 (sid)\n' > "$T/envs.ini"
"$APIPARITY" check $TARGET --envs "$T/envs.ini" --env trixie --env sid --out "$T/sub" > /dev/null 2>&1
run 0 report_writes_every_format "$APIPARITY" report "$T/sub" --docs "$DOCS"
for f in report.md report.html report.json junit.xml; do
	[ -s "$T/sub/$f" ] && ok "report_writes_$f" || nok "report_writes_$f"
done
md=$(cat "$T/sub/report.md")
contains "$md" "^# API 一致性任务：$(rx $TARGET) 支持验证$" zh_title_names_the_api
for h in "验证范围" "trixie 结果" "sid 结果" "后端适配结论" "原生 API 文档支持情况" "结论"; do
	contains "$md" "^##+ $h" "zh_report_has_section_$h"
done
for e in trixie sid; do
	b="$T/sub/$e/bundle.json"
	contains "$md" "^- Python 版本: $(rx "$(field "$b" 'b["fingerprint"]["python"]["version"]')")$" ${e}_python_version_comes_from_its_fingerprint
	contains "$md" "^- torch 版本: $(rx "$(field "$b" 'b["fingerprint"]["torch"]["version"]')")$" ${e}_torch_version_comes_from_its_fingerprint
	sum=$(sha256sum "$T/sub/$e/run.log" | cut -d' ' -f1)
	contains "$md" "$e/run\.log\` sha256 \`$sum\`" ${e}_evidence_path_has_its_sha256
done
contains "$md" "^  - \`test/test_autograd\.py::TestMultithreadAutograd::test_set_multithreading_enabled_as_context_manager_and_function\` \(PyTorch 2\.6\.[^)]*\)$" \
	scope_names_the_official_node_at_its_version
contains "$md" "^  - clone 保留 mode 属性 \(clone-keeps-mode\)$" scope_states_the_focused_checks_in_words
contains "$md" "^- 上游实现位置: \`torch/autograd/grad_mode\.py:[0-9]+\` \(method\)$" adaptation_names_the_implementation
contains "$md" "文档中仅有其所属类的条目: \`torch\.autograd\.grad_mode\.set_multithreading_enabled\`" docs_entry_of_the_class_is_found
contains "$md" "^- 结论: \*\*consistent\*\*$" conclusion_states_the_verdict

run 0 english_report "$APIPARITY" report "$T/sub" --lang en --format md
en=$(cat "$T/sub/report.md")
for h in "Scope" "trixie results" "sid results" "Backend adaptation conclusion" "Native API documentation" "Conclusion"; do
	contains "$en" "^##+ $h" "en_report_has_section_${h// /_}"
done
contains "$en" "^- Consistent \(every focused check passed\) in: trixie, sid$" en_conclusion_names_environments_in_the_order_given

equals "$(py 'import sys, xml.etree.ElementTree as E; t=E.parse(sys.argv[1]); print(len(t.findall(".//testcase")))' "$T/sub/junit.xml")" \
	"$(py 'import json,sys; print(sum(len(json.load(open(p))["checks"]) for p in sys.argv[1:]))' "$T/sub/trixie/bundle.json" "$T/sub/sid/bundle.json")" \
	junit_has_a_testcase_per_check
equals "$(field "$T/sub/report.json" 'b["schema"], [e["name"] for e in b["environments"]]')" \
	"('apiparity.report/1', ['trixie', 'sid'])" report_json_is_versioned_and_keeps_the_env_order

run 0 clean_submission_is_accepted "$APIPARITY" verify "$T/sub"
contains "$out" "^## apiparity review: ACCEPT$" accept_is_markdown
run 0 accept_as_json "$APIPARITY" verify "$T/sub" --format json
equals "$(printf '%s' "$out" | py 'import json, sys; r = json.load(sys.stdin); print(r["decision"], r["findings"], r["signed"])')" \
	"ACCEPT [] False" accept_json_has_the_decision_and_no_finding
run 0 accept_as_junit "$APIPARITY" verify "$T/sub" --format junit
equals "$(printf '%s' "$out" | py 'import sys, xml.etree.ElementTree as E
t = E.fromstring(sys.stdin.read()); print(len(t.findall(".//testcase")), len(t.findall(".//failure")))')" \
	"1 0" accept_junit_is_one_passing_testcase
run 2 verify_refuses_an_unknown_format "$APIPARITY" verify "$T/sub" --format yaml

# Each way of spoiling a submission gets its own reason.
fresh byte; printf 'x' >> "$T/byte/trixie/run.log"
run 1 changed_byte_is_refused "$APIPARITY" verify "$T/byte"
contains "$out" "^- trixie/run\.log: sha256 does not match MANIFEST\.sha256 \(changed after the run\)$" changed_file_is_named

fresh gone; rm -rf "$T/gone/sid"
printf 'policy: a2-a3\nrequire_envs: [A2, A3]\nstatuses:\n  probe: [PASS]\n  official: [PASS, SKIP, NOTRUN]\n  claim: [PASS]\n' > "$T/policy.yaml"
run 1 removed_environment_is_refused "$APIPARITY" verify --policy "$T/policy.yaml" "$T/gone"
contains "$out" "^- environment A3 is required by the policy and missing$" missing_environment_is_named

# The report is evidence too: written or edited after the fact, with the top
# manifest sealed again or gone, or left from another run, it is refused.
sealtop() { (cd "$1" && ls report.md report.en.md report.html report.json junit.xml matrix.png card-*.png 2>/dev/null | xargs sha256sum > MANIFEST.sha256); }
fresh edited; sed -i 's/consistent/inconsistent/' "$T/edited/report.md"; sealtop "$T/edited"
run 1 report_edited_and_resealed_is_refused "$APIPARITY" verify "$T/edited"
contains "$out" "^- report\.md: is not the report its bundles give, with the docs entry report\.json records \(edited after it was written, or written from other evidence\): write it again with " \
	edited_report_is_named
fresh unsealed; rm "$T/unsealed/MANIFEST.sha256"
run 1 report_without_its_manifest_is_refused "$APIPARITY" verify "$T/unsealed"
contains "$out" "^- junit\.xml: a report output with no MANIFEST\.sha256 at the top \(written after the run, or cut short\)$" \
	output_without_manifest_is_named
fresh copied; cp "$T/sub/report.html" "$T/copied/"; "$APIPARITY" report "$T/copied" --format md > /dev/null
rm -rf "$T/copied/sid"; "$APIPARITY" report "$T/copied" --format json > /dev/null  # report.md and .html from trixie and sid
run 1 report_of_other_evidence_is_refused "$APIPARITY" verify "$T/copied"
contains "$out" "^- report\.html: is not the report its bundles give" report_of_other_evidence_is_named

# A picture is compared only where the same drawing would give the same
# pixels: one whose Software chunk names another drawing (a forged one, with
# an escape in it) is not shown to be the report, and says why, as data; the
# machine's own font configuration does not change the drawing.
if [ -z "$PNG_WHY" ]; then
	fresh elsewhere
	py 'import struct, sys, zlib
p = sys.argv[1]; d = open(p, "rb").read(); out = d[:8]; at = 8
while at < len(d):
    n, = struct.unpack(">I", d[at:at + 4]); kind = d[at + 4:at + 8]; body = d[at + 8:at + 8 + n]
    if kind == b"tEXt" and body.startswith(b"Software\0"):
        body = b"Software\0librsvg 9.9.9, cairo \x1b[31m"
    out += struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    at += 12 + n
open(p, "wb").write(out)' "$T/elsewhere/card-trixie.png"
	sealtop "$T/elsewhere"
	run 1 picture_drawn_elsewhere_is_not_shown_to_be_the_report "$APIPARITY" verify "$T/elsewhere"
	contains "$out" "^- card-trixie\.png: cannot be rendered again to compare \(so it is not shown to be what its bundles give\): it was drawn by librsvg 9\.9\.9, cairo \?\\\\?\[31m; this machine draws with librsvg [0-9.]+, cairo [0-9.]+, .*DejaVu Sans Mono [0-9.]+.*, which gives other pixels" \
		picture_drawn_elsewhere_names_both_drawings
	lacks "$out" "card-sid\.png" picture_drawn_here_is_compared
	printf '<?xml version="1.0"?><fontconfig><dir>/usr/share/fonts</dir><alias binding="strong"><family>monospace</family><prefer><family>DejaVu Serif</family></prefer></alias><match target="font"><edit name="antialias" mode="assign"><bool>false</bool></edit></match></fontconfig>' > "$T/fonts.conf"
	run 0 the_machines_font_configuration_is_not_the_drawings env FONTCONFIG_FILE="$T/fonts.conf" "$APIPARITY" verify "$T/sub"
else
	for t in picture_drawn_elsewhere_is_not_shown_to_be_the_report picture_drawn_elsewhere_names_both_drawings \
		 picture_drawn_here_is_compared the_machines_font_configuration_is_not_the_drawings; do
		skip $t "$PNG_WHY"
	done
fi

# A report cut short by a full disk leaves no page its manifest does not vouch for.
mkdir -p "$T/full"
if mount -t tmpfs -o size=512k tmpfs "$T/full" 2>/dev/null; then
	cp -a "$T/sub/trixie" "$T/sub/sid" "$T/full/"
	free=$(df -k "$T/full" | awk 'NR == 2 { print $4 }')
	dd if=/dev/zero of="$T/full/filler" bs=1k count=$((free - 60)) 2> /dev/null
	run 10 report_on_a_full_disk_fails "$APIPARITY" report "$T/full"
	contains "$err" "^apiparity: report: No space left on device: $T/full/report\.[a-z]+ \(what this run wrote is removed: no page is left without its manifest\)$" \
		full_disk_is_one_line
	equals "$(cd "$T/full" && ls)" "$(printf 'filler\nsid\ntrixie')" full_disk_leaves_no_page_and_no_manifest
	umount "$T/full"
else
	for t in report_on_a_full_disk_fails full_disk_is_one_line full_disk_leaves_no_page_and_no_manifest; do
		skip "$t" "cannot mount a tmpfs here"; done
fi

fresh extra; echo hi > "$T/extra/trixie/notes.txt"
run 1 extra_file_is_refused "$APIPARITY" verify "$T/extra"
contains "$out" "^- trixie/notes\.txt: unknown file, not listed in MANIFEST\.sha256$" extra_file_is_named

fresh escape; echo "$(sha256sum /etc/hostname | cut -d' ' -f1)  ../../../etc/hostname" >> "$T/escape/sid/MANIFEST.sha256"
run 1 escaping_path_is_refused "$APIPARITY" verify "$T/escape"
contains "$out" "^- sid/MANIFEST\.sha256:[0-9]+: path '\.\./\.\./\.\./etc/hostname' would leave the bundle$" escaping_path_is_named

"$APIPARITY" check $TARGET --envs "$T/envs.ini" --env trixie --out "$T/claim" \
	--claimed test/test_autograd.py::TestAutograd::test_set_multithreading_enabled_as_context_manager_and_function > /dev/null 2>&1
run 1 wrong_claim_is_refused "$APIPARITY" verify "$T/claim"
contains "$out" "^- trixie: claimed node id test/test_autograd\.py::TestAutograd::[a-z_]+: no such test at torch .*exists as test/test_autograd\.py::TestMultithreadAutograd::" \
	wrong_claim_names_the_existing_node

fresh device
py 'import json,sys; p=sys.argv[1]; b=json.load(open(p))
for d in b["fingerprint"]["devices"]:
    if d["type"] == "npu": d.update(available=True, count=1, names=["Ascend910B3"]); d.pop("reason", None)
b["env"]["device"] = "npu"
json.dump(b, open(p, "w"), indent=2)' "$T/device/trixie/bundle.json"
reseal "$T/device" trixie
run 1 fingerprint_edited_to_claim_a_device_is_refused "$APIPARITY" verify "$T/device"
contains "$out" "^- trixie: the fingerprint in bundle\.json differs from the one journaled as measured$" edited_fingerprint_is_named
# The forger's manifest is itself valid: what refused it is the journal.
(cd "$T/device/trixie" && sha256sum --quiet --strict -c MANIFEST.sha256) \
	&& ok resealed_manifest_checks_so_the_journal_is_what_refuses \
	|| nok resealed_manifest_checks_so_the_journal_is_what_refuses

# HTML escapes everything it did not write.
fresh html
py 'import json,sys; p=sys.argv[1]; b=json.load(open(p)); b["target"] = "torch.x<script>alert(1)</script>\"q\x27"
b["checks"][0]["name"] = "<img src=x onerror=alert(2)>"
json.dump(b, open(p, "w"))' "$T/html/trixie/bundle.json"  # the first environment given: the report takes the target from it
run 0 report_of_hostile_bundle "$APIPARITY" report "$T/html" --format html
html=$(cat "$T/html/report.html")
lacks "$html" "<script>alert|<img src=x" html_has_no_injected_markup
contains "$html" "&lt;script&gt;alert\(1\)&lt;/script&gt;&quot;q&#39;" html_shows_the_escaped_text

# The docs claim A3 supported; an A3 that measures inconsistent contradicts it.
printf '[trixie]\nchroot = trixie\nlabel = Atlas A2 (trixie)\n[stub]\nchroot = trixie\nlabel = Atlas A3 (stub)\nbind = %s:/mnt\nsetenv = PYTHONPATH=/mnt\n' \
	"$FIX/stub-state" > "$T/contra.ini"
"$APIPARITY" check $TARGET --envs "$T/contra.ini" --env trixie --env stub --no-official --out "$T/contra" > /dev/null 2>&1
run 0 report_with_docs_of_a_contradicted_claim "$APIPARITY" report "$T/contra" --docs "$DOCS" --lang en --format md,json
contains "$(cat "$T/contra/report.md")" "^- docs claim contradicted by measurement: Atlas A3 训练系列产品 supported, stub inconsistent$" \
	contradicted_docs_claim_is_flagged
equals "$(field "$T/contra/report.json" '[(c["product"], c["env"]) for c in b["docs"]["contradictions"]]')" \
	"[('Atlas A3 训练系列产品', 'stub')]" only_the_contradicted_product_is_flagged

# A docs page none of whose products is a measured environment: nothing was compared.
fresh other
py 'import json,sys
for p in sys.argv[1:]:
    b=json.load(open(p)); b["env"]["label"] = "Atlas 800 (" + b["env"]["name"] + ")"; json.dump(b, open(p, "w"))' "$T/other/trixie/bundle.json" "$T/other/sid/bundle.json"
run 0 report_of_envs_no_product_matches "$APIPARITY" report "$T/other" --docs "$DOCS" --lang en --format md
md_other=$(cat "$T/other/report.md")
contains "$md_other" "^- no measured environment matches a product of the page: the docs' claims were not compared" \
	docs_matching_no_env_say_nothing_was_compared
lacks "$md_other" "agree with the measurements" docs_matching_no_env_claim_no_agreement

# A bundle that does not parse is the submission's fault: CHANGES-NEEDED, with the reason.
fresh broken; printf '{"schema": ' > "$T/broken/sid/bundle.json"
run 1 unreadable_bundle_is_changes_needed "$APIPARITY" verify "$T/broken"
contains "$out" "^- sid: the bundle cannot be read, so nothing of this environment can be checked: .*sid/bundle\.json: " \
	unreadable_bundle_is_named
contains "$out" "^- trixie/|^## apiparity review: CHANGES-NEEDED$" other_environments_are_still_reviewed

# The HTML as a browser renders it (headless Chromium): a card per environment
# and the verdict.
if command -v chromium > /dev/null; then
	dom=$(timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$T/chromium" --dump-dom "file://$T/sub/report.html" 2>/dev/null)
	for e in sid trixie; do
		contains "$dom" "<section class=\"env\" data-env=\"$e\"><h3>$e 结果" rendered_dom_has_the_${e}_section
		contains "$dom" "aria-label=\"evidence card $e\".*verdict: consistent" rendered_dom_has_the_${e}_card
	done
	contains "$dom" "id=\"verdict\">结论: <strong>consistent</strong>" rendered_dom_shows_the_verdict
else
	for t in sid_section sid_card trixie_section trixie_card verdict; do
		skip rendered_dom_$t "chromium is not installed"; done
fi

# docs entry: the measured support, in the pages' format, read back by the parser;
# a member (the default target) a sub-entry inside its class's block.
run 0 docs_entry_is_written "$APIPARITY" docs entry "$T/sub"
contains "$out" "^### <code><i>class</i></code> $(rx "${TARGET%.*}")$" docs_entry_of_a_member_is_inside_its_class
contains "$out" "^> <font size=\"3\">$(rx "${TARGET##*.}")\(\)</font>$" docs_entry_of_a_member_is_a_sub_entry
contains "$out" "^- <term>Atlas A2 \(trixie\)</term>：支持$" docs_entry_lists_measured_products
}
needs trixie sid -- report_suite
done_testing
