/* fuzz-manifest - the manifest reader on arbitrary MANIFEST.sha256 files, in
 * a bundle directory with one real file, so that listed paths are resolved
 * (and must never escape it); the lister must hand out only safe paths. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "evidence/manifest.h"

static char dir[] = "/tmp/fuzz-manifest-XXXXXX";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char path[64];
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/run.log", dir);
	FILE *f = fopen(path, "w");
	fputs("log\n", f);
	fclose(f);
	return 0;
}

static int listed(void *ctx, const char *sha256, const char *rel)
{
	(void)ctx;
	if (strlen(sha256) != 64 || !ap_path_is_safe(rel))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ap_manifest_issue is[8];
	char path[64];
	snprintf(path, sizeof(path), "%s/%s", dir, AP_MANIFEST_NAME);
	if (ap_write_atomic(path, data, size) == 0) {
		ap_manifest_verify(dir, is, 8);
		ap_manifest_list(dir, listed, NULL);
	}
	return 0;
}
