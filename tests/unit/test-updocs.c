/* test-updocs.c - unit tests for review/updocs.h: where upstream publishes a
 * name, read from a small docs/source tree written here in the shapes torch's
 * own has (autosummary with and without a toctree and a template,
 * autoclass with its member options, automodule, relative and absolute
 * names, a page in a subdirectory), and no URL where the sources say none. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "review/updocs.h"
#include "testutil.h"

#define BASE "https://pytorch.org/docs/2.6/"

struct fix {
	char dir[512];
	struct ap_updocs d;
};

static const char autograd_rst[] =
	"torch.autograd\n"
	"==============\n"
	".. automodule:: torch.autograd\n"
	".. currentmodule:: torch.autograd\n"
	"\n"
	".. autosummary::\n"
	"    :toctree: generated\n"
	"    :nosignatures:\n"
	"\n"
	"    grad_mode.set_multithreading_enabled\n"
	"    ~backward\n"
	"\n"
	"Text that names notlisted at all.\n"
	"\n"
	".. autosummary::\n"
	"    :toctree: generated\n"
	"    :template: classtemplate.rst\n"
	"\n"
	"    Function\n"
	"\n"
	".. autosummary::\n"
	"    :nosignatures:\n"
	"\n"
	"    elsewhere\n"
	"\n"
	".. autofunction:: gradcheck.gradcheck\n"
	".. autoclass:: torch.Size\n"
	"   :members:\n"
	"   :undoc-members:\n"
	"   :inherited-members:\n"
	"\n"
	".. autoclass:: Picked\n"
	"    :members: first, second\n"
	"\n"
	".. method:: relative_to_a_class\n";

static const char sections_rst[] =
	":orphan:\n"
	"\n"
	"=========\n"
	"Overlined\n"
	"=========\n"
	"\n"
	".. currentmodule:: torch.sec\n"
	".. autofunction:: first\n"
	"\n"
	"Containers\r\n"
	"----------\n"
	"\n"
	".. autosummary::\n"
	"    :toctree: generated\n"
	"\n"
	"    Box\n"
	"\n"
	":hidden:`Function`\n"
	"~~~~~~~~~~~~~~~~~~\n"
	".. autofunction:: second\n"
	"\n"
	"    Indented text\n"
	"    -------------\n"
	".. autofunction:: third\n"
	"\n"
	"Some text\n"
	"\n"
	"----\n"
	"\n"
	".. autofunction:: fourth\n"
	"\n"
	"`Constraints`\n"
	"^^^^^^^^^^^^^\n"
	".. autofunction:: fifth\n"
	"\n"
	"   Quoted\n"
	"----------\n"
	".. autofunction:: sixth\n";

static const char class_template[] =
	".. currentmodule:: {{ module }}\n"
	".. autoclass:: {{ name }}\n"
	"    :inherited-members:\n"
	"    :members:\n";

static const char own_template[] =
	".. currentmodule:: {{ module }}\n"
	".. autoclass:: {{ name }}\n"
	"    :members:\n";

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	assert_int_equal(t_tempdir(f->dir, sizeof(f->dir), "updocs"), 0);
	t_put(f->dir, "autograd.rst", autograd_rst);
	t_put(f->dir, "sections.rst", sections_rst);
	t_put(f->dir, "_templates/autosummary/class.rst", class_template);
	t_put(f->dir, "_templates/classtemplate.rst", own_template);
	t_put(f->dir, "elastic/run.rst", ".. module:: torch.distributed.run\n"
					 ".. autofunction:: main\n");
	t_put(f->dir, "_static/ignored.rst", ".. autofunction:: torch.ignored\n");
	t_put(f->dir, "a/b/c/level4.rst", ".. autofunction:: torch.deep.level4\n");
	t_put(f->dir, "a/b/c/d/level5.rst", ".. autofunction:: torch.deep.level5\n");
	t_put(f->dir, "notes.txt", ".. autofunction:: torch.not_a_page\n");
	assert_int_equal(mkdir(strcat(strcpy((char[600]){ 0 }, f->dir), "/dir.rst"), 0755), 0);
	struct ap_buf err = { 0 };
	assert_int_equal(ap_updocs_load(f->dir, "2.6.0+debian", &f->d, &err), 0);
	ap_buf_free(&err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	ap_updocs_free(&f->d);
	int r = t_rmtree(f->dir);
	free(f);
	return r;
}

/* The URL of api (m: what is known of it as a member), "" when none. */
static const char *url_of(struct fix *f, const char *api, const struct ap_updocs_member *m)
{
	static char out[1024];
	struct ap_buf u = { 0 };
	int r = ap_updocs_url(&f->d, api, m, &u);
	snprintf(out, sizeof(out), "%s", r ? "" : ap_buf_str(&u));
	if (r)
		assert_int_equal(u.len, 0);
	ap_buf_free(&u);
	return out;
}

static const struct ap_updocs_member documented = { -1, 1 }, bare = { -1, 0 },
				      own_documented = { 1, 1 };

static void toctree_entries_have_pages_of_their_own(void **state)
{
	struct fix *f = *state;
	assert_string_equal(url_of(f, "torch.autograd.grad_mode.set_multithreading_enabled", NULL),
			    BASE "generated/torch.autograd.grad_mode.set_multithreading_enabled.html");
	assert_string_equal(url_of(f, "torch.autograd.backward", NULL),
			    BASE "generated/torch.autograd.backward.html");
	assert_int_equal(f->d.files, 4); /* a/b/c/level4.rst the fourth, level5 too deep */
}

static void members_are_anchors_on_their_class_page_as_autodoc_makes_them(void **state)
{
	struct fix *f = *state;
	const char *gm = "torch.autograd.grad_mode.set_multithreading_enabled";
	char api[256], want[512];
	snprintf(api, sizeof(api), "%s.clone", gm);
	snprintf(want, sizeof(want), BASE "generated/%s.html#%s", gm, api);
	assert_string_equal(url_of(f, api, &documented), want);
	/* autodoc leaves out a member without a docstring, a private one, and
	 * one nothing is known of */
	assert_string_equal(url_of(f, api, &bare), "");
	assert_string_equal(url_of(f, api, NULL), "");
	snprintf(api, sizeof(api), "%s._private", gm);
	assert_string_equal(url_of(f, api, &documented), "");
}

static void a_template_without_inherited_members_documents_only_the_own(void **state)
{
	struct fix *f = *state;
	assert_string_equal(url_of(f, "torch.autograd.Function.apply", &documented), "");
	assert_string_equal(url_of(f, "torch.autograd.Function.apply", &own_documented),
			    BASE "generated/torch.autograd.Function.html#torch.autograd.Function.apply");
}

static void directives_on_a_page_are_anchors_there(void **state)
{
	struct fix *f = *state;
	assert_string_equal(url_of(f, "torch.autograd", NULL), BASE "autograd.html#module-torch.autograd");
	assert_string_equal(url_of(f, "torch.autograd.gradcheck.gradcheck", NULL),
			    BASE "autograd.html#torch.autograd.gradcheck.gradcheck");
	assert_string_equal(url_of(f, "torch.Size", NULL), BASE "autograd.html#torch.Size");
	/* :undoc-members: documents a member without a docstring */
	assert_string_equal(url_of(f, "torch.Size.numel", &bare), BASE "autograd.html#torch.Size.numel");
	assert_string_equal(url_of(f, "torch.autograd.Picked.second", NULL),
			    BASE "autograd.html#torch.autograd.Picked.second");
	assert_string_equal(url_of(f, "torch.autograd.Picked.third", &own_documented), "");
	assert_string_equal(url_of(f, "torch.distributed.run.main", NULL),
			    BASE "elastic/run.html#torch.distributed.run.main");
}

static void what_the_sources_do_not_place_has_no_url(void **state)
{
	struct fix *f = *state;
	static const char *const none[] = {
		"torch.autograd.elsewhere",           /* autosummary without a toctree */
		"torch.autograd.notlisted",           /* only named in text */
		"torch.autograd.relative_to_a_class", /* .. method:: inside a class body */
		"torch.ignored", "torch.not_a_page",  /* _static/, not .rst */
		"torch.autograd.grad_mode",           /* a prefix of a listed name */
		"torch.autograd.grad_mode.set_multithreading_enabled.clone.deeper",
		"", "torch",
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		assert_string_equal(url_of(f, none[i], &documented), "");
}

static void unreadable_sources_and_versions_are_errors(void **state)
{
	struct fix *f = *state;
	struct ap_updocs d;
	struct ap_buf err = { 0 };
	char missing[600];
	snprintf(missing, sizeof(missing), "%s/none", f->dir);
	assert_int_equal(ap_updocs_load(missing, "2.6", &d, &err), -ENOENT);
	assert_non_null(strstr(ap_buf_str(&err), "/none: No such file or directory"));
	assert_null(d.v);
	ap_buf_reset(&err);
	assert_int_equal(ap_updocs_load(f->dir, "unknown", &d, &err), -EINVAL);
	ap_buf_free(&err);
}

/* The section title of api and its place, "-" when none. */
static const char *section_of(struct fix *f, const char *api, unsigned *order)
{
	const char *s = ap_updocs_section(&f->d, api, order);
	if (!s)
		assert_int_equal(*order, 0);
	return s ? s : "-";
}

/* The sources are read four levels deep (the top and three below): the
 * docs keep their pages within two, and a deeper tree is not the docs. */
static void pages_are_read_four_levels_deep_and_no_deeper(void **state)
{
	struct fix *f = *state;
	assert_string_equal(url_of(f, "torch.deep.level4", NULL),
			    BASE "a/b/c/level4.html#torch.deep.level4");
	assert_string_equal(url_of(f, "torch.deep.level5", NULL), "");
}

/* Each name's section is the nearest heading above its directive, as reST
 * makes headings (a title underlined, or over- and underlined, from the
 * first column), without inline markup; a member is in its class's; an
 * indented underline, a transition and plain text are no headings. */
static void names_are_in_the_section_above_them(void **state)
{
	struct fix *f = *state;
	unsigned o1, o2, o3, o4, o5, o;
	assert_string_equal(section_of(f, "torch.sec.first", &o1), "Overlined");
	assert_string_equal(section_of(f, "torch.sec.Box", &o2), "Containers");
	assert_string_equal(section_of(f, "torch.sec.Box.open", &o), "Containers");
	assert_int_equal(o, o2);
	assert_string_equal(section_of(f, "torch.sec.second", &o3), "Function");
	assert_string_equal(section_of(f, "torch.sec.third", &o), "Function");
	assert_string_equal(section_of(f, "torch.sec.fourth", &o4), "Function");
	assert_int_equal(o4, o3);
	assert_string_equal(section_of(f, "torch.sec.fifth", &o5), "Constraints");
	assert_true(o1 > 0 && o1 < o2 && o2 < o3 && o3 < o5);
	/* an indented line over an adornment is no title either */
	assert_string_equal(section_of(f, "torch.sec.sixth", &o), "Constraints");
	assert_int_equal(o, o5);
	/* the page's title is a section too; what the sources lack has none */
	assert_string_equal(section_of(f, "torch.autograd.backward", &o), "torch.autograd");
	assert_string_equal(section_of(f, "torch.sec.nothing", &o), "-");
	assert_string_equal(section_of(f, "torch.nowhere.at_all", &o), "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(toctree_entries_have_pages_of_their_own),
		cmocka_unit_test(members_are_anchors_on_their_class_page_as_autodoc_makes_them),
		cmocka_unit_test(a_template_without_inherited_members_documents_only_the_own),
		cmocka_unit_test(directives_on_a_page_are_anchors_there),
		cmocka_unit_test(what_the_sources_do_not_place_has_no_url),
		cmocka_unit_test(unreadable_sources_and_versions_are_errors),
		cmocka_unit_test(names_are_in_the_section_above_them),
		cmocka_unit_test(pages_are_read_four_levels_deep_and_no_deeper),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
