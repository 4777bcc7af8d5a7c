#!/bin/bash
# No hidden state: every writable variable of src/ (a file-scope or
# function-local static, thread-local or not) is listed, with its reason, in
# tests/globals.allow. The check reads the objects the build made of each
# src/ file, so it sees what the compiler placed where, macros and all: a
# symbol in .data, .bss, .tdata or .tbss (and their .data.rel.local kin) is
# writable; .rodata and .data.rel.ro (const tables, const pointer arrays) are
# not state. A function-local static's name is the compiler's name.N, listed
# as name.
. "$(dirname "$0")/lib.sh"
plan 5
cd "$TOP"
build=$(dirname "$APIPARITY")
allow=tests/globals.allow

# writable OBJ SRC - "SRC NAME" for each writable variable OBJ defines.
writable() {
	objdump -t "$1" | awk -v src="$2" '
		{
			sec = ""
			for (i = 2; i < NF; i++) if ($i ~ /^[.*]/) { sec = $i; break }
			name = $NF
		}
		# ASan adds an ODR indicator (__odr_asan.NAME) beside each global,
		# and --coverage (make coverage) its counters (__gcov0.FUNCTION,
		# __gcov_.FUNCTION): the tools'\'', not state of ours.
		sec ~ /^\.(t?bss|t?data)(\.|$)/ && sec !~ /^\.data\.rel\.ro/ && name !~ /^\./ &&
		name !~ /^__(odr_)?asan/ && name !~ /^__gcov/ {
			sub(/\.[0-9]+$/, "", name)
			print src " " name
		}' | sort -u
}

# The object of each src/ file: build/X/Y.o of src/X/Y.c.
have="" missing_objects=""
for f in src/*.c src/*/*.c; do
	o=$build/${f#src/}; o=${o%.c}.o
	if [ -f "$o" ]; then have+=$(writable "$o" "$f")$'\n'; else missing_objects+=" $o"; fi
done
have=$(printf '%s' "$have" | sed '/^$/d' | sort -u)
listed=$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$allow" | awk '{print $1 " " $2}' | sort -u)

equals "$missing_objects" "" every_src_file_has_its_object_in_the_build
equals "$(comm -23 <(printf '%s\n' "$have") <(printf '%s\n' "$listed"))" "" \
	every_writable_variable_of_src_is_in_the_allowlist
# A build without the PNG pictures (make PNG=0) compiles png.c's drawing out.
gone=$(comm -13 <(printf '%s\n' "$have") <(printf '%s\n' "$listed"))
[ -n "$PNG_WHY" ] && gone=$(printf '%s\n' "$gone" | grep -v '^src/review/png\.c ')
equals "$gone" "" every_allowlisted_variable_still_exists
equals "$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$allow" | awk 'NF < 3')" "" \
	every_allowlisted_variable_has_a_reason

# The check can fail: a static counter and a thread-local in a new file are
# found; a const table, a string literal and a const pointer array are not.
cat > "$T/x.c" <<'C'
static int calls;
static _Thread_local int depth;
static const int table[] = { 1, 2, 3 };
static const char *const names[] = { "a", "b" };
int x_next(int i) { static int seen; seen += i; return ++calls + ++depth + seen + table[i % 3] + names[i % 2][0]; }
C
cc -O2 -c -o "$T/x.o" "$T/x.c"
equals "$(writable "$T/x.o" src/x.c | tr '\n' ' ')" "src/x.c calls src/x.c depth src/x.c seen " \
	a_new_static_or_thread_local_is_found_and_a_const_table_is_not
