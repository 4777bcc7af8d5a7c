#!/bin/bash
# The documentation holds together: the README stays a five-minute read that
# links every guide of docs/, and every relative link of the README and the
# guides names a file that exists (and, for an #anchor into Markdown, a
# heading of it). tests/tools/md-links.py reads the links; it is tried first
# on pages made to be broken, so that a checker that finds nothing cannot pass.
. "$(dirname "$0")/lib.sh"
plan 7
cd "$TOP"
MDL="$TOP/tests/tools/md-links.py"

# The checker, on a page with one broken link and one broken anchor among
# links that hold, in code that is no link, and to the web.
mkdir -p "$T/docs/sub"
cat > "$T/docs/sub/guide.md" <<'EOF'
# A guide: its `title`

## Twice
## Twice
EOF
cat > "$T/docs/page.md" <<'EOF'
# Page

See [the guide](sub/guide.md), [its title](sub/guide.md#a-guide-its-title),
[the second Twice](sub/guide.md#twice-1), [a heading that wraps
here](#page), [the web](https://example.org/none.md) and the [missing
one](sub/missing.md).
A `[code span](nowhere.md)` and a [bad anchor](sub/guide.md#twice-2).

```
[in a fence](nowhere.md)
```
EOF
run 1 md_links_fails_on_a_broken_link "$PYTHON" "$MDL" broken "$T/docs/page.md"
equals "$(sed "s|^$T/||" <<< "$out")" "docs/page.md:5: sub/missing.md: no such file
docs/page.md:7: sub/guide.md#twice-2: no heading of $T/docs/sub/guide.md makes #twice-2" \
	md_links_names_exactly_the_broken_link_and_anchor

lines=$(wc -l < README.md)
if [ "$lines" -le 300 ]; then ok readme_is_at_most_300_lines
else nok readme_is_at_most_300_lines "README.md has $lines lines"; fi

run 0 every_relative_link_of_the_readme_and_the_guides_resolves \
	"$PYTHON" "$MDL" broken README.md docs/*.md
[ -z "$out" ] || echo "$out" | sed 's/^/# /'

# Every file of docs/ (each guide, and the manual page) is one a newcomer
# can reach from the README.
linked=$("$PYTHON" "$MDL" targets README.md)
unlinked=""
for f in docs/*; do
	grep -qxF "$f" <<< "$linked" || unlinked="$unlinked $f"
done
equals "$unlinked" "" readme_links_every_file_of_docs

# The README keeps the two commands, and the guides are not empty shells:
# each starts with its title.
missing=""
for c in demo check; do grep -q "^make $c " README.md || missing="$missing make-$c"; done
equals "$missing" "" readme_names_the_two_commands
untitled=""
for f in docs/*.md; do
	head -1 "$f" | grep -q '^# [^ ]' || untitled="$untitled $f"
done
equals "$untitled" "" every_guide_starts_with_its_title
done_testing
