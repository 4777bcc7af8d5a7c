#!/bin/bash
# The surface's findings, judged: docs audit of the backend's whole 2.12
# folder (tests/truth/table-format-2-12-0) against the trixie and sid sweeps,
# every absent / not-found / instance-attribute / absent-in-version /
# optional-dependency finding judged by tests/truth/judge (an independent
# resolver run by each environment's own Python); a false finding fails.
# The bookworm -> trixie diff: every "removed" judged in trixie's Python.
# Then each shape the issue named, a test each: inherited, pybind, PropModule,
# published private names, a plugin's method, a member set on self, a module
# that a torch does not have, typing aliases that are no API.
. "$(dirname "$0")/lib.sh"
plan 58
PAGES="$TOP/tests/truth/table-format-2-12-0"
JUDGE="$TOP/tests/truth/judge"
mx() { py "import json,sys; L=[json.loads(x) for x in open(sys.argv[1])]; print(($2))" "$1"; }

# class_of NAME - the finding class the audit gave the entry NAME (its first).
class_of() {
	printf '%s\n' "$audit" | awk -v n="$1" -F': ' '$3 == n && $2 != "missing-sub-entry" { print $2; exit }'
}

whole() {
	run 0 resolve_sweep_of_trixie_and_sid_succeeds "$APIPARITY" sweep --env trixie --env sid \
		--depth resolve --out "$T/s"
	run 0 audit_of_the_2_12_folder_succeeds "$APIPARITY" docs audit "$PAGES" "$T/s"
	audit=$out
	printf '%s\n' "$audit" > "$T/audit.txt"
	run 0 every_existence_finding_is_true_in_the_environments_own_python \
		"$PYTHON" "$JUDGE" "$T/audit.txt" "$ENV_ROOT" trixie sid
	contains "$out" "^truth: plugin-api +[1-9][0-9]* claimed" the_judge_saw_claims_to_judge
	# reached through its class or module, with no line of its own: the
	# claims are checked (unbacked: no product of these pages is measured)
	for api in torch.optim.Adam.zero_grad torch.optim.lr_scheduler.OneCycleLR.get_last_lr \
		torch.optim.Rprop.state_dict torch.distributed.GradBucket.index \
		torch.backends.cudnn.allow_tf32 torch._foreach_neg_ torch._assert; do
		equals "$(class_of "$api")" unbacked "${api//./_}_is_reached"
	done
	# a class named by its defining module, swept under its re-export: the
	# same class, with its members
	equals "$(class_of torch.distributions.von_mises.VonMises.log_prob)" unbacked \
		a_class_named_by_its_defining_module_is_the_swept_one
	equals "$(class_of torch.distributed.device_mesh.DeviceMesh.get_group)" unbacked \
		device_mesh_by_its_defining_module_is_the_swept_one
	contains "$audit" "^torch-nn\.md:[0-9]+: missing-sub-entry: " the_audit_still_finds_missing_sub_entries
	equals "$(class_of torch.nn.Module.npu)" plugin-api a_plugins_method_is_a_plugin_api_without_the_plugin
	contains "$(grep ': plugin-api: torch\.nn\.Module\.npu: ' "$T/audit.txt")" \
		": torch_npu adds it when it loads \(backend npu: torch\.utils\.generate_methods_for_privateuse1_backend\(for_tensor=True, for_module=True, for_storage=True, for_packed_sequence=True\); specs/plugin-apis\.ini:[0-9]+\), and no measured environment loads torch_npu$" \
		the_plugin_api_says_the_call_that_adds_it_and_that_no_environment_loads_the_plugin
	# the judge can say false: a method upstream's rule does not make, and
	# a name that is there; a device module's contents are the module's
	local call="torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=False, for_packed_sequence=False)"
	{
		printf 'x.md:1: plugin-api: torch.nn.Module.is_npu: torch_npu adds it when it loads (backend npu: %s; p.ini:1), and no measured environment loads torch_npu\n' "$call"
		printf 'x.md:2: plugin-api: torch.npu.synchronize: torch_npu adds it when it loads (backend npu: torch._register_device_module('"'npu'"', ...); p.ini:1), and no measured environment loads torch_npu\n'
		printf 'x.md:3: not-found: torch.nn.Module.cuda: getattr reaches nothing\n'
	} > "$T/forged.txt"
	run 1 the_judge_finds_forged_findings_false "$PYTHON" "$JUDGE" "$T/forged.txt" "$ENV_ROOT" trixie
	equals "$(printf '%s\n' "$out" | grep -E '^truth: (plugin-api|not-found) ')" \
		"$(printf 'truth: not-found              1 claimed,    0 true,    1 false; first: torch.nn.Module.cuda\ntruth: plugin-api             2 claimed,    1 true,    1 false; first: torch.nn.Module.is_npu')" \
		the_judge_says_which_are_false
	equals "$(class_of torch.TypedStorage.dtype)" instance-attribute a_member_assigned_on_self_is_an_instance_attribute
	equals "$(mx "$T/s/matrix.jsonl" 'sorted(set(l["api"] for l in L if l["api"].rsplit(".", 1)[-1] in ("Optional", "Callable", "TypeVar", "annotations", "Any") and l["status"] == "present" and l["kind"] != "module"))')" \
		"[]" typing_aliases_and_future_features_are_no_api
	equals "$(mx "$T/s/matrix.jsonl" 'sorted(set(l["env"] for l in L if l["api"] == "torch.backends.cudnn.allow_tf32" and l["status"] == "present" and l["kind"] != "module"))')" \
		"['sid', 'trixie']" a_propmodules_contents_are_walked
	# a C type that torch gives its own module's name is no Python class of
	# torch/__init__.py; a Python class keeps its file and line
	equals "$(mx "$T/s/matrix.jsonl" 'sorted(set((l["api"], l["file"], l["line"], l["pure_python"]) for l in L if l["api"] in ("torch.layout", "torch.dtype", "torch.Size") and l["env"] == "trixie"))')" \
		"[('torch.Size', None, None, False), ('torch.dtype', None, None, False), ('torch.layout', None, None, False)]" \
		c_types_re_exported_by_torch_have_no_python_file
	equals "$(mx "$T/s/matrix.jsonl" '[(l["file"], l["pure_python"]) for l in L if l["api"] == "torch.nn.Linear" and l["env"] == "trixie"]')" \
		"[('torch/nn/modules/linear.py', True)]" a_python_class_keeps_its_file
}
needs trixie sid -- whole

# Generated pages link where upstream publishes each name, as 2.6's own docs
# sources (fetched with its tests) say, each URL judged by tests/truth/urls,
# a reading of those sources of its own; the pages round-trip through the
# audit with no finding; the default job's member is a sub-entry of its
# class, linked as an anchor on the class's page.
published() {
	local src gm="torch.autograd.grad_mode.set_multithreading_enabled"
	src=$(ls -d "${APIPARITY_TESTS_ROOT:-/var/cache/apiparity/tests}"/2.6.0*/docs/source 2>/dev/null | head -1)
	equals "$([ -n "$src" ] && [ -f "$src/autograd.rst" ] && echo fetched)" fetched \
		docs_sources_of_2_6_were_fetched_with_its_tests
	run 0 generate_with_upstreams_urls_succeeds "$APIPARITY" docs generate "$T/s" --out "$T/gen"
	contains "$out" "^[0-9]+ pages in .* \([0-9]+ entries without an upstream URL" generate_counts_the_unlinked
	run 0 every_generated_url_is_in_upstreams_docs_sources "$PYTHON" "$TOP/tests/truth/urls" "$src" "$T"/gen/*.md
	contains "$out" "^urls: [0-9]{4,} judged, 0 false$" the_urls_judged_are_thousands
	run 0 generated_pages_audit_succeeds "$APIPARITY" docs audit "$T/gen" "$T/s"
	equals "$(printf '%s\n' "$out" | grep -E '^[^ ]+\.md:[0-9]+: ' | grep -vc ': backed: ')" 0 \
		generated_pages_round_trip_with_no_finding
	local page="$T/gen/torch-autograd-grad_mode.md"
	# the furniture of the backend's pages: a NOTE that links the module's
	# upstream page, a 目录 of upstream's sections, each a `## ` heading in
	# upstream's order, and every anchor of it a heading of the page
	local nn="$T/gen/torch-nn.md"
	contains "$(cat "$nn")" "^> - 目录下罗列的模块和原生文档一致，对于模块的相关说明请查看原生文档\[LINK\]\(https://pytorch\.org/docs/2\.6/nn\.html#module-torch\.nn\)。$" \
		the_note_links_the_modules_upstream_page
	equals "$(grep -E '^- \[(Containers|Convolution Layers|Loss Functions)\]' "$nn")" \
		"$(printf -- '- [Containers](#containers)\n- [Convolution Layers](#convolution-layers)\n- [Loss Functions](#loss-functions)')" \
		the_contents_list_upstreams_sections_in_its_order
	equals "$(awk '/^## / { s = substr($0, 4) } /^### .* torch\.nn\.(Sequential|Conv2d|MSELoss)$/ { print s }' "$nn")" \
		"$(printf 'Containers\nConvolution Layers\nLoss Functions')" \
		apis_lie_in_upstreams_section
	run 0 every_contents_anchor_is_a_heading_of_its_page "$PYTHON" "$TOP/tests/tools/md-links.py" broken "$T"/gen/*.md
	equals "$(awk -v c="### <code><i>class</i></code> $gm" '$0 == c { inblock = 1; next } /^### / { inblock = 0 } inblock && /^<div/ { d++ } inblock && /^<\/div>/ { d-- } inblock && d == 1 && /^> <font size="3">clone\(\)<\/font>$/ { print "sub-entry"; exit }' "$page")" \
		sub-entry clone_is_a_sub_entry_inside_its_class_block
	contains "$(cat "$page")" "^\*\*原生文档\*\*：\[$gm\.clone\]\(https://pytorch\.org/docs/2\.6/generated/$gm\.html#$gm\.clone\)$" \
		clone_links_as_an_anchor_on_its_class_page
	contains "$(cat "$T/gen/torch-nn.md")" "^\*\*原生文档\*\*：\[torch\.nn\.Linear\]\(https://pytorch\.org/docs/2\.6/generated/torch\.nn\.Linear\.html\)$" \
		a_class_links_to_its_own_page
	equals "$(grep -c 'torch\.nn\.Linear\.html#torch\.nn\.Linear\.forward' "$T/gen/torch-nn.md")" 0 \
		a_member_without_a_docstring_gets_no_anchor_autodoc_would_not_make
	run 0 generate_without_sources_succeeds "$APIPARITY" docs generate "$T/s" --out "$T/gen0" \
		--docs-src "$T/no-such-dir"
	contains "$err" "^apiparity: docs: .*no-such-dir: No such file or directory: no upstream URLs$" \
		missing_sources_are_said
	equals "$(cat "$T"/gen0/*.md | grep -c 'pytorch\.org')" 0 without_sources_no_url_is_guessed
	run 0 check_of_the_default_target_succeeds "$APIPARITY" check "$gm.clone" --env trixie --no-official \
		--out "$T/c"
	run 0 docs_entry_succeeds "$APIPARITY" docs entry "$T/c"
	equals "$(printf '%s\n' "$out" | grep -E '^(###|>) ')" "$(printf '### <code><i>class</i></code> %s\n> <font size="3">clone()</font>' "$gm")" \
		docs_entry_of_clone_is_a_sub_entry_of_its_class
	contains "$out" "^\*\*原生文档\*\*：\[$gm\.clone\]\(https://pytorch\.org/docs/2\.6/generated/$gm\.html#$gm\.clone\)$" \
		docs_entry_links_the_member_as_an_anchor
}
needs trixie sid -- published

# bookworm's torch (1.13) has no torch.export: absent in that version, not
# an optional dependency; and true by the judge.
old() {
	printf 'torch.export                       module\n' > "$T/cat.txt"
	mkdir -p "$T/p"
	cp "$PAGES/torch-export.md" "$T/p/"
	run 0 bookworm_sweep_of_torch_export_succeeds "$APIPARITY" sweep --env bookworm \
		--catalog "$T/cat.txt" --depth resolve --out "$T/b"
	equals "$(mx "$T/b/matrix.jsonl" '[l["status"] for l in L if l["api"] == "torch.export"]')" \
		"['absent']" a_module_the_torch_lacks_is_absent_there
	run 0 audit_against_bookworm_succeeds "$APIPARITY" docs audit "$T/p" "$T/b"
	audit=$out
	printf '%s\n' "$audit" > "$T/audit-b.txt"
	equals "$(class_of torch.export.export)" absent-in-version torch_export_is_absent_in_1_13
	run 0 absent_in_version_is_true_in_bookworms_python "$PYTHON" "$JUDGE" "$T/audit-b.txt" \
		"$ENV_ROOT" bookworm
}
needs bookworm -- old

# bookworm -> trixie: a name is removed only when trixie does not reach it;
# one inherited from a base now, or possibly served by a module's
# __getattr__, is unlisted; and a diff of sweeps of two depths compares no
# signatures.
moved() {
	run 0 resolve_sweep_of_bookworm_and_trixie_succeeds "$APIPARITY" sweep --env bookworm \
		--env trixie --depth resolve --out "$T/bt"
	run 0 diff_bookworm_trixie_succeeds "$APIPARITY" diff "$T/bt:bookworm" "$T/bt:trixie"
	printf '%s\n' "$out" > "$T/diff.txt"
	contains "$out" "^unlisted +torch\.cuda\.amp\.GradScaler\.get_scale: no line of its own, reached through torch\.cuda\.amp\.GradScaler$" \
		an_inherited_member_is_unlisted_not_removed
	contains "$out" "^moved +torch\.distributed\.dist_backend -> torch\.distributed\.Backend$" \
		a_class_at_a_new_path_is_moved
	run 0 every_removal_and_move_is_true_in_trixies_python "$PYTHON" "$JUDGE" --diff "$T/diff.txt" \
		"$ENV_ROOT" trixie bookworm
	printf 'torch.autograd.grad_mode            module\n' > "$T/gm.txt"
	run 0 signature_sweep_of_grad_mode_succeeds "$APIPARITY" sweep --env trixie --catalog "$T/gm.txt" \
		--out "$T/sig"
	run 0 diff_across_depths_succeeds "$APIPARITY" diff "$T/bt:trixie" "$T/sig:trixie"
	contains "$out" "^0 added, 0 removed, 0 moved, 0 unlisted, 0 signature changes, 0 kind changes, 0 behaviour changes$" \
		diff_across_depths_compares_no_signatures
}
needs bookworm trixie -- moved

done_testing
