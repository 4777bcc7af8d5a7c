/* test-sign.c - unit tests for src/evidence/sign.h: Ed25519 signatures of a
 * manifest, made with a PEM private key and checked against a list of trusted
 * public keys. Keys are made fresh for each test. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/sha256.h"
#include "evidence/manifest.h"
#include "evidence/sign.h"
#include "testutil.h"

struct fixture {
	char top[4096];
	char bundle[4096 + 16];
	struct ap_buf err;
	struct ap_signer *signer;
	struct ap_trust *trust;
};

static int make_tempdir(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (t_tempdir(f->top, sizeof(f->top), "test-sign")) {
		free(f);
		return -1;
	}
	snprintf(f->bundle, sizeof(f->bundle), "%s/bundle", f->top);
	*state = f;
	return mkdir(f->bundle, 0755);
}

static int remove_tempdir(void **state)
{
	struct fixture *f = *state;
	int r = t_rmtree(f->top);
	ap_signer_free(f->signer);
	ap_trust_free(f->trust);
	ap_buf_free(&f->err);
	free(f);
	return r;
}

static const char *at(const char *dir, const char *rel)
{
	static char path[2][8192];
	static int which;
	which = !which;
	snprintf(path[which], sizeof(path[which]), "%s/%s", dir, rel);
	return path[which];
}

static EVP_PKEY *new_key(const char *type)
{
	EVP_PKEY *k = strcmp(type, "RSA") ? EVP_PKEY_Q_keygen(NULL, NULL, type)
					  : EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	assert_non_null(k);
	return k;
}

/* Writes k's private key to top/name, unencrypted PKCS#8 PEM. */
static const char *put_private(const char *top, const char *name, EVP_PKEY *k)
{
	const char *path = at(top, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(PEM_write_PrivateKey(fp, k, NULL, NULL, 0, NULL, NULL), 1);
	assert_int_equal(fclose(fp), 0);
	return path;
}

/* Appends k's public key to top/name (after a comment line). */
static const char *add_public(const char *top, const char *name, EVP_PKEY *k)
{
	const char *path = at(top, name);
	FILE *fp = fopen(path, "a");
	assert_non_null(fp);
	fputs("# a CI machine\n", fp);
	assert_int_equal(PEM_write_PUBKEY(fp, k), 1);
	assert_int_equal(fclose(fp), 0);
	return path;
}

/* A bundle with a manifest, signed by k; k's public key trusted when trust. */
static void signed_bundle(struct fixture *f, EVP_PKEY *k)
{
	t_put(f->bundle, "bundle.json", "{\"verdict\":\"inconsistent\"}\n");
	t_put(f->bundle, "journal.jsonl", "{\"type\":\"start\",\"data\":{}}\n");
	assert_int_equal(ap_manifest_write(f->bundle, &f->err), 0);
	assert_int_equal(ap_signer_load(put_private(f->top, "key.pem", k), &f->signer, &f->err), 0);
	assert_int_equal(ap_sign_manifest(f->signer, f->bundle, &f->err), 0);
	assert_string_equal(ap_buf_str(&f->err), "");
}

static void trust(struct fixture *f, const char *path)
{
	assert_int_equal(ap_trust_load(path, &f->trust, &f->err), 0);
	assert_string_equal(ap_buf_str(&f->err), "");
}

static int verify(struct fixture *f, char fpr[AP_KEY_FPR_LEN + 1])
{
	return ap_sign_verify(f->trust, f->bundle, fpr);
}

static void signed_manifest_verifies_with_the_trusted_key_and_names_it(void **state)
{
	struct fixture *f = *state;
	char fpr[AP_KEY_FPR_LEN + 1] = "";
	EVP_PKEY *other = new_key("ED25519"), *k = new_key("ED25519");
	signed_bundle(f, k);
	add_public(f->top, "trusted.pem", other);
	trust(f, add_public(f->top, "trusted.pem", k));
	assert_int_equal(ap_trust_count(f->trust), 2);
	assert_int_equal(verify(f, fpr), AP_SIG_VALID);
	assert_string_equal(fpr, ap_signer_fpr(f->signer));
	assert_true(ap_trust_has(f->trust, fpr));
	EVP_PKEY_free(other);
	EVP_PKEY_free(k);
}

/* The fingerprint is the sha256 of the DER SubjectPublicKeyInfo, as
 * `openssl pkey -pubout -outform DER | sha256sum` prints it. */
static void fingerprint_is_the_sha256_of_the_der_public_key(void **state)
{
	struct fixture *f = *state;
	unsigned char *der = NULL;
	char hex[AP_SHA256_HEX_LEN + 1], want[AP_KEY_FPR_LEN + 1];
	EVP_PKEY *k = new_key("ED25519");
	int len = i2d_PUBKEY(k, &der);
	assert_true(len > 0);
	ap_sha256_mem(der, (size_t)len, hex);
	snprintf(want, sizeof(want), "sha256:%s", hex);
	OPENSSL_free(der);
	assert_int_equal(ap_signer_load(put_private(f->top, "key.pem", k), &f->signer, &f->err), 0);
	assert_string_equal(ap_signer_fpr(f->signer), want);
	EVP_PKEY_free(k);
}

static void signature_file_is_one_line_of_base64(void **state)
{
	struct fixture *f = *state;
	char line[200] = "";
	EVP_PKEY *k = new_key("ED25519");
	signed_bundle(f, k);
	FILE *fp = fopen(at(f->bundle, AP_SIG_NAME), "r");
	assert_non_null(fp);
	assert_non_null(fgets(line, sizeof(line), fp));
	assert_int_equal(fgetc(fp), EOF);
	fclose(fp);
	assert_int_equal(strlen(line), 89);
	assert_int_equal(strspn(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				"0123456789+/"), 86);
	assert_string_equal(line + 86, "==\n");
	EVP_PKEY_free(k);
}

static void signature_by_a_key_not_trusted_is_invalid(void **state)
{
	struct fixture *f = *state;
	char fpr[AP_KEY_FPR_LEN + 1] = "";
	EVP_PKEY *k = new_key("ED25519"), *other = new_key("ED25519");
	signed_bundle(f, k);
	trust(f, add_public(f->top, "trusted.pem", other));
	assert_int_equal(verify(f, fpr), AP_SIG_INVALID);
	assert_false(ap_trust_has(f->trust, ap_signer_fpr(f->signer)));
	EVP_PKEY_free(k);
	EVP_PKEY_free(other);
}

/* Resealing the manifest after an edit, as a forger would, breaks the
 * signature: the forger has no trusted key to sign again. */
static void manifest_resealed_after_an_edit_is_invalid(void **state)
{
	struct fixture *f = *state;
	char fpr[AP_KEY_FPR_LEN + 1] = "";
	EVP_PKEY *k = new_key("ED25519");
	signed_bundle(f, k);
	trust(f, add_public(f->top, "trusted.pem", k));
	t_put(f->bundle, "bundle.json", "{\"verdict\":\"consistent\"}\n");
	assert_int_equal(ap_manifest_write(f->bundle, &f->err), 0);
	assert_int_equal(verify(f, fpr), AP_SIG_INVALID);
	EVP_PKEY_free(k);
}

static void missing_and_malformed_signatures_are_told_apart(void **state)
{
	struct fixture *f = *state;
	char fpr[AP_KEY_FPR_LEN + 1] = "";
	EVP_PKEY *k = new_key("ED25519");
	signed_bundle(f, k);
	trust(f, add_public(f->top, "trusted.pem", k));
	t_put(f->bundle, AP_SIG_NAME, "bm90IGEgc2lnbmF0dXJl\n");
	assert_int_equal(verify(f, fpr), AP_SIG_MALFORMED);
	assert_int_equal(unlink(at(f->bundle, AP_SIG_NAME)), 0);
	assert_int_equal(symlink(at(f->top, "trusted.pem"), at(f->bundle, AP_SIG_NAME)), 0);
	assert_int_equal(verify(f, fpr), AP_SIG_MALFORMED);
	assert_int_equal(unlink(at(f->bundle, AP_SIG_NAME)), 0);
	assert_int_equal(verify(f, fpr), AP_SIG_ABSENT);
	EVP_PKEY_free(k);
}

static void private_key_that_is_not_ed25519_is_refused_naming_its_type(void **state)
{
	struct fixture *f = *state;
	EVP_PKEY *k = new_key("RSA");
	const char *path = put_private(f->top, "rsa.pem", k);
	assert_int_equal(ap_signer_load(path, &f->signer, &f->err), -AP_ECONFIG);
	assert_null(f->signer);
	assert_non_null(strstr(ap_buf_str(&f->err), path));
	assert_non_null(strstr(ap_buf_str(&f->err), "key type RSA; signing needs an Ed25519 key"));
	EVP_PKEY_free(k);
}

static void malformed_pem_is_refused_as_a_key(void **state)
{
	struct fixture *f = *state;
	t_put(f->top, "key.pem", "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n"
	      "-----END PRIVATE KEY-----\n");
	assert_int_equal(ap_signer_load(at(f->top, "key.pem"), &f->signer, &f->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&f->err), "not an unencrypted PEM private key"));
	ap_buf_reset(&f->err);
	t_put(f->top, "trusted.pem", "-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n"
	      "-----END PUBLIC KEY-----\n");
	assert_int_equal(ap_trust_load(at(f->top, "trusted.pem"), &f->trust, &f->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&f->err), "block 1 is not a readable public key"));
	ap_buf_reset(&f->err);
	t_put(f->top, "trusted.pem", "-----BEGIN PUBLIC KEY-----\n!!!!\n");
	assert_int_equal(ap_trust_load(at(f->top, "trusted.pem"), &f->trust, &f->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&f->err), "block 1 is malformed PEM"));
}

static void encrypted_private_key_is_refused_without_asking_for_a_passphrase(void **state)
{
	struct fixture *f = *state;
	EVP_PKEY *k = new_key("ED25519");
	FILE *fp = fopen(at(f->top, "enc.pem"), "w");
	assert_non_null(fp);
	assert_int_equal(PEM_write_PKCS8PrivateKey(fp, k, EVP_aes_256_cbc(), "pw", 2, NULL, NULL), 1);
	fclose(fp);
	assert_int_equal(ap_signer_load(at(f->top, "enc.pem"), &f->signer, &f->err), -AP_ECONFIG);
	EVP_PKEY_free(k);
}

static void trust_file_with_a_key_that_is_not_ed25519_is_refused(void **state)
{
	struct fixture *f = *state;
	EVP_PKEY *ok = new_key("ED25519"), *ec = new_key("X25519");
	add_public(f->top, "trusted.pem", ok);
	const char *path = add_public(f->top, "trusted.pem", ec);
	assert_int_equal(ap_trust_load(path, &f->trust, &f->err), -AP_ECONFIG);
	assert_null(f->trust);
	assert_non_null(strstr(ap_buf_str(&f->err), "block 2 is a X25519 key, not Ed25519"));
	EVP_PKEY_free(ok);
	EVP_PKEY_free(ec);
}

static void trust_file_with_a_private_key_or_no_key_is_refused(void **state)
{
	struct fixture *f = *state;
	EVP_PKEY *k = new_key("ED25519");
	const char *path = put_private(f->top, "trusted.pem", k);
	assert_int_equal(ap_trust_load(path, &f->trust, &f->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&f->err), "block 1 is a PRIVATE KEY, not a PUBLIC KEY"));
	ap_buf_reset(&f->err);
	t_put(f->top, "empty.pem", "# nobody yet\n");
	assert_int_equal(ap_trust_load(at(f->top, "empty.pem"), &f->trust, &f->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&f->err), "no PUBLIC KEY block"));
	EVP_PKEY_free(k);
}

/* A key file is the operator's own: a link to one (a mounted secret) is read. */
static void key_behind_a_symbolic_link_is_read(void **state)
{
	struct fixture *f = *state;
	EVP_PKEY *k = new_key("ED25519");
	put_private(f->top, "key.pem", k);
	assert_int_equal(symlink(at(f->top, "key.pem"), at(f->top, "link.pem")), 0);
	assert_int_equal(ap_signer_load(at(f->top, "link.pem"), &f->signer, &f->err), 0);
	EVP_PKEY_free(k);
}

static void key_files_must_be_small_regular_files(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(ap_trust_load(f->top, &f->trust, &f->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&f->err), "not a regular file"));
	ap_buf_reset(&f->err);
	assert_int_equal(mkfifo(at(f->top, "fifo"), 0600), 0);
	assert_int_equal(ap_signer_load(at(f->top, "fifo"), &f->signer, &f->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&f->err), "not a regular file"));
	ap_buf_reset(&f->err);
	FILE *fp = fopen(at(f->top, "big.pem"), "w");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, AP_KEY_FILE_MAX, SEEK_SET), 0);
	fputc('\n', fp);
	fclose(fp);
	assert_int_equal(ap_trust_load(at(f->top, "big.pem"), &f->trust, &f->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&f->err), "not a key file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_tempdir, remove_tempdir)
		T(signed_manifest_verifies_with_the_trusted_key_and_names_it),
		T(fingerprint_is_the_sha256_of_the_der_public_key),
		T(signature_file_is_one_line_of_base64),
		T(signature_by_a_key_not_trusted_is_invalid),
		T(manifest_resealed_after_an_edit_is_invalid),
		T(missing_and_malformed_signatures_are_told_apart),
		T(private_key_that_is_not_ed25519_is_refused_naming_its_type),
		T(malformed_pem_is_refused_as_a_key),
		T(encrypted_private_key_is_refused_without_asking_for_a_passphrase),
		T(trust_file_with_a_key_that_is_not_ed25519_is_refused),
		T(trust_file_with_a_private_key_or_no_key_is_refused),
		T(key_behind_a_symbolic_link_is_read),
		T(key_files_must_be_small_regular_files),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
