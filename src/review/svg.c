#include <math.h>
#include <string.h>

#include "base/outcome.h"
#include "base/text.h"
#include "review/escape.h"
#include "review/svg.h"

/* ------------------------------------------------------------ the palette */

/* Statuses in enum order, then the two fallbacks; then the verdicts and
 * theirs. The order is the legend's and the stylesheet's. */
#define ST_NONE AP_STATUS_COUNT         /* the environment has no such check */
#define ST_OTHER (AP_STATUS_COUNT + 1)  /* a status this version does not know */
#define V_FIRST (AP_STATUS_COUNT + 2)
#define V_OTHER (V_FIRST + AP_VERDICT_COUNT)
#define N_STYLES (V_OTHER + 1)

static const struct ap_style palette[N_STYLES] = {
	[AP_PASS] = { "st-pass", "#1a7f37", "#ffffff" },
	[AP_FAIL] = { "st-fail", "#cf222e", "#ffffff" },
	[AP_ERROR] = { "st-error", "#bc4c00", "#ffffff" },
	[AP_CRASH] = { "st-crash", "#8250df", "#ffffff" },
	[AP_TIMEOUT] = { "st-timeout", "#953800", "#ffffff" },
	[AP_WARN] = { "st-warn", "#d4a72c", "#1f2328" },
	[AP_NOTRUN] = { "st-notrun", "#d0d7de", "#1f2328" },
	[AP_SKIP] = { "st-skip", "#eaeef2", "#1f2328" },
	[ST_NONE] = { "st-none", "#ffffff", "#6e7781" },
	[ST_OTHER] = { "st-other", "#afb8c1", "#1f2328" },
	/* Unverified is amber, a question; only consistent is green. */
	[V_FIRST + AP_CONSISTENT] = { "v-consistent", "#1a7f37", "#ffffff" },
	[V_FIRST + AP_CONSISTENT_WITH_LIMITS] = { "v-limits", "#0e6f86", "#ffffff" },
	[V_FIRST + AP_INCONSISTENT] = { "v-inconsistent", "#cf222e", "#ffffff" },
	[V_FIRST + AP_UNVERIFIED] = { "v-unverified", "#9a6700", "#ffffff" },
	[V_OTHER] = { "v-other", "#6e7781", "#ffffff" },
};

const struct ap_style *ap_status_style(enum ap_status s)
{
	return &palette[s < 0 || s >= AP_STATUS_COUNT ? ST_OTHER : (int)s];
}

const struct ap_style *ap_cell_style(const struct ap_report_cell *c)
{
	return c->present ? ap_status_style(c->status) : &palette[ST_NONE];
}

const struct ap_style *ap_verdict_style(enum ap_verdict v)
{
	return &palette[v < 0 || v >= AP_VERDICT_COUNT ? V_OTHER : V_FIRST + (int)v];
}

const struct ap_style *ap_palette(size_t *n)
{
	*n = N_STYLES;
	return palette;
}

/* ------------------------------------------------------------ the card */

#define CARD_W 760
#define CARD_TOP 24
#define CARD_LINE 20
#define CARD_STRIPE 8
/* DejaVu Sans Mono (fontconfig's monospace) advances 0.602 em: at 13 px,
 * under 8 px a character, so a badge of 8 px a character holds its text. */
#define CARD_CHAR_W 8

/* Whether s is well-formed UTF-8. */
static int is_utf8(const char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = ap_utf8_seq((const unsigned char *)s + i, n - i)))
			return 0;
	return 1;
}

/* Line b as card line i: the data's strings are UTF-8 (read by jansson),
 * so a line always is; "-" stands in should one not be. */
static void add_line(struct ap_buf lines[AP_CARD_LINES], size_t *i, const struct ap_buf *b)
{
	ap_buf_adds(&lines[*i], is_utf8(ap_buf_str(b), b->len) ? ap_buf_str(b) : "-");
	(*i)++;
}

void ap_card_lines(const struct ap_report *r, const struct ap_report_env *e,
		   struct ap_buf lines[AP_CARD_LINES])
{
	const struct ap_bundle_facts *f = e->b;
	const char *logsum = "-";
	struct ap_buf b = { 0 };
	size_t n = 0;
	for (size_t i = 0; i < e->nevidence; i++)
		if (!strcmp(e->evidence[i].file, "run.log"))
			logsum = e->evidence[i].sha256;
#define LINE(...) do { ap_buf_reset(&b); ap_buf_addf(&b, __VA_ARGS__); add_line(lines, &n, &b); } while (0)
	LINE("$ apiparity check %s --env %s", r->target, e->name);
	LINE("python %s   torch %s", ap_report_text(f->python), ap_report_text(f->torch));
	LINE("os %s", ap_report_text(f->os));
	ap_buf_reset(&b);
	ap_buf_adds(&b, "devices:");
	for (size_t i = 0; i < f->ndevices; i++)
		if (f->devices[i].available)
			ap_buf_addf(&b, " %s x%lld", f->devices[i].type, f->devices[i].count);
	ap_buf_adds(&b, b.len > strlen("devices:") ? "" : " cpu only");
	add_line(lines, &n, &b);
	LINE("probes %d/%d PASS   exit %lld", f->probes_passed, f->probes_total, f->exit_code);
	LINE("verdict: %s", ap_report_text(f->verdict_word));
	LINE("run.log sha256 %s", logsum);
#undef LINE
	ap_buf_free(&b);
}

/* The number of characters (code points) of UTF-8 text s. */
static size_t chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

void ap_svg_card(const struct ap_report *r, const struct ap_report_env *e, struct ap_buf *out)
{
	struct ap_buf lines[AP_CARD_LINES] = { { 0 } };
	const struct ap_style *v = ap_verdict_style(e->b->verdict);
	size_t n = AP_CARD_LINES, h = CARD_TOP + n * CARD_LINE;
	ap_card_lines(r, e, lines);
	ap_buf_addf(out, "<svg class=\"card\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		    "height=\"%zu\" viewBox=\"0 0 %d %zu\" role=\"img\" aria-label=\"evidence card ",
		    CARD_W, h, CARD_W, h);
	ap_escape_xml(e->name, out);
	ap_buf_addf(out, "\"><rect width=\"%d\" height=\"%zu\" fill=\"#1e1e1e\"/>", CARD_W, h);
	ap_buf_addf(out, "<rect class=\"verdict\" x=\"0\" y=\"0\" width=\"%d\" height=\"%zu\" "
		    "fill=\"%s\"/>", CARD_STRIPE, h, v->fill);
	for (size_t i = 0; i < n; i++) {
		const char *text = ap_buf_str(&lines[i]);
		size_t y = CARD_TOP + i * CARD_LINE;
		int verdict = !strncmp(text, "verdict: ", strlen("verdict: "));
		if (verdict)
			ap_buf_addf(out, "<rect class=\"verdict\" x=\"16\" y=\"%zu\" width=\"%zu\" "
				    "height=\"%d\" rx=\"3\" fill=\"%s\"/>", y - 15,
				    8 + chars(text) * CARD_CHAR_W, CARD_LINE, v->fill);
		ap_buf_addf(out, "<text x=\"20\" y=\"%zu\" fill=\"%s\" font-family=\"monospace\" "
			    "font-size=\"13\" xml:space=\"preserve\">", y, verdict ? v->ink : "#e6e6e6");
		ap_escape_xml(text, out);
		ap_buf_adds(out, "</text>");
	}
	ap_buf_adds(out, "</svg>\n");
	for (size_t i = 0; i < n; i++)
		ap_buf_free(&lines[i]);
}

/* ------------------------------------------------------------ the matrix */

#define MX_PAD 12
#define MX_NAME_W 480
#define MX_KIND_W 90
#define MX_COL_W 130
#define MX_TITLE_H 40
#define MX_HEAD_H 58
#define MX_ROW_H 24
#define MX_NAME_CHARS 64  /* 12 px monospace: 7.3 px a character */

/* Text of at most max characters: a longer one keeps its end (a node id's
 * test name), after an ellipsis. */
static void tail(const char *s, size_t max, struct ap_buf *out)
{
	size_t n = chars(s);
	if (n <= max) {
		ap_escape_xml(s, out);
		return;
	}
	for (size_t skip = n - (max - 1); skip; s++)
		skip -= ((unsigned char)s[1] & 0xC0) != 0x80;
	ap_buf_adds(out, "\xE2\x80\xA6");
	ap_escape_xml(s, out);
}

static void mx_text(struct ap_buf *out, size_t x, size_t y, const char *anchor, const char *fill,
		    const char *weight, const char *s, size_t max)
{
	ap_buf_addf(out, "<text x=\"%zu\" y=\"%zu\" text-anchor=\"%s\" fill=\"%s\" font-weight=\"%s\" "
		    "font-family=\"monospace\" font-size=\"12\" xml:space=\"preserve\">", x, y, anchor,
		    fill, weight);
	tail(s, max, out);
	ap_buf_adds(out, "</text>");
}

static void mx_head(const struct ap_report *r, enum ap_lang l, size_t w, struct ap_buf *out)
{
	const char *verdict = ap_verdict_name(r->conclusion.verdict);
	const struct ap_style *v = ap_verdict_style(r->conclusion.verdict);
	size_t x0 = MX_PAD + MX_NAME_W + MX_KIND_W;
	mx_text(out, MX_PAD, 26, "start", "#1f2328", "bold", r->target, 90);
	ap_buf_addf(out, "<rect class=\"verdict\" x=\"%zu\" y=\"10\" width=\"%d\" height=\"22\" "
		    "rx=\"3\" fill=\"%s\"/>", w - MX_PAD - MX_COL_W, MX_COL_W, v->fill);
	mx_text(out, w - MX_PAD - MX_COL_W / 2, 26, "middle", v->ink, "bold", verdict, 16);
	size_t y = MX_TITLE_H;
	ap_buf_addf(out, "<rect x=\"0\" y=\"%zu\" width=\"%zu\" height=\"%d\" fill=\"#f6f8fa\"/>", y, w,
		    MX_HEAD_H);
	mx_text(out, MX_PAD, y + 18, "start", "#1f2328", "bold", ap_word(l, M_CHECK), 20);
	mx_text(out, MX_PAD + MX_NAME_W, y + 18, "start", "#1f2328", "bold", ap_word(l, M_KIND), 12);
	for (size_t i = 0; i < r->nenvs; i++) {
		const struct ap_report_column *c = &r->columns[i];
		size_t cx = x0 + i * MX_COL_W + MX_COL_W / 2;
		const struct ap_style *cv = ap_verdict_style(c->verdict);
		mx_text(out, cx, y + 16, "middle", "#1f2328", "bold", c->env, 16);
		ap_buf_addf(out, "<rect class=\"%s\" x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"17\" "
			    "rx=\"3\" fill=\"%s\"/>", cv->cls, x0 + i * MX_COL_W + 4, y + 21, MX_COL_W - 8,
			    cv->fill);
		mx_text(out, cx, y + 34, "middle", cv->ink, "normal", ap_report_text(c->verdict_word), 16);
		if (c->reference)
			mx_text(out, cx, y + 52, "middle", "#57606a", "normal", ap_word(l, M_REFERENCE), 16);
	}
}

void ap_svg_matrix(const struct ap_report *r, enum ap_lang l, struct ap_buf *out)
{
	size_t ncol = r->nenvs;
	size_t w = 2 * MX_PAD + MX_NAME_W + MX_KIND_W + ncol * MX_COL_W;
	size_t h = MX_TITLE_H + MX_HEAD_H + r->nrows * MX_ROW_H + MX_PAD;
	size_t x0 = MX_PAD + MX_NAME_W + MX_KIND_W;
	ap_buf_addf(out, "<svg class=\"matrix\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" "
		    "height=\"%zu\" viewBox=\"0 0 %zu %zu\" role=\"img\" aria-label=\"check matrix\">"
		    "<rect width=\"%zu\" height=\"%zu\" fill=\"#ffffff\"/>", w, h, w, h, w, h);
	mx_head(r, l, w, out);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct ap_report_row *row = &r->rows[i];
		size_t y = MX_TITLE_H + MX_HEAD_H + i * MX_ROW_H;
		ap_buf_addf(out, "<rect x=\"0\" y=\"%zu\" width=\"%zu\" height=\"1\" fill=\"#d0d7de\"/>",
			    y, w);
		mx_text(out, MX_PAD, y + 16, "start", "#1f2328", "normal", row->name, MX_NAME_CHARS);
		mx_text(out, MX_PAD + MX_NAME_W, y + 16, "start", "#57606a", "normal", row->kind, 12);
		for (size_t k = 0; k < ncol; k++) {
			const struct ap_report_cell *c = &row->cells[k];
			const char *st = c->present ? c->status_word : NULL;
			const struct ap_style *s = ap_cell_style(c);
			ap_buf_addf(out, "<rect class=\"%s\" x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"%d\" "
				    "fill=\"%s\"/>", s->cls, x0 + k * MX_COL_W + 2, y + 2, MX_COL_W - 4,
				    MX_ROW_H - 3, s->fill);
			mx_text(out, x0 + k * MX_COL_W + MX_COL_W / 2, y + 16, "middle", s->ink, "bold",
				st ? st : "\xE2\x80\x94", 14);
		}
	}
	ap_buf_adds(out, "</svg>\n");
}

/* ------------------------------------------------------------ numeric */

/* Where v (an error over its tolerance, > 0) falls on the chart's log scale,
 * 1e-6 to 1e2, in pixels of width w. */
static double chart_x(double v, double w)
{
	double lo = -6, hi = 2, x = v > 0 ? log10(v) : lo;
	x = x < lo ? lo : x > hi ? hi : x;
	return (x - lo) / (hi - lo) * w;
}

void ap_svg_numeric(const struct ap_report_env *e, struct ap_buf *out)
{
	const double w = 420, left = 330;
	size_t n = e->nnumeric;
	if (!n)
		return;
	ap_buf_addf(out, "<svg class=\"numeric\" xmlns=\"http://www.w3.org/2000/svg\" "
		    "width=\"%.0f\" height=\"%zu\" role=\"img\" aria-label=\"numeric ",
		    left + w + 90, 30 + n * 18);
	ap_escape_xml(e->name, out);
	ap_buf_addf(out, "\"><text x=\"4\" y=\"14\" font-size=\"13\" font-weight=\"bold\">");
	ap_escape_xml(e->name, out);
	ap_buf_adds(out, "</text>");
	for (size_t k = 0; k < n; k++) {
		const struct ap_report_numeric *r = &e->numeric[k];
		double ratio = r->worst_ratio;
		double y = 22 + (double)k * 18;
		int bad = r->failed > 0;
		struct ap_buf label = { 0 };
		ap_buf_addf(&label, "%s %s %s vs %s", ap_report_text(r->op), r->dtype,
			    ap_report_text(r->device), r->against);
		ap_buf_addf(out, "<text x=\"4\" y=\"%.0f\" font-size=\"11\" "
			    "font-family=\"monospace\">", y + 11);
		ap_escape_xml(ap_buf_str(&label), out);
		ap_buf_addf(out, "</text><rect x=\"%.0f\" y=\"%.0f\" width=\"%.1f\" height=\"12\" "
			    "fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%.2g</text>",
			    left, y, chart_x(ratio, w) + 1, bad ? "#d73a49" : "#2da44e",
			    left + w + 6, y + 11, isfinite(ratio) ? ratio : 1e308);
		ap_buf_free(&label);
	}
	ap_buf_addf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"20\" y2=\"%zu\" stroke=\"red\" "
		    "stroke-dasharray=\"3 2\"/></svg>\n", left + chart_x(1, w), left + chart_x(1, w),
		    24 + n * 18);
}
