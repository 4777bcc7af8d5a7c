/* fuzz-docs - the backend docs page parser on arbitrary pages. */
#include <stddef.h>
#include <stdint.h>

#include "review/docs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ap_docs_entries e = { 0 };
	int exact;
	ap_docs_parse((const char *)data, size, "fuzz.md", &e);
	ap_docs_find(&e, "torch.autograd.Function.forward", &exact);
	for (size_t i = 0; i < e.n; i++)
		json_decref(ap_docs_entry_json(&e.v[i]));
	ap_docs_entries_free(&e);
	return 0;
}
