#!/bin/bash
# The shape of the tree: layers, build hygiene, headers, and the exit-code
# table documented where the code says it is.
. "$(dirname "$0")/lib.sh"
plan 10
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

# Every mutant still applies to the tree as it is: a merge that moves the
# mutated line must be caught here, by make check, and not first by the
# 20-minute `make mutants` at the end of CI.
stale=""
for p in tests/mutants/*.patch; do
	patch -p1 --dry-run -s --fuzz=0 -d "$TOP" < "$p" > /dev/null 2>&1 || stale="$stale $(basename "$p")"
done
equals "$stale" "" every_mutant_applies_to_the_tree
done_testing
