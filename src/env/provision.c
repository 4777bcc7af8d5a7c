#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/argv.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "base/sha256.h"
#include "env/provision.h"
#include "env/spawn.h"

/* Needed by the worker and by upstream tests; each added alone so that a suite
 * which lacks one (bookworm has no python3-expecttest) still provisions. */
static const char *const ap_required_pkgs[] = {
	"python3-torch", "python3-pytest", "python3-numpy", "python3-setuptools", NULL
};
static const char *const ap_optional_pkgs[] = {
	"python3-expecttest", "python3-hypothesis", NULL
};

/* The most a pinned file of a backend's source may hold (a CMakeLists.txt,
 * a setup.py: tens of KiB); more is not the file that was pinned. */
#define AP_BACKEND_FILE_MAX (1u << 20)

/* One file of a backend's upstream source and the sha256 it must have. */
struct ap_pinned {
	const char *path;   /* under the backend's directory of the test tree */
	const char *sha256;
};

/* A device backend built into an environment from upstream's test tree. */
struct ap_backend {
	const char *name;          /* --backend */
	const char *tree;          /* the checked test tree (tests fetch's key) */
	const char *suite;         /* whose `tests fetch` gives that tree */
	const char *dir;           /* the backend's directory under its test/ */
	const char *torch;         /* the torch it builds against, "major.minor." */
	const char *dest;          /* where it is built, inside the environment */
	const char *module;        /* the package it makes importable */
	const char *const *pkgs;   /* the Debian packages its build needs */
	const struct ap_pinned *files;
};

static const char *const ap_openreg_pkgs[] = {
	"g++", "libtorch-dev", "pybind11-dev", "python3-dev", "python3-setuptools", NULL
};

/* test/cpp_extensions/open_registration_extension of pytorch_2.6.0+dfsg's
 * orig tarball (checked against its .dsc when `tests fetch trixie` unpacked
 * it), file by file. In `sha256sum` order: the listing's own sha256 is the
 * backend_sha256 of the stamp. */
static const struct ap_pinned ap_openreg_files[] = {
	{ "README.md", "941e15dd10cedbca4790f657f8ad632af106637df72c25e6367e450a9954c6fd" },
	{ "pytorch_openreg/__init__.py",
	  "75ce422b5200c7e3e583c66d2d005aa833eabc62da143fa8410f6c68b327800f" },
	{ "pytorch_openreg/_aten_impl.py",
	  "09a4ae2e5002f847c167de74c62453dc063934f17d2e7681bd9083abf30037b2" },
	{ "pytorch_openreg/_device_daemon.py",
	  "3aa52c34750644b2511da71fdc12f771660b228b05d96e0b82989e79c86393e2" },
	{ "pytorch_openreg/_meta_parser.py",
	  "7c727b4107b967026df90a0e06a62b6850e57e29e7cddc062329f083debe0182" },
	{ "pytorch_openreg/csrc/Module.cpp",
	  "6ac38acbb97b48882a5f18022972bf92279caaf0328764e68a5c4ea383acddb2" },
	{ "pytorch_openreg/csrc/OpenReg.h",
	  "ae107529d9cc2655962b6da4bdc279577920a0d49bbfc5b59c45f13af4584c71" },
	{ "pytorch_openreg/csrc/OpenRegHooks.cpp",
	  "2311f27380c7305bdd78e6a3aa15e1558591e63e967a3554031c14e32c23e417" },
	{ "pytorch_openreg/csrc/OpenRegMem.cpp",
	  "b98dbbd59fd49c286132ff8e9daadb3b2235c089e782cc76072e1bfd8b7482b4" },
	{ "setup.py", "065693ee0723d3e776e19bbf26023858dbe13865c65c1d28ba642779d14a5638" },
	{ "test/test_openreg.py", "a661a9f537de40d058083dba46b24acf93053004a79bfee452f5abbaf674559b" },
	{ NULL, NULL }
};

static const struct ap_backend ap_backends[] = {
	{ "openreg", "2.6.0+dfsg", "trixie", "cpp_extensions/open_registration_extension", "2.6.",
	  "/opt/apiparity/open_registration_extension", "pytorch_openreg", ap_openreg_pkgs,
	  ap_openreg_files },
};

/* The one change made to upstream's files: its setup.py compiles with
 * -Werror, and GCC 14 (trixie's) warns inside torch's own headers
 * (-Wdangling-reference), which is no fault of the backend. */
static const char ap_werror_old[] = ", \"-Werror\"]},";
static const char ap_werror_new[] =
	"]},  # apiparity: -Werror dropped, GCC 14 warns inside torch's own headers";

static const struct ap_backend *backend_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(ap_backends) / sizeof(ap_backends[0]); i++)
		if (!strcmp(ap_backends[i].name, name))
			return &ap_backends[i];
	return NULL;
}

const char *ap_provision_backend_tree(const char *name, const char **suite)
{
	const struct ap_backend *b = backend_find(name);
	if (b && suite)
		*suite = b->suite;
	return b ? b->tree : NULL;
}

const char *ap_provision_backends(void)
{
	return "openreg";
}

struct ap_run_ctx {
	const struct ap_provision_opts *o;
	const char *phase;
	FILE *log;
};

static void provision_path(struct ap_buf *b, const char *root, const char *a, const char *b2)
{
	ap_buf_reset(b);
	ap_buf_addf(b, "%s/%s%s", root, a, b2 ? b2 : "");
}

int ap_provision_complete(const char *root, const char *name)
{
	struct ap_buf p = { 0 };
	provision_path(&p, root, name, "/" AP_ENV_STAMP);
	int ok = access(ap_buf_str(&p), F_OK) == 0;
	ap_buf_free(&p);
	return ok;
}

static int mirror_candidate(const char *uri)
{
	return strncmp(uri, "http", 4) == 0 && !strstr(uri, "security") &&
	       strstr(uri, "/debian");
}

/* A sources line longer than AP_APT_LINE_MAX is read in pieces (none of
 * which reads as an entry); a longer URI than AP_APT_URI_MAX is cut, and
 * then names no mirror that answers. */
#define AP_APT_LINE_MAX 1024
#define AP_APT_URI_MAX 511
#define AP_STR_(x) #x
#define AP_STR(x) AP_STR_(x)

/* Reads "deb URI suite ..." (sources.list) and "URIs: URI" (deb822). */
static int mirror_from(const char *path, struct ap_buf *out)
{
	FILE *f = fopen(path, "r");
	char line[AP_APT_LINE_MAX], uri[AP_APT_URI_MAX + 1];
	if (!f)
		return 0;
	while (!out->len && fgets(line, sizeof(line), f))
		if ((sscanf(line, " deb %" AP_STR(AP_APT_URI_MAX) "s", uri) == 1 && uri[0] != '[') ||
		    sscanf(line, " URIs: %" AP_STR(AP_APT_URI_MAX) "s", uri) == 1)
			if (mirror_candidate(uri))
				ap_buf_adds(out, uri);
	fclose(f);
	return out->len > 0;
}

void ap_apt_mirror(struct ap_buf *out)
{
	const char *dir = "/etc/apt/sources.list.d";
	if (mirror_from("/etc/apt/sources.list", out))
		return;
	struct ap_buf p = { 0 };
	char **names;
	size_t k;
	if (ap_dir_list(dir, 0, &names, &k))
		return;
	for (size_t i = 0; !out->len && i < k; i++) {
		const char *name = names[i];
		size_t n = strlen(name);
		if (n < 8 || (strcmp(name + n - 5, ".list") && strcmp(name + n - 8, ".sources")))
			continue;
		provision_path(&p, dir, name, NULL);
		mirror_from(ap_buf_str(&p), out);
	}
	ap_dir_free(names, k);
	ap_buf_free(&p);
}

static void run_line(void *vctx, const char *line)
{
	struct ap_run_ctx *c = vctx;
	fprintf(c->log, "%s\n", line);
	if (c->o->progress)
		c->o->progress(c->o->ctx, c->phase, line);
}

/* Starts a phase: one progress line, and a heading in the log. */
static void provision_phase(struct ap_run_ctx *c, const char *phase)
{
	c->phase = phase;
	if (c->o->progress)
		c->o->progress(c->o->ctx, phase, NULL);
	fprintf(c->log, "== %s\n", phase);
	fflush(c->log);
}

/* Runs one step, host side (chroot NULL) or inside the partial tree. */
static int provision_step(struct ap_run_ctx *c, const char *phase, const char *chroot,
		   const struct ap_argv *cmd, struct ap_buf *err)
{
	struct ap_env env = { .name = (char *)c->o->name, .chroot = (char *)chroot };
	struct ap_buf how = { 0 };
	provision_phase(c, phase);
	int st = ap_spawn_run(&env, cmd, run_line, c, err);
	if (st < 0)
		return st;
	if (st == 0)
		return 0;
	ap_wait_describe(st, &how);
	ap_buf_addf(err, "%s %s", cmd->v[0], ap_buf_str(&how));
	ap_buf_free(&how);
	return -AP_EPROVISION;
}

static int argv_of(struct ap_argv *a, const char *const *words, const char *const *more)
{
	ap_argv_free(a);
	for (; *words; words++)
		if (ap_argv_push(a, *words))
			return -ENOMEM;
	for (; more && *more; more++)
		if (ap_argv_push(a, *more))
			return -ENOMEM;
	return 0;
}

static int provision_install(struct ap_run_ctx *c, const char *tree, struct ap_buf *err)
{
	static const char *const apt[] = {
		"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q",
		"--no-install-recommends", NULL
	};
	struct ap_argv cmd = { 0 };
	int r = argv_of(&cmd, apt, ap_required_pkgs);
	r = r ? r : provision_step(c, "installing torch", tree, &cmd, err);
	for (int i = 0; !r && ap_optional_pkgs[i]; i++) {
		const char *one[] = { ap_optional_pkgs[i], NULL };
		struct ap_buf skip = { 0 };
		r = argv_of(&cmd, apt, one);
		if (!r && provision_step(c, ap_optional_pkgs[i], tree, &cmd, &skip))
			fprintf(c->log, "== %s not available in this suite, left out: %s\n",
				ap_optional_pkgs[i], ap_buf_str(&skip));
		ap_buf_free(&skip);
	}
	ap_argv_free(&cmd);
	return r;
}

static int provision_debootstrap(struct ap_run_ctx *c, const char *tree, struct ap_buf *err)
{
	struct ap_buf cache = { 0 }, mirror = { 0 }, opt = { 0 };
	struct ap_argv cmd = { 0 };
	/* A cache per suite: make envs provisions suites concurrently, and two
	 * debootstraps must not download the same file into one directory. */
	provision_path(&cache, c->o->root, ".debs/", c->o->suite);
	ap_mkdirs(ap_buf_str(&cache));
	ap_buf_addf(&opt, "--cache-dir=%s", ap_buf_str(&cache));
	ap_apt_mirror(&mirror);
	const char *words[] = { "debootstrap", "--variant=minbase", ap_buf_str(&opt),
				c->o->suite, tree, mirror.len ? ap_buf_str(&mirror) : NULL, NULL };
	int r = argv_of(&cmd, words, NULL);
	r = r ? r : provision_step(c, "debootstrap", NULL, &cmd, err);
	ap_argv_free(&cmd);
	ap_buf_free(&cache);
	ap_buf_free(&mirror);
	ap_buf_free(&opt);
	return r;
}

/* A stamp's time, "YYYY-MM-DDTHH:MM:SSZ", and its NUL, with room. */
#define AP_UTC_SIZE 32
/* A stamp's line: "suite=" and a Debian suite's name, with room. */
#define AP_STAMP_LINE_MAX 256

/* Writes the stamp: the suite, the time, and what extra says (key=value
 * lines: what a backend was built from). */
static int stamp(const char *tree, const char *suite, const char *extra)
{
	struct ap_buf p = { 0 };
	char when[AP_UTC_SIZE];
	time_t now = time(NULL);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	provision_path(&p, tree, AP_ENV_STAMP, NULL);
	FILE *f = fopen(ap_buf_str(&p), "w");
	ap_buf_free(&p);
	if (!f)
		return -errno;
	fprintf(f, "suite=%s\ncreated=%s\n%s", suite, when, extra);
	int r = fflush(f) || fsync(fileno(f)) ? -errno : 0;
	return fclose(f) && !r ? -errno : r;
}

static int remove_tree(struct ap_run_ctx *c, const char *tree, struct ap_buf *err)
{
	const char *words[] = { "rm", "-rf", "--", tree, NULL };
	struct ap_argv cmd = { 0 };
	if (access(tree, F_OK) != 0)
		return 0;
	int r = argv_of(&cmd, words, NULL);
	r = r ? r : provision_step(c, "removing an interrupted attempt", NULL, &cmd, err);
	ap_argv_free(&cmd);
	return r;
}

/* ROOT/SUITE, into seed, when it is a complete environment of that suite other
 * than the one being made: then a backend environment starts from a copy. */
static int seed_of(const struct ap_provision_opts *o, struct ap_buf *seed)
{
	struct ap_buf suite = { 0 };
	provision_path(seed, o->root, o->suite, NULL);
	int ok = strcmp(o->name, o->suite) && ap_provision_complete(o->root, o->suite) &&
		 !ap_provision_suite(ap_buf_str(seed), &suite) &&
		 !strcmp(ap_buf_str(&suite), o->suite);
	ap_buf_free(&suite);
	return ok;
}

/* Copies the complete environment seed as the partial tree: what debootstrap
 * and the installs would make again, in seconds (a clone where the file system
 * can). Its stamp goes, so that the copy never passes for complete. */
static int provision_seed(struct ap_run_ctx *c, const char *seed, const char *tree,
			  struct ap_buf *err)
{
	const char *words[] = { "cp", "-a", "--reflink=auto", "--", seed, tree, NULL };
	struct ap_argv cmd = { 0 };
	struct ap_buf st = { 0 };
	fprintf(c->log, "== seeded from %s, a complete %s environment, copied with "
		"cp -a --reflink=auto instead of debootstrap\n", seed, c->o->suite);
	int r = argv_of(&cmd, words, NULL);
	r = r ? r : provision_step(c, "copying the suite's environment", NULL, &cmd, err);
	provision_path(&st, tree, "/" AP_ENV_STAMP, NULL);
	if (!r && unlink(ap_buf_str(&st)) && errno != ENOENT) {
		r = -errno;
		ap_buf_addf(err, "cannot remove %s: %s", ap_buf_str(&st), strerror(errno));
	}
	ap_argv_free(&cmd);
	ap_buf_free(&st);
	return r;
}

/* Debian's torch and the modules the tests import: a copy of ROOT/SUITE for a
 * backend environment when there is one, else debootstrap and apt-get. */
static int provision_base(struct ap_run_ctx *c, const char *tree, struct ap_buf *extra,
			  struct ap_buf *err)
{
	struct ap_buf seed = { 0 };
	int r;
	if (c->o->backend && seed_of(c->o, &seed)) {
		r = provision_seed(c, ap_buf_str(&seed), tree, err);
		ap_buf_addf(extra, "seeded_from=%s\n", ap_buf_str(&seed));
	} else {
		r = provision_debootstrap(c, tree, err);
		r = r ? r : provision_install(c, tree, err);
	}
	ap_buf_free(&seed);
	return r;
}

/* Runs python3 -c code [arg] inside the partial tree, from /. */
static int tree_python(struct ap_run_ctx *c, const char *phase, const char *tree,
		       const char *code, const char *arg, struct ap_buf *err)
{
	const char *words[] = { "env", "-C", "/", "python3", "-c", code, arg, NULL };
	struct ap_argv cmd = { 0 };
	int r = argv_of(&cmd, words, NULL);
	r = r ? r : provision_step(c, phase, tree, &cmd, err);
	ap_argv_free(&cmd);
	return r;
}

/* Fresh package lists (a seed's may be old), then the build's packages, then
 * a check that the suite's torch is the one the backend's source is for. */
static int backend_packages(struct ap_run_ctx *c, const struct ap_backend *b,
			    const char *tree, struct ap_buf *err)
{
	static const char *const update[] = { "apt-get", "update", "-q", NULL };
	static const char *const apt[] = {
		"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q",
		"--no-install-recommends", NULL
	};
	static const char check[] =
		"import sys, torch\n"
		"print('torch', torch.__version__)\n"
		"if not torch.__version__.startswith(sys.argv[1]):\n"
		"    sys.exit('this backend is built from the source of torch %sx' % sys.argv[1])\n";
	struct ap_argv cmd = { 0 };
	int r = argv_of(&cmd, update, NULL);
	r = r ? r : provision_step(c, "updating the package lists", tree, &cmd, err);
	r = r ? r : argv_of(&cmd, apt, b->pkgs);
	r = r ? r : provision_step(c, "installing the build tools", tree, &cmd, err);
	r = r ? r : tree_python(c, "checking the torch version", tree, check, b->torch, err);
	ap_argv_free(&cmd);
	return r;
}

/* Drops -Werror from upstream's setup.py (see ap_werror_old), which must
 * hold it exactly once. */
static int drop_werror(struct ap_buf *text, struct ap_buf *err)
{
	const char *at = strstr(ap_buf_str(text), ap_werror_old);
	if (!at || strstr(at + 1, ap_werror_old)) {
		ap_buf_addf(err, "setup.py does not name -Werror once as expected");
		return -AP_EPROVISION;
	}
	struct ap_buf out = { 0 };
	size_t head = (size_t)(at - text->data);
	ap_buf_add(&out, text->data, head);
	ap_buf_adds(&out, ap_werror_new);
	ap_buf_adds(&out, at + strlen(ap_werror_old));
	ap_buf_free(text);
	*text = out;
	return out.data ? 0 : -ENOMEM;
}

/* Reads one pinned file of the test tree into text, checked against its
 * sha256; its sha256sum line goes to the log, and to listing when not NULL. */
static int backend_read(struct ap_run_ctx *c, const struct ap_backend *b,
			const struct ap_pinned *f, struct ap_buf *text, struct ap_buf *listing,
			struct ap_buf *err)
{
	struct ap_buf src = { 0 };
	char got[AP_SHA256_HEX_SIZE];
	ap_buf_addf(&src, "%s/%s/%s", c->o->backend_src, b->dir, f->path);
	int r = ap_read_file_limited(ap_buf_str(&src), AP_BACKEND_FILE_MAX, text);
	if (r)
		ap_buf_addf(err, "cannot read %s: %s", ap_buf_str(&src), ap_strerror(r));
	ap_sha256_mem(text->data, text->len, got);
	if (!r && strcmp(got, f->sha256)) {
		ap_buf_addf(err, "%s does not match its pinned sha256: %s, expected %s",
			    ap_buf_str(&src), got, f->sha256);
		r = -AP_EPROVISION;
	}
	if (listing)
		ap_buf_addf(listing, "%s  ./%s\n", got, f->path);
	fprintf(c->log, "%s  %s\n", got, ap_buf_str(&src));
	ap_buf_free(&src);
	return r;
}

/* Every pinned file read and checked, nothing written: a source that is not
 * the pinned one fails before minutes go into the environment. */
static int backend_check(struct ap_run_ctx *c, const struct ap_backend *b, struct ap_buf *err)
{
	struct ap_buf text = { 0 };
	int r = 0;
	provision_phase(c, "checking the backend's source");
	for (const struct ap_pinned *f = b->files; !r && f->path; f++) {
		r = backend_read(c, b, f, &text, NULL, err);
		ap_buf_reset(&text);
	}
	ap_buf_free(&text);
	return r;
}

/* Copies one pinned file from the test tree into the environment, checked
 * again as it is read; adds its sha256sum line to listing. */
static int backend_file(struct ap_run_ctx *c, const struct ap_backend *b,
			const struct ap_pinned *f, const char *tree, struct ap_buf *listing,
			struct ap_buf *err)
{
	struct ap_buf dst = { 0 }, text = { 0 };
	ap_buf_addf(&dst, "%s%s/%s", tree, b->dest, f->path);
	int r = backend_read(c, b, f, &text, listing, err);
	if (!r && !strcmp(f->path, "setup.py"))
		r = drop_werror(&text, err);
	r = r ? r : ap_mkdirs_parent(ap_buf_str(&dst));
	r = r ? r : ap_write_atomic(ap_buf_str(&dst), text.data, text.len);
	if (r && !err->len)
		ap_buf_addf(err, "cannot write %s: %s", ap_buf_str(&dst), ap_strerror(r));
	ap_buf_free(&dst);
	ap_buf_free(&text);
	return r;
}

/* The backend's source, every file checked, into the environment; extra gets
 * what it was built from. */
static int backend_copy(struct ap_run_ctx *c, const struct ap_backend *b, const char *tree,
			struct ap_buf *extra, struct ap_buf *err)
{
	struct ap_buf listing = { 0 };
	char digest[AP_SHA256_HEX_LEN + 1];
	int r = 0;
	provision_phase(c, "copying the backend's checked source");
	for (const struct ap_pinned *f = b->files; !r && f->path; f++)
		r = backend_file(c, b, f, tree, &listing, err);
	ap_sha256_mem(listing.data, listing.len, digest);
	if (!r)
		ap_buf_addf(extra, "backend=%s\nbackend_source=%s test/%s\nbackend_sha256=%s\n",
			    b->name, b->tree, b->dir, digest);
	ap_buf_free(&listing);
	return r;
}

/* Builds the backend in place, makes it importable, and uses its device once. */
static int backend_build(struct ap_run_ctx *c, const struct ap_backend *b, const char *tree,
			 struct ap_buf *err)
{
	/* The package is linked into site-packages, rather than its directory put
	 * on sys.path by a .pth file, so that only the package becomes importable
	 * (not setup.py nor upstream's test/), and nothing is built twice as pip
	 * would (nor is pip needed). */
	static const char link[] =
		"import os, site, sys\n"
		"d = site.getsitepackages()[0]\n"
		"os.makedirs(d, exist_ok=True)\n"
		"p = os.path.join(d, os.path.basename(sys.argv[1]))\n"
		"os.symlink(sys.argv[1], p)\n"
		"print(p, '->', sys.argv[1])\n";
	/* From /, so that the package comes from site-packages, not the cwd. */
	static const char use[] =
		"import sys, torch, importlib\n"
		"importlib.import_module(sys.argv[1])\n"
		"x = torch.arange(4.0).to(torch._C._get_privateuse1_backend_name())\n"
		"y = (x * 2).cpu().tolist()\n"
		"print(x.device, y)\n"
		"sys.exit(0 if y == [0.0, 2.0, 4.0, 6.0] else 'wrong result on the device')\n";
	struct ap_buf pkg = { 0 };
	const char *words[] = { "env", "-C", b->dest, "nice", "-n", "10", "python3", "setup.py",
				"build_ext", "--inplace", NULL };
	struct ap_argv cmd = { 0 };
	ap_buf_addf(&pkg, "%s/%s", b->dest, b->module);
	int r = argv_of(&cmd, words, NULL);
	r = r ? r : provision_step(c, "building the backend (about 3 minutes on 2 cores)", tree,
				   &cmd, err);
	r = r ? r : tree_python(c, "making the backend importable", tree, link, ap_buf_str(&pkg),
				err);
	r = r ? r : tree_python(c, "checking the backend's device", tree, use, b->module, err);
	ap_argv_free(&cmd);
	ap_buf_free(&pkg);
	return r;
}

static int provision_backend(struct ap_run_ctx *c, const struct ap_backend *b,
			     const char *tree, struct ap_buf *extra, struct ap_buf *err)
{
	int r = backend_packages(c, b, tree, err);
	r = r ? r : backend_copy(c, b, tree, extra, err);
	return r ? r : backend_build(c, b, tree, err);
}

int ap_provision(const struct ap_provision_opts *o, struct ap_buf *err)
{
	struct ap_buf tree = { 0 }, final = { 0 }, logp = { 0 }, extra = { 0 };
	struct ap_run_ctx c = { o, NULL, NULL };
	const struct ap_backend *b = backend_find(o->backend);
	int r;

	if (ap_provision_complete(o->root, o->name))
		return 1;
	if (o->backend && (!b || !o->backend_src)) {
		ap_buf_addf(err, "no backend '%s' to build (known: %s)", o->backend,
			    ap_provision_backends());
		return -EINVAL;
	}
	if (mkdir(o->root, 0755) && errno != EEXIST) {
		ap_buf_addf(err, "cannot create %s: %s", o->root, strerror(errno));
		return -errno;
	}
	provision_path(&tree, o->root, ".", o->name);
	ap_buf_adds(&tree, ".partial");
	provision_path(&final, o->root, o->name, NULL);
	provision_path(&logp, o->root, o->name, ".log");
	if (!(c.log = fopen(ap_buf_str(&logp), "w"))) {
		r = -errno;
		ap_buf_addf(err, "cannot write %s: %s", ap_buf_str(&logp), strerror(errno));
		goto out;
	}
	r = b ? backend_check(&c, b, err) : 0;
	r = r ? r : remove_tree(&c, ap_buf_str(&tree), err);
	r = r ? r : provision_base(&c, ap_buf_str(&tree), &extra, err);
	r = r || !b ? r : provision_backend(&c, b, ap_buf_str(&tree), &extra, err);
	if (!r && ((r = stamp(ap_buf_str(&tree), o->suite, ap_buf_str(&extra))) ||
		   (rename(ap_buf_str(&tree), ap_buf_str(&final)) && (r = -errno))))
		ap_buf_addf(err, "cannot complete %s: %s", ap_buf_str(&final), strerror(-r));
	if (r)
		ap_buf_addf(err, " (log: %s)", ap_buf_str(&logp));
out:
	if (c.log)
		fclose(c.log);
	ap_buf_free(&tree);
	ap_buf_free(&final);
	ap_buf_free(&logp);
	ap_buf_free(&extra);
	return r;
}

int ap_provision_suite(const char *dir, struct ap_buf *suite)
{
	struct ap_buf p = { 0 };
	char line[AP_STAMP_LINE_MAX];
	provision_path(&p, dir, AP_ENV_STAMP, NULL);
	FILE *f = fopen(ap_buf_str(&p), "r");
	ap_buf_free(&p);
	if (!f)
		return -errno;
	while (!suite->len && fgets(line, sizeof(line), f))
		if (!strncmp(line, "suite=", 6))
			ap_buf_add(suite, line + 6, strcspn(line + 6, "\n"));
	fclose(f);
	return suite->len ? 0 : -ENOENT;
}
