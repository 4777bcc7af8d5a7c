#include <string.h>

#include "err.h"

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
