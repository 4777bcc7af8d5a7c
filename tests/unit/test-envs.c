/* test-envs.c - unit tests for src/envs.h: the environments file, its defaults,
 * and errors that name the file and line at fault. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "env/envs.h"
#include "base/err.h"

#define ROOT "/srv/apiparity/envs"

/* One test's environments file, written to a temporary path. */
struct fixture {
	char path[4096];
	struct ap_envs envs;
	struct ap_buf err;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	const char *tmp = getenv("TMPDIR");
	snprintf(fx->path, sizeof(fx->path), "%s/test-envs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(fx->path);
	if (fd < 0) {
		free(fx);
		return -1;
	}
	close(fd);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	unlink(fx->path);
	ap_envs_free(&fx->envs);
	ap_buf_free(&fx->err);
	free(fx);
	return 0;
}

/* Writes text as the environments file and loads it; returns what load did. */
static int load(struct fixture *fx, const char *text)
{
	FILE *f = fopen(fx->path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	ap_envs_free(&fx->envs);
	ap_buf_reset(&fx->err);
	return ap_envs_load(&fx->envs, fx->path, ROOT, &fx->err);
}

static void load_ok(struct fixture *fx, const char *text)
{
	int r = load(fx, text);
	if (r)
		print_error("load failed (%d): %s\n", r, ap_buf_str(&fx->err));
	assert_int_equal(r, 0);
}

/* The environment called name, which must exist. */
static const struct ap_env *find(const struct fixture *fx, const char *name)
{
	const struct ap_env *e = ap_envs_find(&fx->envs, name);
	if (!e)
		print_error("no environment '%s'\n", name);
	assert_non_null(e);
	return e;
}

static void check_config_error(struct fixture *fx, const char *text, int line,
			       const char *what, const char *file, int at)
{
	char where[4200];
	int r = load(fx, text);
	snprintf(where, sizeof(where), "%s:%d: ", fx->path, line);
	const char *err = ap_buf_str(&fx->err);
	if (r != -AP_ECONFIG || strncmp(err, where, strlen(where)) || !strstr(err, what)) {
		print_error("load gave %d and '%s', wanted %d and '%s...%s...'\n", r, err,
			    -AP_ECONFIG, where, what);
		_fail(file, at);
	}
}

/* Loading text fails as a config error whose message starts "FILE:line: " and
 * says what. */
#define assert_config_error(fx, text, line, what) \
	check_config_error((fx), (text), (line), (what), __FILE__, __LINE__)

static void valid_file_gives_every_field_of_an_environment(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "; Atlas hosts\n"
		    "[a2]\n"
		    "label  = Atlas A2 (910B3)\n"
		    "exec   = ssh a2-host --      ; an argv prefix\n"
		    "python = /opt/py/bin/python3 -X utf8\n"
		    "device = npu\n"
		    "remote_shell = yes\n");
	const struct ap_env *e = find(fx, "a2");
	assert_string_equal(e->label, "Atlas A2 (910B3)");
	assert_string_equal(e->device, "npu");
	assert_null(e->chroot);
	assert_int_equal(e->exec.n, 3);
	assert_string_equal(e->exec.v[0], "ssh");
	assert_string_equal(e->exec.v[1], "a2-host");
	assert_string_equal(e->exec.v[2], "--");
	assert_null(e->exec.v[3]);
	assert_int_equal(e->python.n, 3);
	assert_string_equal(e->python.v[0], "/opt/py/bin/python3");
	assert_string_equal(e->python.v[2], "utf8");
	assert_int_equal(e->remote_shell, 1);
	assert_string_equal(e->file, fx->path);
}

static void python_defaults_to_python3_and_optional_fields_to_null(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[box]\nexec = docker exec box --\n");
	const struct ap_env *e = find(fx, "box");
	assert_int_equal(e->python.n, 1);
	assert_string_equal(e->python.v[0], "python3");
	assert_null(e->label);
	assert_null(e->device);
	assert_null(e->chroot);
}

static void relative_chroot_is_taken_under_the_root(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[trixie]\nchroot = trixie\n");
	const struct ap_env *e = find(fx, "trixie");
	assert_string_equal(e->chroot, ROOT "/trixie");
	assert_int_equal(e->exec.n, 0);
}

static void absolute_chroot_is_kept_as_given(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[old]\nchroot = /var/chroots/bookworm\n");
	assert_string_equal(find(fx, "old")->chroot, "/var/chroots/bookworm");
}

static void local_exists_without_an_entry(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[a]\nchroot = a\n");
	const struct ap_env *e = find(fx, "local");
	assert_int_equal(e->exec.n, 0);
	assert_null(e->chroot);
	assert_string_equal(e->python.v[0], "python3");
	assert_int_equal(e->remote_shell, 0);
	assert_int_equal(fx->envs.n, 2);
}

static void local_section_overrides_the_built_in_local(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[local]\npython = /opt/torch/bin/python\nlabel = venv\n[a]\nchroot = a\n");
	assert_int_equal(fx->envs.n, 2);
	const struct ap_env *e = find(fx, "local");
	assert_string_equal(e->python.v[0], "/opt/torch/bin/python");
	assert_string_equal(e->label, "venv");
}

static void environment_records_the_file_and_line_of_its_section(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "# two\n[a]\nchroot = a\n\n[b]\nchroot = b\n");
	assert_string_equal(find(fx, "a")->file, fx->path);
	assert_int_equal(find(fx, "a")->line, 2);
	assert_int_equal(find(fx, "b")->line, 5);
}

static void unknown_environment_is_not_found(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[a]\nchroot = a\n");
	assert_null(ap_envs_find(&fx->envs, "b"));
	assert_null(ap_envs_find(&fx->envs, "A"));
}

static void remote_shell_defaults_to_yes_for_an_ssh_prefix(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[a]\nexec = ssh a --\n[b]\nexec = /usr/bin/ssh -p 2222 b --\n");
	assert_int_equal(find(fx, "a")->remote_shell, 1);
	assert_int_equal(find(fx, "b")->remote_shell, 1);
}

static void remote_shell_defaults_to_no_for_other_prefixes(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[c]\nexec = docker exec c --\n[d]\nexec = env SSH=ssh\n"
		    "[e]\nchroot = e\n");
	assert_int_equal(find(fx, "c")->remote_shell, 0);
	assert_int_equal(find(fx, "d")->remote_shell, 0);
	assert_int_equal(find(fx, "e")->remote_shell, 0);
}

static void explicit_remote_shell_overrides_the_default(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[a]\nexec = ssh a --\nremote_shell = no\n"
		    "[b]\nexec = kubectl exec b --\nremote_shell = true\n");
	assert_int_equal(find(fx, "a")->remote_shell, 0);
	assert_int_equal(find(fx, "b")->remote_shell, 1);
}

static void unknown_key_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "[a]\nexec = ssh a --\n\n[b]\nchroot = x\ncolour = red\n",
			    6, "unknown key 'colour'");
}

static void key_outside_a_section_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "; comment\nexec = ssh a --\n[a]\nchroot = a\n",
			    2, "'exec' outside of any [environment]");
}

static void duplicate_key_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "[a]\nlabel = one\ndevice = npu\nlabel = two\n",
			    4, "'label' given twice");
}

static void duplicate_section_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "[a]\nchroot = a\n[b]\nchroot = b\n[a]\nlabel = again\n",
			    5, "[a] defined twice");
}

static void repeated_adjacent_section_is_rejected_as_a_duplicate(void **state)
{
	assert_config_error(*state, "[a]\nexec = ssh a --\n[a]\nlabel = again\n",
			    3, "[a] defined twice");
}

static void indented_bracket_line_after_a_key_continues_that_key(void **state)
{
	assert_config_error(*state, "[a]\nchroot = a\n\n  [b]\nchroot = b\n",
			    4, "key 'chroot' given twice in [a]");
}

static void indented_section_header_before_any_key_starts_a_section(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[a]\n  [b]\nchroot = b\n");
	assert_string_equal(find(fx, "b")->chroot, ROOT "/b");
}

static void bad_section_name_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "[ok]\nchroot = ok\n[a/b]\nchroot = x\n",
			    3, "bad environment name 'a/b'");
}

static void chroot_with_exec_is_rejected_naming_the_second_of_them(void **state)
{
	assert_config_error(*state, "[a]\nchroot = x\nexec = ssh a --\n",
			    3, "[a]: chroot and exec cannot be combined");
	assert_config_error(*state, "[b]\nexec = ssh b --\nlabel = B\nchroot = x\n",
			    4, "[b]: chroot and exec cannot be combined");
}

static void unterminated_quote_in_exec_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "[a]\nlabel = A\nexec = ssh \"a --\n",
			    3, "'exec': unterminated quote");
}

static void remote_shell_that_is_not_yes_or_no_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "[a]\nexec = ssh a --\nremote_shell = maybe\n",
			    3, "'remote_shell' must be yes or no, not 'maybe'");
}

/* inih and configparser take key=value and key:value without spaces: the
 * value starts right after the separator, not a byte later. */
static void key_and_value_without_spaces_are_read_whole(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[a]\nlabel=A\ndevice:npu\nchroot=x\n");
	const struct ap_env *e = find(fx, "a");
	assert_string_equal(e->label, "A");
	assert_string_equal(e->device, "npu");
	assert_string_equal(e->chroot, ROOT "/x");
}

static void key_without_a_value_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "[a]\nexec =\n", 2, "'exec' has no value");
}

static void line_that_is_not_ini_is_rejected_naming_it(void **state)
{
	assert_config_error(*state, "[a]\nchroot = a\nthis is not ini\n", 3, "not an INI line");
}

static void only_the_first_of_several_errors_is_reported(void **state)
{
	struct fixture *fx = *state;
	assert_config_error(fx, "[a]\ncolour = red\nflavour = sweet\n", 2,
			    "unknown key 'colour'");
	assert_null(strstr(ap_buf_str(&fx->err), "flavour"));
}

static void error_message_describes_the_line_it_names(void **state)
{
	struct fixture *fx = *state;
	assert_config_error(fx, "[a]\nnot ini\ncolour = red\n", 2, "not an INI line");
	assert_null(strstr(ap_buf_str(&fx->err), "colour"));
}

static void missing_file_is_a_config_error_naming_the_file_and_why(void **state)
{
	struct fixture *fx = *state;
	char want[4200];
	unlink(fx->path);
	assert_int_equal(ap_envs_load(&fx->envs, fx->path, ROOT, &fx->err), -AP_ECONFIG);
	snprintf(want, sizeof(want), "%s: %s", fx->path, strerror(ENOENT));
	assert_string_equal(ap_buf_str(&fx->err), want);
}

static void plugins_are_module_names_kept_in_their_order(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[or]\nchroot = trixie-openreg\nplugins = pytorch_openreg fix.gelu_off\n");
	const struct ap_env *e = find(fx, "or");
	assert_int_equal(e->plugins.n, 2);
	assert_string_equal(e->plugins.v[0], "pytorch_openreg");
	assert_string_equal(e->plugins.v[1], "fix.gelu_off");
	assert_int_equal(find(fx, "local")->plugins.n, 0);
}

static void plugin_that_is_not_a_module_name_is_rejected(void **state)
{
	struct fixture *fx = *state;
	const char *bad[] = { "os;rm", "a..b", ".a", "a.", "1abc", "a-b", "/mnt/x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128];
		snprintf(text, sizeof(text), "[or]\nplugins = ok %s\n", bad[i]);
		assert_config_error(fx, text, 2, "is not a Python module name");
	}
}

static void built_in_reference_has_debian_chroots_under_the_root(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(ap_envs_load(&fx->envs, NULL, ROOT, &fx->err), 0);
	const char *names[] = { "bookworm", "trixie", "sid", "trixie-openreg" };
	for (size_t i = 0; i < 4; i++) {
		char want[128];
		snprintf(want, sizeof(want), ROOT "/%s", names[i]);
		const struct ap_env *e = find(fx, names[i]);
		assert_string_equal(e->chroot, want);
		assert_int_equal(e->exec.n, 0);
		assert_string_equal(e->python.v[0], "python3");
		assert_non_null(e->label);
	}
	assert_non_null(find(fx, "local"));
	assert_int_equal(fx->envs.n, 5);
	const struct ap_env *o = find(fx, "trixie-openreg");
	assert_string_equal(o->device, "openreg");
	assert_int_equal(o->plugins.n, 1);
	assert_string_equal(o->plugins.v[0], "pytorch_openreg");
}

static void dash_path_also_means_the_built_in_reference(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(ap_envs_load(&fx->envs, "-", ROOT, &fx->err), 0);
	assert_non_null(find(fx, "trixie"));
}

static void env_names_are_limited_to_safe_directory_names(void **state)
{
	(void)state;
	char long_name[66];
	memset(long_name, 'x', 65);
	long_name[65] = '\0';
	assert_true(ap_env_name_ok("trixie-2.6_cpu.1"));
	assert_false(ap_env_name_ok(""));
	assert_false(ap_env_name_ok("a/b"));
	assert_false(ap_env_name_ok(".."));
	assert_false(ap_env_name_ok(".hidden"));
	assert_false(ap_env_name_ok("a b"));
	assert_false(ap_env_name_ok(long_name));
	long_name[64] = '\0';
	assert_true(ap_env_name_ok(long_name));
}

static void long_lines_are_read_whole(void **state)
{
	struct fixture *fx = *state;
	struct ap_buf text = { 0 };
	ap_buf_adds(&text, "[a]\nexec = ssh");
	for (int i = 0; i < 60; i++)
		ap_buf_addf(&text, " -o Opt%02d=yes", i); /* 900 characters */
	ap_buf_adds(&text, " host --\nsetenv =");
	for (int i = 0; i < 40; i++)
		ap_buf_addf(&text, " VAR_%02d=/opt/some/long/path/%02d", i, i);
	ap_buf_adds(&text, "\n");
	load_ok(fx, ap_buf_str(&text));
	const struct ap_env *e = find(fx, "a");
	assert_int_equal(e->exec.n, 1 + 120 + 2);
	assert_string_equal(e->exec.v[e->exec.n - 1], "--");
	assert_int_equal(e->setenv.n, 40);
	assert_string_equal(e->setenv.v[39], "VAR_39=/opt/some/long/path/39");
	ap_buf_free(&text);
}

static void error_after_a_long_line_names_the_real_line(void **state)
{
	struct ap_buf text = { 0 };
	ap_buf_adds(&text, "[a]\nlabel = ");
	for (int i = 0; i < 500; i++)
		ap_buf_adds(&text, "x");
	ap_buf_adds(&text, "\ncolour = red\n");
	assert_config_error(*state, ap_buf_str(&text), 3, "unknown key 'colour'");
	ap_buf_free(&text);
}

static void nul_byte_in_a_value_is_rejected_naming_its_line(void **state)
{
	struct fixture *fx = *state;
	static const char text[] = "[a]\nlabel = A\nexec = ssh a\0rm --\n";
	FILE *f = fopen(fx->path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, sizeof(text) - 1, f), sizeof(text) - 1);
	assert_int_equal(fclose(f), 0);
	char where[4200];
	snprintf(where, sizeof(where), "%s:3: a NUL byte at column 13", fx->path);
	assert_int_equal(ap_envs_load(&fx->envs, fx->path, ROOT, &fx->err), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&fx->err), where));
}

static void directory_fifo_and_device_are_refused_not_read(void **state)
{
	struct fixture *fx = *state;
	char want[4200];
	unlink(fx->path);
	assert_int_equal(mkfifo(fx->path, 0600), 0);
	alarm(5); /* reading a FIFO with no writer would wait forever */
	assert_int_equal(ap_envs_load(&fx->envs, fx->path, ROOT, &fx->err), -AP_ECONFIG);
	alarm(0);
	snprintf(want, sizeof(want), "%s: not a regular file", fx->path);
	assert_string_equal(ap_buf_str(&fx->err), want);
	ap_buf_reset(&fx->err);
	assert_int_equal(ap_envs_load(&fx->envs, "/dev/zero", ROOT, &fx->err), -AP_ECONFIG);
	assert_string_equal(ap_buf_str(&fx->err), "/dev/zero: not a regular file");
	ap_buf_reset(&fx->err);
	assert_int_equal(ap_envs_load(&fx->envs, "/", ROOT, &fx->err), -AP_ECONFIG);
	snprintf(want, sizeof(want), "/: %s", strerror(EISDIR));
	assert_string_equal(ap_buf_str(&fx->err), want);
}

static void tests_root_names_the_trees_on_the_far_side(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[a2]\nexec = ssh a2-host --\ntests_root = /srv/apiparity/tests\n[b]\nexec = ssh b --\n");
	assert_string_equal(find(fx, "a2")->tests_root, "/srv/apiparity/tests");
	assert_true(ap_env_remote(find(fx, "a2")));
	assert_null(find(fx, "b")->tests_root);
}

static void tests_root_that_is_not_absolute_is_rejected_naming_its_line(void **state)
{
	assert_config_error(*state, "[a2]\nexec = ssh a2-host --\ntests_root = tests\n", 3,
			    "tests_root: 'tests' is not an absolute path");
}

static void tests_root_without_a_remote_shell_is_rejected(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(load(fx, "[t]\nchroot = trixie\ntests_root = /x\n"), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&fx->err), "[t]: tests_root is for an environment behind a remote shell"));
	ap_buf_reset(&fx->err);
	assert_int_equal(load(fx, "[c]\nexec = conda run -n x\ntests_root = /x\n"), -AP_ECONFIG);
	assert_false(ap_env_remote(&(struct ap_env){ .remote_shell = 1 }));
}

/* A bind is made by mount(2) in a chroot's namespace; it has no meaning behind
 * a prefix, so its paths never reach a remote shell. */
static void bind_behind_an_exec_prefix_is_refused(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(load(fx, "[a2]\nexec = ssh a2-host --\nbind = /x:/y\n"), -AP_ECONFIG);
	assert_non_null(strstr(ap_buf_str(&fx->err), "[a2]: bind needs a chroot"));
}

static void bind_paths_keep_blanks_quotes_and_dollars_as_written(void **state)
{
	struct fixture *fx = *state;
	load_ok(fx, "[t]\nchroot = t\nbind = '/a b/$x `y`;\"q\" é:/run/apiparity/c d'\n");
	assert_int_equal(find(fx, "t")->bind.n, 1);
	assert_string_equal(find(fx, "t")->bind.v[0], "/a b/$x `y`;\"q\" é:/run/apiparity/c d");
}

/* A later file's entry takes the place of the earlier one of its name,
 * where it stood; a new name comes after; the later file is left empty. */
static void merge_replaces_same_names_in_place_and_appends_new_ones(void **state)
{
	struct fixture *fx = *state;
	struct ap_envs later;
	load_ok(fx, "[a]\npython = pa\n[local]\npython = mine\n[b]\npython = pb\n");
	static const char text[] = "[b]\npython = /opt/b\ndevice = npu\n[c]\npython = pc\n";
	assert_int_equal(ap_envs_parse(&later, text, strlen(text), "later", "/r", &fx->err), 0);
	assert_int_equal(ap_envs_merge(&fx->envs, &later), 0);
	assert_int_equal(later.n, 0);
	ap_envs_free(&later);
	/* a, the earlier's own local (the later's implicit one does not
	 * replace it), b, c */
	assert_int_equal(fx->envs.n, 4);
	assert_string_equal(fx->envs.v[0].name, "a");
	assert_string_equal(find(fx, "local")->python.v[0], "mine");
	assert_string_equal(fx->envs.v[2].name, "b");
	assert_string_equal(fx->envs.v[2].python.v[0], "/opt/b");
	assert_string_equal(fx->envs.v[2].device, "npu");
	assert_string_equal(fx->envs.v[3].name, "c");
	assert_ptr_equal(find(fx, "c"), &fx->envs.v[3]);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(valid_file_gives_every_field_of_an_environment),
		T(python_defaults_to_python3_and_optional_fields_to_null),
		T(relative_chroot_is_taken_under_the_root),
		T(absolute_chroot_is_kept_as_given),
		T(local_exists_without_an_entry),
		T(local_section_overrides_the_built_in_local),
		T(environment_records_the_file_and_line_of_its_section),
		T(unknown_environment_is_not_found),
		T(remote_shell_defaults_to_yes_for_an_ssh_prefix),
		T(remote_shell_defaults_to_no_for_other_prefixes),
		T(explicit_remote_shell_overrides_the_default),
		T(unknown_key_is_rejected_naming_its_line),
		T(key_outside_a_section_is_rejected_naming_its_line),
		T(duplicate_key_is_rejected_naming_its_line),
		T(duplicate_section_is_rejected_naming_its_line),
		T(repeated_adjacent_section_is_rejected_as_a_duplicate),
		T(indented_bracket_line_after_a_key_continues_that_key),
		T(indented_section_header_before_any_key_starts_a_section),
		T(bad_section_name_is_rejected_naming_its_line),
		T(chroot_with_exec_is_rejected_naming_the_second_of_them),
		T(unterminated_quote_in_exec_is_rejected_naming_its_line),
		T(remote_shell_that_is_not_yes_or_no_is_rejected_naming_its_line),
		T(key_and_value_without_spaces_are_read_whole),
		T(key_without_a_value_is_rejected_naming_its_line),
		T(line_that_is_not_ini_is_rejected_naming_it),
		T(only_the_first_of_several_errors_is_reported),
		T(error_message_describes_the_line_it_names),
		T(missing_file_is_a_config_error_naming_the_file_and_why),
		T(long_lines_are_read_whole),
		T(error_after_a_long_line_names_the_real_line),
		T(nul_byte_in_a_value_is_rejected_naming_its_line),
		T(directory_fifo_and_device_are_refused_not_read),
		T(plugins_are_module_names_kept_in_their_order),
		T(plugin_that_is_not_a_module_name_is_rejected),
		T(tests_root_names_the_trees_on_the_far_side),
		T(tests_root_that_is_not_absolute_is_rejected_naming_its_line),
		T(tests_root_without_a_remote_shell_is_rejected),
		T(bind_behind_an_exec_prefix_is_refused),
		T(bind_paths_keep_blanks_quotes_and_dollars_as_written),
		T(built_in_reference_has_debian_chroots_under_the_root),
		T(dash_path_also_means_the_built_in_reference),
		T(merge_replaces_same_names_in_place_and_appends_new_ones),
		cmocka_unit_test(env_names_are_limited_to_safe_directory_names),
	};
	return cmocka_run_group_tests_name("envs", tests, NULL, NULL);
}
