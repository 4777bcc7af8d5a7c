/* manifest.h - evidence checksums: MANIFEST.sha256 over every file of a bundle.
 *
 * The manifest is in the format of sha256sum(1): "<64 hex>  <relative path>\n",
 * sorted by path, so `sha256sum -c MANIFEST.sha256` also checks it. Paths are
 * relative to the bundle directory and may not be absolute, contain "..", or
 * lead through a symbolic link out of the bundle: a bundle read back from
 * someone else is untrusted input.
 */
#ifndef AP_MANIFEST_H
#define AP_MANIFEST_H

#include <stddef.h>

#include "base/buf.h"
#include "base/sha256.h"

#define AP_MANIFEST_NAME "MANIFEST.sha256"
/* The manifest's detached signature (sign.h): beside it, not listed in it. */
#define AP_MANIFEST_SIG_NAME "MANIFEST.sha256.sig"

/* Writes DIR/MANIFEST.sha256 listing every regular file under dir (recursively,
 * except the manifest itself and its signature), atomically (temporary file,
 * fsync, rename).
 * A symbolic link or other non-regular file is an error: evidence is plain files.
 * 0 or -errno with err set. */
int ap_manifest_write(const char *dir, struct ap_buf *err);

/* One problem found by ap_manifest_verify(). */
struct ap_manifest_issue {
	enum {
		AP_MF_MISMATCH,   /* listed, present, but the sha256 differs */
		AP_MF_MISSING,    /* listed but absent */
		AP_MF_UNLISTED,   /* present but not listed */
		AP_MF_BADPATH,    /* a listed path that could escape the bundle */
		AP_MF_MALFORMED,  /* a manifest line that cannot be read */
		AP_MF_DUPLICATE,  /* a path listed a second time */
	} kind;
	char path[512];
	int line;             /* manifest line, 0 for AP_MF_UNLISTED */
};

/* Checks dir against its manifest. Fills up to max issues into issues and
 * returns how many were found in all (may exceed max), or -errno (no manifest:
 * -ENOENT). */
int ap_manifest_verify(const char *dir, struct ap_manifest_issue *issues, size_t max);

/* Calls fn(ctx, sha256, rel) for each line of DIR/MANIFEST.sha256, in file
 * order, with its digest (64 lowercase hex) and relative path; a malformed
 * line or one whose path is not safe (ap_path_is_safe) is skipped, since
 * ap_manifest_verify() reports those. Stops at the first fn that returns
 * nonzero and returns that; else 0, or -errno (no manifest: -ENOENT). Reads
 * what the manifest says; it checks no file against it. */
int ap_manifest_list(const char *dir, int (*fn)(void *ctx, const char *sha256, const char *rel),
		     void *ctx);

/* Whether a relative path from a bundle is safe to open inside it: not empty,
 * not absolute, no "." or ".." component, no empty component, no backslash or
 * control character. */
int ap_path_is_safe(const char *rel);

#endif
