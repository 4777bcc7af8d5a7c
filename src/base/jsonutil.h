/* jsonutil.h - reading jansson trees for display.
 *
 * Evidence is read back from files someone else may have written, so every
 * field may be missing or of the wrong type; these helpers say what to show
 * then, once, instead of a copy in each module that prints.
 */
#ifndef AP_JSONUTIL_H
#define AP_JSONUTIL_H

#include <jansson.h>

/* o[key] when it is a string, else "-" (what a table or a log shows for a
 * value that is not there). o may be NULL. */
const char *ap_json_text(const json_t *o, const char *key);

#endif
