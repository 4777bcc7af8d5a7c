/* surface.c - the sweep's surface rules (see surface.h). */
#include <stddef.h>

#include "check/surface.h"

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The rules, one table: each a key of the request's "surface" and its words. */
static const struct {
	const char *key;
	const char *const *words;
} rules[] = {
	{ "private", LIST("_") },
	{ "own", LIST("torch") },
	{ "skip_metatypes", LIST("tensortype") },
	{ "skip_bases", LIST("torch.Tensor") },
	{ "foreign_types", LIST("typing", "typing_extensions", "__future__") },
};

json_t *ap_surface_rules(void)
{
	json_t *r = json_object();
	for (size_t i = 0; r && i < sizeof(rules) / sizeof(rules[0]); i++) {
		json_t *a = json_array();
		for (const char *const *w = rules[i].words; a && *w; w++)
			json_array_append_new(a, json_string(*w));
		if (!a || json_object_set_new(r, rules[i].key, a)) {
			json_decref(r);
			return NULL;
		}
	}
	return r;
}
