#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/fsutil.h"
#include "base/sha256.h"

#define AP_SHA256_BYTES (AP_SHA256_HEX_LEN / 2) /* a digest, in bytes */


static void to_hex(const unsigned char *md, char hex[AP_SHA256_HEX_SIZE])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < AP_SHA256_BYTES; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[AP_SHA256_HEX_LEN] = '\0';
}

void ap_sha256_mem(const void *data, size_t len, char hex[AP_SHA256_HEX_SIZE])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	/* Fails only when OpenSSL cannot allocate; an empty string then matches
	 * no real digest, so nothing passes a check by accident. */
	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != AP_SHA256_BYTES) {
		hex[0] = '\0';
		return;
	}
	to_hex(md, hex);
}

int ap_sha256_fd(int fd, char hex[AP_SHA256_HEX_SIZE])
{
	unsigned char buf[AP_READ_CHUNK], md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int r = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r = got < 0 ? -errno : 0;
			break;
		}
		if (!EVP_DigestUpdate(ctx, buf, (size_t)got)) {
			r = -ENOMEM;
			break;
		}
	}
	if (!r && (!EVP_DigestFinal_ex(ctx, md, &n) || n != AP_SHA256_BYTES))
		r = -ENOMEM;
	if (!r)
		to_hex(md, hex);
	EVP_MD_CTX_free(ctx);
	return r;
}

int ap_sha256_file(const char *path, char hex[AP_SHA256_HEX_SIZE])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = ap_sha256_fd(fd, hex);
	close(fd);
	return r;
}

/* The EVP context is the state; the struct exists only to give it a type of
 * this module. */
struct ap_sha256 *ap_sha256_begin(void)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (ctx && !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	return (struct ap_sha256 *)ctx;
}

void ap_sha256_update(struct ap_sha256 *s, const void *data, size_t len)
{
	if (s && len && !EVP_DigestUpdate((EVP_MD_CTX *)s, data, len)) {
		/* Cannot happen for SHA-256 in memory; poison the digest if it does. */
		EVP_MD_CTX_reset((EVP_MD_CTX *)s);
	}
}

void ap_sha256_end(struct ap_sha256 *s, char hex[AP_SHA256_HEX_SIZE])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	hex[0] = '\0';
	if (s && EVP_DigestFinal_ex((EVP_MD_CTX *)s, md, &n) && n == AP_SHA256_BYTES)
		to_hex(md, hex);
	EVP_MD_CTX_free((EVP_MD_CTX *)s);
}
