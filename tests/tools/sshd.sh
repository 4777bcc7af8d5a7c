# tests/tools/sshd.sh - a private OpenSSH server for the ssh tests and bench
# (sourced, bash). Nothing of the machine's own ssh setup is read or changed:
# the host key, authorized_keys, sshd_config, the client's key and
# known_hosts all live in one directory, and sshd listens on 127.0.0.1 only.
#
#   sshd_start DIR     starts it (0), or returns 1 with the reason in sshd_why
#   ssh_opts           the client options that reach it: -F /dev/null -p PORT
#                      -i KEY -o UserKnownHostsFile=... -o StrictHostKeyChecking=yes
#   sshd_enter         a script for the far side: `sshd_enter ROOT TESTS CMD...`
#                      enters the environment at ROOT as apiparity enters a
#                      chroot (PID and mount namespaces, /proc, /sys, /dev/shm,
#                      tmpfs on /tmp, the test trees TESTS read-only at
#                      /run/apiparity/tests), then runs CMD there
#   sshd_sessions      the pids of the sessions sshd is serving, one a line
#   sshd_stop          stops it and every session it serves
#
# sshd needs its absolute path, root (it logs in as root here) and its
# privilege separation directory (/run/sshd, which Debian's package makes at
# boot; made here when missing, as its service would).
sshd_bin=/usr/sbin/sshd
sshd_pid="" sshd_why="" sshd_port="" sshd_dir=""

# A port nothing listens on now.
sshd_free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

sshd_start() {
	sshd_dir=$1
	local d=$1 try
	if [ ! -x "$sshd_bin" ]; then sshd_why="$sshd_bin is not installed (openssh-server; make deps)"; return 1; fi
	if ! command -v ssh > /dev/null; then sshd_why="ssh is not installed (openssh-client; make deps)"; return 1; fi
	if [ "$(id -u)" != 0 ]; then sshd_why="the ssh tests log in as root and need root"; return 1; fi
	if [ ! -d /run/sshd ] && ! mkdir -m 0755 /run/sshd 2> /dev/null; then
		sshd_why="no privilege separation directory /run/sshd, and it cannot be made"; return 1
	fi
	mkdir -p "$d" && chmod 700 "$d"
	ssh-keygen -q -t ed25519 -N '' -C apiparity-test-host -f "$d/host_key" < /dev/null &&
	ssh-keygen -q -t ed25519 -N '' -C apiparity-test-client -f "$d/client_key" < /dev/null &&
	cp "$d/client_key.pub" "$d/authorized_keys" || { sshd_why="ssh-keygen failed"; return 1; }
	for try in 1 2 3 4 5; do
		sshd_port=$(sshd_free_port) || { sshd_why="no free port"; return 1; }
		cat > "$d/sshd_config" <<-EOF
		Port $sshd_port
		ListenAddress 127.0.0.1
		HostKey $d/host_key
		AuthorizedKeysFile $d/authorized_keys
		PidFile none
		PermitRootLogin prohibit-password
		PubkeyAuthentication yes
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		PrintMotd no
		PermitUserEnvironment no
		MaxStartups 50
		MaxSessions 50
		LogLevel VERBOSE
		EOF
		: > "$d/sshd.log"
		"$sshd_bin" -D -f "$d/sshd_config" -E "$d/sshd.log" < /dev/null &
		sshd_pid=$!
		local i
		for i in $(seq 50); do
			grep -q "Server listening on 127.0.0.1 port $sshd_port" "$d/sshd.log" 2> /dev/null && break
			kill -0 "$sshd_pid" 2> /dev/null || break
			sleep 0.1
		done
		if grep -q "Server listening on 127.0.0.1 port $sshd_port" "$d/sshd.log"; then
			printf '[127.0.0.1]:%s %s\n' "$sshd_port" "$(cut -d' ' -f1,2 "$d/host_key.pub")" \
				> "$d/known_hosts"
			sshd_write_enter "$d/enter"
			return 0
		fi
		sshd_stop
	done
	sshd_why="sshd did not start: $(tail -1 "$d/sshd.log" 2> /dev/null)"
	return 1
}

ssh_opts() {
	printf '%s ' -F /dev/null -p "$sshd_port" -i "$sshd_dir/client_key" \
		-o "UserKnownHostsFile=$sshd_dir/known_hosts" -o StrictHostKeyChecking=yes \
		-o IdentitiesOnly=yes
}

sshd_write_enter() {
	cat > "$1" <<-'EOF'
	#!/bin/sh
	# The far side of the ssh tests: enter ROOT as apiparity enters a chroot.
	r=$1 t=$2; shift 2
	exec unshare --mount --pid --fork --propagation private /bin/sh -c '
		r=$1 t=$2; shift 2
		mount -t proc proc "$r/proc" || exit 125
		mount -t sysfs -o ro sysfs "$r/sys" 2> /dev/null
		mount -t tmpfs tmpfs "$r/dev/shm" 2> /dev/null
		mount -t tmpfs -o mode=1777 tmpfs "$r/tmp" || exit 125
		mount -t tmpfs tmpfs "$r/run" && mkdir -p "$r/run/apiparity/tests" || exit 125
		if [ -d "$t" ]; then
			mount --bind "$t" "$r/run/apiparity/tests" &&
			mount -o remount,bind,ro "$r/run/apiparity/tests" || exit 125
		fi
		exec chroot "$r" /usr/bin/env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 "$@"' sh "$r" "$t" "$@"
	EOF
	chmod 755 "$1"
}

# The pids of sshd's children and their descendants (the sessions).
sshd_sessions() {
	local p c
	[ -n "$sshd_pid" ] || return 0
	local todo=("$sshd_pid")
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}; todo=("${todo[@]:1}")
		for c in $(ps -o pid= --ppid "$p" 2> /dev/null); do
			echo "$c"; todo+=("$c")
		done
	done
}

sshd_stop() {
	local p
	[ -n "$sshd_pid" ] || return 0
	for p in $(sshd_sessions); do kill -9 "$p" 2> /dev/null; done
	kill "$sshd_pid" 2> /dev/null
	wait "$sshd_pid" 2> /dev/null
	sshd_pid=""
}
