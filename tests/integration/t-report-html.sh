#!/bin/bash
# The page and the pictures a reviewer looks at: report.html as headless
# Chromium renders it (DOM and a 1280 px screenshot), the PNG evidence cards and
# matrix, the report's manifest, and verify's JSON and JUnit, on a real
# submission with one unverified and one inconsistent environment.
. "$(dirname "$0")/lib.sh"
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
DOM="$TOP/tests/tools/report-dom.py"
PNG="$TOP/tests/tools/png.py"
# Chromium's window: 1280 px wide, and the first screen 800 px high.
WIDTH=1280 HEIGHT=800

plan 50

# browser OUT ARG... - headless Chromium with a profile of its own, killed
# (its whole process group, by timeout) if it hangs; anything still running
# from that profile afterwards is killed by its pid.
browser() {
	local out=$1; shift
	mkdir -p "$T/profile"
	timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-extensions --hide-scrollbars --force-device-scale-factor=1 \
		--user-data-dir="$T/profile" "$@" > "$out" 2> "$T/browser.err"
	local rc=$? pid
	for pid in $(pgrep -f -- "--user-data-dir=$T/profile"); do kill -9 "$pid" 2>/dev/null; done
	return $rc
}

# Why Chromium cannot be used here, or nothing when it can: it must be
# installed and dump the DOM of a trivial page.
browser_unusable() {
	command -v chromium > /dev/null || { echo "chromium is not installed"; return; }
	printf '<!DOCTYPE html><p id="x">ok</p>' > "$T/probe.html"
	browser "$T/probe.dom" --dump-dom "file://$T/probe.html" && grep -q 'id="x">ok<' "$T/probe.dom" \
		|| echo "chromium cannot start: $(grep -v -e dbus -e '^$' "$T/browser.err" | tail -1)"
}

# first_screen SHOT NAME - passes when the matrix's frame ($frame) is whole
# in the screenshot: found, ending above its last row and left of its last
# column, its bottom edge drawn across (not cut off by the fold).
first_screen() {
	local x0 y0 x1 y1 span
	read -r x0 y0 x1 y1 <<< "$("$PYTHON" "$PNG" bbox "$1" "$frame")"
	span=$("$PYTHON" "$PNG" rowspan "$1" "$frame" "${y1:-0}")
	if [ "$x0" != none ] && [ "${y1:-$HEIGHT}" -lt $((HEIGHT - 1)) ] && [ "${x1:-$WIDTH}" -lt $((WIDTH - 1)) ] &&
	   [ "${span:-0}" -ge $(( (x1 - x0) * 9 / 10 )) ]; then
		ok "$2"
	else
		nok "$2" "frame box: $x0 $y0 $x1 $y1, bottom row span $span"
	fi
}

# The cells the matrix must have, from the bundles themselves: a cell per
# check (of any kind, in any environment) and environment, with the class of
# its status there, st-none where that environment has no such check.
expected_cells() {
	py 'import json, sys
cls = {"PASS": "st-pass", "FAIL": "st-fail", "ERROR": "st-error", "CRASH": "st-crash",
       "TIMEOUT": "st-timeout", "WARN": "st-warn", "NOTRUN": "st-notrun", "SKIP": "st-skip"}
envs = {p.split("/")[-2]: {(c["kind"], c["name"]): c["status"] for c in json.load(open(p))["checks"]}
        for p in sys.argv[1:]}
keys = {k for checks in envs.values() for k in checks}
for kind, name in sorted(keys):
    for e, checks in sorted(envs.items()):
        st = checks.get((kind, name))
        print("cell", kind, name, e, cls.get(st, "st-other") if st else "st-none")' "$@"
}

# The pictures (not in a build without them: make PNG=0).
pictures() {
for f in matrix.png card-bookworm.png card-trixie.png card-stub.png; do
	contains "$report_out" "^$(rx "$T/sub/$f")$" "report_names_$f"
done
equals "$(cut -d' ' -f3 "$T/sub/MANIFEST.sha256" | grep -c '\.png$')" 4 manifest_lists_every_png

# The PNG cards: they decode, are the size of the SVG card of the page, show
# the verdict in its colour (unverified in neither consistent's nor
# inconsistent's), carry the card's text, and are the SVG of the page drawn.
"$PYTHON" "$DOM" "$T/sub/report.html" > "$T/page"
for e in bookworm trixie stub; do
	png="$T/sub/card-$e.png"
	equals "$("$PYTHON" "$PNG" size "$png")" "$(grep "^card-size $e " "$T/page" | cut -d' ' -f3-)" \
		card_${e}_png_has_the_size_of_its_svg
	got="" want=""
	while read -r _ _ x y w h fill; do
		got="$got $("$PYTHON" "$PNG" pixel "$png" $((x + 2)) $((y + h / 2)))" want="$want ${fill#\#}"
	done < <(grep "^verdict-rect $e " "$T/page")
	equals "$got" "$want" card_${e}_png_shows_the_verdict_in_its_colour
	equals "$("$PYTHON" "$PNG" text "$png" Description)" "$(grep "^card $e " "$T/page" | cut -d' ' -f3-)" \
		card_${e}_png_text_is_the_svg_cards_text
done
colour() { "$PYTHON" "$PNG" pixel "$T/sub/card-$1.png" 3 50; }
[ "$(colour bookworm)" != "$(colour trixie)" ] && [ "$(colour bookworm)" != "$(colour stub)" ] \
	&& ok unverified_card_is_neither_consistent_green_nor_inconsistent_red \
	|| nok unverified_card_is_neither_consistent_green_nor_inconsistent_red "$(colour bookworm)"
if command -v rsvg-convert > /dev/null; then
	py 'import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<svg class=\"card\"[^>]*evidence card bookworm\".*?</svg>", s, re.S)
open(sys.argv[2], "w", encoding="utf-8").write(m.group(0))' "$T/sub/report.html" "$T/card.svg"
	rsvg-convert "$T/card.svg" -o "$T/card-ref.png"
	equals "$("$PYTHON" "$PNG" same "$T/sub/card-bookworm.png" "$T/card-ref.png")" same \
		card_png_is_the_pages_svg_card_drawn
else
	skip card_png_is_the_pages_svg_card_drawn "rsvg-convert is not installed (librsvg2-bin)"
fi
for st in 1a7f37 cf222e 9a6700; do
	lacks "$("$PYTHON" "$PNG" bbox "$T/sub/matrix.png" "$st")" "^none$" matrix_png_has_cells_of_colour_$st
done


# Where librsvg cannot be loaded (an empty file in its place first on the
# library path): report says so in one line, with the code of results it
# could not write; verify says the pictures cannot be drawn again to
# compare, not that they are another report.
mkdir -p "$T/nolib" && : > "$T/nolib/librsvg-2.so.2"
py 'import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])' "$T/sub" "$T/nodraw"
run 1 verify_without_the_drawing_library_is_changes_needed env LD_LIBRARY_PATH="$T/nolib" "$APIPARITY" verify "$T/nodraw"
contains "$out" "^- matrix\.png: cannot be rendered again to compare \(so it is not shown to be what its bundles give\): the drawing library cannot be loaded: .*librsvg-2\.so\.2: file too short$" \
	verify_without_the_drawing_library_says_so
run 10 report_without_the_drawing_library_is_an_io_error env LD_LIBRARY_PATH="$T/nolib" "$APIPARITY" report "$T/nodraw"
contains "$err" "^apiparity: report: .*png: the drawing library cannot be loaded: .*file too short$" \
	report_without_the_drawing_library_says_so_in_a_line
}

html_suite() {
printf '[bookworm]\nchroot = bookworm\n[trixie]\nchroot = trixie\nlabel = Atlas A2 (trixie)\n[stub]\nchroot = trixie\nlabel = Atlas A3 (stub)\nbind = %s:/mnt\nsetenv = PYTHONPATH=/mnt\n' \
	"$FIX/stub-state" > "$T/envs.ini"
"$APIPARITY" check $TARGET --envs "$T/envs.ini" --env bookworm --env trixie --env stub --no-official \
	--out "$T/sub" > /dev/null 2>&1
run 0 report_writes_the_page_and_the_pictures "$APIPARITY" report "$T/sub"
contains "$out" "^$(rx "$T/sub/report.html")$" "report_names_report.html"
(cd "$T/sub" && sha256sum --quiet --strict -c MANIFEST.sha256 > /dev/null 2>&1) \
	&& ok report_manifest_checks_with_sha256sum || nok report_manifest_checks_with_sha256sum
py 'import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])' "$T/sub" "$T/en"
"$APIPARITY" report "$T/en" --lang en --format html > /dev/null
report_out=$out
unless "$PNG_WHY" -- pictures
# The page as Chromium renders it.
why=$(browser_unusable)
if [ -z "$why" ]; then
	browser "$T/dom.html" --dump-dom "file://$T/sub/report.html"
	"$PYTHON" "$DOM" "$T/dom.html" > "$T/dom"
	browser "$T/dom-en.html" --dump-dom "file://$T/en/report.html"
	"$PYTHON" "$DOM" "$T/dom-en.html" > "$T/dom-en"
	dom=$(cat "$T/dom")
	contains "$dom" "^banner inconsistent banner v-inconsistent$" dom_banner_shows_the_verdict
	equals "$(grep '^cell ' "$T/dom" | sort)" \
		"$(expected_cells "$T/sub/bookworm/bundle.json" "$T/sub/trixie/bundle.json" "$T/sub/stub/bundle.json" | sort)" \
		dom_matrix_has_a_cell_per_check_and_env_with_its_status_class
	contains "$dom" "^column bookworm v-unverified -$" dom_unverified_column_is_not_green
	contains "$dom" "^column trixie v-consistent ref$" dom_reference_column_is_marked
	equals "$(grep '^h2 ' "$T/dom" | cut -d' ' -f2- | paste -sd'|')" \
		"检查矩阵|验证范围|证据卡片|签名比较|后端适配结论|原生 API 文档支持情况|结论|轨迹对比" dom_headings_are_chinese_by_default
	equals "$(grep '^h2 ' "$T/dom-en" | cut -d' ' -f2- | paste -sd'|')" \
		"Check matrix|Scope|Evidence cards|Signatures|Backend adaptation conclusion|Native API documentation|Conclusion|Traces" \
		dom_headings_are_english_with_lang_en
	contains "$dom" "^lang zh-CN$" dom_page_language_is_zh_cn
	contains "$dom" "^step .* diff open$" dom_has_open_differing_steps
	contains "$dom" "^step .* same folded$" dom_has_folded_agreeing_steps
	lacks "$dom" "^step .* (diff folded|same open)$" dom_differing_steps_open_and_agreeing_folded
	missing=$(py 'import json, sys
dom = set(l.rstrip("\n") for l in open(sys.argv[2]))
for d in json.load(open(sys.argv[1]))["comparison"]["differences"]:
    if d["step"] != "(outcome)" and "step %s %s diff open" % (d["check"], d["step"]) not in dom:
        print(d["check"], d["step"])' "$T/sub/stub/bundle.json" "$T/dom")
	equals "$missing" "" dom_every_difference_the_judge_found_is_open
	lacks "$dom" "^trace clone-keeps-mode open$" dom_check_whose_steps_agree_is_folded

	# The first screen: where the matrix's frame (a colour the page uses for
	# nothing else) lies in a screenshot of 1280 x 800.
	frame=$(py 'import re, sys; print(re.search(r"\.matrix-frame\{[^}]*outline:3px solid #([0-9a-f]{6})", open(sys.argv[1]).read()).group(1))' "$T/sub/report.html")
	equals "$(grep -o "#$frame" "$T/sub/report.html" | wc -l)" 1 matrix_frame_colour_is_used_once
	browser "$T/browser.out" --window-size=$WIDTH,$HEIGHT --screenshot="$T/shot.png" "file://$T/sub/report.html"
	equals "$("$PYTHON" "$PNG" size "$T/shot.png")" "$WIDTH $HEIGHT" screenshot_is_the_first_screen
	first_screen "$T/shot.png" matrix_is_whole_in_the_first_screen
	# However many checks: 80 more rows (added to a copy; report reads what
	# it is given) leave the matrix's frame on the first screen too.
	py 'import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])' "$T/sub" "$T/many"
	py 'import json, sys; p = sys.argv[1]; b = json.load(open(p))
b["checks"] += [{"name": "op%d/float32" % i, "kind": "numeric", "status": "PASS", "trace": []} for i in range(80)]
json.dump(b, open(p, "w"))' "$T/many/stub/bundle.json"
	"$APIPARITY" report "$T/many" --format html > /dev/null
	browser "$T/browser.out" --window-size=$WIDTH,$HEIGHT --screenshot="$T/many.png" "file://$T/many/report.html"
	first_screen "$T/many.png" matrix_of_many_checks_is_whole_in_the_first_screen
else
	for t in banner_shows_the_verdict matrix_has_a_cell_per_check_and_env_with_its_status_class \
		unverified_column_is_not_green reference_column_is_marked headings_are_chinese_by_default \
		headings_are_english_with_lang_en page_language_is_zh_cn has_open_differing_steps \
		has_folded_agreeing_steps differing_steps_open_and_agreeing_folded \
		every_difference_the_judge_found_is_open check_whose_steps_agree_is_folded; do
		skip dom_$t "$why"
	done
	for t in matrix_frame_colour_is_used_once screenshot_is_the_first_screen matrix_is_whole_in_the_first_screen \
		matrix_of_many_checks_is_whole_in_the_first_screen; do
		skip $t "$why"
	done
fi

# verify, for bots and CI: the same findings as the Markdown.
run 1 verify_markdown_lists_the_findings "$APIPARITY" verify "$T/sub"
findings=$(printf '%s\n' "$out" | grep -c '^- ')
run 1 verify_json_exits_as_markdown_does "$APIPARITY" verify "$T/sub" --format json
equals "$(printf '%s' "$out" | py 'import json, sys; r = json.load(sys.stdin); print(r["schema"], r["decision"], len(r["findings"]))')" \
	"apiparity.review/1 CHANGES-NEEDED $findings" verify_json_has_the_decision_and_every_finding
run 1 verify_junit_exits_as_markdown_does "$APIPARITY" verify "$T/sub" --format junit
equals "$(printf '%s' "$out" | py 'import sys, xml.etree.ElementTree as E
t = E.fromstring(sys.stdin.read()); s = t.find("testsuite")
print(len(t.findall(".//testcase")), s.get("tests"), len(t.findall(".//failure")))')" \
	"$((findings + 1)) $((findings + 1)) $((findings + 1))" verify_junit_has_a_failing_testcase_per_finding_and_the_decision

# The report's files are evidence too: changed or unknown ones are named.
printf ' ' >> "$T/en/report.html"
echo x > "$T/en/card-nobody.png"
run 1 changed_report_is_refused "$APIPARITY" verify "$T/en"
contains "$out" "^- report\.html: sha256 does not match MANIFEST\.sha256 \(changed after the report\)$" changed_report_file_is_named
contains "$out" "^- card-nobody\.png: unknown file or directory in the submission$" unknown_png_is_named

}
needs bookworm trixie -- html_suite
done_testing
