/* sign.h - detached Ed25519 signatures over a bundle's manifest.
 *
 * A manifest (manifest.h) ties every file of a bundle to its sha256, but
 * anyone who edits the files can write a new one. A signature ties the
 * manifest to a key: `check --sign KEY` signs DIR/MANIFEST.sha256 and
 * `verify --trust FILE` accepts a bundle only when a key of FILE signed it.
 *
 * DIR/MANIFEST.sha256.sig is one line: the 64-byte Ed25519 signature of the
 * exact bytes of MANIFEST.sha256, in base64 (88 characters), then a newline.
 * It is not listed in the manifest it signs. OpenSSL checks it too:
 *   base64 -d MANIFEST.sha256.sig > sig.bin
 *   openssl pkeyutl -verify -pubin -inkey pub.pem -rawin -in MANIFEST.sha256 -sigfile sig.bin
 *
 * A key is named by its fingerprint, "sha256:" and the sha256 (hex) of its
 * DER SubjectPublicKeyInfo, as
 *   openssl pkey -in key.pem -pubout -outform DER | sha256sum
 * prints it. The signer's fingerprint goes into bundle.json before the
 * manifest is written, so the signature covers it too.
 *
 * Keys are PEM files: the private key unencrypted (PKCS#8, as
 * `openssl genpkey -algorithm ed25519` writes it), the trusted keys as
 * "PUBLIC KEY" blocks. Both are read with care: a regular file (a symbolic
 * link to one is followed), of bounded size.
 */
#ifndef AP_SIGN_H
#define AP_SIGN_H

#include "base/buf.h"
#include "evidence/manifest.h"

#define AP_SIG_NAME AP_MANIFEST_SIG_NAME
#define AP_KEY_FPR_LEN 71        /* "sha256:" and 64 hex digits */
#define AP_KEY_FILE_MAX 65536    /* bytes of a key file, at most */
#define AP_TRUST_MAX_KEYS 256    /* keys in a trust file, at most */

struct ap_signer;   /* a private key, loaded for signing */
struct ap_trust;    /* a list of trusted public keys */

/* Loads the Ed25519 private key of the PEM file at path into *s. 0, or
 * -errno / -AP_ECONFIG with "path: why" in err (not a regular file, too
 * big, not PEM, encrypted, not Ed25519). */
int ap_signer_load(const char *path, struct ap_signer **s, struct ap_buf *err);

/* The fingerprint of the signer's public key ("sha256:<hex>"). */
const char *ap_signer_fpr(const struct ap_signer *s);

/* Signs DIR/MANIFEST.sha256 into DIR/MANIFEST.sha256.sig (written
 * atomically). 0 or -errno / -AP_ECONFIG with err set. */
int ap_sign_manifest(const struct ap_signer *s, const char *dir, struct ap_buf *err);

void ap_signer_free(struct ap_signer *s);

/* Loads every "PUBLIC KEY" PEM block of the file at path into *t. Each must
 * be an Ed25519 key; text outside the blocks is ignored (comments). 0, or
 * -errno / -AP_ECONFIG with "path: why" in err; a file without any key is
 * an error. */
int ap_trust_load(const char *path, struct ap_trust **t, struct ap_buf *err);

/* How many keys t holds. */
size_t ap_trust_count(const struct ap_trust *t);

/* Whether the key named fpr is one of t's. */
int ap_trust_has(const struct ap_trust *t, const char *fpr);

void ap_trust_free(struct ap_trust *t);

/* What ap_sign_verify() found. */
enum ap_sig_state {
	AP_SIG_VALID,      /* a trusted key signed the manifest as it is */
	AP_SIG_ABSENT,     /* no MANIFEST.sha256.sig */
	AP_SIG_MALFORMED,  /* not one line of base64 of 64 bytes, or not a regular file */
	AP_SIG_INVALID,    /* no trusted key made this signature of this manifest */
};

/* Checks DIR's signature against every key of t. On AP_SIG_VALID, fpr
 * receives the fingerprint of the key that made it. Returns the state (>= 0)
 * or -errno when DIR's manifest cannot be read. */
int ap_sign_verify(const struct ap_trust *t, const char *dir, char fpr[AP_KEY_FPR_LEN + 1]);

#endif
