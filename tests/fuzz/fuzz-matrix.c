/* fuzz-matrix - a sweep's matrix.jsonl read back as untrusted input (merge,
 * diff and docs read shards and matrices someone else wrote): whatever the
 * bytes, the reader refuses or accepts, and what it accepts can be sorted,
 * judged, rendered, diffed, shown and audited without a crash. The first
 * byte also feeds the catalog parser the rest, on its own. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "check/catalog.h"
#include "evidence/matrix.h"
#include "evidence/sweepfile.h"
#include "review/audit.h"
#include "review/sweepview.h"

static char dir[] = "/tmp/fuzz-matrix-XXXXXX";
static const char *const envs[] = { "bookworm", "trixie", "sid" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	return 0;
}

static void use(struct ap_matrix *lines)
{
	struct ap_buf out = { 0 };
	struct ap_sweep_meta sweep = { 0 };
	if (ap_sweep_meta_add_env(&sweep, "trixie", "A2", NULL, NULL) ||
	    ap_sweep_meta_set(&sweep.depth, "signature"))
		abort();
	ap_matrix_sort(lines, envs, 3);
	ap_matrix_judge(lines, "sid");
	ap_matrix_render(lines, &out);
	ap_sweepview_md(&sweep, lines, &out);
	ap_sweepview_html(&sweep, lines, &out);
	struct ap_matrix_diff d;
	if (!ap_matrix_diff(lines, "bookworm", lines, "trixie", &d))
		ap_matrix_diff_text(&d, &out);
	struct ap_docs_envs envs;
	struct ap_docs_gen pages;
	struct ap_docs_product product = { "A2", 1 };
	struct ap_docs_entry entry = { .api = "torch.x", .kind = AP_DOCS_CLASS, .file = "p.md",
				       .line = 1, .format = AP_DOCS_TABLE, .products = &product,
				       .nproducts = 1, .others = -1 };
	struct ap_docs_entries entries = { &entry, 1, 1 };
	struct ap_docs_findings f;
	if (!ap_docs_envs_read(&sweep, &envs)) {
		size_t unlinked;
		ap_docs_generate(&envs, lines, NULL, AP_DOCS_TABLE, &pages, &unlinked);
		ap_docs_gen_free(&pages);
		if (!ap_docs_audit(&entries, &envs, lines, NULL, &f))
			ap_docs_findings_free(&f);
		ap_docs_envs_free(&envs);
	}
	ap_matrix_diff_free(&d);
	ap_sweep_meta_free(&sweep);
	ap_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct ap_buf err = { 0 };
	struct ap_matrix lines = { 0 };
	if (size && data[0] == '#') {
		struct ap_catalog c;
		if (!ap_catalog_parse(&c, (const char *)data, size, "fuzz.txt", &err))
			ap_catalog_free(&c);
		ap_buf_free(&err);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, AP_MATRIX_NAME);
	if (ap_write_atomic(path, data, size) == 0 && ap_matrix_read(dir, &lines, &err) == 0)
		use(&lines);
	ap_matrix_free(&lines);
	ap_buf_free(&err);
	return 0;
}
