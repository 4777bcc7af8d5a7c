#!/bin/bash
# The usage index of a test tree: built once, trusted only for its own tree
# and indexer, rebuilt with a warning when damaged, shared by concurrent runs.
. "$(dirname "$0")/lib.sh"
plan 25
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
export APIPARITY_TESTS_ROOT="$T/tests-root"
mkdir -p "$T/src/test" "$APIPARITY_TESTS_ROOT"
cat > "$T/src/test/test_small.py" <<'EOF'
import unittest

import torch


class TestSmall(unittest.TestCase):
    def test_first(self):
        with torch.autograd.set_multithreading_enabled(False):
            self.assertFalse(torch.autograd.is_multithreading_enabled())
EOF
find_it() { "$APIPARITY" tests find $TARGET --env trixie --torch-src "$T/src"; }
index() { ls "$APIPARITY_TESTS_ROOT"/.index/*.idx 2>/dev/null | head -1; }
# The header names the bytes that follow it: a whole index, not a torn one.
whole() {
	local f=$1 size
	size=$(head -1 "$f" | awk '{print $4}')
	[ "$(head -1 "$f" | cut -d' ' -f1)" = apiparity-usage-index ] &&
		[ "$(( $(stat -c %s "$f") - $(head -1 "$f" | wc -c) ))" = "$size" ]
}

usage_index() {
	run 0 find_builds_the_index_on_first_use find_it
	contains "$out" "test/test_small\.py::TestSmall::test_first" first_find_finds_the_test
	idx=$(index)
	[ -n "$idx" ] && whole "$idx" && ok index_is_stored_whole || nok index_is_stored_whole "no index in $APIPARITY_TESTS_ROOT/.index"

	cat >> "$T/src/test/test_small.py" <<'EOF'

    def test_added(self):
        torch.autograd.set_multithreading_enabled(True)
EOF
	run 0 find_after_a_change_of_the_tree find_it
	contains "$out" "TestSmall::test_added" changed_tree_rebuilds_the_index

	# An index of the same tree by another indexer is not trusted, even
	# when it names the tree: its planted test must not show.
	tail -n +2 "$idx" | sed 's/test_added/test_planted/g' > "$T/old.body"
	{ head -1 "$idx" | awk -v n="$(stat -c %s "$T/old.body")" '{$2 = "0.0000000000000000"; $4 = n; print}'
	  cat "$T/old.body"; } > "$T/old.idx"
	cp "$T/old.idx" "$idx"
	run 0 find_with_an_older_indexers_index find_it
	lacks "$out" "test_planted" older_indexers_index_is_not_trusted
	contains "$out" "TestSmall::test_added" older_indexers_index_is_rebuilt
	lacks "$err" "warning" stale_index_is_rebuilt_without_a_warning

	head -c 300 "$idx" > "$T/torn" && cp "$T/torn" "$idx"
	run 0 find_with_a_damaged_index find_it
	contains "$err" "^apiparity: warning: the usage index .*\.idx was damaged; rebuilt it$" damaged_index_is_rebuilt_with_a_warning
	contains "$out" "TestSmall::test_added" damaged_index_still_answers
	whole "$idx" && ok rebuilt_index_is_whole || nok rebuilt_index_is_whole "$(head -1 "$idx")"

	# A name changed in place, the size and inode kept: the body's sum in
	# the header finds it (the stamp beside it no longer matches its ctime).
	run 0 find_with_a_good_index_stamps_it find_it
	at=$(grep -abo 'test_added' "$idx" | tail -1 | cut -d: -f1)
	printf 'test_plant' | dd of="$idx" bs=1 seek="$at" conv=notrunc 2> /dev/null
	run 0 find_with_a_changed_byte find_it
	contains "$err" "^apiparity: warning: the usage index .*\.idx was damaged; rebuilt it$" changed_byte_is_found_and_rebuilt
	lacks "$out" "test_plant" changed_byte_is_not_trusted

	# Two checks at once and no index: one builds it, both use it.
	rm -f "$idx"
	"$APIPARITY" check $TARGET --env trixie --torch-src "$T/src" --out "$T/c1" > "$T/c1.out" 2> "$T/c1.err" &
	p1=$!
	"$APIPARITY" check $TARGET --env trixie --torch-src "$T/src" --out "$T/c2" > "$T/c2.out" 2> "$T/c2.err" &
	p2=$!
	wait $p1; r1=$?
	wait $p2; r2=$?
	equals "$r1 $r2" "0 0" concurrent_checks_both_succeed
	for c in c1 c2; do
		st=$(/usr/bin/python3 -c "import json,sys; b=json.load(open(sys.argv[1])); print(sorted(c['status'] for c in b['checks'] if c['kind'] == 'official'))" "$T/$c/trixie/bundle.json")
		equals "$st" "['PASS', 'PASS']" "concurrent_check_${c}_runs_the_official_tests"
	done
	whole "$idx" && ok index_after_concurrent_checks_is_whole || nok index_after_concurrent_checks_is_whole
	lacks "$(cat "$T/c1.err" "$T/c2.err")" "warning" concurrent_checks_warn_of_nothing
	before=$(stat -c '%i %Y' "$idx")
	run 0 find_with_a_current_index find_it
	equals "$(stat -c '%i %Y' "$idx")" "$before" current_index_is_used_not_rebuilt
	equals "$(ls "$APIPARITY_TESTS_ROOT/.index" | grep -cE '\.idx\.[^.]{6}$')" 0 no_temporary_index_is_left_behind
}
needs trixie -- usage_index
done_testing
