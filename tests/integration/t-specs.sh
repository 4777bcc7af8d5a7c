#!/bin/bash
# Specs are checked like code: every probe's code: and every binding of every
# member in specs/*.yaml compiles (compile(), never exec) with each reference
# environment's own Python, so a typo fails make check, not a user's run.
# tests/tools/spec-code reads the specs as check does and prints their Python.
. "$(dirname "$0")/lib.sh"
SPEC_CODE=$(dirname "$APIPARITY")/tests/spec-code

# Compiles each item of the JSON on stdin; one line per failure, then a count.
compile='import json, sys
items, bad = json.load(sys.stdin), 0
for it in items:
    try:
        compile(it["code"], it["filename"], it["mode"], dont_inherit=True)
    except SyntaxError as e:
        bad += 1
        print("%s: line %s of its code: %s: %s" % (it["where"], e.lineno, type(e).__name__, e.msg))
print("compiled %d, %d failed" % (len(items), bad))
sys.exit(1 if bad or not items else 0)'

# compiles NAME PYTHON... - compiles $T/code.json with that python.
compiles() { local name=$1; shift; run 0 "$name" "$@" -c "$compile" < "$T/code.json"; }

run 0 spec_code_dumps_the_specs_of_the_tree "$SPEC_CODE" "$TOP/specs"
printf '%s\n' "$out" > "$T/code.json"
nprobes=$(cat "$TOP"/specs/*.yaml | grep -c "^  - name:")
got=$(/usr/bin/python3 -c 'import json,sys; print(sum(i["mode"] == "exec" for i in json.load(sys.stdin)))' < "$T/code.json")
equals "$got" "$nprobes" every_probe_of_the_specs_is_dumped
contains "$out" '"where": "[^"]*: member [a-z._]+, binding [A-Z_]+"' bindings_are_dumped_per_member

compiles specs_compile_with_this_machines_python /usr/bin/python3
for e in bookworm trixie sid; do
	skip_without_env $e 1 && continue
	compiles ${e}_compiles_every_probe_and_binding chroot "$ENV_ROOT/$e" /usr/bin/python3
done

# A deliberately broken copy: a typo in one probe and in one member's field
# fails, naming the probe, the member and the binding.
mkdir "$T/broken"
cp "$TOP"/specs/*.yaml "$T/broken/"
spec=$(ls "$T"/broken/*.yaml | head -1)
probe=$(sed -n 's/^  - name: *//p' "$spec" | head -1)
awk -v p="$probe" '
	$0 ~ "^  - name: *" p "$" { inprobe = 1 }
	inprobe && /^    code: *\|/ { print; print "      if True print(1)"; inprobe = 0; next }
	{ print }' "$spec" > "$T/spec.yaml" && mv "$T/spec.yaml" "$spec"
member=$(sed -n 's/^  - class: *//p' "$spec" | head -1)
field=$(awk '/^  - class: /{m++} m == 1 && /^    [a-z_]+: /{sub(/^ */, ""); sub(/:.*/, ""); if ($0 != "traits") { print; exit } }' "$spec")
awk -v m="$member" -v f="$field" '
	$0 ~ "^  - class: *" m "$" { inm = 1 }
	inm && $0 ~ "^    " f ":" { sub(/: .*/, ": \"(((\""); inm = 0 }
	{ print }' "$spec" > "$T/spec.yaml" && mv "$T/spec.yaml" "$spec"
run 0 broken_copy_still_loads_as_a_spec "$SPEC_CODE" "$T/broken"
printf '%s\n' "$out" > "$T/code.json"
run 1 broken_probe_fails_to_compile /usr/bin/python3 -c "$compile" < "$T/code.json"
contains "$out" ": probe $probe: line [0-9]+ of its code: SyntaxError" broken_probe_is_named
contains "$out" ":[0-9]+: member ${member//./\\.}, binding [A-Z_]+: line 1 of its code: SyntaxError" \
	broken_member_field_is_named_with_its_binding
contains "$out" "^compiled [0-9]+, 2 failed$" only_the_two_typos_fail

run 2 unloadable_specs_are_refused "$SPEC_CODE" "$T/nonexistent"

done_testing
