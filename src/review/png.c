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
#include <librsvg/rsvg.h>
#include <png.h>

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
	X(cairo_image_surface_get_data)

/* The drawing stack (librsvg, cairo, pango, fontconfig, harfbuzz: some 45
 * libraries) is loaded when the first picture is drawn, not when apiparity
 * starts: mapping and relocating it took ~20 ms of every command's start,
 * and only report and verify draw. Lazily bound: a third less to relocate
 * before the first picture. It is never unloaded (glib's types cannot be). */
static struct {
#define AP_DRAW_FIELD(f) __typeof__(&f) f_##f;
	AP_DRAW_FUNCS(AP_DRAW_FIELD)
#undef AP_DRAW_FIELD
	char why[256]; /* why it cannot be loaded; "" when it is */
} draw;
static pthread_once_t draw_once = PTHREAD_ONCE_INIT;

#define D(f) (draw.f_##f)

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
		snprintf(draw.why, sizeof(draw.why), "%s", e);
}

/* Loads the drawing library, once per process (the other threads wait).
 * 0, or -ELIBACC with err saying why it cannot be loaded. */
static int draw_ready(struct ap_buf *err)
{
	pthread_once(&draw_once, draw_load);
	if (!draw.why[0])
		return 0;
	ap_buf_addf(err, "the drawing library cannot be loaded: %s", draw.why);
	return -ELIBACC;
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

/* Encodes surface sf as PNG into out, with an iTXt chunk "Description" =
 * description (when not NULL) before the pixels. */
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
	png_text text = { .compression = PNG_ITXT_COMPRESSION_NONE, .key = "Description",
			  .text = (char *)description, .lang = "", .lang_key = "" };
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
		if (description)
			png_set_text(p, info, &text, 1);
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

#endif
