#!/bin/bash
# apiparity sweep, diff and docs on the real reference environments: the
# matrix of a small catalog, what sweep refuses, and one sweep of the whole
# catalog with the diff and the docs audit of the issue's example.
# (t-sweep-resume.sh: kill -9 and --resume, crashes and hangs;
# t-sweep-shards.sh: shards and merge; t-sweep-depth.sh: depth probe and numeric.)
. "$(dirname "$0")/lib.sh"
SW="$FIX/sweep"
SMALL="$SW/catalog-small.txt"
printf '[trixie]\nchroot = trixie\nbind = %s:/mnt\nsetenv = PYTHONPATH=/mnt\n' "$SW/faults" > "$T/faults.ini"
plan 66

# jq-less reading of a matrix: a Python expression over L, its lines.
mx() { py "import json,sys; L=[json.loads(x) for x in open(sys.argv[1])]; print(($2))" "$1"; }
MT=torch.autograd.grad_mode.set_multithreading_enabled

small_three() {
	run 0 small_sweep_of_three_envs_succeeds "$APIPARITY" sweep --env bookworm --env trixie --env sid \
		--catalog "$SMALL" --depth signature --out "$T/s3"
	m="$T/s3/matrix.jsonl"
	equals "$(mx "$m" 'len(L) == 3 * len(set((l["module"], l["api"]) for l in L))')" True \
		one_line_per_api_per_environment
	equals "$(mx "$m" '[l["env"] for l in L][:3]')" "['bookworm', 'trixie', 'sid']" lines_keep_env_order
	equals "$(mx "$m" "[(l['env'], l['status'], l['verdict'], l['kind'], l['key']) for l in L if l['api'] == '$MT.clone']")" \
		"[('bookworm', 'absent', 'absent', None, 'set_multithreading_enabled.clone'), ('trixie', 'present', 'consistent', 'method', 'set_multithreading_enabled.clone'), ('sid', 'present', 'consistent', 'method', 'set_multithreading_enabled.clone')]" \
		clone_is_absent_in_bookworm_and_consistent_elsewhere
	equals "$(mx "$m" "[(l['file'], l['pure_python'], l['signature'], l['owner']) for l in L if l['api'] == '$MT.clone' and l['env'] == 'sid']")" \
		"[('torch/autograd/grad_mode.py', True, [\"clone(self) -> 'set_multithreading_enabled'\"], '$MT')]" \
		clone_resolution_has_file_signature_and_owner
	want=$(in_chroot sid python3 -c "import inspect, torch.autograd.grad_mode as g; print(g.set_multithreading_enabled.clone.__code__.co_firstlineno)" | tail -1)
	equals "$(mx "$m" "[l['line'] for l in L if l['api'] == '$MT.clone' and l['env'] == 'sid'][0]")" "$want" \
		clone_line_is_the_environments_own
	equals "$(mx "$m" "sorted(set((l['status'], l['verdict'], 'tensorboard' in (l['reason'] or '')) for l in L if l['api'] == 'torch.utils.tensorboard'))")" \
		"[('import-error', 'not-run', True)]" optional_dependency_is_an_import_error_with_its_reason
	equals "$(mx "$m" "sorted(set(l['verdict'] for l in L if l['api'] == 'torch.fft.fft'))")" "['consistent', 'inconsistent']" \
		a_signature_change_is_inconsistent_against_the_reference
	equals "$(mx "$m" "[l['kind'] for l in L if l['api'] == 'torch.Size.numel' and l['env'] == 'trixie']")" "['builtin-method']" \
		class_entry_walks_its_methods
	(cd "$T/s3" && sha256sum --quiet --strict -c MANIFEST.sha256) && ok sweep_manifest_checks_with_sha256sum \
		|| nok sweep_manifest_checks_with_sha256sum
	contains "$(cat "$T/s3/matrix.html")" "Content-Security-Policy\" content=\"default-src 'none'" html_has_a_strict_csp
	lacks "$(cat "$T/s3/matrix.html")" "<script" html_has_no_script
	contains "$(cat "$T/s3/matrix.html")" "<svg[^>]*><title>consistent [0-9]+, inconsistent [0-9]+, not-run [0-9]+, absent [0-9]+</title>" \
		html_has_an_svg_bar_per_module
	contains "$(cat "$T/s3/matrix.md")" "^\| torch\.fft \| trixie \| [0-9]+ \| [0-9]+ \| 0 \| 0 \|$" md_summarises_per_module_and_env
	contains "$err" "^trixie: torch\.fft: [0-9]+ APIs, ok, [0-9.]+ s \[[0-9]+/9\]$" progress_is_one_line_per_module
	equals "$(field "$T/s3/sweep.json" 'b["state"], b["depth"], [e["name"] for e in b["envs"]]')" \
		"('complete', 'signature', ['bookworm', 'trixie', 'sid'])" sweep_json_says_complete
	run 0 diff_of_two_envs_succeeds "$APIPARITY" diff "$T/s3:bookworm" "$T/s3:trixie"
	contains "$out" "^added +$(rx "$MT")  \(class\)$" diff_lists_set_multithreading_enabled_as_added
	contains "$out" "^added +$(rx "$MT.clone")  \(method\)$" diff_lists_its_clone_as_added
	contains "$out" "^signature +torch\.fft\.fft: " diff_lists_signature_changes
	contains "$out" "^[0-9]+ added, [0-9]+ removed, [0-9]+ moved, [0-9]+ unlisted, [0-9]+ signature changes" diff_ends_with_counts
	for f in table list; do
		run 0 docs_generate_${f}_succeeds "$APIPARITY" docs generate "$T/s3" --format $f --out "$T/gen-$f"
		run 0 generated_${f}_pages_audit "$APIPARITY" docs audit "$T/gen-$f" "$T/s3"
		equals "$(printf '%s\n' "$out" | grep -c ': backed: ') entries audited" "$(printf '%s\n' "$out" | tail -1)" \
			generated_${f}_pages_read_back_and_every_entry_is_backed
	done
	contains "$(cat "$T/gen-table/torch-autograd-grad_mode.md")" "^> <font size=\"3\">clone\(\)</font>$" \
		generated_page_has_the_clone_sub_entry
	# the older formats: the 2.7.1 one-line pages and the oldest API tables
	for f in oneline-format-2-7-1 table-format-oldest; do
		run 0 docs_audit_of_${f}_succeeds "$APIPARITY" docs audit "$TOP/tests/data/backend-docs/$f" "$T/s3"
		equals "$(printf '%s\n' "$out" | awk '/^[^ ]+\.md:[0-9]+: [a-z-]+: / && !/: missing-sub-entry: / { n++ }
			/ entries audited$/ { t = $1 } END { print (t > 0 && n == t) ? "yes" : n " findings for " t " entries" }')" yes \
			audit_classifies_every_${f}_entry_once
		lacks "$out" ": unreadable: " no_${f}_entry_is_unreadable
	done
	contains "$out" "^torch-linalg\.md: formats: api-table 5$" audit_says_the_oldest_page_is_an_api_table
	contains "$out" "^torch-linalg\.md:12: contradicted: torch\.linalg\.ldl_factor: .*says not supported, measured consistent in bookworm" \
		oldest_row_no_is_a_claim_checked_at_its_line
	contains "$out" "^torch-__config__\.md:8: not-swept: torch\.__config__\.show: " \
		oldest_escaped_name_is_read_as_a_reader_would
	run 2 diff_of_a_multi_env_matrix_wants_an_env "$APIPARITY" diff "$T/s3" "$T/s3:sid"
	contains "$err" "holds several environments; name one as .*:ENV \(it holds bookworm, trixie, sid\)" \
		diff_names_the_environments
}
needs bookworm trixie sid -- small_three

# A plugin that replaces two functions: patched there, and only there.
plugin_patch() {
	sed "s|@FIX@|$FIX|g" "$FIX/check.ini" > "$T/check.ini"
	printf 'torch.nn.functional module\n' > "$T/nnf.txt"
	run 0 sweep_with_a_patching_plugin_succeeds "$APIPARITY" sweep --envs "$T/check.ini" --env trixie \
		--env sig-plugin --catalog "$T/nnf.txt" --out "$T/sp"
	m="$T/sp/matrix.jsonl"
	equals "$(mx "$m" '[(l["api"].rsplit(".", 1)[1], l["verdict"]) for l in L if l["patched"]]')" \
		"[('hardtanh', 'inconsistent'), ('leaky_relu', 'inconsistent')]" plugin_patches_are_flagged_and_inconsistent
	equals "$(mx "$m" 'sorted(set((l["env"], l["patched"]) for l in L if l["api"].endswith(".relu")))')" \
		"[('sig-plugin', False), ('trixie', None)]" untouched_api_is_compared_only_where_a_plugin_loaded
	equals "$(field "$T/sp/sweep.json" '[e["plugins"] for e in b["envs"]]')" "[[], ['sig_plugin']]" \
		sweep_json_names_the_plugins_loaded
}
needs trixie -- plugin_patch

# Entries that reach the same APIs (a parent module and its submodules, a
# class with an entry of its own): each API is one line, keyed as the pages
# key it.
each_api_once() {
	printf '%s\n' 'torch.autograd module' 'torch.autograd.function module' \
		'torch.autograd.grad_mode module' 'torch.nn module' 'torch.nn.parameter module' \
		'torch.nn.Module class' > "$T/overlap.txt"
	run 0 sweep_of_overlapping_entries_succeeds "$APIPARITY" sweep --env trixie --catalog "$T/overlap.txt" \
		--depth resolve --out "$T/ov"
	m="$T/ov/matrix.jsonl"
	equals "$(mx "$m" 'sorted(a for a in set(l["api"] for l in L) if sum(1 for x in L if x["api"] == a) > 1)')" \
		"[]" no_api_has_two_lines
	equals "$(mx "$m" "sorted((l['module'], l['key']) for l in L if l['key'] in ('Function.forward', 'set_grad_enabled.clone'))")" \
		"[('torch.autograd.function', 'Function.forward'), ('torch.autograd.grad_mode', 'set_grad_enabled.clone')]" \
		members_are_walked_where_their_class_is_defined
	equals "$(mx "$m" "[(l['module'], l['kind'], l['file']) for l in L if l['api'] == 'torch.nn.Module']")" \
		"[('torch.nn.Module', 'class', 'torch/nn/modules/module.py')]" class_entry_line_is_the_class_measured
	equals "$(mx "$m" "sorted(l['module'] for l in L if l['api'] in ('torch.autograd.Function', 'torch.autograd.function.Function'))")" \
		"['torch.autograd', 'torch.autograd.function']" a_reexported_class_keeps_both_names
}
needs trixie -- each_api_once

# What sweep refuses before anything runs.
run 2 depth_deep_is_refused "$APIPARITY" sweep --env trixie --out "$T/x" --depth deep
contains "$err" "--depth wants resolve, signature, probe or numeric, not 'deep'" depth_refusal_names_the_depths
run 2 sweep_without_out_is_a_usage_error "$APIPARITY" sweep --env trixie
run 2 shard_out_of_range_is_refused "$APIPARITY" sweep --env trixie --out "$T/x" --shard 3/3
JOB_COMPLETION_INDEX=1 run 2 job_index_without_count_is_refused "$APIPARITY" sweep --env trixie --out "$T/x"
contains "$err" "JOB_COMPLETION_INDEX is set but not the count" job_index_refusal_says_why
printf 'torch module\ntorch.nn  modul\n' > "$T/bad.txt"
run 4 malformed_catalog_names_file_and_line "$APIPARITY" sweep --env trixie --out "$T/x" --catalog "$T/bad.txt"
contains "$err" "$(rx "$T/bad.txt"):2: unknown walk 'modul'" catalog_error_has_file_line

# The whole catalog in the three environments, at depth signature.
full() {
	run 0 full_sweep_completes "$APIPARITY" sweep --env bookworm --env trixie --env sid --depth signature \
		--out "$T/all"
	equals "$(mx "$T/all/matrix.jsonl" 'min(sum(1 for l in L if l["env"] == e and l["status"] == "present") for e in ("bookworm", "trixie", "sid")) >= 3000')" \
		True at_least_3000_apis_per_environment
	run 0 full_diff_succeeds "$APIPARITY" diff "$T/all:bookworm" "$T/all:trixie"
	contains "$out" "^added +$(rx "$MT")  \(class\)$" full_diff_lists_set_multithreading_enabled
	contains "$out" "^added +$(rx "$MT.clone")  \(method\)$" full_diff_lists_its_clone
	run 0 docs_audit_of_the_213_page_succeeds "$APIPARITY" docs audit "$TOP/tests/data/backend-docs/table-format-2-13-0" "$T/all"
	contains "$out" "^torch-autograd\.md:719: missing-sub-entry: $(rx "$MT.clone"): the pages list $(rx "$MT") but not its method clone\(\)" \
		audit_names_the_missing_clone_sub_entry
	equals "$(printf '%s\n' "$out" | awk '/^torch-autograd\.md:[0-9]+: [a-z-]+: / && !/: missing-sub-entry: / { n++ }
		/ entries audited$/ { t = $1 } END { print (t > 0 && n == t) ? "yes" : n " findings for " t " entries" }')" yes \
		audit_classifies_every_entry_once
	lacks "$out" ": not-swept: " every_entry_of_the_page_is_under_the_catalog
	run 0 docs_audit_of_the_list_format_succeeds "$APIPARITY" docs audit "$TOP/tests/data/backend-docs/list-format-2-10-0" "$T/all"
}
needs bookworm trixie sid -- full

done_testing
