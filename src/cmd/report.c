/* apiparity report - the acceptance report from a submission's bundles. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "review/docs.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "review/report.h"
#include "evidence/submission.h"

struct ap_report_opts {
	const char *lang, *docs, *formats;
};

static int report_parse(int argc, char **argv, struct ap_report_opts *o)
{
	static const struct option longopts[] = {
		{ "lang", required_argument, NULL, 'l' }, { "docs", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' }, { NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': o->lang = optarg; break;
		case 'd': o->docs = optarg; break;
		case 'f': o->formats = optarg; break;
		default: return ap_opt_bad("report", c, argv);
		}
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

static int report_render(const char *dir, const json_t *model, const struct ap_report_opts *o)
{
	static const char *const all[] = { "md", "html", "json", "junit" };
	int rc = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct ap_buf out = { 0 };
		const char *f = all[i], *name = NULL;
		if (!has_word(o->formats, f))
			continue;
		if (!strcmp(f, "md")) {
			ap_report_markdown(model, strcmp(o->lang, "en") ? AP_LANG_ZH : AP_LANG_EN, &out);
			name = "report.md";
		} else if (!strcmp(f, "html")) {
			ap_report_html(model, &out);
			name = "report.html";
		} else if (!strcmp(f, "json")) {
			char *s = json_dumps(model, JSON_INDENT(2));
			ap_buf_adds(&out, s ? s : "");
			ap_buf_adds(&out, "\n");
			free(s);
			name = "report.json";
		} else {
			ap_report_junit(model, &out);
			name = "junit.xml";
		}
		rc = rc ? rc : report_write(dir, name, &out);
		ap_buf_free(&out);
	}
	return rc;
}

int ap_cmd_report(int argc, char **argv)
{
	struct ap_report_opts o = { "zh", NULL, "md,html,json,junit" };
	struct ap_submission s;
	struct ap_buf err = { 0 };
	json_t *docs = NULL;
	int rc = report_parse(argc, argv, &o);
	if (rc)
		return rc;
	const char *dir = argv[optind];
	int r = ap_submission_load(&s, dir, &err);
	if (r) {
		rc = ap_fail(r == -ENOENT ? -AP_ECONFIG : r, "report", &err);
		ap_buf_free(&err);
		return rc;
	}
	if (o.docs && !(docs = ap_docs_load(o.docs, &err)))
		rc = ap_fail(-AP_ECONFIG, "report --docs", &err);
	if (!rc) {
		json_t *model = ap_report_model(&s, docs);
		rc = report_render(dir, model, &o);
		json_decref(model);
	}
	json_decref(docs);
	ap_submission_free(&s);
	ap_buf_free(&err);
	return rc;
}
