#!/bin/bash
# tests/make-envs (what make demo and make check run first) shows how long
# provisioning takes and one line per phase per environment on the terminal,
# not only in files. An apiparity stand-in plays env create, so nothing is
# provisioned here.
. "$(dirname "$0")/lib.sh"
plan 14

cat > "$T/fake-apiparity" <<'EOF'
#!/bin/bash
# Plays `env create NAME` (two phases, then the stamp) and `tests fetch NAME`.
echo "$*" >> "$APIPARITY_ENV_ROOT/calls"
case "$1 $2" in
"env create")
	echo "apiparity: env $3: debootstrap" >&2; sleep 0.2
	echo "apiparity: env $3: installing torch" >&2
	mkdir -p "$APIPARITY_ENV_ROOT/$3" && touch "$APIPARITY_ENV_ROOT/$3/.apiparity-env"
	echo "$APIPARITY_ENV_ROOT/$3: created (Debian $3)" ;;
"tests fetch") exit 0 ;;
esac
EOF
chmod +x "$T/fake-apiparity"
mkdir -p "$T/root/trixie" && touch "$T/root/trixie/.apiparity-env"

APIPARITY_ENV_ROOT="$T/root" run 0 make_envs_succeeds "$TOP/tests/make-envs" "$T/fake-apiparity"
contains "$err" "^tests/make-envs: provisioning bookworm sid under $T/root, concurrently: about 2 minutes each and 5 minutes in all" \
	start_says_what_is_provisioned_and_how_long_it_takes
for e in bookworm sid; do
	for phase in debootstrap "installing torch"; do
		contains "$err" "^\[ *[0-9]+s\] apiparity: env $e: $phase$" "terminal_shows_${e}_${phase// /_}"
	done
	contains "$(cat "$T/root/$e.stderr")" "^apiparity: env $e: debootstrap$" "${e}_progress_is_kept_in_a_file_too"
done
lacks "$err" "env trixie:" complete_environment_is_not_provisioned_again
equals "$(grep -n 'trixie' "$T/root/calls" | cut -d: -f2-)" \
	"$(printf 'tests fetch trixie\nenv create trixie-openreg --suite trixie --backend openreg')" \
	backend_environment_is_built_after_its_suites_test_tree_is_fetched
contains "$err" "^\[ *[0-9]+s\] apiparity: env trixie-openreg: debootstrap$" \
	terminal_shows_the_backend_environments_phases_too
contains "$err" "^tests/make-envs: done in [0-9]+s$" end_says_how_long_it_took

APIPARITY_ENV_ROOT="$T/root" run 0 make_envs_on_complete_environments "$TOP/tests/make-envs" "$T/fake-apiparity"
equals "$err" "" complete_environments_are_left_silently
done_testing
