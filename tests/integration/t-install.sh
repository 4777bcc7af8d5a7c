#!/bin/bash
# make install and make uninstall, staged under DESTDIR: what lands where,
# that the staged binary and manual page work, that bash completion offers
# commands, verbs, options and environment names from the binary itself, and
# that uninstall leaves nothing. Needs no environment.
. "$(dirname "$0")/lib.sh"
plan 16
S="$T/stage"
inst() { make -s -C "$TOP" "$@" DESTDIR="$S" PREFIX=/usr INSTALL_BIN="$APIPARITY"; }

run 0 make_install_stages_the_files inst install
equals "$(cd "$S" && find . -type f | sort | tr '\n' ' ')" \
	"./usr/bin/apiparity ./usr/share/apiparity/envs.example.ini ./usr/share/apiparity/policy.example.yaml ./usr/share/bash-completion/completions/apiparity ./usr/share/man/man1/apiparity.1 " \
	install_puts_each_file_in_its_place
equals "$(stat -c %a "$S/usr/bin/apiparity") $(stat -c %a "$S/usr/share/man/man1/apiparity.1")" "755 644" \
	installed_modes_are_the_usual_ones
run 0 staged_binary_runs "$S/usr/bin/apiparity" --version
equals "$out" "$("$APIPARITY" --version)" staged_binary_names_its_version_and_commit
contains "$out" "^apiparity [0-9]+\.[0-9]+\.[0-9]+ \([0-9a-f]{12}(\+changes)?\)$|^apiparity [0-9.]+ \(unknown\)$" version_has_the_commit
# The manual page renders without a warning (what lintian checks too).
run 0 staged_man_page_renders env LC_ALL=C.UTF-8 MANROFFSEQ= MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$S/usr/share/man/man1/apiparity.1"
equals "$err" "" man_page_renders_without_warnings
cmp -s "$S/usr/share/apiparity/envs.example.ini" "$TOP/envs/reference.ini" \
	&& ok example_envs_file_is_the_reference_one || nok example_envs_file_is_the_reference_one

# Completion, as bash calls it: COMP_WORDS and COMP_CWORD in, COMPREPLY out.
complete_words() { # WORD... (the last is the one completed)
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _apiparity; echo "${COMPREPLY[*]}"' \
		_ "$S/usr/share/bash-completion/completions/apiparity" "$S/usr/bin/apiparity" "$@"
}
equals "$(complete_words ver)" "verify" completion_offers_commands
equals "$(complete_words env a)" "add" completion_offers_verbs
equals "$(complete_words check X --tol)" "--tolerances" completion_offers_the_commands_options
equals "$(complete_words check X --env tr)" "trixie trixie-openreg" completion_offers_environment_names
printf '[mine]\npython = python3\n[other]\npython = python3\n' > "$T/envs.ini"
equals "$(complete_words check X --envs "$T/envs.ini" --env m)" "mine" completion_reads_the_envs_file_given

run 0 make_uninstall_runs inst uninstall
equals "$(cd "$S" && find . -type f | wc -l)" 0 uninstall_leaves_no_file
done_testing
