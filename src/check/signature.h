/* signature.h - a callable's signature compared across environments.
 *
 * The worker reports each callable target's signature as data (the
 * resolution's signature_data: source, overloads, parameters; see
 * "signatures" in worker/apiparity_worker.py). This module compares it with
 * the reference environment's and makes the "signature" check.
 *
 * What is compared, overload by overload (matched by overload name; Python's
 * inspect gives one, unnamed):
 *   - where the signature comes from (inspect, schema, docstring): a
 *     different source is one difference, and nothing else is compared, since
 *     an aten schema and a Python signature name parameters differently;
 *   - overloads present in one and not the other;
 *   - parameters, by name: one removed and one added at the same position
 *     with the same kind is a rename; otherwise removed and added; of a
 *     parameter in both, its kind and its default (values compare as JSON,
 *     a default_repr as text; having none differs from having one);
 *   - the order of the positional parameters both have;
 *   - a docstring signature that does not parse: its text.
 * Annotations and return types are recorded, never compared: their text is
 * the Python version's (Optional[int] in 3.13, int | None in 3.14), not
 * torch's.
 *
 * The verdict of a difference (the rule verdict.c applies):
 *   - against a reference of the same torch release (the version before any
 *     "+local" part): FAIL, an inconsistency: a plugin changed the API;
 *   - against another torch release: WARN, a stated limit, naming each change;
 *   - no difference: PASS.
 * The reference's own check is PASS, and names the environments compared
 * with it. Where no other environment has the target (it is absent there, or
 * only one environment is checked), there is no signature check at all: a
 * signature compared with nothing proves nothing. A target that is not
 * callable gets no signature check either; one whose signature could not be
 * read, NOTRUN with the worker's reason.
 */
#ifndef AP_SIGNATURE_H
#define AP_SIGNATURE_H

#include <jansson.h>
#include <stddef.h>

/* The differences of signature data sig against ref (both as the worker
 * sends them): a new array of {what, overload, param, expected, seen, text},
 * what one of source, overload-added, overload-removed, added, removed,
 * renamed, kind, default, order, text; text is the difference in words,
 * naming the parameter. Empty when they agree. NULL when out of memory. */
json_t *ap_signature_diff(const json_t *ref, const json_t *sig);

/* The signature check of bundle b[i] of n, against b[ref] (the index
 * ap_bundle_pick_reference gives, -1 for none): a new check object
 * {name: "signature", kind: "signature", status, reason, signature: {...}},
 * or NULL when no signature check applies (the target is absent or not
 * callable there, the environment failed, or it is the reference and no
 * other environment has the target). */
json_t *ap_signature_check(json_t *const *b, size_t n, size_t i, int ref);

#endif
