#!/bin/bash
# The packages, built from a clean copy of the tree as a distribution would:
# Debian's (dpkg-buildpackage -us -uc -b) passes lintian without an error,
# installs, runs from any directory (the README's first check) and is removed
# without a trace; the RPM (rpmbuild -bb; --nodeps here, where the build
# dependencies are Debian's) builds and holds the files the spec lists.
# Each builds its own binary, unsanitized: a sanitizer run (make check
# SANITIZE=1) leaves them to the plain one; the coverage run, sanitized or
# not (CI's one pass), runs them.
. "$(dirname "$0")/lib.sh"
plan 12
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
SRC="$T/src/apiparity"
DEB="$T/src/apiparity_0.1.0_$(dpkg --print-architecture 2> /dev/null)"

# The tree as git has it, working changes included, nothing ignored.
clean_copy() {
	mkdir -p "$SRC"
	(cd "$TOP" && git ls-files -z | xargs -0 cp --parents -t "$SRC") 2> /dev/null
}

deb() {
	clean_copy
	run 0 dpkg_buildpackage_builds_the_package env -C "$SRC" dpkg-buildpackage -us -uc -b
	lintian --tag-display-limit 0 "$DEB.changes" > "$T/lintian" 2>&1
	lacks "$(cat "$T/lintian")" "^E: " lintian_finds_no_error
	run 0 package_installs dpkg -i "$DEB.deb"
	run 0 installed_binary_runs apiparity --help
	contains "$(man -w apiparity 2> /dev/null)" "^/usr/share/man/man1/apiparity\.1\.gz$" installed_manual_is_found
	installed_check() {
		mkdir -p "$T/elsewhere"
		run 0 installed_check_runs_from_any_directory env -C "$T/elsewhere" apiparity check $TARGET \
			--env trixie --no-official --out "$T/elsewhere/out"
		contains "$out" "^trixie .* consistent$" installed_check_is_consistent
	}
	needs trixie -- installed_check
	dpkg -c "$DEB.deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' > "$T/files"
	run 0 package_is_removed dpkg -r apiparity
	left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done < "$T/files" | grep -v '^/usr/share/doc/')
	equals "$left" "" removal_leaves_no_file_of_the_package
	run 0 package_is_purged dpkg -P apiparity
}

rpm_build() {
	mkdir -p "$T/rpm/SOURCES"
	(cd "$TOP" && git ls-files -z | tar --null -T - --transform 's,^,apiparity-0.1.0/,' \
		-czf "$T/rpm/SOURCES/apiparity-0.1.0.tar.gz")
	run 0 rpmbuild_builds_the_package rpmbuild -bb --nodeps --define "_topdir $T/rpm" \
		"$TOP/rpm/apiparity.spec"
	equals "$(rpm -qlp "$T"/rpm/RPMS/*/apiparity-0.1.0-1.*.rpm 2> /dev/null | grep -v build-id | tr '\n' ' ')" \
		"/usr/bin/apiparity /usr/share/apiparity /usr/share/apiparity/envs.example.ini /usr/share/apiparity/policy.example.yaml /usr/share/bash-completion/completions/apiparity /usr/share/man/man1/apiparity.1 " \
		rpm_holds_the_files_of_the_spec
}

sanitized=""
grep -q __asan_init "$APIPARITY" 2> /dev/null && ! grep -q __gcov_init "$APIPARITY" &&
	sanitized="a sanitizer run: the packages build their own binary, tested in the plain run"
why=$sanitized
if [ -z "$why" ] && [ "$(id -u)" != 0 ]; then
	why="needs root to install the package"
elif [ -z "$why" ] && ! { command -v dpkg-buildpackage && command -v lintian; } > /dev/null; then
	why="dpkg-buildpackage or lintian is not installed (tests/install-deps installs them)"
elif [ -z "$why" ] && dpkg -s apiparity > /dev/null 2>&1; then
	why="apiparity is installed on this machine; the test would replace it"
fi
unless "$why" -- deb
why=$sanitized
if [ -z "$why" ] && ! command -v rpmbuild > /dev/null; then
	why="rpmbuild is not installed (tests/install-deps installs rpm)"
fi
unless "$why" -- rpm_build
done_testing
