#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cairo.h>
#include <librsvg/rsvg.h>

#include "review/png.h"

/* The PNG signature and the IHDR chunk (length, type, 13 bytes, CRC): a
 * text chunk goes right after them. */
#define PNG_HEAD (8 + 4 + 4 + 13 + 4)

static cairo_status_t png_write(void *ctx, const unsigned char *data, unsigned int len)
{
	return ap_buf_add(ctx, data, len) ? CAIRO_STATUS_NO_MEMORY : CAIRO_STATUS_SUCCESS;
}

/* CRC-32 as PNG chunks use it (ISO 3309, reflected, poly 0xEDB88320). */
static uint32_t crc32_png(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* png with an iTXt chunk "Description" = text inserted after IHDR. */
static int png_add_text(const struct ap_buf *png, const char *text, struct ap_buf *out)
{
	static const char kw[] = "Description";
	/* keyword NUL, compression flag and method (0: none), empty language
	 * tag and translated keyword (NUL each), then the text. */
	struct ap_buf chunk = { 0 };
	unsigned char be[4];
	int r = 0;
	if (png->len < PNG_HEAD)
		return -EINVAL;
	r |= ap_buf_add(&chunk, "iTXt", 4);
	r |= ap_buf_add(&chunk, kw, sizeof(kw));
	r |= ap_buf_add(&chunk, "\0\0\0\0", 4);
	r |= ap_buf_adds(&chunk, text);
	put32(be, (uint32_t)(chunk.len - 4));
	r |= ap_buf_add(out, png->data, PNG_HEAD);
	r |= ap_buf_add(out, be, 4);
	r |= ap_buf_add(out, chunk.data, chunk.len);
	put32(be, crc32_png(0, (const unsigned char *)chunk.data, chunk.len));
	r |= ap_buf_add(out, be, 4);
	r |= ap_buf_add(out, png->data + PNG_HEAD, png->len - PNG_HEAD);
	ap_buf_free(&chunk);
	return r ? -ENOMEM : 0;
}

/* Draws handle onto a new w x h surface and encodes it as PNG into png. */
static int png_draw(RsvgHandle *h, int w, int ht, struct ap_buf *png, struct ap_buf *err)
{
	cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, ht);
	cairo_t *cr = cairo_create(sf);
	RsvgRectangle vp = { 0, 0, w, ht };
	GError *gerr = NULL;
	int r = 0;
	if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
		ap_buf_addf(err, "cairo: %s", cairo_status_to_string(cairo_status(cr)));
		r = -ENOMEM;
	} else if (!rsvg_handle_render_document(h, cr, &vp, &gerr)) {
		ap_buf_addf(err, "librsvg: %s", gerr ? gerr->message : "cannot draw the SVG");
		r = -EINVAL;
	} else if (cairo_surface_write_to_png_stream(sf, png_write, png) != CAIRO_STATUS_SUCCESS) {
		ap_buf_adds(err, "cairo: cannot encode the PNG");
		r = -ENOMEM;
	}
	if (gerr)
		g_error_free(gerr);
	cairo_destroy(cr);
	cairo_surface_destroy(sf);
	return r;
}

int ap_png_from_svg(const char *svg, size_t len, const char *description, struct ap_buf *out,
		    struct ap_buf *err)
{
	GError *gerr = NULL;
	RsvgHandle *h = rsvg_handle_new_from_data((const guint8 *)svg, len, &gerr);
	struct ap_buf png = { 0 };
	gdouble w = 0, ht = 0;
	int r = 0;
	if (!h) {
		ap_buf_addf(err, "librsvg: %s", gerr ? gerr->message : "not an SVG document");
		if (gerr)
			g_error_free(gerr);
		return -EINVAL;
	}
	rsvg_handle_set_dpi(h, 96);
	if (!rsvg_handle_get_intrinsic_size_in_pixels(h, &w, &ht) || !(w >= 1 && ht >= 1) ||
	    w > AP_PNG_MAX_SIDE || ht > AP_PNG_MAX_SIDE) {
		ap_buf_addf(err, "SVG of %.0f x %.0f pixels: a picture needs a size from 1 to %d",
			    w, ht, AP_PNG_MAX_SIDE);
		r = -EINVAL;
	}
	if (!r)
		r = png_draw(h, (int)ceil(w), (int)ceil(ht), &png, err);
	if (!r)
		r = description ? png_add_text(&png, description, out) : ap_buf_add(out, png.data, png.len);
	if (r == -ENOMEM && !err->len)
		ap_buf_adds(err, "out of memory");
	g_object_unref(h);
	ap_buf_free(&png);
	return r;
}
