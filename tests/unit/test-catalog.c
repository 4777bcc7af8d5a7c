/* test-catalog.c - unit tests for src/check/catalog.h: the catalog read in
 * name order with its mistakes named by file:line, the digest independent of
 * order and comments, the classes under an entry, and the shard split (whole
 * entries, disjoint, covering) from --shard, Slurm and Kubernetes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "check/catalog.h"

static int parse(struct ap_catalog *c, const char *text, struct ap_buf *err)
{
	return ap_catalog_parse(c, text, strlen(text), "cat.txt", err);
}

static void entries_are_sorted_by_name_and_comments_skipped(void **state)
{
	(void)state;
	struct ap_catalog c;
	struct ap_buf err = { 0 };
	assert_int_equal(parse(&c, "# x\ntorch.nn module  # trailing\n\ntorch module\ntorch.Tensor\tclass\n",
			       &err), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.v[0].name, "torch");
	assert_string_equal(c.v[1].name, "torch.Tensor");
	assert_string_equal(c.v[1].walk, "class");
	assert_int_equal(c.v[1].line, 5);
	assert_string_equal(c.v[2].name, "torch.nn");
	ap_catalog_free(&c);
}

static void digest_ignores_order_and_comments(void **state)
{
	(void)state;
	struct ap_catalog a, b;
	struct ap_buf err = { 0 };
	assert_int_equal(parse(&a, "torch module\ntorch.fft module\n", &err), 0);
	assert_int_equal(parse(&b, "# c\ntorch.fft   module\ntorch module\n", &err), 0);
	assert_string_equal(a.digest, b.digest);
	assert_int_equal(strlen(a.digest), 64);
	ap_catalog_free(&b);
	assert_int_equal(parse(&b, "torch module\ntorch.fft class\n", &err), 0);
	assert_string_not_equal(a.digest, b.digest);
	ap_catalog_free(&a);
	ap_catalog_free(&b);
}

static void mistakes_name_file_and_line(void **state)
{
	(void)state;
	static const struct { const char *text, *want; } cases[] = {
		{ "torch module\ntorch.nn modul\n", "cat.txt:2: unknown walk 'modul' (known: module, class)" },
		{ "torch\n", "cat.txt:1: want NAME WALK (walk: module or class)" },
		{ "torch module extra\n", "cat.txt:1: want NAME WALK (walk: module or class)" },
		{ "torch..nn module\n", "cat.txt:1: 'torch..nn' is not a dotted Python name" },
		{ "1torch module\n", "cat.txt:1: '1torch' is not a dotted Python name" },
		{ "torch module\nx module\ntorch module\n", "cat.txt:3: torch is listed twice (also line 1)" },
		{ "# nothing\n", "cat.txt: no entries" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ap_catalog c;
		struct ap_buf err = { 0 };
		assert_int_equal(parse(&c, cases[i].text, &err), -AP_ECONFIG);
		assert_string_equal(ap_buf_str(&err), cases[i].want);
		assert_int_equal(c.n, 0);
		ap_buf_free(&err);
	}
}

static void builtin_catalog_parses_and_holds_the_pages_modules(void **state)
{
	(void)state;
	struct ap_catalog c;
	struct ap_buf err = { 0 };
	assert_int_equal(ap_catalog_load(&c, NULL, &err), 0);
	const char *want[] = { "torch", "torch.Tensor", "torch.nn", "torch.nn.functional",
			       "torch.autograd", "torch.autograd.grad_mode", "torch.linalg", "torch.fft",
			       "torch.special", "torch.distributions", "torch.optim", "torch.amp",
			       "torch.distributed", "torch.utils.data" };
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		size_t k = 0;
		while (k < c.n && strcmp(c.v[k].name, want[w]))
			k++;
		assert_true(k < c.n);
	}
	ap_catalog_free(&c);
}

static void exclude_lists_entries_under_an_entry(void **state)
{
	(void)state;
	struct ap_catalog c;
	struct ap_buf err = { 0 };
	assert_int_equal(parse(&c, "torch module\ntorch.Tensor class\ntorch.nn module\n"
			       "torch.nn.Module class\ntorchvision module\n", &err), 0);
	json_t *x = ap_catalog_exclude(&c, 0);
	assert_int_equal(json_array_size(x), 3);
	assert_string_equal(json_string_value(json_array_get(x, 0)), "torch.Tensor");
	json_decref(x);
	x = ap_catalog_exclude(&c, 2);
	assert_int_equal(json_array_size(x), 1);
	assert_string_equal(json_string_value(json_array_get(x, 0)), "torch.nn.Module");
	json_decref(x);
	ap_catalog_free(&c);
}

static void shards_are_disjoint_and_cover_the_catalog(void **state)
{
	(void)state;
	for (unsigned n = 1; n <= 7; n++)
		for (size_t k = 0; k < 50; k++) {
			int owners = 0;
			for (unsigned i = 0; i < n; i++)
				owners += ap_shard_has((struct ap_shard){ i, n }, k);
			assert_int_equal(owners, 1);
		}
	assert_true(ap_shard_has((struct ap_shard){ 0, 0 }, 17));
	assert_true(ap_shard_has((struct ap_shard){ 2, 3 }, 5));
	assert_false(ap_shard_has((struct ap_shard){ 1, 3 }, 5));
}

static void clear_env(void)
{
	unsetenv("SLURM_ARRAY_TASK_ID");
	unsetenv("SLURM_ARRAY_TASK_MIN");
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	unsetenv("JOB_COMPLETION_INDEX");
	unsetenv("APIPARITY_SHARD_COUNT");
}

static void shard_comes_from_option_slurm_or_indexed_job(void **state)
{
	(void)state;
	struct ap_shard s;
	struct ap_buf err = { 0 };
	clear_env();
	assert_int_equal(ap_shard_resolve(NULL, NULL, &s, &err), 0);
	assert_int_equal(s.count, 0);
	assert_int_equal(ap_shard_resolve("2/5", NULL, &s, &err), 0);
	assert_int_equal(s.index, 2);
	assert_int_equal(s.count, 5);
	setenv("SLURM_ARRAY_TASK_ID", "7", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "4", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
	assert_int_equal(ap_shard_resolve(NULL, NULL, &s, &err), 0);
	assert_int_equal(s.index, 3);
	assert_int_equal(s.count, 4);
	assert_int_equal(ap_shard_resolve("0/2", NULL, &s, &err), 0); /* the option wins */
	assert_int_equal(s.count, 2);
	clear_env();
	setenv("JOB_COMPLETION_INDEX", "1", 1);
	assert_int_equal(ap_shard_resolve(NULL, "3", &s, &err), 0);
	assert_int_equal(s.index, 1);
	assert_int_equal(s.count, 3);
	setenv("APIPARITY_SHARD_COUNT", "2", 1);
	assert_int_equal(ap_shard_resolve(NULL, NULL, &s, &err), 0);
	assert_int_equal(s.count, 2);
	clear_env();
	ap_buf_free(&err);
}

static void bad_shards_are_refused_with_why(void **state)
{
	(void)state;
	/* the last: an index longer than any number, refused before it is copied */
	static const char *const bad[] = { "3/3", "1", "-1/2", "a/2", "0/0", "0/10001", "1/2x", "",
					   "00000000000000000000000000000000000000001/4" };
	struct ap_shard s;
	clear_env();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ap_buf err = { 0 };
		assert_int_equal(ap_shard_resolve(bad[i], NULL, &s, &err), -EINVAL);
		assert_true(err.len > 0);
		if (i == sizeof(bad) / sizeof(bad[0]) - 1)
			assert_non_null(strstr(ap_buf_str(&err), "is not I/N"));
		ap_buf_free(&err);
	}
	struct ap_buf err = { 0 };
	setenv("JOB_COMPLETION_INDEX", "1", 1);
	assert_int_equal(ap_shard_resolve(NULL, NULL, &s, &err), -EINVAL);
	assert_non_null(strstr(ap_buf_str(&err), "--shard-count"));
	ap_buf_reset(&err);
	clear_env();
	setenv("SLURM_ARRAY_TASK_ID", "3", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "4", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "2", 1);
	assert_int_equal(ap_shard_resolve(NULL, NULL, &s, &err), -EINVAL);
	clear_env();
	ap_buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(entries_are_sorted_by_name_and_comments_skipped),
		cmocka_unit_test(digest_ignores_order_and_comments),
		cmocka_unit_test(mistakes_name_file_and_line),
		cmocka_unit_test(builtin_catalog_parses_and_holds_the_pages_modules),
		cmocka_unit_test(exclude_lists_entries_under_an_entry),
		cmocka_unit_test(shards_are_disjoint_and_cover_the_catalog),
		cmocka_unit_test(shard_comes_from_option_slurm_or_indexed_job),
		cmocka_unit_test(bad_shards_are_refused_with_why),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
