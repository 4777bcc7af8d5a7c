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

#endif
