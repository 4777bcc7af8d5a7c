#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/sha256.h"
#include "env/provision.h"
#include "env/spawn.h"
#include "check/testsrc.h"

struct ap_fetch {
	void (*progress)(void *ctx, const char *line);
	void *ctx;
	int no_source; /* apt said it has no such source version */
	struct ap_buf last;
};

const char *ap_tests_root(void)
{
	const char *e = getenv("APIPARITY_TESTS_ROOT");
	return e && *e ? e : AP_DEFAULT_TESTS_ROOT;
}

void ap_upstream_version(const char *v, struct ap_buf *out)
{
	const char *colon = strchr(v, ':');
	const char *start = colon ? colon + 1 : v;
	const char *dash = strrchr(start, '-');
	ap_buf_add(out, start, dash ? (size_t)(dash - start) : strlen(start));
}

int ap_testsrc_cached(const char *key, struct ap_buf *out)
{
	struct ap_buf stamp = { 0 };
	ap_buf_addf(&stamp, "%s/%s/%s", ap_tests_root(), key, AP_TESTS_STAMP);
	ap_buf_addf(out, "%s/%s/test", ap_tests_root(), key);
	int ok = access(ap_buf_str(&stamp), F_OK) == 0;
	ap_buf_free(&stamp);
	return ok;
}

/* TESTS_ROOT/<key>/docs/source into out (reset first); 1 when it is a
 * directory there, else 0. */
static int docs_source(const char *key, struct ap_buf *out)
{
	struct stat st;
	ap_buf_reset(out);
	ap_buf_addf(out, "%s/%s/docs/source", ap_tests_root(), key);
	return !stat(ap_buf_str(out), &st) && S_ISDIR(st.st_mode);
}

int ap_testsrc_docs(const char *torch_version, struct ap_buf *out)
{
	size_t n = 0, len = strspn(torch_version ? torch_version : "", "0123456789.");
	char **names = NULL;
	struct ap_buf p = { 0 };
	int r = len ? ap_dir_list(ap_tests_root(), AP_DIR_NODOT, &names, &n) : -ENOENT;
	for (size_t i = 0; !r && i < n; i++) {
		char c = names[i][len];
		if (strncmp(names[i], torch_version, len) || (c && c != '+' && c != '~'))
			continue;
		if (docs_source(names[i], &p)) {
			ap_buf_adds(out, ap_buf_str(&p));
			ap_buf_free(&p);
			ap_dir_free(names, n);
			return 0;
		}
	}
	ap_buf_free(&p);
	ap_dir_free(names, n);
	return -ENOENT;
}

/* A file name of a .dsc's Checksums-Sha256 line, and its NUL, as the scan's
 * %255s reads it (a Debian source file's name is far shorter). */
#define AP_DSC_FILE_SIZE 256

int ap_dsc_sha256(const char *dsc, const char *name, char hex[AP_SHA256_HEX_SIZE])
{
	const char *sec = strstr(dsc, "\nChecksums-Sha256:");
	if (!sec)
		return -ENOENT;
	for (const char *l = strchr(sec + 1, '\n'); l && (l[1] == ' ' || l[1] == '\t');
	     l = strchr(l + 1, '\n')) {
		char h[AP_SHA256_HEX_SIZE], f[AP_DSC_FILE_SIZE];
		unsigned long long size;
		if (sscanf(l + 1, " %64s %llu %255s", h, &size, f) == 3 && !strcmp(f, name) &&
		    strlen(h) == AP_SHA256_HEX_LEN) {
			memcpy(hex, h, AP_SHA256_HEX_SIZE);
			return 0;
		}
	}
	return -ENOENT;
}

static void fetch_line(void *vctx, const char *line)
{
	struct ap_fetch *f = vctx;
	if (strstr(line, "Unable to find a source package") || strstr(line, "Can not find version") ||
	    strstr(line, "404  Not Found"))
		f->no_source = 1;
	ap_buf_reset(&f->last);
	ap_buf_adds(&f->last, line);
	if (f->progress)
		f->progress(f->ctx, line);
}

/* Runs argv on this machine, no shell; 0, or -AP_EPROVISION naming the step. */
static int fetch_run(struct ap_fetch *f, const char *step, const char *const *words,
			struct ap_buf *err)
{
	struct ap_env host = { .name = "host" };
	struct ap_argv cmd = { 0 };
	int r = 0;
	for (size_t i = 0; !r && words[i]; i++)
		r = ap_argv_push(&cmd, words[i]);
	int st = r ? r : ap_spawn_run(&host, &cmd, fetch_line, f, err);
	ap_argv_free(&cmd);
	if (st < 0)
		return st;
	if (st == 0)
		return 0;
	ap_buf_addf(err, "%s failed: %s", step, ap_buf_str(&f->last));
	return -AP_EPROVISION;
}

/* apt options for a private configuration under dir, seeing only src. */
static int apt_setup(const char *dir, const char *suite, struct ap_buf *opts,
			struct ap_buf *err)
{
	struct ap_buf mirror = { 0 }, p = { 0 }, list = { 0 };
	ap_apt_mirror(&mirror);
	if (!mirror.len) {
		ap_buf_adds(err, "no Debian mirror in this machine's apt sources");
		return -AP_EPROVISION;
	}
	ap_buf_addf(&p, "%s/lists/partial", dir);
	int r = ap_mkdirs(ap_buf_str(&p));
	ap_buf_reset(&p);
	ap_buf_addf(&p, "%s/cache/archives/partial", dir);
	r = r ? r : ap_mkdirs(ap_buf_str(&p));
	ap_buf_reset(&p);
	ap_buf_addf(&p, "%s/sources.list", dir);
	ap_buf_addf(&list, "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
		    "%s %s main\n", ap_buf_str(&mirror), suite);
	r = r ? r : ap_write_atomic(ap_buf_str(&p), list.data, list.len);
	ap_buf_addf(opts, "Dir::Etc::SourceList \"%s/sources.list\";\n"
		    "Dir::Etc::SourceParts \"%s/none\";\nDir::State::Lists \"%s/lists\";\n"
		    "Dir::Cache \"%s/cache\";\nAPT::Sandbox::User \"root\";\n", dir, dir, dir, dir);
	if (r)
		ap_buf_addf(err, "cannot prepare %s: %s", dir, strerror(-r));
	ap_buf_free(&mirror);
	ap_buf_free(&p);
	ap_buf_free(&list);
	return r ? -AP_EPROVISION : 0;
}

/* The orig tarball that apt-get source left in dir, by its name prefix. */
static int find_orig(const char *dir, const char *prefix, struct ap_buf *name)
{
	char **names;
	size_t n;
	if (ap_dir_list(dir, 0, &names, &n))
		return -ENOENT;
	for (size_t i = 0; !name->len && i < n; i++)
		if (!strncmp(names[i], prefix, strlen(prefix)))
			ap_buf_adds(name, names[i]);
	ap_dir_free(names, n);
	return name->len ? 0 : -ENOENT;
}

static int have_dsc(const char *dl, const char *source, const char *version)
{
	struct ap_buf p = { 0 };
	const char *colon = strchr(version, ':');
	ap_buf_addf(&p, "%s/%s_%s.dsc", dl, source, colon ? colon + 1 : version);
	int ok = access(ap_buf_str(&p), F_OK) == 0;
	ap_buf_free(&p);
	return ok;
}


/* Checks the tarball against the .dsc of source_version. */
static int verify_orig(const char *dl, const char *source, const char *version,
			  const char *orig, struct ap_buf *err)
{
	struct ap_buf dsc = { 0 }, path = { 0 }, text = { 0 };
	char want[AP_SHA256_HEX_SIZE], got[AP_SHA256_HEX_SIZE];
	const char *colon = strchr(version, ':');
	ap_buf_addf(&dsc, "%s/%s_%s.dsc", dl, source, colon ? colon + 1 : version);
	ap_buf_addf(&path, "%s/%s", dl, orig);
	int r = ap_read_all(ap_buf_str(&dsc), &text);
	if (!r && ap_dsc_sha256(ap_buf_str(&text), orig, want))
		r = -ENOENT;
	r = r ? r : ap_sha256_file(ap_buf_str(&path), got);
	if (r)
		ap_buf_addf(err, "cannot check %s against %s: %s", orig, ap_buf_str(&dsc), ap_strerror(r));
	else if (strcmp(want, got)) {
		ap_buf_addf(err, "%s does not match its .dsc: sha256 %s, expected %s", orig, got, want);
		r = -EBADMSG;
	}
	ap_buf_free(&dsc);
	ap_buf_free(&path);
	ap_buf_free(&text);
	return r ? -AP_EPROVISION : 0;
}

/* A tree of tests fetched before its docs sources were: only those move
 * in (its tests, and what was made from them, stay). */
static int docs_into(const char *partial, const char *final)
{
	struct ap_buf from = { 0 }, to = { 0 };
	ap_buf_addf(&from, "%s/docs", partial);
	ap_buf_addf(&to, "%s/docs", final);
	int r = ap_rm_tree(ap_buf_str(&to));
	if (!r && rename(ap_buf_str(&from), ap_buf_str(&to)))
		r = -errno;
	if (!r)
		r = ap_rm_tree(partial);
	ap_buf_free(&from);
	ap_buf_free(&to);
	return r;
}

static int testsrc_unpack(const char *orig_path, const char *partial, const char *final,
		     struct ap_fetch *f, struct ap_buf *err)
{
	struct ap_buf stamp = { 0 };
	int r = ap_rm_tree(partial);
	r = r ? r : ap_mkdirs(partial);
	const char *tar[] = { "tar", "-xf", orig_path, "-C", partial, "--strip-components=1",
			      "--wildcards", "*/test/*", "*/docs/source/*", NULL };
	r = r ? r : fetch_run(f, "unpacking test/ and docs/source/", tar, err);
	ap_buf_addf(&stamp, "%s/%s", partial, AP_TESTS_STAMP);
	r = r ? r : ap_write_atomic(ap_buf_str(&stamp), orig_path, strlen(orig_path));
	if (!r && access(final, F_OK) == 0)
		r = docs_into(partial, final);
	else if (!r && rename(partial, final))
		r = -errno;
	if (r && !err->len)
		ap_buf_addf(err, "cannot unpack into %s: %s", final, strerror(-r));
	ap_buf_free(&stamp);
	return r == -AP_EPROVISION || !r ? r : -AP_EPROVISION;
}

int ap_testsrc_complete(const char *key)
{
	struct ap_buf p = { 0 }, tree = { 0 };
	int ok = ap_testsrc_cached(key, &tree) && docs_source(key, &p);
	ap_buf_free(&p);
	ap_buf_free(&tree);
	return ok;
}

int ap_testsrc_fetch(const char *suite, const char *source, const char *version,
		     void (*progress)(void *ctx, const char *line), void *ctx,
		     struct ap_buf *err)
{
	struct ap_fetch f = { progress, ctx, 0, { 0 } };
	struct ap_buf up = { 0 }, dir = { 0 }, dl = { 0 }, opts = { 0 }, spec = { 0 };
	struct ap_buf optfile = { 0 }, orig = { 0 }, prefix = { 0 }, final = { 0 }, partial = { 0 };
	ap_upstream_version(version, &up);
	/* a tree fetched before docs sources were is fetched again for them */
	if (ap_testsrc_complete(ap_buf_str(&up))) {
		ap_buf_free(&up);
		ap_buf_free(&final);
		return 1;
	}
	ap_buf_reset(&final);
	ap_buf_addf(&final, "%s/%s", ap_tests_root(), ap_buf_str(&up));
	ap_buf_addf(&partial, "%s/.%s.partial", ap_tests_root(), ap_buf_str(&up));
	ap_buf_addf(&dir, "%s/.apt-%s", ap_tests_root(), suite);
	ap_buf_addf(&dl, "%s/.download-%s", ap_tests_root(), ap_buf_str(&up));
	ap_buf_addf(&optfile, "%s/apt.conf", ap_buf_str(&dir));
	ap_buf_addf(&spec, "%s=%s", source, version);
	int r = apt_setup(ap_buf_str(&dir), suite, &opts, err);
	/* One configuration file (-c) keeps this machine's own apt setup out. */
	r = r ? r : ap_write_atomic(ap_buf_str(&optfile), opts.data, opts.len);
	const char *update[] = { "apt-get", "-q", "-c", ap_buf_str(&optfile), "update", NULL };
	r = r ? r : fetch_run(&f, "apt-get update", update, err);
	if (!r && (r = ap_rm_tree(ap_buf_str(&dl)) ? -AP_EPROVISION : ap_mkdirs(ap_buf_str(&dl))))
		ap_buf_addf(err, "cannot create %s", ap_buf_str(&dl));
	const char *get[] = { "env", "-C", ap_buf_str(&dl), "apt-get", "-q", "-c",
			      ap_buf_str(&optfile), "source", "--download-only", ap_buf_str(&spec),
			      NULL };
	r = r ? r : fetch_run(&f, "apt-get source", get, err);
	/* Only the .dsc and the orig tarball matter: a missing Debian diff
	 * (the archive sometimes lists files it no longer serves) is no loss. */
	ap_buf_addf(&prefix, "%s_%s.orig.tar.", source, ap_buf_str(&up));
	if (r == -AP_EPROVISION && f.no_source &&
	    find_orig(ap_buf_str(&dl), ap_buf_str(&prefix), &orig) == 0 &&
	    have_dsc(ap_buf_str(&dl), source, version)) {
		ap_buf_reset(err);
		r = 0;
	} else if (r && f.no_source) {
		ap_buf_reset(err);
		ap_buf_addf(err, "the archive's %s does not serve source %s (give a source tree "
			    "with --torch-src DIR)", suite, ap_buf_str(&spec));
		r = -AP_ENOSOURCE;
	}
	if (!r && !orig.len && find_orig(ap_buf_str(&dl), ap_buf_str(&prefix), &orig)) {
		ap_buf_addf(err, "apt-get source left no %s* in %s", ap_buf_str(&prefix), ap_buf_str(&dl));
		r = -AP_EPROVISION;
	}
	r = r ? r : verify_orig(ap_buf_str(&dl), source, version, ap_buf_str(&orig), err);
	ap_buf_reset(&prefix);
	ap_buf_addf(&prefix, "%s/%s", ap_buf_str(&dl), ap_buf_str(&orig));
	r = r ? r : testsrc_unpack(ap_buf_str(&prefix), ap_buf_str(&partial), ap_buf_str(&final), &f, err);
	ap_rm_tree(ap_buf_str(&dl));
	struct ap_buf *all[] = { &up, &dir, &dl, &opts, &spec, &optfile, &orig, &prefix, &final,
				 &partial, &f.last };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		ap_buf_free(all[i]);
	return r;
}
