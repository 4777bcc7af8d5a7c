#!/bin/bash
# The verdict, end to end, where only a trace tells the environments apart:
# every probe passes, and one traced value differs.
. "$(dirname "$0")/lib.sh"
TARGET=torch.autograd.grad_mode.set_multithreading_enabled.clone
plan 4

# Every probe passes and only a traced value differs: still inconsistent.
trace_only_difference() {
	printf '[trixie]\nchroot = trixie\nsetenv = APIPARITY_TEST_TRACE=a\n[trixie-b]\nchroot = trixie\nsetenv = APIPARITY_TEST_TRACE=b\n' \
		> "$T/trace.ini"
	run 1 trace_difference_alone_fails_the_check "$APIPARITY" check $TARGET --envs "$T/trace.ini" \
		--env trixie --env trixie-b --no-official --script "$FIX/probes/env-trace.py" --out "$T/tr"
	b="$T/tr/trixie-b/bundle.json"
	equals "$(field "$b" 'sorted(set(c["status"] for c in b["checks"] if c["kind"] in ("probe", "script")))')" "['PASS']" \
		every_probe_passes_where_only_a_trace_differs
	equals "$(field "$b" 'b["verdict"], b["comparison"]["differences"]')" \
		"('inconsistent', [{'check': 'script:env-trace.py', 'step': 'APIPARITY_TEST_TRACE', 'expected': 'a', 'seen': 'b'}])" \
		trace_difference_alone_is_inconsistent
	contains "$(cat "$T/tr/trixie-b/run.log")" "APIPARITY_TEST_TRACE" run_log_names_the_differing_step
}
needs trixie -- trace_only_difference
done_testing
