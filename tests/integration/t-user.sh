#!/bin/bash
# apiparity as a user without root, on this machine's own Python with torch:
# --python instead of an environments file, env add into the user's own file
# ($HOME/.config/apiparity/envs.ini), check, report and verify; and one clear
# line where something needs root (a chroot environment). The user is
# `nobody`, entered with setpriv(1), with a copy of the binary and a home of
# its own under $T.
. "$(dirname "$0")/lib.sh"
plan 22
TARGET=torch.autograd.grad_mode.set_grad_enabled
U="$T/user"

# as_user CMD... - CMD as nobody, with nothing of root's environment.
as_user() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env -i PATH=/usr/bin:/bin HOME="$U/home" LANG=C.UTF-8 \
		APIPARITY_ENV_ROOT="$ENV_ROOT" "$@"
}

as_nobody() {
	run 0 user_checks_against_this_machines_python as_user "$U/apiparity" check $TARGET \
		--python /usr/bin/python3 --out "$U/home/sub"
	contains "$out" "^usr-bin-python3 .* consistent$" user_check_is_consistent
	equals "$(field "$U/home/sub/usr-bin-python3/bundle.json" 'b["env"]["name"], b["verdict"]')" \
		"('usr-bin-python3', 'consistent')" bundle_names_the_environment_after_the_path
	run 0 user_reports as_user "$U/apiparity" report "$U/home/sub" --format md,json
	run 0 user_verifies as_user "$U/apiparity" verify "$U/home/sub"
	contains "$out" "^## apiparity review: ACCEPT$" user_submission_is_accepted

	# A sweep, as the user, of one catalog entry.
	printf 'torch.autograd.grad_mode module\n' > "$U/home/catalog.txt"
	run 0 user_sweeps as_user "$U/apiparity" sweep --python /usr/bin/python3 \
		--catalog "$U/home/catalog.txt" --out "$U/home/sweep"
	contains "$(cat "$U/home/sweep/matrix.jsonl")" '"api": ?"torch\.autograd\.grad_mode\.set_grad_enabled"' \
		user_sweep_lists_the_entrys_apis

	# NAME=PATH names the environment.
	run 0 named_python_is_checked as_user "$U/apiparity" check $TARGET \
		--python host=/usr/bin/python3 --no-official --out "$U/home/named"
	contains "$out" "^host .* consistent$" named_python_is_the_environments_name

	# env add writes the user's own file; the built-in environments stay.
	run 0 env_add_writes_the_users_file as_user "$U/apiparity" env add mine \
		--python /usr/bin/python3 --device cpu
	equals "$out" "$U/home/.config/apiparity/envs.ini: [mine] added" env_add_names_the_file
	run 0 user_env_list_has_the_added_environment as_user "$U/apiparity" env list --timeout 20
	contains "$out" "^mine +reachable +python [0-9.]+; /usr/bin/python3$" added_environment_is_reachable
	contains "$out" "^trixie " built_in_environments_are_still_listed
	run 0 env_add_takes_an_exec_prefix as_user "$U/apiparity" env add wrapped \
		--python /usr/bin/python3 --exec "env APIPARITY_T=1"
	run 0 user_env_show_reaches_the_prefixed_environment as_user "$U/apiparity" env list --timeout 20
	contains "$out" "^wrapped +reachable +python [0-9.]+; env APIPARITY_T=1 /usr/bin/python3$" \
		added_prefix_is_how_it_runs
	run 4 env_add_of_a_name_taken_is_a_config_error as_user "$U/apiparity" env add mine \
		--python /usr/bin/python3
	contains "$err" "envs.ini:[0-9]+: environment \[mine\] defined twice$" name_taken_is_said_with_its_line

	# A chroot needs root: one line that says so, exit 3.
	run 3 user_chroot_environment_is_unreachable as_user "$U/apiparity" check $TARGET \
		--env trixie --no-official --out "$U/home/chroot"
	contains "$err" "^apiparity: env trixie: environment unreachable: .*Operation not permitted \(chroot environments need root\)$" \
		chroot_without_root_says_it_needs_root
}

why=""
[ "$(id -u)" = 0 ] || why="needs root to become another user (setpriv)"
[ -z "$why" ] && ! "$PYTHON" -c 'import torch' 2> /dev/null && why="this machine's python3 has no torch (python3-torch)"
if [ -z "$why" ]; then
	mkdir -p "$U/home" && cp "$APIPARITY" "$U/apiparity" && chown nobody "$U/home" &&
		chmod 755 "$T" "$U"
	as_user test -x "$U/apiparity" || why="nobody cannot reach $U (a parent directory is closed to it)"
fi
unless "$why" -- as_nobody
done_testing
