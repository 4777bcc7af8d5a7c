/* apiparity docs - the native API support entry of a target, written from
 * the measured bundles in the format of the backend's docs pages; the pages
 * of a whole sweep; and hand-written pages audited by a sweep. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "cmd/cmd.h"
#include "evidence/matrix.h"
#include "evidence/sweepfile.h"
#include "review/audit.h"
#include "review/docs.h"
#include "review/plugins.h"
#include "review/updocs.h"
#include "check/testsrc.h"
#include "base/err.h"
#include "evidence/facts.h"
#include "evidence/submission.h"

/* Support per product: each environment's label is a product; consistent
 * (with or without limits) is supported, inconsistent is not, and an
 * unverified environment is left out, since not listed means not verified. */
static size_t docs_products(const struct ap_submission *s, const struct ap_bundle_facts *f,
			    struct ap_docs_product *out, struct ap_buf *limits)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		enum ap_verdict v = f[i].verdict;
		const char *product = f[i].label ? f[i].label : s->v[i].name;
		if (v == AP_VERDICT_UNKNOWN || v == AP_UNVERIFIED)
			continue;
		out[n++] = (struct ap_docs_product){ (char *)product, v != AP_INCONSISTENT };
		if (v == AP_CONSISTENT_WITH_LIMITS)
			ap_buf_addf(limits, "%s%s: %s", limits->len ? "; " : "", product,
				    f[i].nverdict_reasons ? f[i].verdict_reasons[0] : "(null)");
	}
	return n;
}

/* Upstream's docs sources for torch (src: --docs-src, else those fetched
 * with its tests) into *up. 0, or -1 when there are none to read: then a
 * line on stderr says so, and the pages go without links (none guessed). */
static int docs_sources(const char *src, const char *torch, struct ap_updocs *up)
{
	struct ap_buf dir = { 0 }, err = { 0 };
	int r = 0;
	if (src)
		ap_buf_adds(&dir, src);
	else if (!torch || ap_testsrc_docs(torch, &dir))
		r = -ENOENT;
	if (!r && (r = ap_updocs_load(ap_buf_str(&dir), torch ? torch : "", up, &err)))
		fprintf(stderr, "apiparity: docs: %s: no upstream URLs\n", ap_buf_str(&err));
	else if (r)
		fprintf(stderr, "apiparity: docs: no upstream docs sources for torch %s (`apiparity "
			"tests fetch ENV` fetches them, or give --docs-src DIR): no upstream URLs\n",
			torch ? torch : "(unknown)");
	ap_buf_free(&dir);
	ap_buf_free(&err);
	return r ? -1 : 0;
}

/* The upstream doc page of api for the torch version of the first bundle
 * where the target exists, from upstream's docs sources. */
static void docs_url(const struct ap_submission *s, const struct ap_bundle_facts *f,
		     const char *src, const char *api, struct ap_buf *url)
{
	struct ap_updocs up;
	for (size_t i = 0; i < s->n; i++) {
		if (!f[i].found || !f[i].torch)
			continue;
		if (!docs_sources(src, f[i].torch, &up)) {
			/* own: -1, the bundle does not say where a member is defined */
			ap_updocs_url(&up, api, &(struct ap_updocs_member){ -1, f[i].doc }, url);
			ap_updocs_free(&up);
		}
		return;
	}
}

/* A sweep's matrix and its sweep.json (*meta) with its environments, for
 * generate and audit. */
static int load_sweep(const char *dir, struct ap_matrix *lines, struct ap_sweep_meta *meta,
		      struct ap_docs_envs *envs, const char *what)
{
	struct ap_buf err = { 0 };
	int r = ap_matrix_read(dir, lines, &err);
	if (!r)
		r = ap_sweep_meta_read(dir, meta, &err);
	if (!r && (r = ap_docs_envs_read(meta, envs)))
		ap_buf_adds(&err, "out of memory");
	if (r) {
		ap_matrix_free(lines);
		ap_sweep_meta_free(meta);
		r = ap_fail(r == -ENOMEM ? r : r == -AP_EPROTO ? -AP_EINPUT : -AP_ECONFIG, what, &err);
	}
	ap_buf_free(&err);
	return r;
}

struct docs_opts {
	const char *format, *out, *src, *plugins;
};

#define AT(field) offsetof(struct docs_opts, field)
#define DOCS_SRC { "docs-src", "DIR", "upstream's docs/source for the links (default: " \
		   "the one fetched with the torch's tests)", AT(src), NULL, 0 }
static const struct ap_opt generate_opts[] = {
	{ "format", "table|list", "the format of the backend's pages (default table)",
	  AT(format), NULL, 0 },
	{ "out", "DOCSDIR", "where the pages go (default DIR/docs)", AT(out), NULL, 0 },
	DOCS_SRC,
};
static const struct ap_opt entry_opts[] = { DOCS_SRC };
static const struct ap_opt audit_opts[] = {
	{ "plugins", "FILE", "what backend plugins add to torch (default: the built-in "
	  "specs/plugin-apis.ini)", AT(plugins), NULL, 0 },
};
#undef DOCS_SRC
#undef AT

static const struct ap_optset entry_set = { "docs entry", "DIR",
	"the native API docs entry, measured", AP_OPTS(entry_opts) };
static const struct ap_optset generate_set = { "docs generate", "DIR",
	"support pages from a sweep", AP_OPTS(generate_opts) };
static const struct ap_optset audit_set = { "docs audit", "DOCSDIR DIR",
	"hand-written pages against a sweep", AP_OPTS(audit_opts) };
const struct ap_optset *const ap_docs_optsets[] = { &entry_set, &generate_set, &audit_set,
						    NULL };

/* docs generate DIR [--format table|list] [--out DOCSDIR] */
static int docs_generate(int argc, char **argv)
{
	struct docs_opts o = { .format = "table" };
	int r = ap_cli_parse(&generate_set, argc - 1, argv + 1, &o);
	if (r)
		return r < 0 ? AP_EXIT_OK : r;
	if (argc - 1 - optind != 1)
		return ap_usage("docs: want docs generate DIR [--format table|list] [--out DOCSDIR]");
	const char *format = o.format, *dir = argv[1 + optind], *out = o.out;
	if (strcmp(format, "table") && strcmp(format, "list"))
		return ap_usage("docs generate: --format wants table or list, not '%s'", format);
	struct ap_matrix lines = { 0 };
	struct ap_docs_envs envs = { 0 };
	struct ap_docs_gen pages;
	struct ap_sweep_meta meta = { 0 };
	r = load_sweep(dir, &lines, &meta, &envs, "docs generate");
	if (r)
		return r;
	struct ap_buf outdir = { 0 }, path = { 0 }, err = { 0 };
	if (out)
		ap_buf_adds(&outdir, out);
	else
		ap_buf_addf(&outdir, "%s/docs", dir);
	struct ap_updocs up;
	size_t unlinked = 0;
	int linked = !docs_sources(o.src, envs.n ? envs.v[0].torch : NULL, &up);
	ap_docs_generate(&envs, &lines, linked ? &up : NULL,
			 strcmp(format, "list") ? AP_DOCS_TABLE : AP_DOCS_LIST, &pages, &unlinked);
	if (linked)
		ap_updocs_free(&up);
	r = ap_mkdirs(ap_buf_str(&outdir));
	for (size_t i = 0; i < pages.n; i++) {
		const struct ap_docs_gen_page *p = &pages.v[i];
		ap_buf_reset(&path);
		ap_buf_addf(&path, "%s/%s", ap_buf_str(&outdir), p->name);
		if (!r)
			r = ap_write_atomic(ap_buf_str(&path), ap_buf_str(&p->text), p->text.len);
	}
	if (r) {
		ap_buf_addf(&err, "%s: %s", path.len ? ap_buf_str(&path) : ap_buf_str(&outdir), strerror(-r));
		r = ap_fail(r, "docs generate", &err);
	} else
		printf("%zu pages in %s (%zu entries without an upstream URL: their docs sources "
		       "do not publish them)\n", pages.n, ap_buf_str(&outdir), unlinked);
	ap_docs_gen_free(&pages);
	ap_docs_envs_free(&envs);
	ap_matrix_free(&lines);
	ap_sweep_meta_free(&meta);
	ap_buf_free(&outdir);
	ap_buf_free(&path);
	ap_buf_free(&err);
	return r;
}

/* docs audit DOCSDIR DIR */
static int docs_audit(int argc, char **argv)
{
	struct docs_opts o = { 0 };
	int r = ap_cli_parse(&audit_set, argc - 1, argv + 1, &o);
	if (r)
		return r < 0 ? AP_EXIT_OK : r;
	if (argc - 1 - optind != 2)
		return ap_usage("docs: want docs audit DOCSDIR DIR");
	const char *docsdir = argv[1 + optind], *dir = argv[2 + optind];
	struct ap_buf err = { 0 }, out = { 0 };
	struct ap_matrix lines = { 0 };
	struct ap_docs_envs envs = { 0 };
	struct ap_docs_entries entries = { 0 };
	struct ap_docs_pages pages = { 0 };
	struct ap_docs_findings f = { 0 };
	struct ap_sweep_meta meta = { 0 };
	struct ap_plugins plugins = { 0 };
	r = ap_docs_load_pages(docsdir, &entries, &pages, &err) ? ap_fail(-AP_ECONFIG, "docs audit", &err)
								: 0;
	if (!r && (r = ap_plugins_load(&plugins, o.plugins, &err)))
		r = ap_fail(r, "docs audit", &err);
	r = r ? r : load_sweep(dir, &lines, &meta, &envs, "docs audit");
	if (!r && ap_docs_audit(&entries, &envs, &lines, &plugins, &f)) {
		ap_buf_adds(&err, "out of memory");
		r = ap_fail(-ENOMEM, "docs audit", &err);
	}
	if (!r) {
		ap_docs_pages_text(&pages, &out);
		ap_docs_audit_text(&f, &out);
		fputs(ap_buf_str(&out), stdout);
		printf("%zu entries audited\n", entries.n);
	}
	ap_docs_findings_free(&f);
	ap_docs_pages_free(&pages);
	ap_docs_entries_free(&entries);
	ap_docs_envs_free(&envs);
	ap_matrix_free(&lines);
	ap_sweep_meta_free(&meta);
	ap_plugins_free(&plugins);
	ap_buf_free(&err);
	ap_buf_free(&out);
	return r;
}

/* docs entry DIR */
static int docs_entry(int argc, char **argv)
{
	struct ap_submission s;
	struct ap_buf err = { 0 }, out = { 0 }, limits = { 0 }, url = { 0 };
	struct docs_opts o = { 0 };
	int r = ap_cli_parse(&entry_set, argc - 1, argv + 1, &o);
	if (r)
		return r < 0 ? AP_EXIT_OK : r;
	if (argc - 1 - optind != 1)
		return ap_usage("docs: want docs entry DIR, docs generate DIR or docs audit DOCSDIR DIR");
	r = ap_submission_load(&s, argv[1 + optind], &err);
	if (r) {
		r = ap_fail(r == -ENOENT ? -AP_ECONFIG : r, "docs entry", &err);
		ap_buf_free(&err);
		return r;
	}
	struct ap_bundle_facts *f = calloc(s.n ? s.n : 1, sizeof(*f));
	struct ap_docs_product *products = calloc(s.n ? s.n : 1, sizeof(*products));
	size_t read = 0;
	while (f && products && read < s.n && !ap_bundle_facts(s.v[read].bundle, &f[read]))
		read++;
	if (read == s.n) {
		const char *api = f[0].target;
		size_t n = docs_products(&s, f, products, &limits);
		docs_url(&s, f, o.src, api, &url);
		const char *u = url.len ? ap_buf_str(&url) : NULL, *lim = limits.len ?
			ap_buf_str(&limits) : NULL, *kind = f[0].impl_kind;
		if (f[0].owner)   /* a member: a sub-entry inside its class's block */
			ap_docs_member_entry(f[0].owner, api, kind && !ap_docs_called(kind) ?
					     AP_DOCS_NO_CALL : 0, u, products, n, lim, &out);
		else
			ap_docs_entry(api, u, products, n, lim, &out);
		fputs(ap_buf_str(&out), stdout);
	} else {
		ap_buf_adds(&err, "out of memory");
		r = ap_fail(-ENOMEM, "docs entry", &err);
	}
	for (size_t i = 0; i < read; i++)
		ap_bundle_facts_free(&f[i]);
	free(f);
	free(products);
	ap_submission_free(&s);
	ap_buf_free(&err);
	ap_buf_free(&out);
	ap_buf_free(&limits);
	ap_buf_free(&url);
	return r ? r : AP_EXIT_OK;
}

int ap_cmd_docs(int argc, char **argv)
{
	if (argc >= 2 && ap_cli_wants_help(argv[1]))
		return ap_cli_print_verbs(ap_docs_optsets);
	if (argc >= 2 && !strcmp(argv[1], "generate"))
		return docs_generate(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "audit"))
		return docs_audit(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "entry"))
		return docs_entry(argc, argv);
	return ap_usage("docs: want docs entry DIR, docs generate DIR or docs audit DOCSDIR DIR");
}
