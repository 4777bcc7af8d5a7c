/* limits.h - what a backend is known not to do: the backend limits file
 * (specs/backend-limits.ini, built in; INI as base/ini.h). A numeric check
 * whose device part fails in the very way an entry describes is NOTRUN,
 * "known limit of BACKEND: REASON", instead of a failure of the API:
 *
 *   [openreg-str-arguments]   ; a name, for people
 *   backend = openreg         ; a device type (as in the env's `device`)
 *   op      = *               ; the target checked (torch.nn.Linear), a
 *                             ;   shell pattern of it (torch.nn.*), or *
 *   what    = str arguments   ; what the backend cannot do, in words
 *   raises  = RuntimeError: Cannot send object of type <class 'str'>
 *                             ; the failure: the exception type the device
 *                             ;   raises where the CPU raises nothing, and,
 *                             ;   after ": ", text its message contains
 *                             ;   (both needed)
 *   reason  = why it is the backend's limit, not the API's (mandatory)
 *
 * Every key is mandatory: a limit names its backend, its operators and the
 * failure it excuses, never "anything that fails there". Anything malformed
 * (a key missing or twice, an unknown key, an empty value, two sections of
 * one name) is -AP_ECONFIG with "file:line: why".
 */
#ifndef AP_LIMITS_H
#define AP_LIMITS_H

#include <jansson.h>

#include "base/buf.h"
#include "evidence/facts.h"

struct ap_limit {
	char *name;      /* the section */
	char *backend;   /* a device type */
	char *op;        /* a pattern of the target (fnmatch), "*": any */
	char *what;
	char *exception; /* the type raised on the device */
	char *message;   /* text the device's message contains (never empty) */
	char *reason;
	char *where;     /* "FILE:LINE" of the section */
};

struct ap_limits {
	struct ap_limit *v;
	size_t n;
};

/* Loads the limits file at path (NULL or "-": the built-in one). 0, or
 * -AP_ECONFIG with "file:line: why" ("file: why" when it cannot be read: it
 * must be a regular file of at most 1 MiB) in err, or -ENOMEM; l is then
 * empty and needs no ap_limits_free(). */
int ap_limits_load(struct ap_limits *l, const char *path, struct ap_buf *err);

/* As ap_limits_load(), from the len bytes at text, named name. */
int ap_limits_parse(struct ap_limits *l, const char *text, size_t len, const char *name,
		    struct ap_buf *err);

/* The first limit of l for target op on device (a type, "openreg", or a
 * device, "openreg:0") that excuses the device raising exception with
 * message (where the CPU raised nothing), or NULL. exception NULL: the
 * device raised nothing (it computed something else), which no limit
 * excuses. l may be NULL: none. */
const struct ap_limit *ap_limit_match(const struct ap_limits *l, const char *device,
				      const char *op, const char *exception,
				      const char *message);

void ap_limits_free(struct ap_limits *l);

/* The limits that excused checks of a bundle (NOTRUN with a limit), one row
 * each in the order first seen, samples the number it excused: a new array
 * *rows of *nrows (free() it; its strings are the checks'). 0 or -ENOMEM. */
struct ap_limit_applied {
	const char *name, *backend, *what, *reason, *where; /* the checks' strings */
	long long samples;
};
int ap_limits_applied(const struct ap_fact_check *checks, size_t n,
		      struct ap_limit_applied **rows, size_t *nrows);

/* The built-in limits file (specs/backend-limits.ini). */
extern const char ap_default_limits[];
extern const unsigned long ap_default_limits_len;

#endif
