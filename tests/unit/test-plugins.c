/* test-plugins.c - unit tests for src/review/plugins.h: the names a backend
 * plugin adds to torch, derived by upstream's PrivateUse1 rule from the
 * parts it generates and its device module, never more; the call that adds
 * each said as the plugin makes it; malformed files refused with file:line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/err.h"
#include "review/plugins.h"

static const char good[] =
	"; a comment\n"
	"[torch_npu]\n"                                        /* line 2 */
	"backend = npu\n"
	"generates = tensor module storage packed_sequence\n"
	"device_module = yes\n"
	"where = torch_npu/__init__.py\n"
	"\n"
	"[torch_foo]\n"                                        /* line 8 */
	"backend = foo\n"
	"generates = module tensor\n"
	"device_module = no\n"
	"where = torch_foo/__init__.py\n";

static void parse(const char *text, struct ap_plugins *p, struct ap_buf *err, int want)
{
	int r = ap_plugins_parse(p, text, strlen(text), "plug.ini", err);
	if (r != want)
		fail_msg("parse returned %d, not %d: %s", r, want, ap_buf_str(err));
}

/* The package that adds name, "-" when none; the call that adds it in how. */
static const char *adding(const struct ap_plugins *p, const char *name, struct ap_buf *how)
{
	ap_buf_reset(how);
	const struct ap_plugin *x = ap_plugin_adding(p, name, how);
	return x ? x->package : "-";
}

#define ALL_FOUR "torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, " \
	"for_module=True, for_storage=True, for_packed_sequence=True)"

static void names_follow_upstreams_rule(void **state)
{
	(void)state;
	struct ap_plugins p;
	struct ap_buf err = { 0 }, how = { 0 };
	parse(good, &p, &err, 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.v[0].at, "plug.ini:2");
	assert_string_equal(p.v[1].at, "plug.ini:8");
	assert_string_equal(adding(&p, "torch.nn.Module.npu", &how), "torch_npu");
	assert_string_equal(ap_buf_str(&how), ALL_FOUR);
	assert_string_equal(adding(&p, "torch.Tensor.npu", &how), "torch_npu");
	assert_string_equal(adding(&p, "torch.Tensor.is_npu", &how), "torch_npu");
	assert_string_equal(adding(&p, "torch.TypedStorage.is_npu", &how), "torch_npu");
	assert_string_equal(adding(&p, "torch.storage.UntypedStorage.npu", &how), "torch_npu");
	assert_string_equal(adding(&p, "torch.nn.utils.rnn.PackedSequence.is_npu", &how),
			    "torch_npu");
	/* the device module and all under it */
	assert_string_equal(adding(&p, "torch.npu", &how), "torch_npu");
	assert_string_equal(ap_buf_str(&how), "torch._register_device_module('npu', ...)");
	assert_string_equal(adding(&p, "torch.npu.config.allow_internal_format", &how),
			    "torch_npu");
	/* upstream gives nn.Module no is_BACKEND; nothing else is the plugin's */
	assert_string_equal(adding(&p, "torch.nn.Module.is_npu", &how), "-");
	assert_string_equal(adding(&p, "torch.nn.Module.cuda", &how), "-");
	assert_string_equal(adding(&p, "torch.Tensor.npux", &how), "-");
	assert_string_equal(adding(&p, "torch.Tensor.is_npux", &how), "-");
	assert_string_equal(adding(&p, "torch.npux", &how), "-");
	assert_string_equal(adding(&p, "torch.Tensorx.npu", &how), "-");
	assert_string_equal(adding(&p, "torch.nn.Linear.npu", &how), "-");
	assert_string_equal(adding(&p, "npu", &how), "-");
	assert_string_equal(ap_buf_str(&how), "");
	/* only the parts a plugin generates; no device module when it says no */
	assert_string_equal(adding(&p, "torch.nn.Module.foo", &how), "torch_foo");
	assert_string_equal(ap_buf_str(&how), "torch.utils.generate_methods_for_privateuse1_backend("
			    "for_tensor=True, for_module=True, for_storage=False, "
			    "for_packed_sequence=False)");
	assert_string_equal(adding(&p, "torch.Tensor.is_foo", &how), "torch_foo");
	assert_string_equal(adding(&p, "torch.TypedStorage.foo", &how), "-");
	assert_string_equal(adding(&p, "torch.nn.utils.rnn.PackedSequence.foo", &how), "-");
	assert_string_equal(adding(&p, "torch.foo", &how), "-");
	assert_null(ap_plugin_adding(NULL, "torch.npu", &how));
	assert_null(ap_plugin_adding(&p, NULL, NULL));
	assert_non_null(ap_plugin_adding(&p, "torch.npu", NULL));
	ap_plugins_free(&p);
	ap_buf_free(&how);
	ap_buf_free(&err);
}

static void builtin_file_has_torch_npu(void **state)
{
	(void)state;
	struct ap_plugins p;
	struct ap_buf err = { 0 }, how = { 0 };
	assert_int_equal(ap_plugins_load(&p, NULL, &err), 0);
	assert_string_equal(adding(&p, "torch.nn.Module.npu", &how), "torch_npu");
	assert_string_equal(ap_buf_str(&how), ALL_FOUR);
	assert_non_null(strstr(p.v[0].where, "torch_npu/__init__.py"));
	assert_int_equal(strncmp(p.v[0].at, "specs/plugin-apis.ini:", 22), 0);
	ap_plugins_free(&p);
	ap_buf_free(&how);
	ap_buf_free(&err);
}

static void malformed_files_are_refused_with_their_line(void **state)
{
	(void)state;
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "[p]\nbackend = npu\ngenerates = tensor\ndevice_module = yes\n",
		  "plug.ini:1: [p] has no where (name the plugin's code that adds the names)" },
		{ "[p]\nbackend = npu\ngenerates = tensor gpu\ndevice_module = yes\nwhere = x\n",
		  "plug.ini:3: generates: 'gpu' is none of tensor, module, storage, packed_sequence "
		  "(or none alone)" },
		{ "[p]\nbackend = npu\ngenerates = tensor none\ndevice_module = yes\nwhere = x\n",
		  "plug.ini:3: generates: 'none' is none of tensor, module, storage, packed_sequence "
		  "(or none alone)" },
		{ "[p]\nbackend = n.pu\ngenerates = none\ndevice_module = yes\nwhere = x\n",
		  "plug.ini:2: backend: 'n.pu' is not a name" },
		{ "[p]\nbackend = npu\ngenerates = none\ndevice_module = maybe\nwhere = x\n",
		  "plug.ini:4: device_module: 'maybe' is not yes or no" },
		{ "[p]\nbackend = npu\ngenerates = none\ndevice_module = no\nwhere =\n",
		  "plug.ini:5: where: empty (name the plugin's code that adds the names)" },
		{ "backend = npu\n", "plug.ini:1: 'backend' outside of any [plugin]" },
		{ "[p]\nbackend = npu\ngenerates = none\ndevice_module = no\nwhere = x\n"
		  "[p]\nbackend = npu\ngenerates = none\ndevice_module = no\nwhere = x\n",
		  "plug.ini:6: [p] is named as the plugin at line 1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ap_plugins p;
		struct ap_buf err = { 0 };
		parse(bad[i].text, &p, &err, -AP_ECONFIG);
		assert_string_equal(ap_buf_str(&err), bad[i].why);
		assert_int_equal(p.n, 0);
		assert_null(p.v);
		ap_buf_free(&err);
	}
	/* generates = none alone: a plugin that only registers its module */
	struct ap_plugins p;
	struct ap_buf err = { 0 }, how = { 0 };
	parse("[p]\nbackend = xpu2\ngenerates = none\ndevice_module = yes\nwhere = x\n", &p, &err, 0);
	assert_string_equal(adding(&p, "torch.xpu2.synchronize", &how), "p");
	assert_string_equal(adding(&p, "torch.Tensor.xpu2", &how), "-");
	ap_plugins_free(&p);
	ap_buf_free(&how);
	ap_buf_free(&err);
}

static void a_file_that_is_no_plugin_file_is_refused(void **state)
{
	(void)state;
	struct ap_plugins p;
	struct ap_buf err = { 0 };
	assert_int_equal(ap_plugins_load(&p, "/", &err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&err), "/: "));
	ap_buf_reset(&err);
	assert_int_equal(ap_plugins_load(&p, "/nonexistent/plugins.ini", &err), -AP_ECONFIG);
	assert_string_equal(ap_buf_str(&err), "/nonexistent/plugins.ini: No such file or directory");
	ap_buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_follow_upstreams_rule),
		cmocka_unit_test(builtin_file_has_torch_npu),
		cmocka_unit_test(malformed_files_are_refused_with_their_line),
		cmocka_unit_test(a_file_that_is_no_plugin_file_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
