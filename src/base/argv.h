/* argv.h - argument vectors: how an environment's commands are held.
 *
 * apiparity never runs a command line through a shell. A human writes an exec
 * prefix such as `ssh a2-host --` in an environments file; ap_argv_split() turns
 * it into words once, at parse time, and from then on it is an argv.
 */
#ifndef AP_ARGV_H
#define AP_ARGV_H

#include <stddef.h>

#include "base/buf.h"

/* A NULL-terminated vector; v[n] == NULL. A zeroed struct is empty. */
struct ap_argv {
	char **v;
	size_t n;
};

/* Appends a copy of s. 0 or -ENOMEM. */
int ap_argv_push(struct ap_argv *a, const char *s);

/* Appends copies of every word of src. 0 or -ENOMEM. */
int ap_argv_extend(struct ap_argv *a, const struct ap_argv *src);

/* Splits s into words: blanks separate words; '...' and "..." group blanks into
 * a word, with no expansion of any kind; a backslash outside single quotes
 * escapes the next character. Returns 0, -EINVAL for an unterminated quote or a
 * trailing backslash (a is left empty), or -ENOMEM. */
int ap_argv_split(struct ap_argv *a, const char *s);

/* Appends s to out as one word of a POSIX shell's command line (sh, dash,
 * bash, ksh, zsh): inside single quotes, each ' written as '\'' . Within
 * single quotes such a shell gives every byte its literal value (blanks,
 * newlines, $, `, ", \, ;, bytes that are not ASCII), so the word reaches the
 * far side of ssh as the same bytes and nothing in it runs. An empty s is ''.
 * 0 or -ENOMEM. */
int ap_shell_quote(struct ap_buf *out, const char *s);

void ap_argv_free(struct ap_argv *a);

#endif
