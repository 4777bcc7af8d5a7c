/* apiparity report - the acceptance report from a submission's bundles. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "review/docs.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "review/html.h"
#include "review/outputs.h"
#include "review/png.h"
#include "review/report.h"
#include "evidence/manifest.h"
#include "evidence/submission.h"

static const char *const ap_formats[] = { "md", "html", "json", "junit", "png" };

struct ap_report_opts {
	const char *lang, *docs, *formats;
};

#define AT(field) offsetof(struct ap_report_opts, field)
static const struct ap_opt report_opts[] = {
	{ "lang", "zh|en", "the language of report.md and report.html (default zh)", AT(lang),
	  NULL, 0 },
	{ "docs", "DOCSDIR", "the backend's support pages, to compare with the evidence",
	  AT(docs), NULL, 0 },
	{ "format", "md,html,json,junit,png", "the outputs to write (default all)", AT(formats),
	  NULL, 0 },
};
#undef AT

static const struct ap_optset report_set = { "report", "DIR",
	"the acceptance report of a submission", AP_OPTS(report_opts) };
const struct ap_optset *const ap_report_optsets[] = { &report_set, NULL };

/* Whether the comma-separated list has word. */
static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strcspn(p, ",") == n && !strncmp(p, word, n))
			return 1;
	}
	return 0;
}

static int report_parse(int argc, char **argv, struct ap_report_opts *o)
{
	int r = ap_cli_parse(&report_set, argc, argv, o);
	if (r)
		return r;
	for (const char *p = o->formats; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		size_t n = strcspn(p, ",");
		int known = 0;
		for (size_t i = 0; !known && i < sizeof(ap_formats) / sizeof(ap_formats[0]); i++)
			known = n == strlen(ap_formats[i]) && !strncmp(p, ap_formats[i], n);
		if (!known)
			return ap_usage("report: --format takes md, html, json, junit, png (comma-separated), not '%.*s'",
					(int)n, p);
	}
	if (!ap_png_built_in && has_word(o->formats, "png"))
		return ap_usage("report: --format png: PNG pictures are not built into this "
				"apiparity (built with make PNG=0)");
	if (strcmp(o->lang, "zh") && strcmp(o->lang, "en"))
		return ap_usage("report: --lang is zh or en, not '%s'", o->lang);
	if (argc - optind != 1)
		return ap_usage("report: name the directory that check --out wrote");
	return 0;
}

static int report_write(const char *dir, const char *name, const struct ap_buf *text)
{
	struct ap_buf path = { 0 }, d = { 0 };
	ap_buf_addf(&path, "%s/%s", dir, name);
	int r = ap_write_atomic(ap_buf_str(&path), text->data ? text->data : "", text->len);
	if (r) {
		ap_buf_addf(&d, "%s (what this run wrote is removed: no page is left without its "
			    "manifest)", ap_buf_str(&path));
		r = ap_fail(r, "report", &d);
	} else
		printf("%s\n", ap_buf_str(&path));
	ap_buf_free(&path);
	ap_buf_free(&d);
	return r;
}

/* The outputs a format makes: its file names, into names (room for 2 +
 * the environments). */
static size_t format_names(const char *f, const struct ap_report *model, struct ap_buf *names)
{
	static const char *const fixed[][2] = { { "md", "report.md" }, { "html", "report.html" },
						{ "json", "report.json" }, { "junit", "junit.xml" } };
	size_t n = 0;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(f, fixed[i][0]))
			ap_buf_adds(&names[n++], fixed[i][1]);
	if (strcmp(f, "png"))
		return n;
	for (size_t i = 0; i < model->nenvs; i++)
		ap_output_card_name(model->envs[i].name, &names[n++]);
	ap_buf_adds(&names[n++], "matrix.png");
	return n;
}

/* Removes what this run wrote (names, n of them) and the report's
 * manifest: no page is left that its manifest does not vouch for. */
static void report_undo(const char *dir, struct ap_buf *names, size_t n)
{
	struct ap_buf path = { 0 };
	for (size_t i = 0; i <= n; i++) {
		ap_buf_reset(&path);
		ap_buf_addf(&path, "%s/%s", dir, i < n ? ap_buf_str(&names[i]) : AP_MANIFEST_NAME);
		unlink(ap_buf_str(&path));
	}
	ap_buf_free(&path);
}

/* The report's manifest, over what is there now (outputs.h). */
static int report_manifest(const char *dir, const struct ap_submission *s)
{
	struct ap_buf err = { 0 };
	int r = ap_output_manifest(dir, s, &err);
	if (r)
		r = ap_fail(r, "report", &err);
	else
		printf("%s/MANIFEST.sha256\n", dir);
	ap_buf_free(&err);
	return r;
}

/* Renders and writes each output of the formats asked for, then the
 * report's manifest; on a failure (a full disk), what this run wrote is
 * removed again. */
static int report_render(const char *dir, const struct ap_submission *s,
			 const struct ap_report *model, const struct ap_report_opts *o)
{
	enum ap_lang l = strcmp(o->lang, "en") ? AP_LANG_ZH : AP_LANG_EN;
	size_t room = 4 + 2 + model->nenvs, n = 0;
	struct ap_buf *names = calloc(room * (sizeof(ap_formats) / sizeof(ap_formats[0])),
				      sizeof(*names));
	int rc = names ? 0 : ap_fail(-ENOMEM, "report", NULL);
	for (size_t i = 0; i < sizeof(ap_formats) / sizeof(ap_formats[0]) && !rc; i++) {
		if (!has_word(o->formats, ap_formats[i]))
			continue;
		size_t from = n;
		n += format_names(ap_formats[i], model, &names[n]);
		for (size_t k = from; k < n && !rc; k++) {
			struct ap_buf out = { 0 }, err = { 0 };
			int r = ap_output_render(model, l, ap_buf_str(&names[k]), &out, &err);
			if (r) {
				struct ap_buf d = { 0 };
				ap_buf_addf(&d, "%s/%s: %s", dir, ap_buf_str(&names[k]),
					    err.len ? ap_buf_str(&err) : strerror(-r));
				rc = ap_fail(r, "report", &d);
				ap_buf_free(&d);
			} else
				rc = report_write(dir, ap_buf_str(&names[k]), &out);
			ap_buf_free(&out);
			ap_buf_free(&err);
		}
	}
	rc = rc ? rc : report_manifest(dir, s);
	if (rc && names)
		report_undo(dir, names, n);
	for (size_t i = 0; names && i < n; i++)
		ap_buf_free(&names[i]);
	free(names);
	return rc;
}

int ap_cmd_report(int argc, char **argv)
{
	/* All the outputs this apiparity can write, by default. */
	struct ap_report_opts o = { "zh", NULL,
				    ap_png_built_in ? "md,html,json,junit,png" : "md,html,json,junit" };
	struct ap_submission s;
	struct ap_buf err = { 0 };
	struct ap_docs_entries docs = { 0 };
	int rc = report_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? AP_EXIT_OK : rc;
	const char *dir = argv[optind];
	int r = ap_submission_load(&s, dir, &err);
	if (r) {
		rc = ap_fail(r == -ENOENT ? -AP_ECONFIG : r, "report", &err);
		ap_buf_free(&err);
		return rc;
	}
	if (o.docs && ap_docs_load(o.docs, &docs, &err))
		rc = ap_fail(-AP_ECONFIG, "report --docs", &err);
	if (!rc) {
		struct ap_report *model = ap_report_model(&s, o.docs ? &docs : NULL);
		if (!model)
			rc = ap_fail(-ENOMEM, "report", NULL);
		else
			rc = report_render(dir, &s, model, &o);
		ap_report_free(model);
	}
	ap_docs_entries_free(&docs);
	ap_submission_free(&s);
	ap_buf_free(&err);
	return rc;
}
