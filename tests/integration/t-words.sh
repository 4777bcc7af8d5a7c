#!/bin/bash
# The words of results are spelled once: each status (PASS ... SKIP), verdict
# and sweep-line word appears as a string literal only in src/base/outcome.c,
# its name table; everywhere else the code compares enums (base/outcome.h).
# Comments may name them. The check reads the code with comments removed by
# the compiler's own preprocessor (no macro expanded), so a word in a comment
# or inside a longer string is not a stray, and one in code always is.
. "$(dirname "$0")/lib.sh"
plan 3
cd "$TOP"

words='PASS|FAIL|ERROR|CRASH|TIMEOUT|NOTRUN|WARN|SKIP|consistent|consistent-with-limits|inconsistent|unverified|not-run'
# strays DIR... - "file: line" for each literal word outside the name table.
strays() {
	local f
	for f in "$@"; do
		[ "$f" = src/base/outcome.c ] && continue
		cc -fpreprocessed -dD -E -P "$f" 2>/dev/null |
			grep -nE "\"($words)\"" | sed "s|^|$f: |"
	done
}
found=$(strays src/*.c src/*.h src/*/*.c src/*/*.h)
equals "$found" "" status_and_verdict_words_are_spelled_only_in_their_name_tables

# The check can fail: a literal status in code is found, in a comment is not.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '/* "PASS" in a comment */\nstatic const char *s = "inconsistent";\n' > "$tmp/x.c"
case "$(strays "$tmp/x.c")" in
*'"inconsistent"'*) ok a_literal_word_in_code_is_a_stray ;;
*) nok a_literal_word_in_code_is_a_stray "strays did not find it" ;;
esac
case "$(strays "$tmp/x.c")" in
*PASS*) nok a_word_in_a_comment_is_not_a_stray "found in a comment" ;;
*) ok a_word_in_a_comment_is_not_a_stray ;;
esac
