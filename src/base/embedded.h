/* embedded.h - files carried inside the binary (tools/embed -t). */
#ifndef AP_EMBEDDED_H
#define AP_EMBEDDED_H

struct ap_embedded {
	const char *name;   /* file name, no directory; NULL ends a table */
	const char *data;   /* contents, NUL-terminated */
	unsigned long len;
};

/* The spec files of specs/, as built. */
extern const struct ap_embedded ap_builtin_specs[];

/* The tracer of `apiparity trace` (worker/trace/): run.py and
 * sitecustomize.py. */
extern const struct ap_embedded ap_trace_py[];

#endif
