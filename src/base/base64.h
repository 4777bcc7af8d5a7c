/* base64.h - strict base64 (RFC 4648, standard alphabet, padded), decoded.
 *
 * The worker ships tensor bytes as base64 inside JSON; every byte of it is
 * data from another process, so the decoder refuses anything that is not
 * canonical base64 rather than guessing.
 */
#ifndef AP_BASE64_H
#define AP_BASE64_H

#include <stddef.h>

#include "base/buf.h"

/* Appends the bytes that s (len characters) encodes to out. 0; -EINVAL for a
 * length that is not a multiple of 4, a character outside the alphabet,
 * padding anywhere but at the end, or pad bits that are not zero; -EFBIG
 * when the result would exceed max bytes; -ENOMEM. out is unchanged on
 * failure. */
int ap_base64_decode(const char *s, size_t len, size_t max, struct ap_buf *out);

#endif
