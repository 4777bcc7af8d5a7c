/* plugins.h - what a backend plugin adds to torch when it loads: the plugin
 * APIs file (specs/plugin-apis.ini, built in; INI as base/ini.h).
 *
 *   [torch_npu]              ; the plugin's Python package
 *   backend   = npu          ; the name it gives PrivateUse1
 *   generates = tensor module storage packed_sequence | none
 *                            ; what its call of upstream's
 *                            ;   generate_methods_for_privateuse1_backend makes
 *   device_module = yes|no   ; it calls torch._register_device_module(backend)
 *   where     = the plugin's code that does it
 *
 * The names come from upstream's own rule (torch/utils/backend_registration.py
 * of 2.x), never from a list: tensor adds torch.Tensor.B and .is_B, module
 * torch.nn.Module.B, storage .B and .is_B on TypedStorage and UntypedStorage,
 * packed_sequence the same two on torch.nn.utils.rnn.PackedSequence; a device
 * module is torch.B and everything under it. A page's name that no measured
 * environment reaches and a plugin adds is the audit's plugin-api.
 *
 * Every key is mandatory; anything malformed (a key missing or twice, an
 * unknown key or part, a backend that is no name, two sections of one name)
 * is -AP_ECONFIG with "file:line: why".
 */
#ifndef AP_PLUGINS_H
#define AP_PLUGINS_H

#include <stddef.h>

#include "base/buf.h"

/* The parts of generate_methods_for_privateuse1_backend, a bit each. */
enum {
	AP_PLUGIN_TENSOR = 1u << 0,
	AP_PLUGIN_MODULE = 1u << 1,
	AP_PLUGIN_STORAGE = 1u << 2,
	AP_PLUGIN_PACKED_SEQUENCE = 1u << 3,
};

struct ap_plugin {
	char *package;       /* the section: torch_npu */
	char *backend;       /* npu */
	unsigned generates;  /* AP_PLUGIN_* */
	int device_module;
	char *where;         /* the plugin's code, in words */
	char *at;            /* "FILE:LINE" of the section */
};

struct ap_plugins {
	struct ap_plugin *v;
	size_t n;
};

/* Loads the file at path (NULL or "-": the built-in one). 0, or
 * -AP_ECONFIG with the reason in err ("file: why" when it cannot be read:
 * a regular file of at most 1 MiB), or -ENOMEM; p is then empty. */
int ap_plugins_load(struct ap_plugins *p, const char *path, struct ap_buf *err);

/* As ap_plugins_load(), from the len bytes at text, named name. */
int ap_plugins_parse(struct ap_plugins *p, const char *text, size_t len, const char *name,
		     struct ap_buf *err);

/* The first plugin of p that adds the dotted name (torch.nn.Module.npu,
 * torch.npu.synchronize), or NULL; p may be NULL. When one does and how is
 * not NULL, the upstream call that adds it, as the plugin makes it, is
 * appended to how: "torch.utils.generate_methods_for_privateuse1_backend(
 * for_tensor=True, for_module=True, for_storage=True,
 * for_packed_sequence=True)" or "torch._register_device_module('npu', ...)". */
const struct ap_plugin *ap_plugin_adding(const struct ap_plugins *p, const char *name,
					 struct ap_buf *how);

void ap_plugins_free(struct ap_plugins *p);

/* The built-in file (specs/plugin-apis.ini). */
extern const char ap_default_plugins[];
extern const unsigned long ap_default_plugins_len;

#endif
