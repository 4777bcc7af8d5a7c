#include <string.h>

#include "base/err.h"

static const struct {
	int err;
	const char *text;
	int exit_code;
} ap_errors[] = {
	{ AP_ECONFIG, "malformed configuration", AP_EXIT_CONFIG },
	{ AP_EUNKNOWN_ENV, "unknown environment", AP_EXIT_UNKNOWN_ENV },
	{ AP_EUNREACHABLE, "environment unreachable", AP_EXIT_UNREACHABLE },
	{ AP_ENOPYTHON, "python not found in the environment", AP_EXIT_NOPYTHON },
	{ AP_ETORCH, "torch failed to import", AP_EXIT_TORCH },
	{ AP_EWORKER, "worker died", AP_EXIT_WORKER },
	{ AP_ETIMEOUT, "worker stopped answering", AP_EXIT_TIMEOUT },
	{ AP_EPROTO, "malformed or truncated frame", AP_EXIT_WORKER },
	{ AP_ETOOBIG, "oversized frame", AP_EXIT_WORKER },
	{ AP_EPROVISION, "provisioning failed", AP_EXIT_PROVISION },
	{ AP_ENOSOURCE, "no test source", AP_EXIT_NOSOURCE },
	{ AP_ENOTREG, "not a regular file", AP_EXIT_CONFIG },
	{ AP_EUNVERIFIED, "nothing verified", AP_EXIT_UNVERIFIED },
	{ AP_EINPUT, "malformed input", AP_EXIT_CONFIG },
};

const char *ap_strerror(int err)
{
	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(ap_errors) / sizeof(ap_errors[0]); i++)
		if (ap_errors[i].err == err)
			return ap_errors[i].text;
	return strerror(err);
}

int ap_exit_code(int err)
{
	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(ap_errors) / sizeof(ap_errors[0]); i++)
		if (ap_errors[i].err == err)
			return ap_errors[i].exit_code;
	return AP_EXIT_IO;
}

static const struct {
	int code;
	const char *text;
} ap_exits[] = {
	{ AP_EXIT_OK, "success" },
	{ AP_EXIT_FAILED, "a check found an inconsistency, or a probe failed, crashed or hung" },
	{ AP_EXIT_USAGE, "usage error" },
	{ AP_EXIT_UNREACHABLE, "environment unreachable (exec prefix or chroot failed)" },
	{ AP_EXIT_CONFIG, "malformed input: an environments, spec, policy, tolerances or limits file, a matrix or a sweep" },
	{ AP_EXIT_UNKNOWN_ENV, "unknown environment" },
	{ AP_EXIT_NOPYTHON, "python not found in the environment" },
	{ AP_EXIT_TORCH, "torch failed to import" },
	{ AP_EXIT_WORKER, "worker died or broke the protocol" },
	{ AP_EXIT_TIMEOUT, "worker stopped answering (timeout)" },
	{ AP_EXIT_IO, "could not write results" },
	{ AP_EXIT_PROVISION, "provisioning or fetching failed" },
	{ AP_EXIT_NOSOURCE, "no upstream test source for that torch version" },
	{ AP_EXIT_UNVERIFIED, "nothing verified: the target could be checked in no environment" },
};

const char *ap_exit_text(int code)
{
	for (size_t i = 0; i < sizeof(ap_exits) / sizeof(ap_exits[0]); i++)
		if (ap_exits[i].code == code)
			return ap_exits[i].text;
	return NULL;
}

int ap_exit_max(void)
{
	return ap_exits[sizeof(ap_exits) / sizeof(ap_exits[0]) - 1].code;
}
