/* sha256.h - SHA-256 digests as lowercase hex (OpenSSL underneath).
 *
 * Evidence checksums, test-source checks and input digests all use these, so
 * every layer hashes the same way.
 */
#ifndef AP_SHA256_H
#define AP_SHA256_H

#include <stddef.h>

#define AP_SHA256_HEX_LEN 64  /* hex digits of a digest */
#define AP_SHA256_HEX_SIZE (AP_SHA256_HEX_LEN + 1) /* and its NUL: a hex buffer */

/* SHA-256 of the file at path, as 64 lowercase hex digits plus NUL in hex.
 * 0 or -errno. */
int ap_sha256_file(const char *path, char hex[AP_SHA256_HEX_SIZE]);

/* SHA-256 of fd from its current offset to its end. 0 or -errno. */
int ap_sha256_fd(int fd, char hex[AP_SHA256_HEX_SIZE]);

/* SHA-256 of a buffer, as hex. hex is empty if OpenSSL cannot allocate, which
 * matches no real digest. */
void ap_sha256_mem(const void *data, size_t len, char hex[AP_SHA256_HEX_SIZE]);

/* An incremental SHA-256, for contents gathered piece by piece (a strided
 * tensor's elements). begin returns NULL when OpenSSL cannot allocate;
 * update and end accept NULL (end then writes an empty hex, which matches no
 * real digest) and end frees the context. */
struct ap_sha256;
struct ap_sha256 *ap_sha256_begin(void);
void ap_sha256_update(struct ap_sha256 *s, const void *data, size_t len);
void ap_sha256_end(struct ap_sha256 *s, char hex[AP_SHA256_HEX_SIZE]);

#endif
