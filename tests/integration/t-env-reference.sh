#!/bin/bash
# Fingerprints of the three real reference environments, read against what the
# chroots themselves say (python --version, dpkg), never against constants.
. "$(dirname "$0")/lib.sh"
plan 35
# What is mounted under the environments before this script runs (a developer's
# own bind mount, say) is not apiparity's: the check below counts what is new.
mounted_now() { grep " $ENV_ROOT/" /proc/mounts | sort || true; }
mounted_now > "$T/mounts.before"
# torch's own answer inside environment E: version (with its local part),
# git version, debug build, C++11 ABI (the line after the marker: importing
# torch in a bare chroot may print warnings of its own on stdout).
torch_says() {
	in_chroot "$1" python3 -c 'import torch; v = torch.version
print("torch-says:", torch.__version__, v.git_version, v.debug, torch._C._GLIBCXX_USE_CXX11_ABI)' \
		| sed -n 's/^torch-says: //p'
}

fingerprint_of() {
	local e=$1
	run 0 ${e}_fingerprint_succeeds "$APIPARITY" env show $e
	want_py=$(in_chroot $e /usr/bin/python3 -c 'import platform; print(platform.python_version())')
	contains "$out" "^python +${want_py//./\\.}$" ${e}_python_version_matches_the_chroot
	pkg=$(in_chroot $e dpkg-query -W -f '${Version}' python3-torch)
	upstream=${pkg%%+*}; upstream=${upstream#*:}
	contains "$out" "^torch +${upstream%.*}\." ${e}_torch_version_matches_the_package
	os=$(in_chroot $e sh -c '. /etc/os-release; echo "$PRETTY_NAME"')
	os=$(printf '%s' "$os" | sed 's/[][()./*+?]/\\&/g')
	contains "$out" "^os +$os$" ${e}_os_matches_the_chroot
	contains "$out" "^  cuda +unavailable: torch built without cuda$" ${e}_cuda_absence_is_explained
	# The exact identity, local part included (2.6.0+debian is not 2.6.0).
	local says version
	says=$(torch_says $e); version=${says%% *}
	contains "$out" "^torch +$(rx "$version") \(import [0-9]+ ms\)$" ${e}_torch_row_is_the_exact_version
	equals "$("$APIPARITY" env show --json $e | py 'import json,sys; t=json.load(sys.stdin)["torch"]
print(t["version"], t["git_version"], t["debug"], t["cxx11_abi"])')" "$says" \
		${e}_torch_identity_is_the_environments_own
}
for e in bookworm trixie sid; do needs $e -- fingerprint_of $e; done

json_and_protocol() {
	run 0 json_fingerprint_succeeds "$APIPARITY" env show --json trixie
	keys=$(printf '%s' "$out" | py 'import json,sys; d=json.load(sys.stdin); print(" ".join(sorted(d)))')
	equals "$keys" "cpu devices host os plugins privateuse1 python time_utc torch torch_import_ms" \
		json_has_every_fingerprint_section
	fields=$(printf '%s' "$out" | py 'import json,sys; d=json.load(sys.stdin); t=d["torch"]; print(t["version"], t["git_version"], t["debug"], t["cxx11_abi"])')
	equals "$fields" "$(torch_says trixie)" json_torch_build_flags_are_the_environments_own
	host_cpus=$(nproc --all)
	contains "$out" "\"count\": $host_cpus" json_cpu_count_is_the_machines
	time=$(printf '%s' "$out" | py 'import json,sys; print(json.load(sys.stdin)["time_utc"][:10])')
	equals "$time" "$(date -u +%F)" json_time_is_today_utc

	# Nothing mounted by a chroot environment stays mounted on the host.
	mounted_now | comm -13 "$T/mounts.before" - > "$T/mounts.new"
	equals "$(wc -l < "$T/mounts.new")" 0 chroot_mounts_do_not_leak_to_the_host

	# The worker's stdout is the protocol: a print from a plugin must not break it.
	# The plugin also hides the host's site-packages, so that this Python has no
	# torch whether or not the host's has one (the failure is then known).
	mkdir -p "$T/noisy"
	cat > "$T/noisy/sitecustomize.py" <<-'EOF'
	import sys
	sys.path[:] = [p for p in sys.path if not p.endswith(("site-packages", "dist-packages"))]
	print("hello from a noisy plugin")
	sys.stdout.flush()
	EOF
	printf '[noisy]\nexec = env PYTHONPATH=%s\npython = /usr/bin/python3\n' "$T/noisy" > "$T/noisy.ini"
	run 7 prints_on_stdout_do_not_corrupt_the_protocol "$APIPARITY" env show --envs "$T/noisy.ini" noisy
	contains "$err" "No module named 'torch'" noisy_worker_still_answers_in_frames
	lacks "$err" "malformed|truncated" noisy_output_is_not_a_protocol_error
}
needs trixie -- json_and_protocol

side_by_side() {
	local v=() e
	for e in bookworm trixie sid; do
		v+=("$(in_chroot $e /usr/bin/python3 -c 'import platform; print(platform.python_version())')")
	done
	start=$(date +%s%N)
	run 0 three_environments_side_by_side "$APIPARITY" env show bookworm trixie sid
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	contains "$(printf '%s' "$out" | head -1)" "bookworm +trixie +sid" table_is_headed_by_environment_names
	contains "$out" "^python +$(rx "${v[0]}") +$(rx "${v[1]}") +$(rx "${v[2]}")( |$)" python_versions_side_by_side
	echo "# three environments in ${ms} ms"
	run 0 env_list_reaches_reference_environments "$APIPARITY" env list
	contains "$out" "^sid +reachable +python $(rx "${v[2]%.*}")" list_shows_python_of_each
}
needs bookworm trixie sid -- side_by_side
done_testing
