/* probe.h - what a probe's run comes to: the worker measures, this decides.
 *
 * The worker runs a probe in a child and reports facts (env/protocol.h:
 * struct ap_proto_probe_reply): the child's result frame, with what the
 * probe raised, or how the child ended without one. The status and the
 * reason are decided here, once, for check and sweep alike:
 *
 *   - the child's result came: PASS (nothing raised, reason null); FAIL
 *     when check() raised (the reason: its message); ERROR for any other
 *     exception ("TYPE: MESSAGE", and its traceback kept), for a harness
 *     failure in the child (its text), or a result frame that could not be
 *     read ("unreadable result frame");
 *   - no result: TIMEOUT at the limit ("no result within LIMIT s"), CRASH
 *     when a signal ended it (the signal's name), ERROR when it exited by
 *     itself ("probe exited with status N before reporting").
 */
#ifndef AP_PROBE_H
#define AP_PROBE_H

#include <jansson.h>

#include "base/buf.h"
#include "base/outcome.h"
#include "env/protocol.h"

/* A child that ended with no result: AP_TIMEOUT ("no result within LIMIT
 * s") or AP_CRASH (the signal's name), appended to reason; or
 * AP_STATUS_UNKNOWN, reason untouched, when it exited by itself (the caller
 * says what that means: e->exit_status) or the facts say neither. */
enum ap_status ap_child_end(const struct ap_proto_ended *e, struct ap_buf *reason);

/* The status of probe reply p, its reason appended to reason (none: PASS). */
enum ap_status ap_probe_status(const struct ap_proto_probe_reply *p, struct ap_buf *reason);

/* The check a probe reply makes, without name and kind (the caller's):
 * {status, reason, traceback (an exception's), trace, device_trace,
 * duration_ms, output}, each where the facts have it. NULL when out of
 * memory. */
json_t *ap_probe_check(const json_t *reply);

#endif
