#!/bin/bash
# Mistakes in the command line and the environments file: one line, own exit code.
. "$(dirname "$0")/lib.sh"
plan 23

printf '[a]\nexec = ssh a --\n\n[b]\nchroot = x\ncolour = red\n' > "$T/bad-key.ini"
run 4 unknown_key_is_a_config_error "$APIPARITY" env show --envs "$T/bad-key.ini" a
equals "$err" "apiparity: environments file: malformed configuration: $T/bad-key.ini:6: unknown key 'colour' (known: label, device, chroot, exec, python, remote_shell, setenv, bind)" \
	unknown_key_names_file_and_line

printf '[a]\nexec = ssh "a --\n' > "$T/quote.ini"
run 4 unterminated_quote_is_a_config_error "$APIPARITY" env list --envs "$T/quote.ini"
contains "$err" "quote.ini:2: 'exec': unterminated quote" unterminated_quote_names_line

printf 'exec = ssh a --\n' > "$T/nosection.ini"
run 4 key_outside_section_is_a_config_error "$APIPARITY" env list --envs "$T/nosection.ini"
contains "$err" "nosection.ini:1: 'exec' outside of any \[environment\]" key_outside_section_names_line

printf '[a]\nchroot = x\nexec = ssh a --\n' > "$T/both.ini"
run 4 chroot_with_exec_is_a_config_error "$APIPARITY" env list --envs "$T/both.ini"
contains "$err" "\[a\]: chroot and exec cannot be combined" chroot_with_exec_is_explained

printf 'this is not ini\n' > "$T/garbage.ini"
run 4 garbage_is_a_config_error "$APIPARITY" env list --envs "$T/garbage.ini"
contains "$err" "garbage.ini:1: not an INI line" garbage_names_line

run 4 missing_envs_file_is_a_config_error "$APIPARITY" env list --envs "$T/none.ini"
contains "$err" "none.ini: No such file or directory" missing_envs_file_is_named

run 5 unknown_environment_exits_5 "$APIPARITY" env show a3
contains "$err" "^apiparity: env: unknown environment: 'a3' is not in \(built-in reference environments\)" \
	unknown_environment_is_named

run 2 no_command_is_a_usage_error "$APIPARITY"
run 2 unknown_command_is_a_usage_error "$APIPARITY" frobnicate
run 2 unknown_option_is_a_usage_error "$APIPARITY" env show --colour trixie
contains "$err" "unknown option '--colour'" unknown_option_is_named
run 2 bad_timeout_is_a_usage_error "$APIPARITY" env show --timeout soon trixie
run 2 create_without_suite_is_a_usage_error "$APIPARITY" env create x
run 2 create_with_path_name_is_a_usage_error "$APIPARITY" env create ../x --suite sid
run 0 help_documents_exit_codes "$APIPARITY" --help
contains "$out" "9  worker stopped answering" help_lists_exit_codes
done_testing
