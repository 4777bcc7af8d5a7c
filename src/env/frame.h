/* frame.h - the framing of the worker protocol.
 *
 * A frame is a 4-byte big-endian payload length followed by the payload (UTF-8
 * JSON). Length-prefixing, rather than newline-delimiting, means a payload can
 * hold anything and a reader always knows whether a frame is complete: a stream
 * that ends inside a frame is a truncated frame, never a short message.
 */
#ifndef AP_FRAME_H
#define AP_FRAME_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"

#define AP_FRAME_HEADER 4
#define AP_FRAME_MAX (64u << 20) /* a fingerprint is ~2 KiB; 64 MiB is abuse */

/* Appends the frame of payload to out. 0, -AP_ETOOBIG or -ENOMEM. */
int ap_frame_encode(struct ap_buf *out, const char *payload, size_t len);

/* Looks for one complete frame at the start of in. Returns 1 and sets *payload
 * (pointing into in), *len and *frame_len (bytes to consume) when one is there;
 * 0 when more bytes are needed; -AP_ETOOBIG when the header announces more than
 * max bytes, so a reader never waits for, or allocates, an absurd frame. */
int ap_frame_peek(const struct ap_buf *in, size_t max, const char **payload,
		  size_t *len, size_t *frame_len);

/* Parses a payload as the protocol's JSON object, strictly: a NUL inside a
 * string, bytes that are not UTF-8, NaN or a number out of range make it
 * unreadable (the worker sends such values tagged, never raw). 0 and a new
 * *msg, or -AP_EPROTO with why saying what is wrong. */
int ap_frame_json(const char *payload, size_t len, json_t **msg, struct ap_buf *why);

/* For a stream that ended with in still holding bytes: how many of the frame's
 * bytes arrived and how many were announced (0 if the header itself is cut). */
void ap_frame_truncation(const struct ap_buf *in, size_t *got, size_t *want);

#endif
