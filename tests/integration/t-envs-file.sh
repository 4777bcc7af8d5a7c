#!/bin/bash
# Mistakes in the command line and the environments file: one line, own exit code.
. "$(dirname "$0")/lib.sh"
plan 51

printf '[a]\nexec = ssh a --\n\n[b]\nchroot = x\ncolour = red\n' > "$T/bad-key.ini"
run 4 unknown_key_is_a_config_error "$APIPARITY" env show --envs "$T/bad-key.ini" a
equals "$err" "apiparity: environments file: malformed configuration: $T/bad-key.ini:6: unknown key 'colour' (known: label, device, chroot, exec, python, remote_shell, setenv, bind, plugins, tests_root)" \
	unknown_key_names_file_and_line

# A chroot isolates nothing when it is the host's root: one that climbs out
# of the environments root, names /, or is a link to it is refused.
printf '[evil]\nchroot = ../../../../\n' > "$T/climb.ini"
run 4 a_chroot_that_climbs_out_of_the_root_is_refused "$APIPARITY" env show --envs "$T/climb.ini" evil
equals "$err" "apiparity: environments file: malformed configuration: $T/climb.ini:2: [evil]: chroot '../../../../' leaves the environments root (a relative chroot names a directory under it; give an absolute path on purpose)" \
	the_climbing_chroot_is_named
printf '[evil]\nchroot = /.\n' > "$T/slash.ini"
run 4 a_chroot_of_slash_is_refused "$APIPARITY" env show --envs "$T/slash.ini" evil
ln -s / "$T/rootlink"
printf '[evil]\nchroot = %s\n' "$T/rootlink" > "$T/link.ini"
run 4 a_chroot_that_is_a_link_to_slash_is_refused "$APIPARITY" env show --envs "$T/link.ini" evil
contains "$err" "chroot '$(rx "$T")/rootlink' is the host's own root, which a chroot does not isolate$" \
	the_link_to_slash_is_named

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

# Long lines are normal (exec prefixes, setenv, bind); an error after one names its real line.
long=$(printf ' -o Option%03d=yes' $(seq 40))
printf '[a]\nexec = ssh%s a --\nsetenv = %s\n' "$long" "$(printf 'V%03d=x ' $(seq 60))" > "$T/long.ini"
run 0 long_exec_and_setenv_lines_are_accepted "$APIPARITY" env list --envs "$T/long.ini"
printf '[a]\nlabel = %s\ncolour = red\n' "$(printf 'x%.0s' $(seq 300))" > "$T/long-bad.ini"
run 4 error_after_a_long_line_is_a_config_error "$APIPARITY" env list --envs "$T/long-bad.ini"
contains "$err" "long-bad.ini:3: unknown key 'colour'" error_after_a_long_line_names_its_real_line

printf '[a]\nexec = ssh a\000rm -rf --\n' > "$T/nul.ini"
run 4 nul_byte_in_a_value_is_a_config_error "$APIPARITY" env list --envs "$T/nul.ini"
contains "$err" "nul.ini:2: a NUL byte at column 13" nul_byte_names_file_line_and_column

run 4 directory_as_envs_file_is_a_config_error "$APIPARITY" env list --envs "$T"
contains "$err" "environments file: malformed configuration: $T: Is a directory$" directory_as_envs_file_is_named
mkfifo "$T/fifo.ini"
run 4 fifo_as_envs_file_is_refused_at_once timeout 10 "$APIPARITY" env list --envs "$T/fifo.ini"
contains "$err" "fifo.ini: not a regular file$" fifo_as_envs_file_is_named
run 4 endless_device_as_envs_file_is_refused timeout 10 "$APIPARITY" env list --envs /dev/zero
head -c 1100000 /dev/zero | tr '\0' '#' > "$T/huge.ini"
run 4 huge_envs_file_is_refused "$APIPARITY" env list --envs "$T/huge.ini"
contains "$err" "huge.ini: larger than 1 MiB" huge_envs_file_is_named

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
# --python and the user's own file, as root (t-user does it as nobody).
run 0 python_path_is_an_environment_of_its_own "$APIPARITY" env show --python /usr/bin/python3 --timeout 60
contains "$out" "^python +[0-9.]+" python_environment_is_fingerprinted
# An environment named by its path: its words, every letter kept.
mkdir -p "$T/AZ" && ln -s /usr/bin/python3 "$T/AZ/python3"
run 0 two_python_paths_are_two_environments "$APIPARITY" env show --python "$T/AZ/python3" \
	--python /usr/bin/python3 --timeout 60
contains "$(printf '%s\n' "$out" | head -1)" "-AZ-python3 +usr-bin-python3$" python_path_words_name_the_environment
run 2 python_without_a_name_it_can_have_is_a_usage_error "$APIPARITY" env show --python 'bad name=/usr/bin/python3'
contains "$err" "^apiparity: --python: 'bad name=/usr/bin/python3' is \[NAME=\]PATH" python_bad_name_is_said
run 0 env_add_writes_the_xdg_file env XDG_CONFIG_HOME="$T/xdg" "$APIPARITY" env add mine --python /usr/bin/python3
run 0 names_list_the_built_in_then_the_users env XDG_CONFIG_HOME="$T/xdg" "$APIPARITY" env list --names
equals "$(printf '%s\n' "$out" | tr '\n' ' ')" "bookworm trixie sid trixie-openreg local mine " \
	names_are_the_built_in_then_the_users
run 0 explicit_envs_file_leaves_the_users_out env XDG_CONFIG_HOME="$T/xdg" "$APIPARITY" env list --names \
	--envs "$TOP/envs/reference.ini"
lacks "$out" "^mine$" explicit_envs_file_is_the_whole_list
run 0 help_documents_exit_codes "$APIPARITY" --help
contains "$out" "9  worker stopped answering" help_lists_exit_codes
done_testing
