/* yamldoc.h - human-edited data files (specs, policies), read with libyaml.
 *
 * A YAML document becomes a jansson tree: mappings become objects, sequences
 * arrays, and every scalar a string (types are the reader's business, so "no"
 * never silently becomes false). Each object also gets "__line__", the line
 * where its mapping starts, and "__lines__", the line of each of its keys
 * (both ap_yaml_meta()), so that the module that validates the tree can
 * name file:line in its errors; a file's own key of either name is refused. Anchors, aliases and tags are refused:
 * these files should read the same to a person and to the program.
 */
#ifndef AP_YAMLDOC_H
#define AP_YAMLDOC_H

#include <jansson.h>

#include "base/buf.h"

/* Parses the YAML text of len bytes; name is used in messages. Returns a new
 * tree, or NULL with "name:line:column: problem" in err. */
json_t *ap_yaml_parse(const char *text, size_t len, const char *name, struct ap_buf *err);

/* The same for a file. */
json_t *ap_yaml_load(const char *path, struct ap_buf *err);

/* The line recorded for object o, 0 when unknown. */
int ap_yaml_line(const json_t *o);

/* The line of key in object o (where o starts when not known). */
int ap_yaml_key_line(const json_t *o, const char *key);

/* Whether key is one ap_yaml_parse() adds ("__line__", "__lines__"), not
 * the file's. */
int ap_yaml_meta(const char *key);

#endif
