/* tolerances.h - where a comparison's tolerance comes from: assert_close's
 * default for the dtype (ap_tolerance_default), unless an override in the
 * tolerances file (specs/tolerances.ini, built in; INI as base/ini.h) names
 * the operator, dtype and device type, with its reason:
 *
 *   [gelu-bfloat16-openreg]          ; a name, for people
 *   op     = torch.nn.functional.gelu ; or * for any operator
 *   dtype  = bfloat16                 ; a dtype of compare.h, or *
 *   device = openreg                  ; a device type, or *
 *   rtol   = 2e-2                     ; rtol and/or atol; one left out keeps
 *   atol   = 1e-4                     ;   the dtype's default
 *   equal_nan = yes                   ; optional, yes by default
 *   reason = why the default is wrong here (mandatory)
 *
 * When several overrides match, the most specific wins: a named op beats a
 * named dtype, which beats a named device. Two overrides for the same op,
 * dtype and device are an error, as is anything malformed.
 */
#ifndef AP_TOLERANCES_H
#define AP_TOLERANCES_H

#include "base/buf.h"
#include "check/compare.h"

struct ap_tol_override {
	char *op;           /* "*": any */
	char *device;       /* "*": any */
	int any_dtype;
	enum ap_dtype dtype;
	double rtol, atol;  /* < 0: the dtype's default */
	int equal_nan;
	char *where;        /* "FILE:LINE: reason" */
};

struct ap_tolerances {
	struct ap_tol_override *v;
	size_t n;
};

/* Loads the tolerances file at path (NULL or "-": the built-in one). 0, or
 * -AP_ECONFIG with "file:line: why" ("file: why" when it cannot be read: it
 * must be a regular file of at most 1 MiB) in err, or -ENOMEM; t is then
 * empty and needs no ap_tolerances_free(). */
int ap_tolerances_load(struct ap_tolerances *t, const char *path, struct ap_buf *err);

/* As ap_tolerances_load(), from the len bytes at text, named name. */
int ap_tolerances_parse(struct ap_tolerances *t, const char *text, size_t len,
			const char *name, struct ap_buf *err);

/* The tolerance for op computing dt on device (a type: "openreg", or a
 * device: "openreg:0"); *where (if where is not NULL) says where it comes
 * from: "default" or the override's "FILE:LINE: reason", valid as long as t.
 * t may be NULL: the default. */
struct ap_tolerance ap_tolerance_for(const struct ap_tolerances *t, const char *op,
				     enum ap_dtype dt, const char *device,
				     const char **where);

void ap_tolerances_free(struct ap_tolerances *t);

/* The built-in tolerances file (specs/tolerances.ini). */
extern const char ap_default_tolerances[];
extern const unsigned long ap_default_tolerances_len;

#endif
