#include <dirent.h>
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

/* Reads "deb URI suite ..." (sources.list) and "URIs: URI" (deb822). */
static int mirror_from(const char *path, struct ap_buf *out)
{
	FILE *f = fopen(path, "r");
	char line[1024], uri[512];
	if (!f)
		return 0;
	while (!out->len && fgets(line, sizeof(line), f))
		if ((sscanf(line, " deb %511s", uri) == 1 && uri[0] != '[') ||
		    sscanf(line, " URIs: %511s", uri) == 1)
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
	DIR *d = opendir(dir);
	struct dirent *e;
	struct ap_buf p = { 0 };
	while (d && !out->len && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 8 || (strcmp(e->d_name + n - 5, ".list") &&
			      strcmp(e->d_name + n - 8, ".sources")))
			continue;
		provision_path(&p, dir, e->d_name, NULL);
		mirror_from(ap_buf_str(&p), out);
	}
	if (d)
		closedir(d);
	ap_buf_free(&p);
}

static void run_line(void *vctx, const char *line)
{
	struct ap_run_ctx *c = vctx;
	fprintf(c->log, "%s\n", line);
	if (c->o->progress)
		c->o->progress(c->o->ctx, c->phase, line);
}

/* Runs one step, host side (chroot NULL) or inside the partial tree. */
static int provision_step(struct ap_run_ctx *c, const char *phase, const char *chroot,
		   const struct ap_argv *cmd, struct ap_buf *err)
{
	struct ap_env env = { .name = (char *)c->o->name, .chroot = (char *)chroot };
	struct ap_buf how = { 0 };
	c->phase = phase;
	if (c->o->progress)
		c->o->progress(c->o->ctx, phase, NULL);
	fprintf(c->log, "== %s\n", phase);
	fflush(c->log);
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

static int stamp(const char *tree, const char *suite)
{
	struct ap_buf p = { 0 };
	char when[32];
	time_t now = time(NULL);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	provision_path(&p, tree, AP_ENV_STAMP, NULL);
	FILE *f = fopen(ap_buf_str(&p), "w");
	ap_buf_free(&p);
	if (!f)
		return -errno;
	fprintf(f, "suite=%s\ncreated=%s\n", suite, when);
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

int ap_provision(const struct ap_provision_opts *o, struct ap_buf *err)
{
	struct ap_buf tree = { 0 }, final = { 0 }, logp = { 0 };
	struct ap_run_ctx c = { o, NULL, NULL };
	int r;

	if (ap_provision_complete(o->root, o->name))
		return 1;
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
	r = remove_tree(&c, ap_buf_str(&tree), err);
	r = r ? r : provision_debootstrap(&c, ap_buf_str(&tree), err);
	r = r ? r : provision_install(&c, ap_buf_str(&tree), err);
	if (!r && ((r = stamp(ap_buf_str(&tree), o->suite)) ||
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
	return r;
}

int ap_provision_suite(const char *dir, struct ap_buf *suite)
{
	struct ap_buf p = { 0 };
	char line[256];
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
