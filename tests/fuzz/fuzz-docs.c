/* fuzz-docs - the backend docs page parser on arbitrary pages. */
#include <stddef.h>
#include <stdint.h>

#include "review/docs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *e = ap_docs_parse((const char *)data, size, "fuzz.md");
	int exact;
	ap_docs_find(e, "torch.autograd.Function.forward", &exact);
	json_decref(e);
	return 0;
}
