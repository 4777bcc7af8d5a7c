#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/sha256.h"
#include "evidence/manifest.h"
#include "evidence/sign.h"

#define SIG_LEN 64                 /* an Ed25519 signature */
#define SIG_B64_LEN 88             /* its base64, padding included */
#define MANIFEST_MAX (64u << 20)   /* bytes of a manifest read back */

struct ap_signer {
	EVP_PKEY *key;
	char fpr[AP_KEY_FPR_LEN + 1];
};

struct trusted {
	EVP_PKEY *key;
	char fpr[AP_KEY_FPR_LEN + 1];
};

struct ap_trust {
	struct trusted *v;
	size_t n;
};

/* OpenSSL's reason for the last failure, or what, and an empty queue after. */
static const char *ossl_why(const char *what)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	ERR_clear_error();
	return r ? r : what;
}

/* "sha256:<hex>" of the DER SubjectPublicKeyInfo of key. 0 or -ENOMEM. */
static int key_fpr(EVP_PKEY *key, char fpr[AP_KEY_FPR_LEN + 1])
{
	unsigned char *der = NULL;
	int len = i2d_PUBKEY(key, &der);
	char hex[AP_SHA256_HEX_LEN + 1];
	if (len <= 0) {
		ERR_clear_error();
		return -ENOMEM;
	}
	ap_sha256_mem(der, (size_t)len, hex);
	OPENSSL_free(der);
	if (strlen(hex) != AP_SHA256_HEX_LEN)
		return -ENOMEM;
	snprintf(fpr, AP_KEY_FPR_LEN + 1, "sha256:%s", hex);
	return 0;
}

static int is_ed25519(const EVP_PKEY *key)
{
	return EVP_PKEY_get_id(key) == EVP_PKEY_ED25519;
}

/* A key file: regular, bounded, copied into a memory BIO. NULL with err set. */
static BIO *key_file(const char *path, struct ap_buf *err)
{
	struct ap_buf text = { 0 };
	int r = ap_read_bounded(path, AP_KEY_FILE_MAX, 0, &text);
	BIO *bio = r ? NULL : BIO_new(BIO_s_mem());
	if (r == -EFBIG)
		ap_buf_addf(err, "%s: over %d bytes, not a key file", path, AP_KEY_FILE_MAX);
	else if (r == -EISDIR || r == -AP_ENOTREG)
		ap_buf_addf(err, "%s: not a regular file", path);
	else if (r)
		ap_buf_addf(err, "%s: %s", path, strerror(-r));
	else if (!bio || BIO_write(bio, ap_buf_str(&text), (int)text.len) != (int)text.len) {
		ap_buf_addf(err, "%s: out of memory", path);
		BIO_free(bio);
		bio = NULL;
	}
	ap_buf_free(&text);
	return bio;
}

/* Refuses to ask for a passphrase: an encrypted key cannot be used unattended. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

int ap_signer_load(const char *path, struct ap_signer **s, struct ap_buf *err)
{
	*s = NULL;
	BIO *bio = key_file(path, err);
	if (!bio)
		return -AP_ECONFIG;
	EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	BIO_free(bio);
	if (!key) {
		ap_buf_addf(err, "%s: not an unencrypted PEM private key (%s)", path,
			    ossl_why("no PRIVATE KEY block"));
		return -AP_ECONFIG;
	}
	if (!is_ed25519(key)) {
		ap_buf_addf(err, "%s: key type %s; signing needs an Ed25519 key "
			    "(openssl genpkey -algorithm ed25519)", path, EVP_PKEY_get0_type_name(key));
		EVP_PKEY_free(key);
		return -AP_ECONFIG;
	}
	struct ap_signer *n = calloc(1, sizeof(*n));
	if (!n || key_fpr(key, n->fpr)) {
		free(n);
		EVP_PKEY_free(key);
		ap_buf_addf(err, "%s: out of memory", path);
		return -ENOMEM;
	}
	n->key = key;
	*s = n;
	return 0;
}

const char *ap_signer_fpr(const struct ap_signer *s)
{
	return s->fpr;
}

void ap_signer_free(struct ap_signer *s)
{
	if (!s)
		return;
	EVP_PKEY_free(s->key);
	free(s);
}

static int sign_bytes(EVP_PKEY *key, const struct ap_buf *msg, unsigned char sig[SIG_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t len = SIG_LEN;
	int ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
		 EVP_DigestSign(ctx, sig, &len, (const unsigned char *)ap_buf_str(msg),
				msg->len) == 1 && len == SIG_LEN;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		ERR_clear_error();
	return ok ? 0 : -ENOMEM;
}

static int verify_bytes(EVP_PKEY *key, const struct ap_buf *msg, const unsigned char sig[SIG_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
		 EVP_DigestVerify(ctx, sig, SIG_LEN, (const unsigned char *)ap_buf_str(msg),
				  msg->len) == 1;
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

static int read_in(const char *dir, const char *name, size_t max, struct ap_buf *out)
{
	struct ap_buf path = { 0 };
	int r = ap_buf_addf(&path, "%s/%s", dir, name);
	if (!r)
		r = ap_read_bounded(ap_buf_str(&path), max, O_NOFOLLOW, out);
	ap_buf_free(&path);
	return r;
}

int ap_sign_manifest(const struct ap_signer *s, const char *dir, struct ap_buf *err)
{
	struct ap_buf msg = { 0 }, path = { 0 };
	unsigned char sig[SIG_LEN];
	char line[SIG_B64_LEN + 2];
	int r = read_in(dir, AP_MANIFEST_NAME, MANIFEST_MAX, &msg);
	if (r)
		ap_buf_addf(err, "%s/%s: %s", dir, AP_MANIFEST_NAME, strerror(-r));
	else if ((r = sign_bytes(s->key, &msg, sig)))
		ap_buf_addf(err, "%s/%s: the signature could not be made", dir, AP_MANIFEST_NAME);
	if (!r) {
		EVP_EncodeBlock((unsigned char *)line, sig, SIG_LEN);
		line[SIG_B64_LEN] = '\n';
		ap_buf_addf(&path, "%s/%s", dir, AP_SIG_NAME);
		r = ap_write_atomic(ap_buf_str(&path), line, SIG_B64_LEN + 1);
		if (r)
			ap_buf_addf(err, "cannot write %s: %s", ap_buf_str(&path), strerror(-r));
	}
	ap_buf_free(&msg);
	ap_buf_free(&path);
	return r;
}

/* --- trust -------------------------------------------------------------- */

static int trust_add(struct ap_trust *t, EVP_PKEY *key)
{
	struct trusted *v = realloc(t->v, (t->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->v = v;
	v[t->n].key = key;
	if (key_fpr(key, v[t->n].fpr))
		return -ENOMEM;
	t->n++;
	return 0;
}

/* Decodes the idx-th PEM block (name, data) as an Ed25519 public key into t. */
static int trust_block(struct ap_trust *t, const char *path, int idx, const char *name,
		       const unsigned char *data, long len, struct ap_buf *err)
{
	if (strcmp(name, PEM_STRING_PUBLIC)) {
		ap_buf_addf(err, "%s: block %d is a %s, not a PUBLIC KEY", path, idx, name);
		return -AP_ECONFIG;
	}
	const unsigned char *p = data;
	EVP_PKEY *key = d2i_PUBKEY(NULL, &p, len);
	if (!key || p != data + len) {
		ap_buf_addf(err, "%s: block %d is not a readable public key (%s)", path, idx,
			    ossl_why("trailing bytes"));
		EVP_PKEY_free(key);
		return -AP_ECONFIG;
	}
	if (!is_ed25519(key)) {
		ap_buf_addf(err, "%s: block %d is a %s key, not Ed25519", path, idx,
			    EVP_PKEY_get0_type_name(key));
		EVP_PKEY_free(key);
		return -AP_ECONFIG;
	}
	if (trust_add(t, key)) {
		EVP_PKEY_free(key);
		ap_buf_addf(err, "%s: out of memory", path);
		return -ENOMEM;
	}
	return 0;
}

/* Every PEM block of bio into t; the end of the input ends it, a block that
 * does not decode is an error. */
static int trust_blocks(struct ap_trust *t, BIO *bio, const char *path, struct ap_buf *err)
{
	int r = 0;
	for (int idx = 1; !r; idx++) {
		char *name = NULL, *header = NULL;
		unsigned char *data = NULL;
		long len = 0;
		if (!PEM_read_bio(bio, &name, &header, &data, &len)) {
			unsigned long e = ERR_peek_last_error();
			if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
				ERR_clear_error();
				break;
			}
			ap_buf_addf(err, "%s: block %d is malformed PEM (%s)", path, idx,
				    ossl_why("unreadable"));
			return -AP_ECONFIG;
		}
		if (t->n == AP_TRUST_MAX_KEYS) {
			ap_buf_addf(err, "%s: more than %d keys", path, AP_TRUST_MAX_KEYS);
			r = -AP_ECONFIG;
		} else
			r = trust_block(t, path, idx, name, data, len, err);
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_free(data);
	}
	return r;
}

int ap_trust_load(const char *path, struct ap_trust **t, struct ap_buf *err)
{
	*t = NULL;
	BIO *bio = key_file(path, err);
	if (!bio)
		return -AP_ECONFIG;
	struct ap_trust *n = calloc(1, sizeof(*n));
	int r = n ? trust_blocks(n, bio, path, err) : -ENOMEM;
	BIO_free(bio);
	if (!r && !n->n) {
		ap_buf_addf(err, "%s: no PUBLIC KEY block (openssl pkey -in key.pem -pubout)", path);
		r = -AP_ECONFIG;
	}
	if (r) {
		ap_trust_free(n);
		return r;
	}
	*t = n;
	return 0;
}

size_t ap_trust_count(const struct ap_trust *t)
{
	return t ? t->n : 0;
}

int ap_trust_has(const struct ap_trust *t, const char *fpr)
{
	for (size_t i = 0; t && fpr && i < t->n; i++)
		if (!strcmp(t->v[i].fpr, fpr))
			return 1;
	return 0;
}

void ap_trust_free(struct ap_trust *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		EVP_PKEY_free(t->v[i].key);
	free(t->v);
	free(t);
}

/* The signature file's one line of base64 into sig: 1, or 0 when it is not that. */
static int sig_decode(const struct ap_buf *text, unsigned char sig[SIG_LEN])
{
	unsigned char out[SIG_B64_LEN];
	if (text->len != SIG_B64_LEN + 1 || text->data[SIG_B64_LEN] != '\n' ||
	    memcmp(text->data + SIG_B64_LEN - 2, "==", 2))
		return 0;
	/* EVP_DecodeBlock counts the padding as zero bytes: 66 for 64 */
	if (EVP_DecodeBlock(out, (const unsigned char *)text->data, SIG_B64_LEN) != SIG_LEN + 2)
		return 0;
	memcpy(sig, out, SIG_LEN);
	return 1;
}

int ap_sign_verify(const struct ap_trust *t, const char *dir, char fpr[AP_KEY_FPR_LEN + 1])
{
	struct ap_buf text = { 0 }, msg = { 0 };
	unsigned char sig[SIG_LEN];
	int r = read_in(dir, AP_SIG_NAME, SIG_B64_LEN + 1, &text);
	if (r == -ENOENT)
		r = AP_SIG_ABSENT;
	else if (r)
		r = AP_SIG_MALFORMED;  /* a link, a FIFO, too long */
	else if (!sig_decode(&text, sig))
		r = AP_SIG_MALFORMED;
	else if ((r = read_in(dir, AP_MANIFEST_NAME, MANIFEST_MAX, &msg)) == 0) {
		r = AP_SIG_INVALID;
		for (size_t i = 0; t && i < t->n && r == AP_SIG_INVALID; i++)
			if (verify_bytes(t->v[i].key, &msg, sig)) {
				memcpy(fpr, t->v[i].fpr, AP_KEY_FPR_LEN + 1);
				r = AP_SIG_VALID;
			}
	}
	ap_buf_free(&text);
	ap_buf_free(&msg);
	return r;
}
