/* test-sweepfile.c - unit tests for src/evidence/sweepfile.h: sweep.json
 * reads back as it was written, and a sweep journal's records read back
 * typed, each field as journaled (an entry's failure and its reason too). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evidence/sweepfile.h"
#include "testutil.h"

static void sweep_json_reads_back_as_written(void **state)
{
	(void)state;
	char dir[512];
	char *plugin = "acme_plugin";
	const struct ap_matrix_strs plugins = { &plugin, 1, 1 };
	struct ap_sweep_meta m = { .state = AP_SWEEP_COMPLETE, .sharded = 1, .index = 1,
				   .count = 3, .has_samples = 1, .samples = 2 };
	struct ap_sweep_meta back;
	struct ap_buf a = { 0 }, b = { 0 }, why = { 0 };
	assert_int_equal(t_tempdir(dir, sizeof(dir), "test-sweepfile"), 0);
	assert_int_equal(ap_sweep_meta_set(&m.tool, "apiparity"), 0);
	assert_int_equal(ap_sweep_meta_set(&m.depth, "numeric"), 0);
	assert_int_equal(ap_sweep_meta_set(&m.catalog, "c0ffee"), 0);
	assert_int_equal(ap_sweep_meta_add_env(&m, "trixie", "Trixie", "2.5.1", &plugins), 0);
	assert_int_equal(ap_sweep_meta_add_env(&m, "sid", NULL, NULL, NULL), 0);
	assert_int_equal(ap_sweep_meta_set(&m.envs[0].adapter, "openreg-forked-daemons"), 0);
	assert_int_equal(ap_sweep_meta_render(&m, &a), 0);
	assert_true(!strncmp(ap_buf_str(&a), "{\n  \"schema\": \"apiparity.sweep/1\",\n", 35));
	assert_non_null(strstr(ap_buf_str(&a), "\"shard\": {\n    \"index\": 1,\n    \"count\": 3\n  }"));
	t_put(dir, AP_SWEEP_META_NAME, ap_buf_str(&a));
	assert_int_equal(ap_sweep_meta_read(dir, &back, &why), 0);
	assert_int_equal(ap_sweep_meta_render(&back, &b), 0);
	assert_string_equal(ap_buf_str(&b), ap_buf_str(&a));
	assert_int_equal(back.state, AP_SWEEP_COMPLETE);
	assert_int_equal(back.nenvs, 2);
	assert_string_equal(back.envs[0].torch, "2.5.1");
	assert_string_equal(back.envs[0].plugins.v[0], "acme_plugin");
	assert_string_equal(back.envs[0].adapter, "openreg-forked-daemons");
	assert_null(back.envs[1].adapter);
	assert_null(back.envs[1].label);
	assert_int_equal(back.envs[1].plugins.set, 0);
	assert_true(back.sharded && back.index == 1 && back.count == 3 && back.samples == 2);
	ap_sweep_meta_free(&back); /* the next read starts from nothing */
	t_put(dir, AP_SWEEP_META_NAME, "{\"schema\": \"apiparity.matrix/1\"}\n");
	assert_int_not_equal(ap_sweep_meta_read(dir, &back, &why), 0);
	assert_non_null(strstr(ap_buf_str(&why), "not a sweep's sweep.json"));
	ap_sweep_meta_free(&m);
	ap_sweep_meta_free(&back);
	ap_buf_free(&a);
	ap_buf_free(&b);
	ap_buf_free(&why);
	t_rmtree(dir);
}

/* Appends rec (taken) to text as one journal line. */
static void add_record(struct ap_buf *text, json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT);
	assert_non_null(s);
	ap_buf_addf(text, "%s\n", s);
	free(s);
	json_decref(rec);
}

static const struct ap_sweep_start start = { "trixie", "c0ffee", "signature", "0/2", 0, 0 };

/* Writes a journal of start: an API, a failed entry, a done one, a record
 * of another type and a torn last record. */
static void write_journal(const char *dir)
{
	struct ap_buf text = { 0 };
	struct ap_matrix_line l;
	struct ap_sweep_entry failed = { "t.io", AP_LSTATUS_IMPORT_ERROR, "No module named x", 0 };
	struct ap_sweep_entry done = { "t", AP_LSTATUS_PRESENT, NULL, 1 };
	add_record(&text, ap_sweep_start_json(&start));
	assert_int_equal(ap_matrix_line_init(&l, "trixie", "t", "t.f", AP_LSTATUS_PRESENT), 0);
	l.kind = strdup("function");
	add_record(&text, ap_sweep_api_json(&l));
	ap_matrix_line_free(&l);
	add_record(&text, ap_sweep_entry_json(&failed));
	add_record(&text, ap_sweep_entry_json(&done));
	ap_buf_adds(&text, "{\"type\":\"note\",\"data\":{}}\n{\"type\":\"entry\",\"da");
	t_put(dir, "j.jsonl", ap_buf_str(&text));
	ap_buf_free(&text);
}

static void journal_records_read_back_typed(void **state)
{
	(void)state;
	char dir[512], path[600];
	struct ap_sweep_records recs;
	struct ap_buf err = { 0 };
	int same = 0;
	assert_int_equal(t_tempdir(dir, sizeof(dir), "test-sweepfile"), 0);
	write_journal(dir);
	snprintf(path, sizeof(path), "%s/j.jsonl", dir);
	assert_int_equal(ap_sweep_journal_read(path, &start, &recs, &same, &err), 0);
	assert_true(same);
	assert_int_equal(recs.n, 3);
	assert_int_equal(recs.v[0].type, AP_SWEEP_REC_API);
	assert_string_equal(recs.v[0].line.api, "t.f");
	assert_string_equal(recs.v[0].line.kind, "function");
	assert_int_equal(recs.v[1].type, AP_SWEEP_REC_ENTRY);
	assert_string_equal(recs.v[1].entry.entry, "t.io");
	assert_int_equal(recs.v[1].entry.status, AP_LSTATUS_IMPORT_ERROR);
	assert_string_equal(recs.v[1].entry.reason, "No module named x");
	assert_int_equal(recs.v[2].entry.status, AP_LSTATUS_PRESENT);
	assert_null(recs.v[2].entry.reason);
	assert_int_equal(recs.v[2].entry.apis, 1);
	ap_sweep_records_free(&recs);
	ap_buf_free(&err);
	t_rmtree(dir);
}

static void a_journal_of_another_sweep_is_not_the_same(void **state)
{
	(void)state;
	char dir[512], path[600];
	struct ap_sweep_records recs;
	struct ap_buf err = { 0 };
	struct ap_sweep_start other = start;
	int same = 1;
	assert_int_equal(t_tempdir(dir, sizeof(dir), "test-sweepfile"), 0);
	write_journal(dir);
	snprintf(path, sizeof(path), "%s/j.jsonl", dir);
	other.shard = "1/2";
	assert_int_equal(ap_sweep_journal_read(path, &other, &recs, &same, &err), 0);
	assert_false(same);
	assert_int_equal(recs.n, 0);
	ap_sweep_records_free(&recs);
	ap_buf_free(&err);
	t_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sweep_json_reads_back_as_written),
		cmocka_unit_test(journal_records_read_back_typed),
		cmocka_unit_test(a_journal_of_another_sweep_is_not_the_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
