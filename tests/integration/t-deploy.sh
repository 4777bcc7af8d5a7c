#!/bin/bash
# deploy/: the Slurm array script and the Kubernetes Indexed Job manifest
# parse, agree with each other and with apiparity's exit codes, and the Slurm
# script's per-index retries do what its header says (run with a stub in
# place of apiparity, as an array task would).
. "$(dirname "$0")/lib.sh"
SB="$TOP/deploy/slurm/apiparity-sweep.sbatch"
K8S="$TOP/deploy/kubernetes/apiparity-sweep-job.yaml"
plan 22

bash -n "$SB" && ok slurm_script_parses || nok slurm_script_parses
for d in "--array=" "--requeue" "--gres="; do
	contains "$(grep '^#SBATCH' "$SB")" "^#SBATCH $d" "slurm_script_sets_${d//[-=]/}"
done
# Each array task logs to a file of its own: the job id and the task's index.
contains "$(grep '^#SBATCH --output=' "$SB")" "%A.*%a" slurm_task_logs_apart
noretry=$(sed -n 's/^NORETRY="\(.*\)"$/\1/p' "$SB")

# The manifest, parsed as YAML (PyYAML on the host).
k() { py "import sys, yaml; j = yaml.safe_load(open(sys.argv[1])); s = j['spec']; t = s['template']['spec']; c = t['containers'][0]; print(($1))" "$K8S"; }
if py 'import yaml' 2> /dev/null; then
	equals "$(k 'j["apiVersion"], j["kind"], s["completionMode"]')" "('batch/v1', 'Job', 'Indexed')" manifest_is_an_indexed_job
	equals "$(k 's["backoffLimitPerIndex"] > 0, t["restartPolicy"]')" "(True, 'Never')" manifest_retries_per_index
	equals "$(k '" ".join(map(str, [r for r in s["podFailurePolicy"]["rules"] if r["action"] == "FailIndex"][0]["onExitCodes"]["values"]))')" \
		"$noretry" pod_failure_policy_fails_the_index_on_the_slurm_scripts_codes
	equals "$(k '[r for r in s["podFailurePolicy"]["rules"] if r["action"] == "FailIndex"][0]["onExitCodes"]["containerName"] == c["name"]')" \
		True pod_failure_policy_names_the_container
	equals "$(k '[r["onPodConditions"][0]["type"] for r in s["podFailurePolicy"]["rules"] if r["action"] == "Ignore"]')" \
		"['DisruptionTarget']" evictions_are_not_counted
	equals "$(k '[e["value"] for e in c["env"] if e["name"] == "APIPARITY_SHARD_COUNT"] == [str(s["completions"])]')" True \
		shard_count_equals_completions
	equals "$(k 'c["command"][:2], "--resume" in c["command"], "--shard" in c["command"]')" "(['apiparity', 'sweep'], True, False)" \
		container_resumes_and_takes_the_shard_from_the_job
	equals "$(k 'any("/" in r for r in c["resources"]["limits"])')" True manifest_requests_a_device
else
	for t in manifest_is_an_indexed_job manifest_retries_per_index pod_failure_policy_fails_the_index_on_the_slurm_scripts_codes \
		pod_failure_policy_names_the_container evictions_are_not_counted shard_count_equals_completions \
		container_resumes_and_takes_the_shard_from_the_job manifest_requests_a_device; do
		skip $t "python3-yaml is not installed"
	done
fi

# Each code below 128 is one of apiparity's (the one table, via --help).
run 0 help_prints_the_exit_table "$APIPARITY" --help
bad=""
for c in $noretry; do
	[ "$c" -ge 128 ] && continue
	printf '%s\n' "$out" | grep -Eq "^ *$c " || bad="$bad $c"
done
equals "$bad" "" noretry_codes_are_apiparitys

# The retries, with a stub that exits with the next code of $T/codes.
mkdir -p "$T/bin"
cat > "$T/bin/apiparity" <<'STUB'
#!/bin/bash
echo "$*" >> "$STUB_LOG"
rc=$(head -1 "$STUB_CODES"); sed -i 1d "$STUB_CODES"
exit "$rc"
STUB
chmod +x "$T/bin/apiparity"
task() {
	printf '%s\n' "$@" > "$T/codes"; : > "$T/log"
	SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=4 APIPARITY="$T/bin/apiparity" STUB_LOG="$T/log" \
		STUB_CODES="$T/codes" APIPARITY_SWEEP_ENVS="a2 a3" APIPARITY_OUT="$T/out" bash "$SB" 2> "$T/err"
	rc=$?
	calls=$(wc -l < "$T/log")
}
task 9 0
equals "$rc $calls" "0 2" a_timeout_is_retried_then_succeeds
equals "$(head -1 "$T/log")" "sweep --out $T/out --depth signature --resume --env a2 --env a3" \
	task_resumes_and_leaves_the_shard_to_slurm
printf '0\n' > "$T/codes"; : > "$T/log"
SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=2 SLURM_ARRAY_TASK_COUNT=1 APIPARITY_SHARD_COUNT=4 APIPARITY="$T/bin/apiparity" \
	STUB_LOG="$T/log" STUB_CODES="$T/codes" APIPARITY_OUT="$T/out" bash "$SB" 2> "$T/err"
equals "$(head -1 "$T/log")" "sweep --out $T/out --depth signature --resume --shard 2/4" \
	one_index_run_again_is_its_shard_of_the_whole_array
task 7 0
equals "$rc $calls" "7 1" torch_import_failure_is_not_retried
contains "$(cat "$T/err")" "task 1: exit 7, not retried" no_retry_is_said
task 9 10 3
equals "$rc $calls" "3 3" retries_stop_after_three_tries
task 139
equals "$rc $calls" "139 1" a_crash_of_apiparity_is_not_retried

done_testing
