/* surface.h - what counts as a sweep's API surface, as data.
 *
 * The worker walks a catalog entry's names (worker/sweep.py) and keeps those
 * these rules call public; the rules are written here, once, and sent with
 * every sweep_begin and sweep_walk request (env/protocol.h: the "surface"
 * field), so that the worker decides nothing of its own:
 *   private        name prefixes that are not public: a name so spelled is
 *                  no API, and a base class so named lends its members to
 *                  its subclasses (torch documents them as the class's)
 *   own            the packages whose classes and functions are the surface;
 *                  one a module imported from elsewhere (typing.Any, os.path)
 *                  is no API of it, unless a plugin put it there
 *   skip_metatypes classes whose type has one of these names are not walked
 *                  for members (the legacy tensor types, which carry a copy
 *                  of every Tensor method)
 *   skip_bases     classes derived from one of these (dotted paths) are not
 *                  walked for members under another entry (torch.Tensor has
 *                  an entry of its own)
 *   foreign_types  modules whose instances are no API wherever they are
 *                  found: a typing alias or TypeVar (xpu.Optional,
 *                  grad_mode.Callable) or a __future__ feature a module
 *                  imported for itself
 * A name is public too only when it is an ASCII identifier (the matrix keys
 * and the pages' file names are made of them): that is the worker's safety,
 * not a rule.
 */
#ifndef AP_SURFACE_H
#define AP_SURFACE_H

#include <jansson.h>

/* The rules as the requests carry them: {"private": [...], "own": [...],
 * "skip_metatypes": [...], "skip_bases": [...],
 * "foreign_types": [...]}. A new object, NULL when out
 * of memory. */
json_t *ap_surface_rules(void);

#endif
