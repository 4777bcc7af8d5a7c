/* test-testindex.c - unit tests for src/check/testindex.h and the lookup of
 * tests in it (ap_official_find): an index is trusted only for its own tree
 * and indexer, a damaged one is never read, a key is found among keys that
 * share its prefix, and the mentions of a class are told apart by how they
 * name it; the indexer is named by the worker's indexer code alone. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "check/official.h"
#include "check/testindex.h"
#include "env/worker.h"
#include "testutil.h"

#define SUM "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char dir[4096];

static int make_dir(void **state)
{
	(void)state;
	return t_tempdir(dir, sizeof(dir), "test-testindex");
}

static int remove_dir(void **state)
{
	(void)state;
	t_rmtree(dir);
	return 0;
}

/* A body of lines "KEY\tJSON", already sorted. */
static const char body[] =
	"F\t[\"test/test_a.py\",\"test/test_b.py\"]\n"
	"f test/test_a.py\t{\"tests\":[[\"TestA\",\"test_one\",5],[null,\"test_mod\",20]],"
	"\"imports\":[\"torch\"],\"bindings\":[[\"from\",\"smt\","
	"\"torch.autograd.set_multithreading_enabled\"]]}\n"
	"f test/test_b.py\t{\"tests\":[[\"TestB\",\"test_two\",3]],\"imports\":[],\"bindings\":[]}\n"
	"t test_one\t[[0,0]]\n"
	"t test_two\t[[1,0]]\n"
	"u clone\t[[0,0,7,\"x.clone\",\"x.clone()\"]]\n"
	"u clone_x\t[[1,0,4,\"x.clone_x\",\"x.clone_x\"]]\n"
	"u set_multithreading_enabled\t["
	"[0,0,9,\"torch.autograd.set_multithreading_enabled\",\"with torch.autograd.set_multithreading_enabled(False):\"],"
	"[0,0,6,\"smt\",\"smt(True)\"],"
	"[0,0,6,\"smt\",\"smt(True)\"],"
	"[1,0,4,\"other.set_multithreading_enabled\",\"other.set_multithreading_enabled()\"],"
	"[0,1,21,\"torch.autograd.grad_mode.set_multithreading_enabled\",\"x\"]]\n";

static void put_index(const char *header_sum, const char *text, size_t len)
{
	struct ap_buf b = { 0 };
	char path[4200];
	ap_testindex_header(header_sum, text, len, &b);
	ap_buf_add(&b, text, len);
	snprintf(path, sizeof(path), "%s/usage.idx", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
	assert_int_equal(fclose(f), 0);
	ap_buf_free(&b);
}

static int open_index(const char *sum, struct ap_testindex *ix)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/usage.idx", dir);
	return ap_testindex_open(path, sum, ix);
}

static void key_is_found_among_keys_with_its_prefix(void **state)
{
	(void)state;
	struct ap_testindex ix;
	json_t *v = NULL;
	put_index(SUM, body, strlen(body));
	assert_int_equal(open_index(SUM, &ix), 0);
	assert_int_equal(ap_testindex_get(&ix, "u clone", &v), 0);
	assert_int_equal(json_array_size(v), 1);
	assert_string_equal(json_string_value(json_array_get(json_array_get(v, 0), 4)), "x.clone()");
	json_decref(v);
	assert_int_equal(ap_testindex_get(&ix, "u clone_x", &v), 0);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(v, 0), 0)), 1);
	json_decref(v);
	assert_int_equal(ap_testindex_get(&ix, "u clon", &v), 0);
	assert_null(v);
	assert_int_equal(ap_testindex_get(&ix, "u zzz", &v), 0);
	assert_null(v);
	assert_int_equal(ap_testindex_get(&ix, "A", &v), 0);
	assert_null(v);
	assert_string_equal(ap_testindex_file(&ix, 1), "test/test_b.py");
	assert_null(ap_testindex_file(&ix, 2));
	ap_testindex_close(&ix);
}

static void index_of_another_tree_is_stale(void **state)
{
	(void)state;
	struct ap_testindex ix;
	put_index(SUM, body, strlen(body));
	assert_int_equal(open_index("ffff456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", &ix),
			 -ESTALE);
}

static void index_of_another_indexer_is_stale(void **state)
{
	(void)state;
	struct ap_testindex ix;
	char path[4200];
	snprintf(path, sizeof(path), "apiparity-usage-index 0.0123456789abcdef %s %zu %s\n%s", SUM,
		 strlen(body), SUM, body);
	t_put(dir, "usage.idx", path);
	assert_int_equal(open_index(SUM, &ix), -ESTALE);
}

/* An edit of the worker outside its indexer code keeps the indexer's name
 * (every index stays); one inside it, or a lost marker, changes it (every
 * index is rebuilt). */
static void indexer_is_named_by_the_workers_indexer_code_alone(void **state)
{
	(void)state;
	size_t len = ap_worker_py_len;
	char *src = malloc(len), real[32], name[32];
	assert_non_null(src);
	memcpy(src, ap_worker_py, len);
	ap_testindex_indexer(src, len, real);
	static const char begin[] = "\n# apiparity-indexer: begin\n", end[] = "\n# apiparity-indexer: end\n";
	const size_t bl = strlen(begin), el = strlen(end);
	char *b = memmem(src, len, begin, bl), *e = memmem(src, len, end, el);
	assert_non_null(b);
	assert_non_null(e);
	assert_true(b < e && e + el < src + len - 2);
	struct ap_buf h = { 0 };
	ap_testindex_header(SUM, "", 0, &h);
	assert_int_equal(strncmp(ap_buf_str(&h) + strlen("apiparity-usage-index "), real, strlen(real)), 0);
	ap_buf_free(&h);

	char *outside[] = { src, b - 1, e + el, src + len - 2 };
	for (size_t i = 0; i < sizeof(outside) / sizeof(*outside); i++) {
		*outside[i] ^= 1;
		ap_testindex_indexer(src, len, name);
		assert_string_equal(name, real);
		*outside[i] ^= 1;
	}
	char *inside[] = { b + bl, b + (e - b) / 2, e - 1 };
	for (size_t i = 0; i < sizeof(inside) / sizeof(*inside); i++) {
		*inside[i] ^= 1;
		ap_testindex_indexer(src, len, name);
		assert_string_not_equal(name, real);
		*inside[i] ^= 1;
	}
	e[3] = 'A'; /* "# Apiparity-indexer: end": the whole worker names it */
	ap_testindex_indexer(src, len, name);
	assert_string_not_equal(name, real);
	free(src);
}

static void truncated_index_is_damaged(void **state)
{
	(void)state;
	struct ap_testindex ix;
	struct ap_buf b = { 0 };
	ap_testindex_header(SUM, body, strlen(body), &b);
	ap_buf_add(&b, body, strlen(body) - 10);
	t_put(dir, "usage.idx", ap_buf_str(&b));
	ap_buf_free(&b);
	assert_int_equal(open_index(SUM, &ix), -EBADMSG);
}

/* A byte of the body changed, the size kept, is damage: before the file was
 * ever opened, and after (its stamp then no longer matches its ctime). */
static void a_body_changed_in_place_is_damaged(void **state)
{
	(void)state;
	struct ap_testindex ix;
	char path[4200], stamp[4300];
	put_index(SUM, body, strlen(body));
	snprintf(path, sizeof(path), "%s/usage.idx", dir);
	snprintf(stamp, sizeof(stamp), "%s.ok", path);
	assert_int_equal(open_index(SUM, &ix), 0);
	ap_testindex_close(&ix);
	assert_int_equal(access(stamp, F_OK), 0);
	assert_int_equal(open_index(SUM, &ix), 0); /* by its stamp */
	ap_testindex_close(&ix);
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, -5, SEEK_END), 0);
	fputc('9', f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(open_index(SUM, &ix), -EBADMSG);
	unlink(stamp);
	assert_int_equal(open_index(SUM, &ix), -EBADMSG);
}

static void garbage_is_damaged(void **state)
{
	(void)state;
	struct ap_testindex ix;
	t_put(dir, "usage.idx", "\x7f" "ELF garbage\n");
	assert_int_equal(open_index(SUM, &ix), -EBADMSG);
	t_put(dir, "usage.idx", "");
	assert_int_equal(open_index(SUM, &ix), -EBADMSG);
}

static void missing_index_is_enoent(void **state)
{
	(void)state;
	struct ap_testindex ix;
	assert_int_equal(open_index(SUM, &ix), -ENOENT);
}

static void line_that_does_not_parse_is_damaged(void **state)
{
	(void)state;
	struct ap_testindex ix;
	json_t *v = NULL;
	const char bad[] = "F\t[]\nu x\t[[0,0,1,\"x\"\n";
	put_index(SUM, bad, strlen(bad));
	assert_int_equal(open_index(SUM, &ix), 0);
	assert_int_equal(ap_testindex_get(&ix, "u x", &v), -EBADMSG);
	ap_testindex_close(&ix);
}

static struct ap_official_found find(const char *cls, const char *leaf)
{
	struct ap_testindex ix;
	struct ap_official_found hits;
	put_index(SUM, body, strlen(body));
	assert_int_equal(open_index(SUM, &ix), 0);
	assert_int_equal(ap_official_find(NULL, &ix, cls, leaf, &hits), 0);
	ap_testindex_close(&ix);
	return hits;
}

static void mentions_are_told_apart_by_how_they_name_the_class(void **state)
{
	(void)state;
	struct ap_official_found hits = find("torch.autograd.grad_mode.set_multithreading_enabled",
					     "clone");
	assert_int_equal(hits.n, 3);
	const struct ap_official_hit *one = &hits.hits[0], *mod = &hits.hits[1];
	const struct ap_official_hit *two = &hits.hits[2];
	assert_string_equal(one->test, "test_one");
	assert_string_equal(one->cls, "TestA");
	assert_int_equal(one->line, 5);
	assert_string_equal(mod->test, "test_mod");
	assert_null(mod->cls);
	assert_string_equal(two->file, "test/test_b.py");
	/* smt binds another path, so it is no mention; the public path is
	 * only the same name without a worker to say it is the same object */
	assert_int_equal(one->nmatches, 1);
	assert_int_equal(one->matches[0].line, 9);
	assert_string_equal(one->matches[0].how, "name");
	assert_string_equal(one->matches[0].text,
			    "with torch.autograd.set_multithreading_enabled(False):");
	assert_string_equal(mod->matches[0].how, "qualified");
	assert_string_equal(two->matches[0].how, "name");
	assert_true(one->uses_leaf);
	assert_false(two->uses_leaf);
	ap_official_found_free(&hits);
}

static void import_of_the_class_path_is_an_alias(void **state)
{
	(void)state;
	struct ap_official_found hits = find("torch.autograd.set_multithreading_enabled", NULL);
	const struct ap_official_hit *one = &hits.hits[0];
	assert_string_equal(one->test, "test_one");
	assert_string_equal(one->matches[0].how, "alias");     /* smt, line 6, once */
	assert_string_equal(one->matches[1].how, "qualified"); /* line 9 */
	assert_int_equal(one->nmatches, 2);
	ap_official_found_free(&hits);
}

/* The records of the index as C types: a file's tests (a module-level
 * one's class NULL) and bindings, a name's tests and mentions. */
static void records_read_into_their_fields(void **state)
{
	(void)state;
	struct ap_testindex ix;
	struct ap_index_rec f, t, u, none;
	put_index(SUM, body, strlen(body));
	assert_int_equal(open_index(SUM, &ix), 0);
	assert_int_equal(ap_testindex_file_rec(&ix, "test/test_a.py", &f), 0);
	assert_true(f.found);
	assert_int_equal(f.ntests, 2);
	assert_string_equal(f.tests[0].cls, "TestA");
	assert_string_equal(f.tests[0].name, "test_one");
	assert_int_equal(f.tests[0].line, 5);
	assert_null(f.tests[1].cls);
	assert_int_equal(f.tests[1].line, 20);
	assert_int_equal(f.nbindings, 1);
	assert_string_equal(f.bindings[0].kind, "from");
	assert_string_equal(f.bindings[0].local, "smt");
	assert_string_equal(f.bindings[0].full, "torch.autograd.set_multithreading_enabled");
	assert_int_equal(json_array_size(f.imports), 1);
	assert_int_equal(ap_testindex_defs(&ix, "test_two", &t), 0);
	assert_int_equal(t.ndefs, 1);
	assert_int_equal(t.defs[0].fid, 1);
	assert_int_equal(t.defs[0].ti, 0);
	assert_int_equal(ap_testindex_uses(&ix, "set_multithreading_enabled", &u), 0);
	assert_int_equal(u.nuses, 5);
	assert_int_equal(u.uses[1].fid, 0);
	assert_int_equal(u.uses[1].line, 6);
	assert_string_equal(u.uses[1].dotted, "smt");
	assert_string_equal(u.uses[1].text, "smt(True)");
	assert_int_equal(u.uses[3].fid, 1);
	assert_int_equal(ap_testindex_uses(&ix, "zzz", &none), 0);
	assert_false(none.found);
	assert_int_equal(none.nuses, 0);
	ap_index_rec_free(&f);
	ap_index_rec_free(&t);
	ap_index_rec_free(&u);
	ap_index_rec_free(&none);
	ap_testindex_close(&ix);
}

/* A record not shaped as the worker writes it is damaged, not read as
 * zeros. */
static void misshapen_record_is_damaged(void **state)
{
	(void)state;
	struct ap_testindex ix;
	struct ap_index_rec r;
	const char bad[] = "F\t[\"test/test_a.py\"]\n"
			   "f test/test_a.py\t{\"tests\":[[\"A\",\"test_a\",\"5\"]],\"bindings\":[]}\n"
			   "t test_a\t[[0]]\n"
			   "u x\t[[0,0,1,\"x\",null]]\n";
	put_index(SUM, bad, strlen(bad));
	assert_int_equal(open_index(SUM, &ix), 0);
	assert_int_equal(ap_testindex_file_rec(&ix, "test/test_a.py", &r), -EBADMSG);
	ap_index_rec_free(&r);
	assert_int_equal(ap_testindex_defs(&ix, "test_a", &r), -EBADMSG);
	ap_index_rec_free(&r);
	assert_int_equal(ap_testindex_uses(&ix, "x", &r), -EBADMSG);
	ap_index_rec_free(&r);
	ap_testindex_close(&ix);
}

/* A template's record: its source may be null (the worker could not read
 * it), its generator never (what made the tests is the record). */
static void generated_record_needs_its_generator(void **state)
{
	(void)state;
	struct ap_testindex ix;
	struct ap_index_rec r;
	const char ok_text[] = "D\t[[0,0,1,\"instantiate_device_type_tests\",null,[\"cpu\"]]]\nF\t[]\n";
	put_index(SUM, ok_text, strlen(ok_text));
	assert_int_equal(open_index(SUM, &ix), 0);
	assert_int_equal(ap_testindex_gens(&ix, &r), 0);
	assert_int_equal(r.ngens, 1);
	assert_string_equal(r.gens[0].generator, "instantiate_device_type_tests");
	assert_null(r.gens[0].source);
	ap_index_rec_free(&r);
	ap_testindex_close(&ix);
	const char bad[] = "D\t[[0,0,1,null,\"x\",[\"cpu\"]]]\nF\t[]\n";
	put_index(SUM, bad, strlen(bad));
	assert_int_equal(open_index(SUM, &ix), 0);
	assert_int_equal(ap_testindex_gens(&ix, &r), -EBADMSG);
	ap_index_rec_free(&r);
	ap_testindex_close(&ix);
}

static void tree_sum_follows_the_test_files(void **state)
{
	(void)state;
	char a[65], b[65], c[65], tree[4200];
	snprintf(tree, sizeof(tree), "%s/test", dir);
	t_put(dir, "test/test_a.py", "x = 1\n");
	t_put(dir, "test/helper.py", "y = 1\n");
	assert_int_equal(ap_testindex_tree_sum(tree, a), 0);
	t_put(dir, "test/helper.py", "y = 22\n");   /* not a test file */
	assert_int_equal(ap_testindex_tree_sum(tree, b), 0);
	assert_string_equal(a, b);
	t_put(dir, "test/sub/test_b.py", "z = 1\n");
	assert_int_equal(ap_testindex_tree_sum(tree, b), 0);
	assert_string_not_equal(a, b);
	t_put(dir, "test/sub/test_b.py", "z = 12\n");
	assert_int_equal(ap_testindex_tree_sum(tree, c), 0);
	assert_string_not_equal(b, c);
}

static void fetched_tree_is_summed_by_its_stamp(void **state)
{
	(void)state;
	char a[65], b[65], c[65], tree[4200], stamp[4200];
	snprintf(tree, sizeof(tree), "%s/2.6.0/test", dir);
	snprintf(stamp, sizeof(stamp), "%s/2.6.0/.apiparity-tests", dir);
	t_put(dir, "2.6.0/test/test_a.py", "x = 1\n");
	t_put(dir, "2.6.0/.apiparity-tests", "pytorch_2.6.0.orig.tar.xz");
	assert_int_equal(ap_testindex_tree_sum(tree, a), 0);
	t_put(dir, "2.6.0/test/test_b.py", "y = 1\n"); /* the stamp stands for the tree */
	assert_int_equal(ap_testindex_tree_sum(tree, b), 0);
	assert_string_equal(a, b);
	t_put(dir, "2.6.0/.apiparity-tests.new", "pytorch_2.6.0.orig.tar.xz");
	char fresh[4300];
	snprintf(fresh, sizeof(fresh), "%s.new", stamp);
	assert_int_equal(rename(fresh, stamp), 0); /* a new fetch: a new stamp */
	assert_int_equal(ap_testindex_tree_sum(tree, c), 0);
	assert_string_not_equal(a, c);
}

static void cached_tree_keeps_its_index_beside_it(void **state)
{
	(void)state;
	struct ap_buf p = { 0 }, q = { 0 };
	setenv("APIPARITY_TESTS_ROOT", dir, 1);
	char tree[4200];
	snprintf(tree, sizeof(tree), "%s/2.6.0+dfsg/test", dir);
	ap_testindex_path(tree, &p);
	snprintf(tree, sizeof(tree), "%s/2.6.0+dfsg/usage.idx", dir);
	assert_string_equal(ap_buf_str(&p), tree);
	ap_testindex_path("/elsewhere/src/test", &q);
	snprintf(tree, sizeof(tree), "%s/.index/", dir);
	assert_memory_equal(ap_buf_str(&q), tree, strlen(tree));
	unsetenv("APIPARITY_TESTS_ROOT");
	ap_buf_free(&p);
	ap_buf_free(&q);
}

#define T(name) cmocka_unit_test_setup_teardown(name, make_dir, remove_dir)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(key_is_found_among_keys_with_its_prefix),
		T(index_of_another_tree_is_stale),
		T(index_of_another_indexer_is_stale),
		T(indexer_is_named_by_the_workers_indexer_code_alone),
		T(truncated_index_is_damaged),
		T(a_body_changed_in_place_is_damaged),
		T(garbage_is_damaged),
		T(missing_index_is_enoent),
		T(line_that_does_not_parse_is_damaged),
		T(mentions_are_told_apart_by_how_they_name_the_class),
		T(import_of_the_class_path_is_an_alias),
		T(records_read_into_their_fields),
		T(misshapen_record_is_damaged),
		T(generated_record_needs_its_generator),
		T(tree_sum_follows_the_test_files),
		T(fetched_tree_is_summed_by_its_stamp),
		T(cached_tree_keeps_its_index_beside_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
