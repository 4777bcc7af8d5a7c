/* version.h - what apiparity is, written into every piece of evidence. */
#ifndef AP_VERSION_H
#define AP_VERSION_H

extern const char ap_version[]; /* release, e.g. "0.1.0" */
extern const char ap_commit[];  /* git commit it was built from, or "unknown" */

#endif
