/* test-fingerprint.c - unit tests for src/fingerprint.h: decoding the worker's
 * measurement strictly about types and leniently about absence, and laying it out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "env/fingerprint.h"

/* What the worker reports for a trixie chroot on an Atlas A2 host. */
static const char a2_json[] =
	"{\"os\":{\"name\":\"Debian GNU/Linux 13 (trixie)\",\"kernel\":\"6.1\","
	"\"machine\":\"x86_64\"},"
	"\"python\":{\"version\":\"3.13.5\",\"implementation\":\"CPython\"},"
	"\"torch\":{\"version\":\"2.6.0+debian\",\"git_version\":\"Unknown\","
	"\"debug\":false,\"cuda\":null,\"cxx11_abi\":true},"
	"\"torch_import_ms\":2000,"
	"\"plugins\":[{\"name\":\"torch_npu\",\"version\":\"2.6.0\",\"module\":\"torch_npu\"}],"
	"\"devices\":[{\"type\":\"cuda\",\"count\":0,\"names\":[],\"available\":false,"
	"\"reason\":\"torch built without cuda\"},"
	"{\"type\":\"npu\",\"count\":1,\"names\":[\"Ascend910B3\"],\"available\":true}],"
	"\"cpu\":{\"model\":\"AMD EPYC\",\"count\":2},"
	"\"host\":\"h\",\"time_utc\":\"2026-12-01T00:00:00Z\"}";

static void check_contains(const char *hay, const char *needle, const char *file, int line)
{
	if (!hay || !strstr(hay, needle)) {
		print_error("'%s' does not contain '%s'\n", hay ? hay : "(null)", needle);
		_fail(file, line);
	}
}

#define assert_contains(hay, needle) check_contains((hay), (needle), __FILE__, __LINE__)

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);
	if (!j)
		print_error("test JSON does not parse: %s\n", jerr.text);
	assert_non_null(j);
	return j;
}

/* Decodes text, expecting success. */
static void decode_ok(struct ap_fingerprint *fp, const char *text)
{
	struct ap_buf err = { 0 };
	json_t *j = parse(text);
	int r = ap_fingerprint_decode(fp, j, &err);
	if (r)
		print_error("decode failed: %s\n", ap_buf_str(&err));
	assert_int_equal(r, 0);
	json_decref(j);
	ap_buf_free(&err);
}

/* Decodes text, expecting -AP_EPROTO with field named in the error. */
static void decode_fails_naming(const char *text, const char *field)
{
	struct ap_fingerprint fp;
	struct ap_buf err = { 0 };
	json_t *j = parse(text);
	assert_int_equal(ap_fingerprint_decode(&fp, j, &err), -AP_EPROTO);
	assert_contains(ap_buf_str(&err), field);
	for (int i = 0; i < AP_FP_NROWS; i++)
		assert_null(fp.row[i]);
	assert_null(fp.devices);
	json_decref(j);
	ap_buf_free(&err);
}

static void realistic_fingerprint_decodes_into_display_rows(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, a2_json);
	assert_string_equal(fp.row[AP_FP_OS], "Debian GNU/Linux 13 (trixie)");
	assert_contains(fp.row[AP_FP_KERNEL], "6.1");
	assert_contains(fp.row[AP_FP_KERNEL], "x86_64");
	assert_string_equal(fp.row[AP_FP_PYTHON], "3.13.5");
	assert_contains(fp.row[AP_FP_TORCH], "2.6.0+debian");
	assert_contains(fp.row[AP_FP_TORCH], "2000 ms");
	assert_string_equal(fp.row[AP_FP_TORCH_GIT], "Unknown");
	assert_contains(fp.row[AP_FP_TORCH_BUILD], "release");
	assert_contains(fp.row[AP_FP_TORCH_BUILD], "cuda none");
	assert_string_equal(fp.row[AP_FP_PLUGINS], "torch_npu 2.6.0");
	assert_contains(fp.row[AP_FP_DEVICES], "npu");
	assert_contains(fp.row[AP_FP_DEVICES], "Ascend910B3");
	assert_contains(fp.row[AP_FP_CPU], "AMD EPYC");
	assert_contains(fp.row[AP_FP_CPU], "2");
	assert_string_equal(fp.row[AP_FP_HOST], "h");
	assert_string_equal(fp.row[AP_FP_TIME], "2026-12-01T00:00:00Z");
	ap_fingerprint_free(&fp);
}

static void unavailable_device_is_not_in_the_devices_row(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, a2_json);
	assert_null(strstr(fp.row[AP_FP_DEVICES], "cuda"));
	ap_fingerprint_free(&fp);
}

static void every_device_type_asked_about_gets_its_own_text(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, a2_json);
	assert_int_equal(fp.ndevices, 2);
	assert_string_equal(fp.devices[0].type, "cuda");
	assert_string_equal(fp.devices[0].text, "unavailable: torch built without cuda");
	assert_string_equal(fp.devices[1].type, "npu");
	assert_string_equal(fp.devices[1].text, "1 x Ascend910B3");
	ap_fingerprint_free(&fp);
}

static void device_notes_say_what_could_not_be_learned_on_its_own_line(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, "{\"devices\":[{\"type\":\"openreg\",\"available\":true,\"count\":2,"
		       "\"names\":[\"unknown\",\"unknown\"],\"notes\":[\"torch.openreg has no "
		       "device_count\",\"count from torch.accelerator.device_count()\"]}]}");
	assert_string_equal(fp.devices[0].text, "2 x unknown (torch.openreg has no device_count; "
			    "count from torch.accelerator.device_count())");
	assert_string_equal(fp.row[AP_FP_DEVICES], "openreg 2 x unknown");
	ap_fingerprint_free(&fp);
}

static void unavailable_device_without_a_reason_says_so(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, "{\"devices\":[{\"type\":\"xpu\",\"available\":false}]}");
	assert_int_equal(fp.ndevices, 1);
	assert_contains(fp.devices[0].text, "unavailable");
	assert_string_equal(fp.row[AP_FP_DEVICES], "cpu only");
	ap_fingerprint_free(&fp);
}

static void non_cpython_implementation_follows_the_python_version(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, "{\"python\":{\"version\":\"3.10.14\",\"implementation\":\"PyPy\"}}");
	assert_string_equal(fp.row[AP_FP_PYTHON], "3.10.14 PyPy");
	ap_fingerprint_free(&fp);
}

static void missing_fields_show_a_dash(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, "{\"os\":{\"name\":\"Debian\"},\"torch\":{\"version\":\"2.6.0\"}}");
	assert_string_equal(fp.row[AP_FP_OS], "Debian");
	assert_string_equal(fp.row[AP_FP_PYTHON], "-");
	assert_string_equal(fp.row[AP_FP_KERNEL], "-");
	assert_string_equal(fp.row[AP_FP_TORCH_GIT], "-");
	assert_string_equal(fp.row[AP_FP_PLUGINS], "-");
	assert_string_equal(fp.row[AP_FP_DEVICES], "-");
	assert_string_equal(fp.row[AP_FP_HOST], "-");
	assert_string_equal(fp.row[AP_FP_TIME], "-");
	assert_int_equal(fp.ndevices, 0);
	ap_fingerprint_free(&fp);
}

static void empty_fingerprint_shows_a_dash_in_every_row(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, "{}");
	for (int i = 0; i < AP_FP_NROWS; i++) {
		if (strcmp(fp.row[i], "-"))
			print_error("row '%s' is '%s'\n", ap_fingerprint_row_name(i), fp.row[i]);
		assert_string_equal(fp.row[i], "-");
	}
	ap_fingerprint_free(&fp);
}

static void null_field_shows_a_dash(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, "{\"host\":null,\"python\":{\"version\":null}}");
	assert_string_equal(fp.row[AP_FP_HOST], "-");
	assert_string_equal(fp.row[AP_FP_PYTHON], "-");
	ap_fingerprint_free(&fp);
}

static void empty_plugin_and_device_lists_say_none_and_cpu_only(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, "{\"plugins\":[],\"devices\":[]}");
	assert_string_equal(fp.row[AP_FP_PLUGINS], "none");
	assert_string_equal(fp.row[AP_FP_DEVICES], "cpu only");
	assert_int_equal(fp.ndevices, 0);
	ap_fingerprint_free(&fp);
}

static void plugin_that_failed_to_import_shows_its_error(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	decode_ok(&fp, "{\"plugins\":[{\"name\":\"torch_npu\",\"version\":\"2.6.0\"},"
		       "{\"name\":\"torch_mlu\",\"error\":\"libcnrt.so missing\"}]}");
	assert_contains(fp.row[AP_FP_PLUGINS], "torch_npu 2.6.0, torch_mlu");
	assert_contains(fp.row[AP_FP_PLUGINS], "libcnrt.so missing");
	ap_fingerprint_free(&fp);
}

static void wrong_typed_python_version_is_a_protocol_error_naming_it(void **state)
{
	(void)state;
	decode_fails_naming("{\"python\":{\"version\":3}}", "python.version");
}

static void wrong_typed_top_level_string_is_a_protocol_error_naming_it(void **state)
{
	(void)state;
	decode_fails_naming("{\"host\":[\"h\"]}", "host");
	decode_fails_naming("{\"os\":{\"name\":\"Debian\",\"kernel\":6}}", "os.kernel");
	decode_fails_naming("{\"cpu\":{\"model\":true,\"count\":2}}", "cpu.model");
}

static void non_object_fingerprint_is_a_protocol_error(void **state)
{
	(void)state;
	const char *texts[] = { "[1,2]", "\"fingerprint\"", "null", "42" };
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct ap_fingerprint fp;
		struct ap_buf err = { 0 };
		json_t *j = json_loads(texts[i], JSON_DECODE_ANY, NULL);
		assert_non_null(j);
		assert_int_equal(ap_fingerprint_decode(&fp, j, &err), -AP_EPROTO);
		assert_true(err.len > 0);
		json_decref(j);
		ap_buf_free(&err);
	}
}

static void row_names_are_the_printed_labels(void **state)
{
	(void)state;
	assert_string_equal(ap_fingerprint_row_name(AP_FP_PYTHON), "python");
	assert_string_equal(ap_fingerprint_row_name(AP_FP_TORCH), "torch");
	assert_string_equal(ap_fingerprint_row_name(AP_FP_DEVICES), "devices");
}

static void render_prints_every_row_and_every_device(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	struct ap_buf out = { 0 };
	decode_ok(&fp, a2_json);
	ap_fingerprint_render(&fp, &out);
	const char *s = ap_buf_str(&out);
	size_t lines = 0;
	for (const char *p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, AP_FP_NROWS + 2);
	assert_contains(s, "3.13.5");
	assert_contains(s, "time (UTC)");
	assert_contains(s, "unavailable: torch built without cuda");
	assert_contains(s, "1 x Ascend910B3");
	ap_buf_free(&out);
	ap_fingerprint_free(&fp);
}

/* The line of s that starts with prefix, copied into line; 0 if none. */
static int find_line(const char *s, const char *prefix, char *line, size_t size)
{
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "\n");
		if (!strncmp(p, prefix, strlen(prefix))) {
			snprintf(line, size, "%.*s", (int)n, p);
			return 1;
		}
		p += n + (p[n] == '\n');
	}
	return 0;
}

static void table_heads_columns_with_names_and_shows_a_failed_column_error(void **state)
{
	(void)state;
	struct ap_fingerprint fp;
	struct ap_buf out = { 0 };
	char line[512];
	decode_ok(&fp, a2_json);
	const struct ap_fingerprint *fps[] = { &fp, NULL };
	const char *names[] = { "a2", "sid" };
	const char *errors[] = { NULL, "environment unreachable: ssh refused" };
	ap_fingerprint_table(fps, names, errors, 2, &out);
	const char *s = ap_buf_str(&out);

	size_t n = strcspn(s, "\n");
	snprintf(line, sizeof(line), "%.*s", (int)n, s);
	assert_contains(line, "a2");
	assert_contains(line, "sid");
	assert_true(strstr(line, "a2") < strstr(line, "sid"));

	assert_true(find_line(s, "os ", line, sizeof(line)));
	assert_contains(line, "Debian GNU/Linux 13 (trixie)");
	assert_contains(line, "environment unreachable: ssh refused");
	assert_true(find_line(s, "python ", line, sizeof(line)));
	assert_contains(line, "3.13.5");

	size_t lines = 0;
	for (const char *p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 1 + AP_FP_NROWS + 2);
	ap_buf_free(&out);
	ap_fingerprint_free(&fp);
}

static void table_has_a_row_per_device_type_seen_in_any_column(void **state)
{
	(void)state;
	struct ap_fingerprint a2, gpu;
	struct ap_buf out = { 0 };
	char line[512];
	decode_ok(&a2, a2_json);
	decode_ok(&gpu, "{\"devices\":[{\"type\":\"cuda\",\"count\":2,\"names\":"
			"[\"NVIDIA H200\",\"NVIDIA H200\"],\"available\":true},"
			"{\"type\":\"xpu\",\"count\":0,\"available\":false,\"reason\":\"no xpu\"}]}");
	const struct ap_fingerprint *fps[] = { &a2, &gpu };
	const char *names[] = { "a2", "h200" };
	const char *errors[] = { NULL, NULL };
	ap_fingerprint_table(fps, names, errors, 2, &out);
	const char *s = ap_buf_str(&out);

	assert_true(find_line(s, "  cuda", line, sizeof(line)));
	assert_contains(line, "unavailable: torch built without cuda");
	assert_contains(line, "2 x NVIDIA H200");
	assert_true(find_line(s, "  npu", line, sizeof(line)));
	assert_contains(line, "1 x Ascend910B3");
	assert_contains(line, "-");
	assert_true(find_line(s, "  xpu", line, sizeof(line)));
	assert_contains(line, "unavailable: no xpu");
	assert_false(find_line(s, "  mps", line, sizeof(line)));

	size_t lines = 0;
	for (const char *p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 1 + AP_FP_NROWS + 3);
	ap_buf_free(&out);
	ap_fingerprint_free(&a2);
	ap_fingerprint_free(&gpu);
}

static void request_asks_for_a_fingerprint_of_known_backends_and_plugins(void **state)
{
	(void)state;
	json_t *req = ap_fingerprint_request(NULL);
	assert_non_null(req);
	assert_true(json_is_object(req));
	assert_string_equal(json_string_value(json_object_get(req, "op")), "fingerprint");
	json_t *backends = json_object_get(req, "backends");
	assert_true(json_is_array(backends));
	int cuda = 0, npu = 0;
	size_t i;
	json_t *v;
	json_array_foreach(backends, i, v) {
		cuda |= !strcmp(json_string_value(v), "cuda");
		npu |= !strcmp(json_string_value(v), "npu");
	}
	assert_true(cuda && npu);
	json_t *plugins = json_object_get(req, "plugins");
	assert_true(json_is_array(plugins));
	assert_string_equal(json_string_value(json_array_get(plugins, 0)), "torch_npu");
	json_decref(req);
}

static void request_asks_for_the_environments_plugins_last_in_their_order(void **state)
{
	(void)state;
	struct ap_env env = { .name = "openreg" };
	assert_int_equal(ap_argv_split(&env.plugins, "pytorch_openreg fix.gelu_off"), 0);
	json_t *req = ap_fingerprint_request(&env);
	json_t *plugins = json_object_get(req, "plugins");
	size_t n = json_array_size(plugins);
	assert_true(n > 2);
	assert_string_equal(json_string_value(json_array_get(plugins, n - 2)), "pytorch_openreg");
	assert_string_equal(json_string_value(json_array_get(plugins, n - 1)), "fix.gelu_off");
	json_decref(req);
	ap_argv_free(&env.plugins);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(realistic_fingerprint_decodes_into_display_rows),
		cmocka_unit_test(unavailable_device_is_not_in_the_devices_row),
		cmocka_unit_test(every_device_type_asked_about_gets_its_own_text),
		cmocka_unit_test(device_notes_say_what_could_not_be_learned_on_its_own_line),
		cmocka_unit_test(unavailable_device_without_a_reason_says_so),
		cmocka_unit_test(non_cpython_implementation_follows_the_python_version),
		cmocka_unit_test(missing_fields_show_a_dash),
		cmocka_unit_test(empty_fingerprint_shows_a_dash_in_every_row),
		cmocka_unit_test(null_field_shows_a_dash),
		cmocka_unit_test(empty_plugin_and_device_lists_say_none_and_cpu_only),
		cmocka_unit_test(plugin_that_failed_to_import_shows_its_error),
		cmocka_unit_test(wrong_typed_python_version_is_a_protocol_error_naming_it),
		cmocka_unit_test(wrong_typed_top_level_string_is_a_protocol_error_naming_it),
		cmocka_unit_test(non_object_fingerprint_is_a_protocol_error),
		cmocka_unit_test(row_names_are_the_printed_labels),
		cmocka_unit_test(render_prints_every_row_and_every_device),
		cmocka_unit_test(table_heads_columns_with_names_and_shows_a_failed_column_error),
		cmocka_unit_test(table_has_a_row_per_device_type_seen_in_any_column),
		cmocka_unit_test(request_asks_for_a_fingerprint_of_known_backends_and_plugins),
		cmocka_unit_test(request_asks_for_the_environments_plugins_last_in_their_order),
	};
	return cmocka_run_group_tests_name("fingerprint", tests, NULL, NULL);
}
