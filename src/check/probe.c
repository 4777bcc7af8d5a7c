/* probe.c - a probe's status, decided from the worker's facts (see probe.h). */
#include "check/probe.h"

enum ap_status ap_child_end(const struct ap_proto_ended *e, struct ap_buf *reason)
{
	if (e->timed_out) {
		ap_buf_addf(reason, "no result within %g s", e->limit_s);
		return AP_TIMEOUT;
	}
	if (e->signal) {
		ap_buf_adds(reason, e->signal);
		return AP_CRASH;
	}
	return AP_STATUS_UNKNOWN;
}

/* What the probe itself raised (FAIL: check() did; ERROR: anything else). */
static enum ap_status raised_status(const struct ap_proto_probe_raised *x, struct ap_buf *reason)
{
	if (!x->check)
		ap_buf_addf(reason, "%s: ", x->type ? x->type : "?");
	ap_buf_add(reason, x->message, x->message_len);
	return x->check ? AP_FAIL : AP_ERROR;
}

enum ap_status ap_probe_status(const struct ap_proto_probe_reply *p, struct ap_buf *reason)
{
	if (p->has_result) {
		if (p->harness)
			ap_buf_adds(reason, p->harness);
		else if (p->unreadable)
			ap_buf_adds(reason, "unreadable result frame");
		else if (p->raised)
			return raised_status(&p->exc, reason);
		return p->harness || p->unreadable ? AP_ERROR : AP_PASS;
	}
	enum ap_status st = ap_child_end(&p->ended, reason);
	if (st != AP_STATUS_UNKNOWN)
		return st;
	if (p->ended.has_exit_status)
		ap_buf_addf(reason, "probe exited with status %lld before reporting",
			    p->ended.exit_status);
	else
		ap_buf_adds(reason, "the worker said neither how the probe ended nor its result");
	return AP_ERROR;
}

/* Sets key to v (borrowed) where v is there. */
static int put(json_t *c, const char *key, const json_t *v)
{
	return v ? json_object_set(c, key, (json_t *)v) : 0;
}

json_t *ap_probe_check(const json_t *reply)
{
	struct ap_proto_probe_reply p;
	struct ap_buf why = { 0 };
	ap_proto_probe_read(reply, &p);
	enum ap_status st = ap_probe_status(&p, &why);
	json_t *c = json_object();
	int r = !c || json_object_set_new(c, "status", json_string(ap_status_name(st)));
	json_t *reason = st == AP_PASS ? json_null() : json_stringn(ap_buf_str(&why), why.len);
	r = r || json_object_set_new(c, "reason", reason);
	if (st == AP_ERROR && p.has_result && p.raised)
		r = r || put(c, "traceback", p.exc.traceback);
	r = r || put(c, "trace", p.has_result ? p.trace : p.steps);
	r = r || put(c, "device_trace", p.device_trace);
	r = r || put(c, "duration_ms", p.duration_ms);
	r = r || put(c, "output", p.output);
	ap_buf_free(&why);
	if (r) {
		json_decref(c);
		return NULL;
	}
	return c;
}
