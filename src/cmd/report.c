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
#include "review/svg.h"
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
	if (strcmp(o->lang, "zh") && strcmp(o->lang, "en"))
		return ap_usage("report: --lang is zh or en, not '%s'", o->lang);
	if (argc - optind != 1)
		return ap_usage("report: name the directory that check --out wrote");
	return 0;
}

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

static int report_write(const char *dir, const char *name, const struct ap_buf *text)
{
	struct ap_buf path = { 0 }, d = { 0 };
	ap_buf_addf(&path, "%s/%s", dir, name);
	int r = ap_write_atomic(ap_buf_str(&path), text->data ? text->data : "", text->len);
	if (r) {
		ap_buf_addf(&d, "%s: %s", ap_buf_str(&path), strerror(-r));
		r = ap_fail(r, "report", &d);
	} else
		printf("%s\n", ap_buf_str(&path));
	ap_buf_free(&path);
	ap_buf_free(&d);
	return r;
}

/* One PNG from an SVG picture, written as dir/name. */
static int report_png(const char *dir, const char *name, const struct ap_buf *svg,
		      const char *text)
{
	struct ap_buf png = { 0 }, err = { 0 };
	int r = ap_png_from_svg(ap_buf_str(svg), svg->len, text, &png, &err);
	if (r) {
		struct ap_buf d = { 0 };
		ap_buf_addf(&d, "%s/%s: %s", dir, name, ap_buf_str(&err));
		r = ap_fail(r, "report --format png", &d);
		ap_buf_free(&d);
	} else
		r = report_write(dir, name, &png);
	ap_buf_free(&png);
	ap_buf_free(&err);
	return r;
}

/* The PNGs: an evidence card per environment (its text, the card's lines,
 * in the PNG too), then the matrix. */
static int report_pngs(const char *dir, const struct ap_report *model, enum ap_lang l)
{
	int rc = 0;
	for (size_t i = 0; i < model->nenvs; i++) {
		const struct ap_report_env *e = &model->envs[i];
		struct ap_buf svg = { 0 }, name = { 0 }, text = { 0 };
		struct ap_buf lines[AP_CARD_LINES] = { { 0 } };
		ap_card_lines(model, e, lines);
		for (size_t k = 0; k < AP_CARD_LINES; k++) {
			ap_buf_addf(&text, "%s%s", k ? "\n" : "", ap_buf_str(&lines[k]));
			ap_buf_free(&lines[k]);
		}
		ap_svg_card(model, e, &svg);
		ap_output_card_name(e->name, &name);
		rc = rc ? rc : report_png(dir, ap_buf_str(&name), &svg, ap_buf_str(&text));
		ap_buf_free(&svg);
		ap_buf_free(&name);
		ap_buf_free(&text);
	}
	struct ap_buf svg = { 0 };
	ap_svg_matrix(model, l, &svg);
	rc = rc ? rc : report_png(dir, "matrix.png", &svg, NULL);
	ap_buf_free(&svg);
	return rc;
}

static int report_render(const char *dir, const struct ap_report *model,
			 const struct ap_report_opts *o)
{
	enum ap_lang l = strcmp(o->lang, "en") ? AP_LANG_ZH : AP_LANG_EN;
	int rc = 0;
	for (size_t i = 0; i < sizeof(ap_formats) / sizeof(ap_formats[0]) && !rc; i++) {
		struct ap_buf out = { 0 };
		const char *f = ap_formats[i], *name = NULL;
		if (!has_word(o->formats, f))
			continue;
		if (!strcmp(f, "png")) {
			rc = report_pngs(dir, model, l);
			continue;
		}
		if (!strcmp(f, "md")) {
			ap_report_markdown(model, l, &out);
			name = "report.md";
		} else if (!strcmp(f, "html")) {
			ap_report_html(model, l, &out);
			name = "report.html";
		} else if (!strcmp(f, "json")) {
			json_t *j = ap_report_json(model);
			char *s = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
			json_decref(j);
			ap_buf_adds(&out, s ? s : "");
			ap_buf_adds(&out, "\n");
			free(s);
			name = "report.json";
		} else {
			ap_report_junit(model, &out);
			name = "junit.xml";
		}
		rc = report_write(dir, name, &out);
		ap_buf_free(&out);
	}
	return rc;
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

int ap_cmd_report(int argc, char **argv)
{
	struct ap_report_opts o = { "zh", NULL, "md,html,json,junit,png" };
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
			rc = report_render(dir, model, &o);
		rc = rc ? rc : report_manifest(dir, &s);
		ap_report_free(model);
	}
	ap_docs_entries_free(&docs);
	ap_submission_free(&s);
	ap_buf_free(&err);
	return rc;
}
