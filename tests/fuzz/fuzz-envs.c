/* fuzz-envs - the environments file parser on arbitrary bytes: lines of any
 * length, NUL bytes, sections and keys in any order. */
#include <stddef.h>
#include <stdint.h>

#include "env/envs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ap_envs envs;
	struct ap_buf err = { 0 };
	if (!ap_envs_parse(&envs, (const char *)data, size, "fuzz.ini", "/srv/envs", &err))
		ap_envs_free(&envs);
	ap_buf_free(&err);
	return 0;
}
