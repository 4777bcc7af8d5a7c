#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "review/png.h"

#ifndef AP_PNG
#define AP_PNG 1
#endif

#if AP_PNG

const int ap_png_built_in = 1;

#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <librsvg/rsvg.h>
#include <png.h>

/* Pango's and HarfBuzz's versions name the drawing (see draw_stack); their
 * -dev headers are not otherwise needed, so the two calls are declared here
 * as their manuals give them. */
const char *pango_version_string(void);
const char *hb_version_string(void);

/* librsvg's soname: it has been 2 since librsvg 2.x began, and the -dev
 * package's headers (pkg-config librsvg-2.0) describe it. */
#define AP_RSVG_SONAME "librsvg-2.so.2"

/* What of the drawing stack png.c calls; librsvg brings cairo and glib in. */
#define AP_DRAW_FUNCS(X)                                                                  \
	X(rsvg_handle_new_from_data) X(rsvg_handle_set_dpi)                               \
	X(rsvg_handle_get_intrinsic_size_in_pixels) X(rsvg_handle_render_document)        \
	X(g_object_unref) X(g_error_free) X(cairo_image_surface_create) X(cairo_create)    \
	X(cairo_status) X(cairo_status_to_string) X(cairo_surface_flush) X(cairo_destroy)  \
	X(cairo_surface_destroy) X(cairo_image_surface_get_width)                          \
	X(cairo_image_surface_get_height) X(cairo_image_surface_get_stride)                \
	X(cairo_image_surface_get_data) X(cairo_version_string) X(pango_version_string)    \
	X(hb_version_string) X(FT_Init_FreeType) X(FT_Library_Version) X(FT_Done_FreeType)  \
	X(FcGetVersion) X(FcConfigCreate) X(FcConfigParseAndLoadFromMemory)                \
	X(FcConfigSetCurrent) X(FcConfigDestroy) X(FcNameParse) X(FcConfigSubstitute)      \
	X(FcDefaultSubstitute) X(FcFontMatch) X(FcPatternGetString) X(FcPatternGetInteger) \
	X(FcPatternDestroy)

/* The drawing stack (librsvg, cairo, pango, fontconfig, harfbuzz: some 45
 * libraries) is loaded when the first picture is drawn, not when apiparity
 * starts: mapping and relocating it took ~20 ms of every command's start,
 * and only report and verify draw. Lazily bound: a third less to relocate
 * before the first picture. It is never unloaded (glib's types cannot be). */
static struct {
#define AP_DRAW_FIELD(f) __typeof__(&f) f_##f;
	AP_DRAW_FUNCS(AP_DRAW_FIELD)
#undef AP_DRAW_FIELD
	char why[256];    /* why it cannot draw; "" when it can */
	char stack[512];  /* what draws: versions and fonts (ap_png_drawing) */
} draw;
static pthread_once_t draw_once = PTHREAD_ONCE_INIT;

#define D(f) (draw.f_##f)

/* The fonts and how they are drawn, the same wherever apiparity draws: a
 * picture is drawn from the fonts fontconfig picks and the hinting and
 * antialiasing the machine's configuration asks for, so the same SVG drew
 * other pixels for a user whose fonts.conf differs (FONTCONFIG_FILE, an extra
 * font package, a desktop's settings), and verify called a faithful picture
 * "not the report its bundles give". Only the system's packaged fonts of
 * these families are taken (DejaVu: Debian's fonts-dejavu-core; WenQuanYi
 * Micro Hei: fonts-wqy-microhei, for the zh report's Chinese), with fixed
 * rendering settings (those of Debian's defaults). Reading this one
 * configuration instead of the system's thirty files also saves ~13 ms of
 * every drawing process. */
static const char draw_fonts_conf[] =
	"<?xml version=\"1.0\"?><fontconfig>"
	"<dir>/usr/share/fonts</dir>"
	"<cachedir>/var/cache/fontconfig</cachedir>"
	"<cachedir prefix=\"xdg\">fontconfig</cachedir>"
	"<selectfont><acceptfont>"
#define AP_FONT_FAMILY(f) "<pattern><patelt name=\"family\"><string>" f "</string></patelt></pattern>"
	AP_FONT_FAMILY("DejaVu Sans") AP_FONT_FAMILY("DejaVu Sans Mono")
	AP_FONT_FAMILY("WenQuanYi Micro Hei") AP_FONT_FAMILY("WenQuanYi Micro Hei Mono")
#undef AP_FONT_FAMILY
	"</acceptfont><rejectfont><pattern></pattern></rejectfont></selectfont>"
	"<alias binding=\"same\"><family>monospace</family><prefer><family>DejaVu Sans Mono</family>"
	"<family>WenQuanYi Micro Hei Mono</family></prefer></alias>"
	"<alias binding=\"same\"><family>sans-serif</family><prefer><family>DejaVu Sans</family>"
	"<family>WenQuanYi Micro Hei</family></prefer></alias>"
	"<match target=\"pattern\"><test qual=\"all\" name=\"family\" compare=\"not_eq\">"
	"<string>sans-serif</string></test><test qual=\"all\" name=\"family\" compare=\"not_eq\">"
	"<string>monospace</string></test><edit name=\"family\" mode=\"append_last\">"
	"<string>sans-serif</string></edit></match>"
	"<match target=\"font\">"
	"<edit name=\"antialias\" mode=\"assign\"><bool>true</bool></edit>"
	"<edit name=\"hinting\" mode=\"assign\"><bool>true</bool></edit>"
	"<edit name=\"hintstyle\" mode=\"assign\"><const>hintslight</const></edit>"
	"<edit name=\"autohint\" mode=\"assign\"><bool>false</bool></edit>"
	"<edit name=\"rgba\" mode=\"assign\"><const>none</const></edit>"
	"<edit name=\"lcdfilter\" mode=\"assign\"><const>lcddefault</const></edit>"
	"<edit name=\"embeddedbitmap\" mode=\"assign\"><bool>false</bool></edit>"
	"</match></fontconfig>";

/* The families the pictures use, the first two required. */
static const char *const draw_families[] = { "DejaVu Sans", "DejaVu Sans Mono",
					     "WenQuanYi Micro Hei", "WenQuanYi Micro Hei Mono" };
#define AP_FONTS_REQUIRED 2

/* Appends ", FAMILY VERSION" (or "FAMILY absent") for the font the
 * configuration gives for family; whether it is there. */
static int font_named(const char *family, char *at, size_t size)
{
	FcPattern *want = D(FcNameParse)((const FcChar8 *)family), *got = NULL;
	FcResult res;
	FcChar8 *name = NULL;
	int version = 0;
	if (want) {
		D(FcConfigSubstitute)(NULL, want, FcMatchPattern);
		D(FcDefaultSubstitute)(want);
		got = D(FcFontMatch)(NULL, want, &res);
	}
	int there = got && D(FcPatternGetString)(got, FC_FAMILY, 0, &name) == FcResultMatch &&
		    !strcmp((const char *)name, family);
	if (there)
		D(FcPatternGetInteger)(got, FC_FONTVERSION, 0, &version);
	if (there)
		snprintf(at, size, ", %s %d.%03d", family, version >> 16,
			 (int)(((version & 0xffff) * 1000L + 0x8000) >> 16));
	else
		snprintf(at, size, ", %s absent", family);
	if (got)
		D(FcPatternDestroy)(got);
	if (want)
		D(FcPatternDestroy)(want);
	return there;
}

/* Makes draw_fonts_conf fontconfig's configuration and names the drawing in
 * draw.stack; "" in draw.why, or why it cannot draw. */
static void draw_fonts(void *h)
{
	FcConfig *c = D(FcConfigCreate)();
	if (!c || !D(FcConfigParseAndLoadFromMemory)(c, (const FcChar8 *)draw_fonts_conf, FcFalse) ||
	    !D(FcConfigSetCurrent)(c)) {
		if (c)
			D(FcConfigDestroy)(c);
		snprintf(draw.why, sizeof(draw.why), "fontconfig cannot take apiparity's fonts");
		return;
	}
	const unsigned *rsvg[3] = { dlsym(h, "rsvg_major_version"), dlsym(h, "rsvg_minor_version"),
				    dlsym(h, "rsvg_micro_version") };
	FT_Library ft = NULL;
	FT_Int ftv[3] = { 0, 0, 0 };
	if (!D(FT_Init_FreeType)(&ft)) {
		D(FT_Library_Version)(ft, &ftv[0], &ftv[1], &ftv[2]);
		D(FT_Done_FreeType)(ft);
	}
	int fc = D(FcGetVersion)();
	size_t at = (size_t)snprintf(draw.stack, sizeof(draw.stack),
		"librsvg %u.%u.%u, cairo %s, pango %s, harfbuzz %s, freetype %d.%d.%d, fontconfig %d.%d.%d",
		rsvg[0] ? *rsvg[0] : 0, rsvg[1] ? *rsvg[1] : 0, rsvg[2] ? *rsvg[2] : 0,
		D(cairo_version_string)(), D(pango_version_string)(), D(hb_version_string)(),
		ftv[0], ftv[1], ftv[2], fc / 10000, fc / 100 % 100, fc % 100);
	int missing = 0;
	for (size_t i = 0; i < sizeof(draw_families) / sizeof(*draw_families); i++) {
		at = strlen(draw.stack);
		if (!font_named(draw_families[i], draw.stack + at, sizeof(draw.stack) - at) &&
		    i < AP_FONTS_REQUIRED)
			missing = 1;
	}
	if (missing)
		snprintf(draw.why, sizeof(draw.why), "the pictures are drawn with the fonts DejaVu "
			 "Sans and DejaVu Sans Mono (Debian: fonts-dejavu-core), not found here");
}

static void draw_load(void)
{
	void *h = dlopen(AP_RSVG_SONAME, RTLD_LAZY | RTLD_LOCAL);
	const char *e = h ? NULL : dlerror();
#define AP_DRAW_SYM(f)                                           \
	if (!e && !(*(void **)&draw.f_##f = dlsym(h, #f)))       \
		e = "no " #f;
	AP_DRAW_FUNCS(AP_DRAW_SYM)
#undef AP_DRAW_SYM
	if (e)
		snprintf(draw.why, sizeof(draw.why), "the drawing library cannot be loaded: %s", e);
	else
		draw_fonts(h);
}

/* Loads the drawing library, once per process (the other threads wait).
 * 0, or -ELIBACC with err saying why it cannot draw. */
static int draw_ready(struct ap_buf *err)
{
	pthread_once(&draw_once, draw_load);
	if (!draw.why[0])
		return 0;
	ap_buf_adds(err, draw.why);
	return -ELIBACC;
}

const char *ap_png_drawing(struct ap_buf *err)
{
	return draw_ready(err) ? NULL : draw.stack;
}

/* The pictures are flat colours and text: unfiltered rows at a low zlib
 * level encode in a quarter of the time cairo's encoder takes (its adaptive
 * filters at level 6), and come out smaller. verify draws every picture
 * again to compare, so encoding is on a maintainer's path. */
#define AP_PNG_ZLIB_LEVEL 3

/* libpng's error callback: it must not return, so it says why in err (the
 * error pointer) and jumps back to png_encode(). */
static void png_fail(png_structp p, png_const_charp msg)
{
	ap_buf_addf(png_get_error_ptr(p), "libpng: %s", msg);
	png_longjmp(p, 1);
}

static void png_warn(png_structp p, png_const_charp msg)
{
	(void)p;
	(void)msg;
}

static void png_out(png_structp p, png_bytep data, size_t len)
{
	if (ap_buf_add(png_get_io_ptr(p), data, len))
		png_error(p, "out of memory");
}

static void png_flush(png_structp p)
{
	(void)p;
}

/* Whether every pixel of cairo's w x h ARGB32 data is opaque (then the PNG
 * is RGB: most pictures have a background). */
static int surface_opaque(const unsigned char *px, int w, int h, int stride)
{
	for (int y = 0; y < h; y++) {
		const uint32_t *s = (const uint32_t *)(const void *)(px + (size_t)y * stride);
		for (int x = 0; x < w; x++)
			if (s[x] >> 24 != 0xff)
				return 0;
	}
	return 1;
}

/* One row of cairo's native-endian, premultiplied ARGB32 as PNG's RGB or,
 * not opaque, straight RGBA. */
static void row_bytes(const uint32_t *s, int w, int opaque, unsigned char *row)
{
	for (int x = 0; x < w; x++) {
		unsigned a = s[x] >> 24, c[3] = { (s[x] >> 16) & 0xff, (s[x] >> 8) & 0xff, s[x] & 0xff };
		for (int k = 0; k < 3; k++)
			*row++ = (unsigned char)(opaque || a == 0xff ? c[k] :
						 a ? (c[k] * 0xff + a / 2) / a : 0);
		if (!opaque)
			*row++ = (unsigned char)a;
	}
}

/* Encodes surface sf as PNG into out, with a tEXt chunk "Software" (the
 * drawing) and an iTXt chunk "Description" = description (when not NULL)
 * before the pixels. */
static int png_encode(cairo_surface_t *sf, const char *description, struct ap_buf *out,
		      struct ap_buf *err)
{
	int w = D(cairo_image_surface_get_width)(sf), h = D(cairo_image_surface_get_height)(sf);
	int stride = D(cairo_image_surface_get_stride)(sf);
	const unsigned char *px = D(cairo_image_surface_get_data)(sf);
	int opaque = surface_opaque(px, w, h, stride);
	unsigned char *row = malloc((size_t)w * 4);
	png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, err, png_fail, png_warn);
	png_infop info = p ? png_create_info_struct(p) : NULL;
	/* Software: what drew it, so that verify compares a picture only where
	 * the same drawing would give the same pixels. */
	png_text text[2] = { { .compression = PNG_ITXT_COMPRESSION_NONE, .key = "Description",
			       .text = (char *)description, .lang = "", .lang_key = "" },
			     { .compression = PNG_TEXT_COMPRESSION_NONE, .key = "Software",
			       .text = draw.stack } };
	int r = 0;
	if (!row || !p || !info)
		r = -ENOMEM;
	else if (setjmp(png_jmpbuf(p)))
		r = strstr(ap_buf_str(err), "out of memory") ? -ENOMEM : -EINVAL;
	else {
		png_set_write_fn(p, out, png_out, png_flush);
		png_set_compression_level(p, AP_PNG_ZLIB_LEVEL);
		png_set_filter(p, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
		png_set_IHDR(p, info, (png_uint_32)w, (png_uint_32)h, 8,
			     opaque ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE,
			     PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
		png_set_text(p, info, text + !description, description ? 2 : 1);
		png_write_info(p, info);
		for (int y = 0; y < h; y++) {
			row_bytes((const uint32_t *)(const void *)(px + (size_t)y * stride), w, opaque,
				  row);
			png_write_row(p, row);
		}
		png_write_end(p, NULL);
	}
	png_destroy_write_struct(&p, &info);
	free(row);
	return r;
}

/* Draws handle onto a new w x h surface and encodes it as PNG into png. */
static int png_draw(RsvgHandle *h, int w, int ht, const char *description, struct ap_buf *png,
		    struct ap_buf *err)
{
	cairo_surface_t *sf = D(cairo_image_surface_create)(CAIRO_FORMAT_ARGB32, w, ht);
	cairo_t *cr = D(cairo_create)(sf);
	RsvgRectangle vp = { 0, 0, w, ht };
	GError *gerr = NULL;
	int r = 0;
	if (D(cairo_status)(cr) != CAIRO_STATUS_SUCCESS) {
		ap_buf_addf(err, "cairo: %s", D(cairo_status_to_string)(D(cairo_status)(cr)));
		r = -ENOMEM;
	} else if (!D(rsvg_handle_render_document)(h, cr, &vp, &gerr)) {
		ap_buf_addf(err, "librsvg: %s", gerr ? gerr->message : "cannot draw the SVG");
		r = -EINVAL;
	} else {
		D(cairo_surface_flush)(sf);
		r = png_encode(sf, description, png, err);
	}
	if (gerr)
		D(g_error_free)(gerr);
	D(cairo_destroy)(cr);
	D(cairo_surface_destroy)(sf);
	return r;
}

int ap_png_from_svg(const char *svg, size_t len, const char *description, struct ap_buf *out,
		    struct ap_buf *err)
{
	GError *gerr = NULL;
	if (draw_ready(err))
		return -ELIBACC;
	RsvgHandle *h = D(rsvg_handle_new_from_data)((const guint8 *)svg, len, &gerr);
	gdouble w = 0, ht = 0;
	int r = 0;
	if (!h) {
		ap_buf_addf(err, "librsvg: %s", gerr ? gerr->message : "not an SVG document");
		if (gerr)
			D(g_error_free)(gerr);
		return -EINVAL;
	}
	D(rsvg_handle_set_dpi)(h, 96);
	if (!D(rsvg_handle_get_intrinsic_size_in_pixels)(h, &w, &ht) || !(w >= 1 && ht >= 1) ||
	    w > AP_PNG_MAX_SIDE || ht > AP_PNG_MAX_SIDE) {
		ap_buf_addf(err, "SVG of %.0f x %.0f pixels: a picture needs a size from 1 to %d",
			    w, ht, AP_PNG_MAX_SIDE);
		r = -EINVAL;
	}
	if (!r)
		r = png_draw(h, (int)ceil(w), (int)ceil(ht), description, out, err);
	if (r == -ENOMEM && !err->len)
		ap_buf_adds(err, "out of memory");
	D(g_object_unref)(h);
	return r;
}

/* A PNG being read from memory. */
struct png_mem {
	const unsigned char *at;
	size_t left;
};

static void png_in(png_structp p, png_bytep data, size_t len)
{
	struct png_mem *m = png_get_io_ptr(p);
	if (len > m->left)
		png_error(p, "cut short");
	memcpy(data, m->at, len);
	m->at += len;
	m->left -= len;
}

/* text (a chunk's, untrusted) into out: at most AP_PNG_SOFTWARE_MAX bytes,
 * printable ASCII, each other byte a '?'. */
static void software_text(const char *text, struct ap_buf *out)
{
	for (size_t i = 0; text[i] && i < AP_PNG_SOFTWARE_MAX; i++)
		ap_buf_addf(out, "%c", text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?');
}

int ap_png_software(const char *png, size_t len, struct ap_buf *software)
{
	struct png_mem m = { (const unsigned char *)png, len };
	struct ap_buf err = { 0 };
	png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err, png_fail, png_warn);
	png_infop info = p ? png_create_info_struct(p) : NULL;
	png_textp text = NULL;
	int n = 0, r = 0;
	if (!p || !info)
		r = -ENOMEM;
	else if (len < 8 || png_sig_cmp((png_const_bytep)png, 0, 8))
		r = -EINVAL;
	else if (setjmp(png_jmpbuf(p)))
		r = -EINVAL;
	else {
		/* Bounded: a forged picture's header and text chunks are data. */
		png_set_user_limits(p, AP_PNG_MAX_SIDE, AP_PNG_MAX_SIDE);
		png_set_chunk_cache_max(p, 64);
		png_set_chunk_malloc_max(p, 1 << 20);
		png_set_read_fn(p, &m, png_in);
		png_read_info(p, info); /* the chunks before the pixels */
		png_get_text(p, info, &text, &n);
		for (int i = 0; i < n && !r; i++)
			if (!strcmp(text[i].key, "Software")) {
				software_text(text[i].text, software);
				r = 1;
			}
	}
	png_destroy_read_struct(&p, &info, NULL);
	ap_buf_free(&err);
	return r;
}

#else /* built with make PNG=0 */

const int ap_png_built_in = 0;

int ap_png_from_svg(const char *svg, size_t len, const char *description, struct ap_buf *out,
		    struct ap_buf *err)
{
	(void)svg;
	(void)len;
	(void)description;
	(void)out;
	ap_buf_adds(err, "PNG pictures are not built into this apiparity (built with make PNG=0)");
	return -ENOTSUP;
}

const char *ap_png_drawing(struct ap_buf *err)
{
	ap_buf_adds(err, "PNG pictures are not built into this apiparity (built with make PNG=0)");
	return NULL;
}

int ap_png_software(const char *png, size_t len, struct ap_buf *software)
{
	(void)png;
	(void)len;
	(void)software;
	return -ENOTSUP;
}

#endif
