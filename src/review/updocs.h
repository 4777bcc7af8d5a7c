/* updocs.h - where upstream publishes each API, read from upstream's own
 * docs sources (docs/source/ of the torch source, *.rst).
 *
 * The published page of a name is what Sphinx makes of those sources, not a
 * pattern: a name listed in an `autosummary` block with `:toctree: DIR` has
 * a page of its own (DIR/NAME.html beside the .rst); an `autoclass`,
 * `autofunction`, `automodule`... documents its name on the .rst's own page,
 * as an anchor (PAGE.html#NAME, #module-NAME for a module). A class's
 * members are anchors on the class's page where the template or the options
 * say members are documented there: `:inherited-members:` documents every
 * member, `:members:` alone only the class's own, `:members: a, b` those
 * named; autodoc leaves out a member without a docstring (unless
 * `:undoc-members:`) and one whose name begins with '_'. A name those
 * rules do not reach has no URL: none is guessed.
 *
 * Names are made absolute as Sphinx would find them: a name that begins
 * with "torch." is taken as it is, any other is under the current module
 * (`currentmodule`, `module`, `py:module`, `automodule`).
 */
#ifndef AP_UPDOCS_H
#define AP_UPDOCS_H

#include <stddef.h>

#include "base/buf.h"

/* How a documented class's members are documented on its page. */
enum ap_updocs_members {
	AP_UPDOCS_NO_MEMBERS,   /* not there */
	AP_UPDOCS_OWN_MEMBERS,  /* those the class defines itself */
	AP_UPDOCS_ALL_MEMBERS,  /* inherited ones too */
};

/* One documented name: its page (relative to the docs' root, ".html"
 * included) and its anchor there (NULL: the page is its own). */
struct ap_updocs_entry {
	char *name, *page, *anchor;
	enum ap_updocs_members members;
	int undoc;                 /* members without a docstring too */
	char *section;             /* the title of the .rst section it is in, or NULL */
	unsigned section_no;       /* that section's place among all read (from 1) */
};

struct ap_updocs {
	struct ap_updocs_entry *v; /* sorted by name; a name's own page first */
	size_t n, cap;
	char *base;                /* "https://pytorch.org/docs/MAJOR.MINOR/" */
	size_t files;              /* .rst files read */
	unsigned sections;         /* section titles read */
};

/* Reads every *.rst under dir (docs/source: its _templates/ give the
 * autosummary templates' member rules; directories whose names begin with
 * '_' or '.' are not pages) into *d (zeroed first), its URLs under the docs
 * of torch version (its first two numbers: "2.6.0+debian" -> 2.6). 0;
 * -ENOENT or another -errno when dir cannot be read (err says which path);
 * -EINVAL when version has no MAJOR.MINOR; -ENOMEM. A file over 4 MiB, a
 * link, or one past 4,000 files is not read. */
int ap_updocs_load(const char *dir, const char *version, struct ap_updocs *d,
		   struct ap_buf *err);

/* What is known of a member: 1 yes, 0 no, -1 not known. */
struct ap_updocs_member {
	int own;  /* its class defines it itself */
	int doc;  /* it has a docstring of its own */
};

/* The URL of api into url: 0, or -ENOENT when the sources do not document
 * it (url untouched). m: what is known of api as a member of its class
 * (NULL: nothing); a member is an anchor on its class's page only when
 * what the rules above need of it is known to hold. */
int ap_updocs_url(const struct ap_updocs *d, const char *api, const struct ap_updocs_member *m,
		  struct ap_buf *url);

/* The section of upstream's pages api is documented in: the title of the
 * nearest section heading above its directive in the .rst (a title line
 * underlined, or over- and underlined, by one punctuation character
 * repeated), with its place in reading order in *order; for a member with
 * no directive of its own, its class's. NULL when the sources do not
 * document api or it lies above every heading. */
const char *ap_updocs_section(const struct ap_updocs *d, const char *api, unsigned *order);

void ap_updocs_free(struct ap_updocs *d);

#endif
