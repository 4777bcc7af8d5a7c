#!/bin/bash
# The CI recipes of deploy/ci/: each passes yamllint, has the shape its CI
# reads (GitHub Actions: steps, an artifact upload that runs always, the
# review last; GitLab: a script, JUnit and paths as artifacts kept always), and
# its shell runs as that CI would run it (bash -e), here against trixie: the
# checks and reports are written and the review ACCEPTs; a policy the
# evidence does not meet makes the gate fail.
. "$(dirname "$0")/lib.sh"
plan 13
GH="$TOP/deploy/ci/github-actions.yml" GL="$TOP/deploy/ci/gitlab-ci.yml"
# The README's target: its review ACCEPTs in trixie.
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone

if command -v yamllint > /dev/null; then
	run 0 recipes_pass_yamllint yamllint -s -c "$TOP/deploy/ci/yamllint.yml" "$GH" "$GL"
else
	skip recipes_pass_yamllint "yamllint is not installed (tests/install-deps installs it)"
fi
# shape FILE EXPR - EXPR over the recipe as YAML (y).
shape() { py 'import sys, yaml; y = yaml.safe_load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
equals "$(shape "$GH" '[s.get("name") for s in y["jobs"]["parity"]["steps"]][-1]')" "review (the gate)" \
	github_review_is_the_last_step
equals "$(shape "$GH" '[(s["uses"].split("@")[0], s.get("if")) for s in y["jobs"]["parity"]["steps"] if "upload-artifact" in s.get("uses", "")]')" \
	"[('actions/upload-artifact', 'always()')]" github_publishes_the_evidence_always
contains "$(shape "$GH" 'y["jobs"]["parity"]["steps"][3]["with"]["path"]')" "junit\.xml" github_artifact_has_the_junit
equals "$(shape "$GL" 'y["apiparity"]["artifacts"]["when"], y["apiparity"]["artifacts"]["reports"]["junit"]')" \
	"('always', '\$OUT/*/junit.xml')" gitlab_keeps_the_junit_always

# recipe_script FILE - the shell CI runs, in order: GitHub's run steps, each
# under bash -e as GitHub runs them; GitLab's script lines, under bash -e.
recipe_script() {
	py 'import sys, yaml
y = yaml.safe_load(open(sys.argv[1]))
if "jobs" in y:
    for s in y["jobs"]["parity"]["steps"]:
        if "run" in s:
            print("bash -e <<'"'"'STEP'"'"'\n" + s["run"] + "STEP")
else:
    print("\n".join(y["apiparity"]["script"]))' "$1"
}

recipes() {
	local repo d
	mkdir -p "$T/bin" && ln -sf "$APIPARITY" "$T/bin/apiparity"
	for ci in github gitlab; do
		repo="$T/$ci" && mkdir -p "$repo"
		cp "$TOP/policies/default.yaml" "$repo/apiparity-policy.yaml"
		recipe_script "$([ $ci = github ] && echo "$GH" || echo "$GL")" > "$T/$ci.sh"
		run 0 ${ci}_recipe_runs_and_accepts env -C "$repo" PATH="$T/bin:$PATH" \
			APIPARITY_ENV=trixie APIPARITY_TARGETS=$TARGET \
			OUT=apiparity-out bash -e "$T/$ci.sh"
		d="$repo/apiparity-out/$TARGET"
		[ -s "$d/junit.xml" ] && [ -s "$d/report.html" ] && [ -s "$d/trixie/bundle.json" ] \
			&& ok ${ci}_recipe_writes_the_evidence_and_the_report \
			|| nok ${ci}_recipe_writes_the_evidence_and_the_report "$(ls "$d" 2>&1)"
		contains "$out" "^## apiparity review: ACCEPT$" ${ci}_recipe_review_accepts
	done
	equals "$(py 'import sys, xml.etree.ElementTree as E; print(E.parse(sys.argv[1]).getroot().find("testsuite").get("failures"))' \
		"$T/github/apiparity-out/$TARGET.review.xml")" 0 github_review_junit_has_no_failure
	# The gate: a policy that requires an environment the run lacks.
	printf 'name: strict\nrequire_envs: [sid]\n' > "$T/gitlab/apiparity-policy.yaml"
	run 1 gitlab_gate_fails_on_changes_needed env -C "$T/gitlab" PATH="$T/bin:$PATH" \
		APIPARITY_ENV=trixie APIPARITY_TARGETS=$TARGET \
		OUT=apiparity-out bash -e "$T/gitlab.sh"
}
needs trixie -- recipes
done_testing
