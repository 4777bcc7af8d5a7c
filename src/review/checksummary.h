/* checksummary.h - what `apiparity check` prints once its run has ended:
 * the table of environments (python, torch, plugins, devices, probes
 * passed, verdict), then the notes a user must see beside it, then where the
 * evidence is.
 *
 * It reads only the finished run (check/run.h: the sessions' bundles and
 * their io_err), as the report reads bundles: a view of evidence, kept out
 * of the engine (which prints nothing) and out of cmd/check.c (which parses,
 * calls and picks the exit code).
 */
#ifndef AP_CHECKSUMMARY_H
#define AP_CHECKSUMMARY_H

#include <stdio.h>

#include "check/run.h"

/* Prints the summary of run (measured and sealed) to out. A session whose
 * evidence could not be written reads "no-evidence", whatever its verdict,
 * and gets no notes; names and versions are data, printed escaped. */
void ap_checksummary_print(FILE *out, const struct ap_run *run);

#endif
