/* tracesummary.h - a traced workload's surface, for people: what `apiparity
 * trace` prints when the program has ended, and `trace --summary FILE`.
 *
 * The program and how it ended, then the APIs it called, most called first:
 * calls, cases kept, kind, the dtypes of their tensors and the shapes of the
 * first case's. Everything in a trace came from a program: printed escaped.
 */
#ifndef AP_TRACESUMMARY_H
#define AP_TRACESUMMARY_H

#include <stdio.h>

#include "evidence/cases.h"

/* Prints t's surface to out: every API, or the top most called (0: all). */
void ap_trace_summary_print(FILE *out, const struct ap_trace *t, size_t top);

/* The dtypes of the tensors of the cases of api in t, "float32,int64"
 * (each once, in order of appearance), into out. */
void ap_trace_dtypes(const struct ap_trace *t, const struct ap_trace_api *api,
		     struct ap_buf *out);

#endif
