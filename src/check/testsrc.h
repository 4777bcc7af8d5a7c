/* testsrc.h - upstream test trees, found or fetched, cached by version.
 *
 * A torch version's official tests are the test/ directory of its upstream
 * source. For a Debian environment that source is the orig tarball of the
 * `pytorch` source package, fetched with apt through a private configuration
 * (deb-src lines derived from this machine's mirror, keys from Debian's
 * keyring), verified against the sha256 in its .dsc, and unpacked once into
 * TESTS_ROOT/<upstream version>/test, with its docs sources (docs/source:
 * where upstream publishes each API, see review/updocs.h). The cache is keyed by the upstream
 * version (2.6.0+dfsg), which is what decides the test files.
 */
#ifndef AP_TESTSRC_H
#define AP_TESTSRC_H

#include "base/buf.h"
#include "base/sha256.h"

#define AP_DEFAULT_TESTS_ROOT "/var/cache/apiparity/tests"
#define AP_TESTS_STAMP ".apiparity-tests" /* beside test/: the unpack is complete */

/* $APIPARITY_TESTS_ROOT, else the default. */
const char *ap_tests_root(void);

/* The upstream part of a Debian version: "1:2.6.0+dfsg-7" -> "2.6.0+dfsg". */
void ap_upstream_version(const char *debian_version, struct ap_buf *out);

/* 1 when TESTS_ROOT/<key> is a complete unpack (its stamp exists), else 0.
 * Fills out either way with the test tree's path, TESTS_ROOT/<key>/test. */
int ap_testsrc_cached(const char *key, struct ap_buf *out);

/* 1 when TESTS_ROOT/<key> has both its tests (ap_testsrc_cached) and its
 * docs sources (docs/source), else 0: a tree fetched before docs sources
 * were is fetched again for them. */
int ap_testsrc_complete(const char *key);

/* Upstream's docs sources for torch version (its "MAJOR.MINOR.PATCH"
 * part: "2.6.0+debian" -> 2.6.0), fetched beside its tests: the first
 * TESTS_ROOT/<key>/docs/source whose key is that release (2.6.0, 2.6.0+dfsg)
 * into out. 0, or -ENOENT when none is there (out untouched). */
int ap_testsrc_docs(const char *torch_version, struct ap_buf *out);

/* Fetches the tests of source package `source` at Debian version `version`
 * from `suite`. 1: already cached; 0: fetched; -AP_ENOSOURCE when the archive
 * does not have that version (err says so and how to give a tree instead);
 * -AP_EPROVISION when a download, check or unpack fails. */
int ap_testsrc_fetch(const char *suite, const char *source, const char *version,
		     void (*progress)(void *ctx, const char *line), void *ctx,
		     struct ap_buf *err);

/* Parses a .dsc's Checksums-Sha256 for file name; 0 and hex set, or -ENOENT. */
int ap_dsc_sha256(const char *dsc_text, const char *name, char hex[AP_SHA256_HEX_SIZE]);

#endif
