#!/bin/bash
# What a check shows on a real terminal (tmux, read back with capture-pane
# while it runs) against a pipe: on the terminal, one live line per
# environment (phase, probe k/n, seconds) and then the same table the pipe
# gets; in the pipe, NO_COLOR, TERM=dumb and -v, a plain line per step and no
# cursor code.
. "$(dirname "$0")/lib.sh"
plan 14
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
SOCK="apiparity-t-$$"
# A script that holds each environment a second and a half, so that the
# screen is read while the lines are live.
printf 'import time\ntime.sleep(1.5)\n' > "$T/slow.py"

tm() { tmux -L "$SOCK" "$@"; }
cleanup() { tm kill-server 2> /dev/null; rm -rf "$T"; }
trap cleanup EXIT

# on_terminal NAME ENV_ASSIGNMENT... -- ARGS... - runs the check in a fresh
# 100x50 tmux pane with ENV_ASSIGNMENTs, reads the screen every 0.1 s until
# it ends; the screens seen before the table in $T/NAME.frames (separated by
# "--"), the last whole screen in $T/NAME.screen.
on_terminal() {
	local name=$1 vars=() i
	shift
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	tm kill-server 2> /dev/null
	tm new-session -d -x 100 -y 50 -s t \
		"env ${vars[*]} $APIPARITY check $TARGET $*; echo EXIT=\$?; sleep 60"
	: > "$T/$name.frames"
	for i in $(seq 600); do
		tm capture-pane -p -t t > "$T/screen" 2> /dev/null || break
		grep -q '^EXIT=' "$T/screen" && break
		grep -q '^ENV ' "$T/screen" || { cat "$T/screen"; echo --; } >> "$T/$name.frames"
		sleep 0.1
	done
	tm capture-pane -p -t t -S -200 > "$T/$name.screen"
	tm kill-server 2> /dev/null
}

# The most lines any screen before the table held, and how many showed a
# probe or script count live.
most_lines() { awk '/^--$/ { if (n > m) m = n; n = 0; next } NF { n++ } END { print m + 0 }' "$1"; }

terminal() {
	run 0 piped_check_passes "$APIPARITY" check $TARGET --env trixie --env sid --no-official \
		--script "$T/slow.py" --out "$T/pipe"
	pipe_err=$err pipe_table=$(printf '%s\n' "$out" | grep -E '^(ENV|trixie|sid) ')
	contains "$pipe_err" "^trixie: script 1/1 script:slow\.py \.\.\.$" pipe_gets_a_plain_line_per_step
	lacks "$pipe_err" $'\033' pipe_gets_no_cursor_code

	on_terminal live TERM=xterm -- --env trixie --env sid --no-official --script "$T/slow.py" --out "$T/tty"
	equals "$(most_lines "$T/live.frames")" 2 terminal_shows_at_most_one_line_per_environment
	contains "$(cat "$T/live.frames")" "^(trixie|sid) +script 1/1 script:slow\.py \.\.\. +[0-9]+\.[0-9]s$" \
		live_line_has_the_step_its_count_and_seconds
	lacks "$(cat "$T/live.frames")" "^(trixie|sid): " terminal_gets_no_plain_lines
	contains "$(cat "$T/live.screen")" "^trixie +done: consistent +[0-9]+\.[0-9]s$" live_line_ends_on_the_verdict
	equals "$(grep -E '^(ENV|trixie|sid) ' "$T/live.screen" | grep -v ' done: ')" "$pipe_table" \
		terminal_table_is_the_pipes
	contains "$(cat "$T/live.screen")" "^EXIT=0$" terminal_check_exits_as_the_pipe_does

	on_terminal nocolor TERM=xterm NO_COLOR=1 -- --env trixie --no-official --out "$T/nc"
	contains "$(cat "$T/nocolor.screen")" "^trixie: probe 1/10 clone-returns-same-class PASS$" \
		no_color_gets_plain_lines
	on_terminal dumb TERM=dumb -- --env trixie --no-official --out "$T/dumb"
	contains "$(cat "$T/dumb.screen")" "^trixie: probe 10/10 plain-call-form PASS$" dumb_terminal_gets_plain_lines
	on_terminal verbose TERM=xterm -- --env trixie --no-official -v --out "$T/v"
	contains "$(cat "$T/verbose.screen")" "^trixie: probe 5/10 nested-contexts PASS$" \
		dash_v_gets_the_transcript_on_a_terminal
	contains "$(cat "$T/verbose.screen")" "^trixie: done$" transcript_says_done_once
	equals "$(grep -c '^trixie: done$' "$T/verbose.screen")" 1 transcript_has_one_done
}
why=""
command -v tmux > /dev/null || why="tmux is not installed (tests/install-deps installs it)"
unless "$why" -- needs trixie sid -- terminal
done_testing
