#!/bin/bash
# The shape of the tree: layers, build hygiene, headers, the exit-code
# table documented where the code says it is, and the worker's modules.
. "$(dirname "$0")/lib.sh"
plan 16
cd "$TOP"

# The include rules (tests/check-layers prints TAP of its own; re-numbered here).
while IFS= read -r line; do
	case "$line" in
	"ok "*) ok "layers: ${line#* - }" ;;
	"not ok "*) nok "layers: ${line#* - }" ;;
	"#"*) echo "$line" ;;
	esac
done < <(tests/check-layers src)

if [ -d .git ] || git rev-parse --git-dir > /dev/null 2>&1; then
	tracked=$(git ls-files | grep -E '(^|/)(build[^/]*|out)/|\.(o|a|log)$|(^|/)(crash|leak|timeout)-' || true)
	equals "$tracked" "" git_tracks_no_build_output_log_or_crash_file
else
	skip git_tracks_no_build_output_log_or_crash_file "not a git checkout"
fi

# Every header's guard encloses all of it: the first directive is #ifndef,
# the last non-blank line is its #endif.
open=""
for h in src/*.h src/*/*.h; do
	first=$(grep -m1 '^#' "$h")
	last=$(grep -v '^[[:space:]]*$' "$h" | tail -1)
	case "$first" in "#ifndef AP_"*_H) ;; *) open="$open $h(first:$first)" ;; esac
	case "$last" in "#endif"*) ;; *) open="$open $h(last:$last)" ;; esac
done
equals "$open" "" every_header_guard_encloses_the_whole_header

# Each folder of src/ says what it is for, in its line of the layout guide.
undocumented=""
for d in src/*/; do
	d=${d%/}; d=${d#src/}
	grep -Eq "^  - \`$d/\`" docs/layout.md || undocumented="$undocumented $d"
done
equals "$undocumented" "" layout_guide_names_every_folder_of_src

# Exit codes: --help prints the table of src/base/err.c; the README table and
# the man page's EXIT STATUS list the same codes, with the same meanings.
help=$("$APIPARITY" --help | sed -n '/^exit status:/,/^$/p' | sed -n 's/^ *\([0-9][0-9]*\)  \(.*\)/\1|\2/p')
codes() { cut -d'|' -f1 | sort -n | tr '\n' ' '; }
readme=$(sed -n '/^## Exit status/,/^## /p' README.md | sed -n 's/^| \([0-9][0-9]*\) | \(.*\) |$/\1|\2/p')
man=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH [A-Z]/p' docs/apiparity.1 | awk '/^\.TP/{getline c; getline t; print c "|" t}')
contains "$help" '^0\|success$' help_prints_the_exit_table
equals "$(codes <<< "$readme")" "$(codes <<< "$help")" readme_lists_the_exit_codes_of_help
equals "$(codes <<< "$man")" "$(codes <<< "$help")" man_page_lists_the_exit_codes_of_help
differ=""
while IFS='|' read -r c text; do
	r=$(grep "^$c|" <<< "$readme" | cut -d'|' -f2-)
	m=$(grep "^$c|" <<< "$man" | cut -d'|' -f2- | sed 's/\\-/-/g')
	case "$r" in "$text"*) ;; *) differ="$differ README:$c" ;; esac
	case "$m" in *"$text"*) ;; *) differ="$differ man:$c" ;; esac
done <<< "$help"
equals "$differ" "" readme_and_man_page_give_help_s_meaning_for_each_code

# The worker: modules of at most 600 lines, each joined by the build (the
# Makefile's WORKER_PY) and each with its unit test file; the program the
# binary embeds is those modules joined in that order, two blank lines
# between; the usage indexer's code (hashed by src/check/testindex.c) lies in
# one module; OPS is the one literal tests/worker/list-ops reads.
build=$(dirname "$APIPARITY")
modules=$(make -s --no-print-directory -C "$TOP" worker-modules)
long="" unjoined="" untested=""
for m in $modules; do
	[ "$(wc -l < "$m")" -le 600 ] || long="$long $m($(wc -l < "$m"))"
	[ -f "tests/worker/test_$(basename "$m")" ] || untested="$untested $m"
done
for m in worker/*.py; do
	case " $modules " in *" $m "*) ;; *) unjoined="$unjoined $m" ;; esac
done
equals "$long" "" every_worker_module_is_at_most_600_lines
equals "$unjoined" "" every_file_of_worker_is_a_module_the_build_joins
equals "$untested" "" every_worker_module_has_its_unit_test_file
# shellcheck disable=SC2086 # one word a module
joined=$(py 'import sys
sys.stdout.write("\n\n".join(t if t.endswith("\n") else t + "\n"
                              for t in (open(p).read() for p in sys.argv[1:])))' $modules | sha256sum)
equals "$(sha256sum < "$build/apiparity_worker.py")|$("$build/embed" ap_worker_py < "$build/apiparity_worker.py" | cmp -s - "$build/gen-worker.c" && echo embedded)" \
	"$joined|embedded" the_worker_embedded_is_its_modules_joined_in_order
equals "$(grep -l '^# apiparity-indexer: \(begin\|end\)$' $modules | tr '\n' ' ')|$(grep -c '^# apiparity-indexer: \(begin\|end\)$' "$build/apiparity_worker.py")" \
	"worker/testindex.py |2" the_usage_indexer_s_code_lies_in_one_worker_module
ops=$(tests/worker/list-ops 2>&1)
contains "$ops" '^fingerprint$' the_worker_s_ops_table_is_one_literal_naming_its_functions

# Every mutant still applies to the tree as it is: a merge that moves the
# mutated line must be caught here, by make check, and not first by the
# 20-minute `make mutants` at the end of CI.
stale=""
for p in tests/mutants/*.patch; do
	patch -p1 --dry-run -s --fuzz=0 -d "$TOP" < "$p" > /dev/null 2>&1 || stale="$stale $(basename "$p")"
done
equals "$stale" "" every_mutant_applies_to_the_tree
done_testing
