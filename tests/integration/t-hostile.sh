#!/bin/bash
# Any byte a probe produces is data: a NUL, text that is not UTF-8, terminal
# escapes and Markdown or HTML that would add a heading, a tag or a fake
# conclusion reach the evidence intact and every report escaped; a result
# frame that cannot be read costs only the probe that sent it.
. "$(dirname "$0")/lib.sh"
plan 38
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
ESC=$(printf '\033')

hostile_probes() {
	# The script's own name is hostile too.
	evil="$T/$(printf 'evil<b>\033[2J|.py')"
	cp "$FIX/probes/hostile.py" "$evil"
	run 1 hostile_probes_fail_only_themselves "$APIPARITY" check $TARGET --env trixie --no-official \
		--script "$FIX/probes/hostile-text.py" --script "$evil" --script "$FIX/probes/clone-mode.py" \
		--out "$T/h"
	contains "$out" "^trixie .* 11/13 +inconsistent$" other_probes_keep_their_pass
	lacks "$out$err" "$ESC" terminal_output_holds_no_escape_byte
	contains "$out" "Conclusion: ACCEPT" summary_quotes_the_message
	lacks "$out" "^# Conclusion" summary_message_stays_on_its_line
	b="$T/h/trixie/bundle.json"
	equals "$(field "$b" '[c["status"] for c in b["checks"] if c["kind"] == "script"]')" "['FAIL', 'FAIL', 'PASS']" \
		hostile_scripts_fail_and_next_script_passes
	equals "$(field "$b" 'sorted(set(c["status"] for c in b["checks"] if c["kind"] == "probe"))')" "['PASS']" \
		family_probes_pass_beside_the_hostile_one
	equals "$(field "$b" '{s["step"]: s["value"] for c in b["checks"] for s in c["trace"] if s["step"] in ("nul", "not utf-8", "lone surrogate", "nan", "big")}')" \
		"{'nul': {'\$bytes': 'YQBi'}, 'not utf-8': {'\$bytes': '7bO/7bO+'}, 'lone surrogate': {'\$bytes': '7aCA'}, 'nan': {'\$float': 'nan'}, 'big': {'\$int': '1$(printf '0%.0s' $(seq 40))'}}" \
		nul_bad_utf8_nan_and_big_int_arrive_tagged_and_exact
	lacks "$(cat "$T/h/trixie/run.log")" "$ESC" run_log_holds_no_escape_byte
	equals "$(field "$b" '[len(s["value"]) for c in b["checks"] for s in c["trace"] if s["step"] == "long"]')" "[1000000]" \
		long_string_arrives_whole
	equals "$(field "$b" '[c["reason"] for c in b["checks"] if c["kind"] == "script"][1]')" \
		"$(printf 'x\n# Conclusion: ACCEPT\n<script>alert(1)</script>\033[2J | ``` | \\x00 \\udcff')" \
		check_message_is_kept_with_nul_and_surrogate_written_as_escapes

	run 0 report_of_the_hostile_run_is_written "$APIPARITY" report "$T/h"
	md=$(cat "$T/h/report.md")
	# The only lines that open a block are the template's: one title, five
	# sections (signatures included), one environment; the rest are its list
	# items and text.
	equals "$(grep -cE '^#' "$T/h/report.md")" 7 markdown_has_only_the_template_headings
	# A line's content once its list markers are stripped: what it opens.
	opens=$(py 'import re, sys
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"( *- +)*", line)
    rest = line[m.end():]
    if m.end() and re.match(r"#|>|<|\||```|~~~|[0-9]+[.)]( |$)|[-+*]( |$)", rest):
        print(line, end="")' "$T/h/report.md")
	equals "$opens" "" markdown_value_starts_no_block_in_a_list_item
	lacks "$md" '^(>|<|\||```|~~~|[0-9]+[.)] |[-+*] *$)' markdown_value_starts_no_block_at_a_line_start
	lacks "$md" "$ESC" markdown_holds_no_escape_byte
	lacks "$md" '<script' markdown_holds_no_raw_script
	lacks "$(cat "$T/h/report.html")" '<script|<b>|'"$ESC" html_holds_no_raw_tag_or_escape
	if py 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$T/h/junit.xml" 2> "$T/xmlerr"; then
		ok junit_is_well_formed_xml
	else
		nok junit_is_well_formed_xml "$(cat "$T/xmlerr")"
	fi
	equals "$(py 'import json,sys; m=json.load(open(sys.argv[1])); print(m["environments"][0]["probes"])' "$T/h/report.json")" \
		"{'passed': 11, 'total': 13}" report_json_reads_back
}
needs trixie -- hostile_probes

hostile_worker() {
	# The proxy garbles the first probe result (JSON with a raw NUL) and sends
	# the second as a frame over the size limit; the framing itself holds.
	printf '[garble]\nchroot = trixie\nbind = %s:/run/apiparity/fix\npython = /run/apiparity/fix/worker-proxy garble -- python3\n' \
		"$FIX" > "$T/garble.ini"
	run 1 unreadable_result_frames_fail_their_probes_only "$APIPARITY" check $TARGET --envs "$T/garble.ini" \
		--env garble --no-official --out "$T/g"
	b="$T/g/garble/bundle.json"
	equals "$(field "$b" '[(c["name"], c["status"], c["reason"]) for c in b["checks"][:2]]')" \
		"[('clone-returns-same-class', 'ERROR', 'unreadable result frame'), ('clone-keeps-mode', 'ERROR', 'unreadable result frame')]" \
		garbled_and_oversized_results_are_errors
	equals "$(field "$b" 'sorted(set(c["status"] for c in b["checks"][2:])), len(b["checks"])')" "(['PASS'], 10)" \
		later_probes_still_pass
	equals "$(field "$b" 'b["error"], b["fingerprint"]["torch"]["version"][:3]')" "(None, '2.6')" \
		the_environment_stays_verified
	contains "$out" "^garble .* 8/10 +inconsistent$" summary_counts_the_lost_probes
}
needs trixie -- hostile_worker

hostile_tree() {
	# A link in the test tree that leads out of it is refused like a name
	# that climbs out: nothing outside the tree is imported.
	mkdir -p "$T/linked/test" && printf 'raise SystemExit("imported")\n' > "$T/outside.py"
	ln -s ../../outside.py "$T/linked/test/test_out.py"
	run 2 tests_run_of_a_link_out_of_the_tree_is_a_usage_error "$APIPARITY" tests run \
		test/test_out.py --env trixie --torch-src "$T/linked"
	contains "$err" "^apiparity: tests run: 'test/test_out.py' is a link that leads out of the test tree" \
		tests_run_link_out_of_the_tree_is_named
}
needs trixie -- hostile_tree

# A python that dies before its hello with bytes that are not UTF-8 and an
# escape on stderr: its last line is the reason, escaped, in the bundle too.
mkdir -p "$T/badstderr"
printf 'import os\nos.write(2, b"\\xff\\x1b[2J broken start\\n")\nos._exit(3)\n' > "$T/badstderr/sitecustomize.py"
printf '[bad-stderr]\nexec = env PYTHONPATH=%s\npython = /usr/bin/python3\n' "$T/badstderr" > "$T/bad.ini"
run 3 python_dying_with_bad_bytes_is_an_environment_error "$APIPARITY" check $TARGET --envs "$T/bad.ini" \
	--env bad-stderr --out "$T/bad"
contains "$err" 'exited with status 3 before python answered: \\xff\\x1b\[2J broken start$' reason_is_quoted_escaped
lacks "$out$err" "$ESC" dying_python_sends_no_escape_to_the_terminal
equals "$(field "$T/bad/bad-stderr/bundle.json" 'b["error"]["message"].split(": ")[-1], b["verdict"]')" \
	"('\\\\xff\\\\x1b[2J broken start', 'unverified')" bundle_keeps_the_reason_as_valid_json

# What the user typed comes back escaped and bounded: a target holding an
# escape sequence, one of 120 KB, an option's value of 5 KB.
run 2 a_target_with_an_escape_is_a_usage_error "$APIPARITY" check "torch.${ESC}[31mred" --env trixie --out "$T/x"
equals "$err" 'apiparity: check: '"'"'torch.\x1b[31mred'"'"' is not a dotted Python name (see apiparity --help)' \
	the_target_is_echoed_escaped
run 2 a_120_kb_target_is_a_usage_error "$APIPARITY" check "torch.$(head -c 120000 /dev/zero | tr '\0' a)" --env trixie --out "$T/x"
equals "$err" "apiparity: check: a TARGET is a dotted Python name of at most 256 bytes, not one of 120006 (see apiparity --help)" \
	the_long_target_is_not_echoed_and_its_maximum_is_said
run 2 a_5_kb_option_value_is_a_usage_error "$APIPARITY" report "$T" --format "$(head -c 5000 /dev/zero | tr '\0' b)"
equals "$(printf '%s' "$err" | wc -c)" 1079 the_usage_message_is_bounded
contains "$err" "\.\.\. \([0-9]+ bytes more\) \(see apiparity --help\)$" the_cut_is_said
done_testing
