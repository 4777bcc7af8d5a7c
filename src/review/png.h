/* png.h - SVG pictures (svg.h) rendered to PNG, for the places that take
 * images but not SVG (issue comments, pull requests, chat).
 *
 * Rendering is librsvg's onto a cairo image surface, at the SVG's own size in
 * pixels (96 dpi), so a PNG shows exactly what the SVG in report.html shows.
 * The text the picture holds can be given too: it is stored in the PNG as an
 * iTXt "Description" chunk (UTF-8), so a bot or a test can read what the
 * picture says without OCR.
 *
 * librsvg (and with it cairo, pango, fontconfig) is loaded with dlopen when
 * the first picture is drawn: only pictures need it, and loading it at
 * start cost every command ~20 ms.
 */
#ifndef AP_PNG_H
#define AP_PNG_H

#include <stddef.h>

#include "base/buf.h"

/* Whether this apiparity draws PNG pictures (0: built with make PNG=0;
 * then ap_png_from_svg() says so, with -ENOTSUP). */
extern const int ap_png_built_in;

/* The largest side of a picture, in pixels (cairo's image surfaces stop at
 * 32767); a bigger SVG is refused, not scaled. */
#define AP_PNG_MAX_SIDE 32767

/* Renders the SVG document svg[0..len) into out as PNG bytes, with
 * description (UTF-8, or NULL for none) as its iTXt "Description". 0, or
 * -EINVAL (not an SVG librsvg can draw, or without a size, or too big) /
 * -ENOMEM / -ELIBACC (librsvg cannot be loaded) with err saying why. */
int ap_png_from_svg(const char *svg, size_t len, const char *description, struct ap_buf *out,
		    struct ap_buf *err);

/* What draws the pictures here, as a PNG's "Software" text chunk gives it:
 * the versions of librsvg, cairo, pango, harfbuzz, freetype and fontconfig
 * and of the fonts (apiparity draws with a fontconfig configuration of its
 * own, the same fonts and settings on every machine: see png.c). The same
 * SVG drawn where this text is the same gives the same bytes. NULL, with
 * err saying why, where nothing can be drawn. Loads the drawing library. */
const char *ap_png_drawing(struct ap_buf *err);

/* The longest "Software" text ap_png_software() gives. */
#define AP_PNG_SOFTWARE_MAX 512

/* The "Software" text chunk of the PNG png[0..len) (untrusted), read from
 * the chunks before its pixels, into software: at most AP_PNG_SOFTWARE_MAX
 * bytes, each byte that is not printable ASCII a '?'. 1 when it has one, 0
 * when not, -EINVAL when png is not a PNG, -ENOMEM, -ENOTSUP (make PNG=0). */
int ap_png_software(const char *png, size_t len, struct ap_buf *software);

#endif
