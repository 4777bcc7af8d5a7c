#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/pool.h"
#include "base/sha256.h"
#include "check/verdict.h"
#include "evidence/manifest.h"
#include "review/docs.h"
#include "review/html.h"
#include "review/outputs.h"
#include "review/png.h"
#include "review/svg.h"

/* A top-level manifest is a line per report output: a few hundred bytes. */
#define AP_OUTPUT_MANIFEST_MAX (1 << 20)

static const char *const ap_reports[] = { "report.md", "report.en.md", "report.html",
					  "report.json", "junit.xml", "matrix.png", NULL };

void ap_output_card_name(const char *env, struct ap_buf *out)
{
	ap_buf_addf(out, "card-%s.png", env);
}

static int is_card_of(const char *name, const char *env)
{
	struct ap_buf b = { 0 };
	ap_output_card_name(env, &b);
	int r = !strcmp(name, ap_buf_str(&b));
	ap_buf_free(&b);
	return r;
}

int ap_output_known(const char *name, const struct ap_submission *s)
{
	const char *k;
	json_t *v;
	for (int i = 0; ap_reports[i]; i++)
		if (!strcmp(name, ap_reports[i]))
			return 1;
	for (size_t i = 0; i < s->n; i++)
		if (is_card_of(name, s->v[i].name))
			return 1;
	json_object_foreach(s->broken, k, v)
		if (is_card_of(name, k))
			return 1;
	return 0;
}

/* The report outputs present in dir as regular files, sorted: a new array
 * of n names (ap_dir_free()), or NULL with *n 0. */
static char **outputs_present(const char *dir, const struct ap_submission *s, size_t *n)
{
	char **v;
	size_t all, k = 0;
	*n = 0;
	if (ap_dir_list(dir, AP_DIR_REGULAR, &v, &all))
		return NULL;
	for (size_t i = 0; i < all; i++)
		if (ap_output_known(v[i], s))
			v[k++] = v[i];
		else
			free(v[i]);
	if (!k) {
		free(v);
		return NULL;
	}
	*n = k;
	return v;
}

int ap_output_manifest(const char *dir, const struct ap_submission *s, struct ap_buf *err)
{
	size_t n;
	char **v = outputs_present(dir, s, &n);
	struct ap_buf text = { 0 }, path = { 0 };
	int r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		char hex[AP_SHA256_HEX_LEN + 1];
		ap_buf_reset(&path);
		ap_buf_addf(&path, "%s/%s", dir, v[i]);
		if ((r = ap_sha256_file(ap_buf_str(&path), hex)))
			ap_buf_addf(err, "%s: %s", ap_buf_str(&path), strerror(-r));
		else
			ap_buf_addf(&text, "%s  %s\n", hex, v[i]);
	}
	ap_buf_reset(&path);
	ap_buf_addf(&path, "%s/%s", dir, AP_MANIFEST_NAME);
	if (!r && (r = ap_write_atomic(ap_buf_str(&path), text.data ? text.data : "", text.len)))
		ap_buf_addf(err, "%s: %s", ap_buf_str(&path), strerror(-r));
	ap_dir_free(v, n);
	ap_buf_free(&text);
	ap_buf_free(&path);
	return r;
}

/* The SVG of a picture output and the text it holds (none for the matrix):
 * 1 when name is a picture of model, 0 when it is not a picture, -ENOENT
 * when it is the card of no environment of model. */
static int picture(const struct ap_report *model, enum ap_lang l, const char *name,
		   struct ap_buf *svg, struct ap_buf *text, int *has_text)
{
	*has_text = 0;
	if (!strcmp(name, "matrix.png")) {
		ap_svg_matrix(model, l, svg);
		return 1;
	}
	if (strncmp(name, "card-", 5))
		return 0;
	for (size_t i = 0; i < model->nenvs; i++) {
		const struct ap_report_env *e = &model->envs[i];
		struct ap_buf lines[AP_CARD_LINES] = { { 0 } };
		if (!is_card_of(name, e->name))
			continue;
		ap_card_lines(model, e, lines);
		for (size_t k = 0; k < AP_CARD_LINES; k++) {
			ap_buf_addf(text, "%s%s", k ? "\n" : "", ap_buf_str(&lines[k]));
			ap_buf_free(&lines[k]);
		}
		ap_svg_card(model, e, svg);
		*has_text = 1;
		return 1;
	}
	return -ENOENT;
}

int ap_output_render(const struct ap_report *model, enum ap_lang l, const char *name,
		     struct ap_buf *out, struct ap_buf *err)
{
	struct ap_buf svg = { 0 }, text = { 0 };
	int has_text, r = picture(model, l, name, &svg, &text, &has_text);
	if (r > 0)
		r = ap_png_from_svg(ap_buf_str(&svg), svg.len, has_text ? ap_buf_str(&text) : NULL,
				    out, err);
	ap_buf_free(&svg);
	ap_buf_free(&text);
	if (r)
		return r;
	if (!strcmp(name, "report.md") || !strcmp(name, "report.en.md"))
		ap_report_markdown(model, strcmp(name, "report.md") ? AP_LANG_EN : l, out);
	else if (!strcmp(name, "report.html"))
		ap_report_html(model, l, out);
	else if (!strcmp(name, "junit.xml"))
		ap_report_junit(model, out);
	else if (!strcmp(name, "report.json")) {
		json_t *j = ap_report_json(model);
		char *t = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
		json_decref(j);
		r = t ? ap_buf_addf(out, "%s\n", t) : -ENOMEM;
		free(t);
		return r ? -ENOMEM : 0;
	} else if (!out->len)
		return -ENOENT;
	return 0;
}

/* Whether have is output name of model in language l: rendered again and
 * compared byte for byte (a PNG too: drawing and encoding it is
 * deterministic, and it is the bytes a reader sees). */
static int output_is(const struct ap_report *model, enum ap_lang l, const char *name,
		     const struct ap_buf *have, struct ap_buf *err)
{
	struct ap_buf again = { 0 };
	ap_buf_reset(err); /* the last try's reason is the one said */
	int same = !ap_output_render(model, l, name, &again, err) && again.len == have->len &&
		   !memcmp(again.data, have->data, have->len);
	ap_buf_free(&again);
	return same;
}

/* The names a manifest listed so far. */
struct listed {
	char **v;
	size_t n;
};

static int listed_has(const struct listed *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return 1;
	return 0;
}

/* Adds name to l; out of memory, l stays as it was (the name reads as not
 * listed, so verify says so: never a silent pass). */
static void listed_add(struct listed *l, const char *name)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return;
	l->v = v;
	if ((v[l->n] = strdup(name)))
		l->n++;
}

/* One line of the top-level manifest; listed remembers the names seen. */
static void verify_line(const char *dir, const struct ap_submission *s, const char *line,
			size_t len, int no, struct listed *listed, json_t *reasons)
{
	char hex[AP_SHA256_HEX_LEN + 1], name[256];
	struct ap_buf path = { 0 };
	size_t nlen = len > AP_SHA256_HEX_LEN + 2 ? len - AP_SHA256_HEX_LEN - 2 : 0;
	if (!nlen || nlen >= sizeof(name) || strncmp(line + AP_SHA256_HEX_LEN, "  ", 2)) {
		ap_reason_add(reasons, "%s:%d: malformed line", AP_MANIFEST_NAME, no);
		return;
	}
	memcpy(name, line + AP_SHA256_HEX_LEN + 2, nlen);
	name[nlen] = '\0';
	if (!ap_output_known(name, s) || listed_has(listed, name)) {
		ap_reason_add(reasons, "%s:%d: '%s' is %s", AP_MANIFEST_NAME, no, name,
			      ap_output_known(name, s) ? "listed twice" : "not a report output");
		return;
	}
	listed_add(listed, name);
	ap_buf_addf(&path, "%s/%s", dir, name);
	int r = ap_sha256_file(ap_buf_str(&path), hex);
	if (r)
		ap_reason_add(reasons, "%s: listed in %s but cannot be read: %s", name, AP_MANIFEST_NAME,
			      strerror(-r));
	else if (strncmp(hex, line, AP_SHA256_HEX_LEN))
		ap_reason_add(reasons, "%s: sha256 does not match %s (changed after the report)", name,
			      AP_MANIFEST_NAME);
	ap_buf_free(&path);
}

/* A report's outputs are at most this large to be compared (report.html
 * of a numeric check of many samples stays far below). */
#define AP_OUTPUT_MAX (64u << 20)

/* The docs entry DIR/report.json records (docs.entry) into docs, *given 1,
 * when the report was made with --docs; *given 0 when it was not, or there
 * is no report.json (then a report made with --docs does not render
 * again, and verify says so). */
static void recorded_docs(const char *dir, struct ap_docs_entries *docs, int *given)
{
	struct ap_buf path = { 0 }, text = { 0 };
	*given = 0;
	ap_buf_addf(&path, "%s/report.json", dir);
	json_t *j = ap_read_file_limited(ap_buf_str(&path), AP_OUTPUT_MAX, &text) ? NULL :
		    json_loadb(ap_buf_str(&text), text.len, 0, NULL);
	const json_t *d = json_object_get(j, "docs"), *e = json_object_get(d, "entry");
	if (json_is_true(json_object_get(d, "checked"))) {
		*given = 1;
		struct ap_docs_entry one;
		if (json_is_object(e) && !ap_docs_entry_from_json(e, &one) &&
		    (docs->v = calloc(1, sizeof(*docs->v)))) {
			docs->v[0] = one;
			docs->n = docs->cap = 1;
		} else if (json_is_object(e))
			*given = 0; /* unreadable: render without, and the page will differ */
	}
	json_decref(j);
	ap_buf_free(&path);
	ap_buf_free(&text);
}

/* Whether output name depends on the report's language. */
static int has_lang(const char *name)
{
	return !strcmp(name, "report.md") || !strcmp(name, "report.html") ||
	       !strcmp(name, "matrix.png");
}

/* One output compared: read, rendered again in each language it may be
 * in, byte for byte. A job of its own (pictures take a while to draw). */
struct compare {
	const struct ap_report *const *models; /* with the recorded docs, without; NULL-ended */
	const char *dir, *name;
	int read;      /* 0, or the -errno reading it */
	int same;
	struct ap_buf unrendered; /* why it could not be rendered again, if so */
};

/* Whether the picture have (of output name) was drawn by another drawing
 * than this machine's (png.h: ap_png_drawing), which would give other
 * pixels from the same SVG: then why in err, and it is not compared (a
 * faithful picture drawn elsewhere is not "another report"). A picture
 * without the chunk is compared: it differs, as any edited picture. */
static int is_png(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && !strcmp(name + n - 4, ".png");
}

static int drawn_elsewhere(const char *name, const struct ap_buf *have, struct ap_buf *err)
{
	if (!is_png(name))
		return 0;
	struct ap_buf theirs = { 0 }, why = { 0 };
	const char *ours = ap_png_drawing(&why);
	int other = ours && ap_png_software(have->data, have->len, &theirs) == 1 &&
		    strcmp(ap_buf_str(&theirs), ours);
	if (other)
		ap_buf_addf(err, "it was drawn by %s; this machine draws with %s, which gives other "
			    "pixels (review it where it was drawn, or write the report again here)",
			    ap_buf_str(&theirs), ours);
	ap_buf_free(&theirs);
	ap_buf_free(&why);
	return other;
}

static void compare_one(void *item)
{
	struct compare *c = item;
	struct ap_buf path = { 0 }, have = { 0 };
	ap_buf_addf(&path, "%s/%s", c->dir, c->name);
	c->read = ap_read_file_limited(ap_buf_str(&path), AP_OUTPUT_MAX, &have);
	if (!c->read && drawn_elsewhere(c->name, &have, &c->unrendered)) {
		ap_buf_free(&path);
		ap_buf_free(&have);
		return;
	}
	for (size_t m = 0; !c->read && !c->same && c->models[m]; m++)
		for (int l = AP_LANG_ZH; !c->same &&
		     l <= (has_lang(c->name) ? AP_LANG_EN : AP_LANG_ZH); l++)
			c->same = output_is(c->models[m], (enum ap_lang)l, c->name, &have,
					    &c->unrendered);
	ap_buf_free(&path);
	ap_buf_free(&have);
}

/* The outputs of v (n of them) of one group, compared one after the other:
 * each thread that draws sets its fonts up anew (~20 ms), so the pictures
 * go in two threads, the matrix in one and the cards in the other, beside
 * one for the texts. */
struct compare_group {
	struct compare *v;
	size_t n;
	int group;
};

enum { GROUP_MATRIX, GROUP_PICTURES, GROUP_TEXTS, NGROUPS };

static int group_of(const char *name)
{
	if (!strcmp(name, "matrix.png"))
		return GROUP_MATRIX;
	return is_png(name) ? GROUP_PICTURES : GROUP_TEXTS;
}

static void compare_group(void *item)
{
	struct compare_group *g = item;
	for (size_t i = 0; i < g->n; i++)
		if (group_of(g->v[i].name) == g->group)
			compare_one(&g->v[i]);
}

/* Each output present (names, n) is what the bundles of s give, rendered
 * again as `report` renders it (the pictures beside the texts), with the docs entry report.json records or without docs (a page
 * may come from a run of `report` without --docs); one that is neither is
 * a reason. */
static void verify_rendered(const char *dir, const struct ap_submission *s, char **names,
			    size_t n, json_t *reasons)
{
	struct ap_docs_entries docs = { 0 };
	int given;
	recorded_docs(dir, &docs, &given);
	struct ap_report *plain = ap_report_model(s, NULL);
	struct ap_report *with = given ? ap_report_model(s, &docs) : NULL;
	const struct ap_report *models[] = { with ? with : plain, with ? plain : NULL, NULL };
	struct compare *v = plain && (with || !given) ? calloc(n, sizeof(*v)) : NULL;
	if (!v)
		ap_reason_add(reasons, "out of memory rendering the report again");
	for (size_t i = 0; v && i < n; i++)
		v[i] = (struct compare){ models, dir, names[i], 0, 0, { 0 } };
	struct compare_group groups[NGROUPS] = {
		{ v, n, GROUP_MATRIX }, { v, n, GROUP_PICTURES }, { v, n, GROUP_TEXTS } };
	if (v)
		ap_pool_run(groups, NGROUPS, sizeof(*groups), compare_group);
	for (size_t i = 0; v && i < n; i++)
		if (v[i].read)
			ap_reason_add(reasons, "%s: cannot be read to compare: %s", names[i],
				      strerror(-v[i].read));
		else if (!v[i].same && v[i].unrendered.len)
			ap_reason_add(reasons, "%s: cannot be rendered again to compare (so it is not "
				      "shown to be what its bundles give): %s", names[i],
				      ap_buf_str(&v[i].unrendered));
		else if (!v[i].same)
			ap_reason_add(reasons, "%s: is not the report its bundles give%s (edited after "
				      "it was written, or written from other evidence): write it again "
				      "with `apiparity report`", names[i],
				      given ? ", with the docs entry report.json records" : "");
	for (size_t i = 0; v && i < n; i++)
		ap_buf_free(&v[i].unrendered);
	free(v);
	ap_report_free(plain);
	ap_report_free(with);
	ap_docs_entries_free(&docs);
}

void ap_output_verify(const char *dir, const struct ap_submission *s, json_t *reasons)
{
	struct ap_buf path = { 0 }, text = { 0 };
	struct listed listed = { NULL, 0 };
	size_t n;
	ap_buf_addf(&path, "%s/%s", dir, AP_MANIFEST_NAME);
	int r = ap_read_file_limited(ap_buf_str(&path), AP_OUTPUT_MANIFEST_MAX, &text);
	if (r && r != -ENOENT)
		ap_reason_add(reasons, "%s: cannot be read: %s", AP_MANIFEST_NAME, strerror(-r));
	int no = 0;
	for (const char *p = text.data; !r && p && *p; no++) {
		size_t len = strcspn(p, "\n");
		verify_line(dir, s, p, len, no + 1, &listed, reasons);
		p += len + (p[len] == '\n');
	}
	char **v = r && r != -ENOENT ? NULL : outputs_present(dir, s, &n);
	for (size_t i = 0; v && i < n; i++)
		if (r == -ENOENT)
			ap_reason_add(reasons, "%s: a report output with no %s at the top (written "
				      "after the run, or cut short)", v[i], AP_MANIFEST_NAME);
		else if (!listed_has(&listed, v[i]))
			ap_reason_add(reasons, "%s: report output not listed in %s", v[i], AP_MANIFEST_NAME);
	if (v)
		verify_rendered(dir, s, v, n, reasons);
	if (v)
		ap_dir_free(v, n);
	ap_dir_free(listed.v, listed.n);
	ap_buf_free(&path);
	ap_buf_free(&text);
}
