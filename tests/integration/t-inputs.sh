#!/bin/bash
# Inputs refused before any work, in one line: options without their value,
# an --out where evidence cannot be written, input files that are not regular
# files. Needs no environment: each is refused before one is entered.
. "$(dirname "$0")/lib.sh"
plan 100
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone

# Every option that takes a value, in every subcommand, says that it needs one.
needs() { # NAME OPTION CMD...
	local name=$1 opt=$2; shift 2
	run 2 "${name}_without_value_is_a_usage_error" "$@" "$opt"
	contains "$err" "option '$opt' needs a value" "${name}_without_value_says_it_needs_one"
}
for o in --envs --env --root --out --reference --timeout --script --specs --torch-src --claimed --limits; do
	needs "check_${o#--}" "$o" "$APIPARITY" check $TARGET
done
for o in --lang --docs --format; do needs "report_${o#--}" "$o" "$APIPARITY" report "$T"; done
needs verify_policy --policy "$APIPARITY" verify "$T"
for o in --envs --root --torch-src --timeout --log --env -k; do
	needs "tests_${o#-}" "$o" "$APIPARITY" tests run x.py
done
needs tests_claimed --claimed "$APIPARITY" tests find x
for o in --envs --root --timeout; do needs "env_${o#--}" "$o" "$APIPARITY" env show trixie; done
needs env_suite --suite "$APIPARITY" env create x
run 2 unknown_option_is_still_called_unknown "$APIPARITY" check $TARGET --colour
contains "$err" "unknown option '--colour'" unknown_option_is_named

# An --out where evidence cannot be written is refused before anything runs.
touch "$T/file"
printf '[x]\nop = *\nrtol = abc\nreason = r\n' > "$T/badtol.ini"
run 4 malformed_tolerances_file_is_a_config_error "$APIPARITY" check $TARGET --env trixie --tolerances "$T/badtol.ini" --out "$T/tol"
contains "$err" "badtol.ini:3: rtol: 'abc' is not a number" malformed_tolerances_file_names_its_line
run 4 tolerances_directory_is_refused "$APIPARITY" check $TARGET --env trixie --tolerances "$T" --out "$T/tol"
contains "$err" "tolerances: .*Is a directory" tolerances_directory_is_named
# A known limit without its reason is a malformed limits file: one line,
# naming the file, the line and what is missing; the configuration's code.
printf '[openreg-str]\nbackend = openreg\nop = *\nwhat = str arguments\nraises = RuntimeError: Cannot send\n' > "$T/nolimitreason.ini"
run 4 limit_without_reason_is_a_config_error "$APIPARITY" check $TARGET --env trixie --limits "$T/nolimitreason.ini" --out "$T/lim"
equals "$err" "apiparity: limits: malformed configuration: $T/nolimitreason.ini:1: [openreg-str] has no reason (every limit says why it is the backend's)" \
	limit_without_reason_is_one_line_naming_it
equals "$out" "" limit_without_reason_claims_no_verdict

run 2 empty_out_is_a_usage_error "$APIPARITY" check $TARGET --env trixie --out ""
contains "$err" "^apiparity: check: --out wants a directory, not an empty string" empty_out_is_explained
equals "$out" "" empty_out_prints_nothing_on_stdout
run 10 file_as_out_is_refused "$APIPARITY" check $TARGET --env trixie --out "$T/file"
equals "$err" "apiparity: check --out: Not a directory: $T/file" file_as_out_is_one_line
equals "$out" "" file_as_out_claims_no_verdict_and_no_evidence
run 10 device_as_out_is_refused "$APIPARITY" check $TARGET --env trixie --out /dev/null
contains "$err" "check --out: Not a directory: /dev/null$" device_as_out_is_named
mkdir -p "$T/keep/trixie"; echo precious > "$T/keep/trixie/notes"
run 10 directory_that_is_not_evidence_is_not_replaced "$APIPARITY" check $TARGET --env trixie --out "$T/keep"
contains "$err" "$T/keep/trixie is not the evidence of an earlier check" foreign_directory_is_named
equals "$(cat "$T/keep/trixie/notes")" precious foreign_directory_is_left_alone
mkdir -p "$T/ro"
if mount -t tmpfs -o ro,size=64k tmpfs "$T/ro" 2>/dev/null; then
	run 10 read_only_out_is_refused "$APIPARITY" check $TARGET --env trixie --out "$T/ro/out"
	contains "$err" "^apiparity: check --out: Read-only file system: $T/ro/out$" read_only_out_is_named
	lacks "$out" "consistent|evidence:" read_only_out_claims_no_verdict
	umount "$T/ro"
else
	for t in refused named claims_no_verdict; do skip "read_only_out_is_$t" "cannot mount a tmpfs here"; done
fi

# Input files are read only when they are regular files, so nothing hangs.
mkfifo "$T/fifo.py" "$T/fifo.yaml"
run 4 fifo_as_script_is_refused timeout 10 "$APIPARITY" check $TARGET --env trixie --script "$T/fifo.py" --out "$T/o"
contains "$err" "fifo.py: not a regular file$" fifo_as_script_is_named
run 4 directory_as_script_is_refused "$APIPARITY" check $TARGET --env trixie --script "$T" --out "$T/o"
mkdir -p "$T/specs"; mkfifo "$T/specs/x.yaml"
run 4 fifo_as_spec_is_refused timeout 10 "$APIPARITY" check $TARGET --env trixie --specs "$T/specs" --out "$T/o"
contains "$err" "x.yaml: not a regular file$" fifo_as_spec_is_named
run 4 fifo_as_policy_is_refused timeout 10 "$APIPARITY" verify --policy "$T/fifo.yaml" "$T"
contains "$err" "fifo.yaml: not a regular file$" fifo_as_policy_is_named
run 4 device_as_policy_is_refused timeout 10 "$APIPARITY" verify --policy /dev/zero "$T"
# A policy fails closed: a misspelt key or a word it does not know is exit 4,
# one line naming the file and the key's line, never "no".
printf 'policy: p\nstatuses:\n  probe: [PASS]\nrequire_signatures: "yes"\n' > "$T/typo.yaml"
run 4 misspelt_policy_key_is_refused "$APIPARITY" verify --policy "$T/typo.yaml" "$T"
equals "$err" "apiparity: verify --policy: malformed configuration: $T/typo.yaml:4: require_signatures: not a key of a policy (known: policy, require_envs, statuses, require_kinds, require_official, traces_agree, require_signature, require_facts, accept_tolerances, accept_limits)" \
	misspelt_policy_key_is_named_with_its_line
printf 'policy: p\nstatuses:\n  probe: [PASS]\nrequire_signature: YES\n' > "$T/yes.yaml"
run 4 unknown_policy_word_is_refused "$APIPARITY" verify --policy "$T/yes.yaml" "$T"

# tests run takes only a file inside the environment's test tree.
run 2 tests_run_of_a_file_outside_the_tree_is_a_usage_error "$APIPARITY" tests run ../../../../usr/lib/python3.13/this.py --env trixie
equals "$err" "apiparity: tests run: FILE is a path inside the environment's test tree (test/test_autograd.py), not '../../../../usr/lib/python3.13/this.py' (see apiparity --help)" \
	the_file_outside_is_named
run 2 tests_run_of_an_absolute_path_is_a_usage_error "$APIPARITY" tests run /etc/passwd --env trixie

# A matrix or a sweep that is garbage is malformed input (exit 4), not a dead
# worker (8): one line naming the file and the line.
mkdir -p "$T/garbage"; printf 'root:x:0:0\n' > "$T/garbage/matrix.jsonl"
run 4 diff_of_garbage_is_malformed_input "$APIPARITY" diff "$T/garbage" "$T/garbage"
equals "$err" "apiparity: diff A: malformed input: $T/garbage/matrix.jsonl:1: '[' or '{' expected near 'root'" \
	diff_of_garbage_names_the_file_and_line
run 4 docs_audit_of_a_garbage_sweep_is_malformed_input "$APIPARITY" docs audit "$T" "$T/garbage"

# verify: a bundle that cannot be read is a reason (exit 1); no submission at all is 4.
mkdir -p "$T/sub/a2"; printf '{"schema": "apiparity.bundle/1",' > "$T/sub/a2/bundle.json"
run 1 unparsable_bundle_is_changes_needed "$APIPARITY" verify "$T/sub"
contains "$out" "^## apiparity review: CHANGES-NEEDED$" unparsable_bundle_review_is_markdown
contains "$out" "^- a2: the bundle cannot be read, so nothing of this environment can be checked: " \
	unparsable_bundle_is_the_reason
mkfifo "$T/sub/a2/fifo"; rm "$T/sub/a2/bundle.json"; mkfifo "$T/sub/a2/bundle.json"
run 1 fifo_bundle_is_changes_needed timeout 10 "$APIPARITY" verify "$T/sub"
run 4 missing_submission_exits_4 "$APIPARITY" verify "$T/none"
contains "$err" "none: No such file or directory" missing_submission_is_named
done_testing
