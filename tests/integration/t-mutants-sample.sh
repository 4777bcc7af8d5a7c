#!/bin/bash
# tests/mutants/sample refuses coverage data that is not of this tree: the
# line numbers make coverage recorded are another file's once a file is
# edited (a mutant would land on the wrong line, or past the end). Its
# stale_sources() against the digests tests/coverage-report's
# write_sources() records, on files of the test's own. A mutant that does not
# build is no sample: draw_until_built() puts the next ones in its place.
. "$(dirname "$0")/lib.sh"
plan 17
mkdir -p "$T/src" "$T/cov"
printf 'int a(void)\n{\n\treturn 0;\n}\n' > "$T/src/a.c"
printf 'int b;\n' > "$T/src/b.c"
# call SCRIPT FUNCTION ARGS - FUNCTION(cov, by_line) of tests/SCRIPT, its TOP the test's own
call() {
	script_py "$TOP/tests/$1" "$T" 'print(getattr(m, sys.argv[1])(sys.argv[2],
      {"src/a.c": {"3": ["unit/test-a"]}, "src/b.c": {"1": ["unit/test-b"]}}))' "$2" "$T/cov" 2>&1
}
contains "$(call mutants/sample stale_sources)" "^no digests of the measured sources \(No such file or directory\)$" \
	coverage_without_digests_is_refused
call coverage-report write_sources > /dev/null
(cd "$T" && sha256sum --quiet --strict -c cov/sources.sha256) && ok digests_are_sha256sums_of_the_measured_files \
	|| nok digests_are_sha256sums_of_the_measured_files
equals "$(call mutants/sample stale_sources)" None the_measured_tree_is_not_stale
printf 'int b = 1;\n' > "$T/src/b.c"
equals "$(call mutants/sample stale_sources)" "src/b.c changed since the coverage run measured it" \
	an_edited_file_makes_the_data_stale

# draw PATTERN - the indices draw_until_built(10, 3, run) ran, batch by batch,
# and its verdicts: run() fails the builds of the indices PATTERN matches.
draw() {
	script_py "$TOP/tests/mutants/sample" "$T" 'import re
batches = []
def run(indices):
    batches.append(indices)
    return dict((i, "ERROR: does not build" if re.fullmatch(sys.argv[1], str(i)) else "killed")
                for i in indices)
v = m.draw_until_built(10, 3, run)
print(batches, sorted(v))' "$1" 2>&1
}
equals "$(draw 'x')" "[[0, 1, 2]] [0, 1, 2]" a_sample_that_builds_is_drawn_once
equals "$(draw '[02]|3')" "[[0, 1, 2], [3, 4], [5]] [0, 1, 2, 3, 4, 5]" \
	mutants_that_do_not_build_are_replaced_until_n_built
equals "$(draw '[0-9]')" "[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]" \
	drawing_ends_when_no_mutant_is_left
# An equivalent listed by its text names every line alike; with the line
# above it, only the one under that line.
equiv() {
	printf '# a comment\nsrc/a.c\treturn 0;\tw1\twhy\nsrc/a.c\treturn 0;\tw2\tif (b)\twhy\n' > "$T/equivalent"
	script_py "$TOP/tests/mutants/sample" "$T" 'import os
m.TOP = sys.argv[1]
os.makedirs(os.path.join(sys.argv[1], "tests", "mutants"), exist_ok=True)
os.replace(os.path.join(sys.argv[1], "equivalent"), os.path.join(sys.argv[1], "tests", "mutants", "equivalent"))
skip = m.load_equivalent()
text = ["if (a)", "\treturn 0;", "if (b)", "\treturn 0;"]
print(" ".join("%d:%s" % (ln, w) for ln in range(1, 5) for w in ("w1", "w2", "w3")
               if m.is_equivalent(skip, "src/a.c", text, ln, w)))' "$T" 2>&1
}
out=$(equiv)
contains "$out" "^2:w1 4:w1" equivalent_by_text_names_every_line_alike
lacks "$out" "2:w2" equivalent_with_the_line_above_leaves_the_others
equals "$out" "2:w1 4:w1 4:w2" equivalents_are_these_and_no_other
# A constant made one larger is a mutant, but for calloc's count: a larger
# allocation is one no test can tell (statusline.c's calloc(1, ...) survived
# every test that runs it, seed 1).
muts() {
	script_py "$TOP/tests/mutants/sample" "$T" 'print([w for _, w in m.mutants_of(sys.argv[1])])' "$1" 2>&1
}
equals "$(muts '	s = calloc(1, sizeof(*s));')" "[]" callocs_count_is_not_mutated
equals "$(muts '	v = calloc(n ? n : 1, sizeof(*v));')" "[]" a_constant_in_callocs_count_is_not_mutated
equals "$(muts '	struct ap_buf err = { 0 };')" "[]" zero_initialisers_are_not_mutated
equals "$(muts '	s = calloc(n, 1);')" "['a constant off by one (1 made 2)']" other_constants_are_mutated
# The rate's terms: a mutant whose budget was spent is not killed.
equals "$(script_py "$TOP/tests/mutants/sample" "$T" 'print(m.tally(["unit/test-a: 1 - x",
    "UNDECIDED: its budget of 1 s spent", "SURVIVED: passes", "ERROR: does not build: e"]))' 2>&1)" \
	"(1, 3, 1)" undecided_mutants_count_as_not_killed
# Every equivalent listed names a mutant the generator makes of today's
# source (an edited line leaves its entry naming nothing); one that does not
# is said.
equals "$(script_py "$TOP/tests/mutants/sample" "$TOP" 'print(m.stale_equivalents(m.load_equivalent()))' 2>&1)" \
	"[]" every_listed_equivalent_names_a_mutant_of_todays_source
equals "$(script_py "$TOP/tests/mutants/sample" "$TOP" 'print(m.stale_equivalents({("src/base/ini.c",
    "int no_such_line;", "a constant off by one (1 made 2)", None)}))' 2>&1)" \
	"['src/base/ini.c: int no_such_line; (a constant off by one (1 made 2))']" an_equivalent_naming_nothing_is_said
done_testing
