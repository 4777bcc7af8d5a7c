#include "base/jsonutil.h"

const char *ap_json_text(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "-";
}
