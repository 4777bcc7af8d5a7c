#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "env/envs.h"
#include "base/err.h"
#include "base/fsutil.h"
#include "base/ini.h"

/* The environments file is INI (base/ini.h): a line of any length (long
 * exec, setenv and bind lines are normal) is read whole and every error names
 * the line it is about. */
#define AP_ENVS_FILE_MAX (1u << 20)

struct ap_envs_parse {
	struct ap_envs *envs;
	const char *root;
	const char *file;
	unsigned seen;       /* keys set in the current section, a bit each */
};

/* A plugin module's dotted name, longer than any Python package's. */
#define AP_MODULE_NAME_MAX 256

int ap_env_name_ok(const char *name)
{
	if (!*name || *name == '.' || strlen(name) > AP_ENV_NAME_MAX)
		return 0;
	for (const char *p = name; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr("._-", *p))
			return 0;
	return 1;
}

static struct ap_env *envs_add(struct ap_envs *envs, const char *name)
{
	struct ap_env *v = realloc(envs->v, (envs->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	envs->v = v;
	struct ap_env *e = &v[envs->n];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	if (!e->name)
		return NULL;
	e->remote_shell = -1; /* not given */
	envs->n++;
	return e;
}

static int set_path(char **dst, const char *val, const char *root)
{
	struct ap_buf b = { 0 };
	if (val[0] != '/' && root && ap_buf_addf(&b, "%s/", root))
		return -ENOMEM;
	if (ap_buf_adds(&b, val))
		return ap_buf_free(&b), -ENOMEM;
	*dst = b.data;
	return 0;
}

/* Whether path has a ".." component. */
static int climbs(const char *path)
{
	for (const char *p = path; *p; p += strcspn(p, "/"), p += *p == '/')
		if (!strncmp(p, "..", 2) && (p[2] == '/' || !p[2]))
			return 1;
	return 0;
}

/* chroot = DIR: a relative DIR names a directory under the environments
 * root and may not climb out of it; an absolute one is taken on purpose;
 * neither may be the host's own root, which a chroot would not isolate. */
static int chroot_set(struct ap_buf *err, struct ap_env *e, const char *val, const char *root)
{
	char real[PATH_MAX];
	if (val[0] != '/' && climbs(val))
		return ap_buf_addf(err, "[%s]: chroot '%s' leaves the environments root (a relative "
				   "chroot names a directory under it; give an absolute path on "
				   "purpose)", e->name, val), -1;
	if (set_path(&e->chroot, val, root))
		return ap_buf_adds(err, "out of memory"), -1;
	if ((val[0] == '/' && !val[strspn(val, "/.")]) || (realpath(e->chroot, real) && !strcmp(real, "/")))
		return ap_buf_addf(err, "[%s]: chroot '%s' is the host's own root, which a chroot "
				   "does not isolate", e->name, val), -1;
	return 0;
}

static int yes_no(const char *val, int *out)
{
	if (!strcmp(val, "yes") || !strcmp(val, "true") || !strcmp(val, "1"))
		*out = 1;
	else if (!strcmp(val, "no") || !strcmp(val, "false") || !strcmp(val, "0"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static const char *const ap_env_keys[] = {
	"label", "device", "chroot", "exec", "python", "remote_shell", "setenv", "bind",
	"plugins", "tests_root", NULL
};


/* plugins = module...: each a module name, which the worker imports. */
static int env_plugins(struct ap_buf *err, struct ap_env *e, const char *val)
{
	int r = ap_argv_split(&e->plugins, val);
	if (r == -EINVAL)
		return ap_buf_adds(err, "'plugins': unterminated quote or trailing backslash"),
		       -1;
	if (r)
		return ap_buf_adds(err, "out of memory"), -1;
	for (size_t i = 0; i < e->plugins.n; i++)
		if (!ap_dotted_name_ok(e->plugins.v[i], AP_MODULE_NAME_MAX))
			return ap_buf_addf(err, "plugins: '%s' is not a Python module name",
					   e->plugins.v[i]), -1;
	return 0;
}

/* setenv = NAME=VALUE...; bind = /host/dir:/dir/in/chroot... */
static int env_words(struct ap_buf *err, struct ap_env *e, const char *key,
			const char *val)
{
	int env = !strcmp(key, "setenv");
	struct ap_argv *a = env ? &e->setenv : &e->bind;
	int r = ap_argv_split(a, val);
	if (r == -EINVAL)
		return ap_buf_addf(err, "'%s': unterminated quote or trailing backslash",
				   key), -1;
	if (r)
		return ap_buf_adds(err, "out of memory"), -1;
	for (size_t i = 0; i < a->n; i++) {
		const char *w = a->v[i], *sep = strchr(w, env ? '=' : ':');
		int ok = sep && sep != w && (env ? strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"abcdefghijklmnopqrstuvwxyz0123456789_") == (size_t)(sep - w)
			: w[0] == '/' && sep[1] == '/');
		if (!ok)
			return ap_buf_addf(err, env ? "setenv: '%s' is not NAME=VALUE"
					   : "bind: '%s' is not /host/dir:/dir/inside", w), -1;
	}
	return 0;
}

/* tests_root = DIR: a path on the far side, so only its form can be checked. */
static int tests_root_set(struct ap_buf *err, struct ap_env *e, const char *val)
{
	if (val[0] != '/') {
		ap_buf_addf(err, "tests_root: '%s' is not an absolute path", val);
		return -1;
	}
	if (!(e->tests_root = strdup(val))) {
		ap_buf_adds(err, "out of memory");
		return -1;
	}
	return 0;
}

static int env_set(struct ap_envs_parse *ps, struct ap_buf *err, struct ap_env *e,
		      const char *key, const char *val)
{
	int k = 0;
	while (ap_env_keys[k] && strcmp(ap_env_keys[k], key))
		k++;
	if (!ap_env_keys[k])
		return ap_buf_addf(err, "unknown key '%s' (known: label, device, "
				   "chroot, exec, python, remote_shell, setenv, bind, plugins, tests_root)", key), -1;
	if (ps->seen & (1u << k))
		return ap_buf_addf(err, "key '%s' given twice in [%s]", key, e->name), -1;
	ps->seen |= 1u << k;
	if (!*val && strcmp(key, "label"))
		return ap_buf_addf(err, "key '%s' has no value", key), -1;
	if ((!strcmp(key, "chroot") && e->exec.n) || (!strcmp(key, "exec") && e->chroot))
		return ap_buf_addf(err, "[%s]: chroot and exec cannot be combined",
				   e->name), -1;

	int r = 0;
	if (!strcmp(key, "label"))
		r = (e->label = strdup(val)) ? 0 : -ENOMEM;
	else if (!strcmp(key, "device"))
		r = (e->device = strdup(val)) ? 0 : -ENOMEM;
	else if (!strcmp(key, "chroot"))
		return chroot_set(err, e, val, ps->root);
	else if (!strcmp(key, "tests_root"))
		return tests_root_set(err, e, val);
	else if (!strcmp(key, "remote_shell"))
		r = yes_no(val, &e->remote_shell) ? -EINVAL : 0;
	else if (!strcmp(key, "setenv") || !strcmp(key, "bind"))
		return env_words(err, e, key, val);
	else if (!strcmp(key, "plugins"))
		return env_plugins(err, e, val);
	else {
		struct ap_argv *a = !strcmp(key, "exec") ? &e->exec : &e->python;
		r = ap_argv_split(a, val);
		if (r == -EINVAL)
			return ap_buf_addf(err, "'%s': unterminated quote or "
					   "trailing backslash", key), -1;
	}
	if (r == -EINVAL)
		return ap_buf_addf(err, "'%s' must be yes or no, not '%s'", key, val), -1;
	return r ? (ap_buf_adds(err, "out of memory"), -1) : 0;
}

/* Handles one key (an ap_ini_fn); nonzero with the reason in err, and
 * k->err_line moved to the section header when that is what is wrong. */
static int envs_key(void *ctx, struct ap_ini_key *k, struct ap_buf *err)
{
	struct ap_envs_parse *ps = ctx;
	struct ap_envs *envs = ps->envs;
	const char *section = k->section;

	if (!*section)
		return ap_ini_fail(err, "'%s' outside of any [environment]", k->key);
	struct ap_env *e = envs->n ? &envs->v[envs->n - 1] : NULL;
	if (!e || e->line != k->section_line) {
		k->err_line = k->section_line;
		if (!ap_env_name_ok(section))
			return ap_ini_fail(err, "bad environment name '%s' "
					   "(letters, digits, '.', '_', '-')", section);
		for (size_t i = 0; i < envs->n; i++)
			if (!strcmp(envs->v[i].name, section))
				return ap_ini_fail(err, "environment [%s] defined twice",
						   section);
		k->err_line = k->line;
		if (!(e = envs_add(envs, section)))
			return ap_ini_fail(err, "out of memory");
		e->file = ps->file;
		e->line = k->section_line;
		ps->seen = 0;
	}
	return env_set(ps, err, e, k->key, k->value);
}

/* An entry is whole once its section is parsed: fill in defaults, check sense. */
static int env_finish(struct ap_env *e, struct ap_buf *err)
{
	if (!e->python.n && ap_argv_push(&e->python, "python3"))
		return -ENOMEM;
	if (e->bind.n && !e->chroot)
		return ap_buf_addf(err, "[%s]: bind needs a chroot", e->name), -AP_ECONFIG;
	if (e->remote_shell < 0 && e->exec.n) {
		const char *base = strrchr(e->exec.v[0], '/');
		base = base ? base + 1 : e->exec.v[0];
		e->remote_shell = !strcmp(base, "ssh");
	}
	if (e->remote_shell < 0)
		e->remote_shell = 0;
	if (e->tests_root && !ap_env_remote(e)) {
		ap_buf_addf(err, "[%s]: tests_root is for an environment behind a remote shell "
			    "(this machine's trees are found without it)", e->name);
		return -AP_ECONFIG;
	}
	return 0;
}

static int envs_add_local(struct ap_envs *envs)
{
	for (size_t i = 0; i < envs->n; i++)
		if (!strcmp(envs->v[i].name, "local"))
			return 0;
	struct ap_env *e = envs_add(envs, "local");
	if (!e || !(e->label = strdup("this machine")))
		return -ENOMEM;
	return 0;
}

/* Parses text (changed in place) into envs, whose path is set. */
static int envs_from_text(struct ap_envs *envs, char *text, size_t len, const char *root,
			     struct ap_buf *err)
{
	struct ap_envs_parse ps = { .envs = envs, .root = root, .file = envs->path };
	int r = ap_ini_parse(text, len, envs->path, envs_key, &ps, err);
	for (size_t i = 0; !r && i < envs->n; i++)
		r = env_finish(&envs->v[i], err);
	if (!r && !(r = envs_add_local(envs)))
		r = env_finish(&envs->v[envs->n - 1], err);
	return r;
}

int ap_envs_parse(struct ap_envs *envs, const char *text, size_t len, const char *name,
		  const char *root, struct ap_buf *err)
{
	struct ap_buf copy = { 0 };
	memset(envs, 0, sizeof(*envs));
	int r = (envs->path = strdup(name)) && !ap_buf_add(&copy, text, len) ? 0 : -ENOMEM;
	if (!r)
		r = envs_from_text(envs, copy.data ? copy.data : (char *)"", copy.len, root, err);
	ap_buf_free(&copy);
	if (r)
		ap_envs_free(envs);
	return r;
}

int ap_envs_load(struct ap_envs *envs, const char *path, const char *root,
		 struct ap_buf *err)
{
	struct ap_buf text = { 0 };
	memset(envs, 0, sizeof(*envs));
	if (!path || !strcmp(path, "-"))
		return ap_envs_parse(envs, ap_reference_envs, strlen(ap_reference_envs),
				     "(built-in reference environments)", root, err);
	int r = ap_read_file_limited(path, AP_ENVS_FILE_MAX, &text);
	if (!r)
		r = ap_envs_parse(envs, ap_buf_str(&text), text.len, path, root, err);
	else if (r != -ENOMEM) {
		ap_buf_addf(err, "%s: %s", path, r == -EFBIG ? "larger than 1 MiB, not an "
			    "environments file" : ap_strerror(r));
		r = -AP_ECONFIG;
	}
	ap_buf_free(&text);
	return r;
}

static void env_free(struct ap_env *e)
{
	free(e->name);
	free(e->label);
	free(e->device);
	free(e->chroot);
	free(e->tests_root);
	ap_argv_free(&e->exec);
	ap_argv_free(&e->python);
	ap_argv_free(&e->setenv);
	ap_argv_free(&e->bind);
	ap_argv_free(&e->plugins);
}

int ap_envs_merge(struct ap_envs *dst, struct ap_envs *src)
{
	struct ap_env *v = realloc(dst->v, (dst->n + src->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	dst->v = v;
	for (size_t i = 0; i < src->n; i++) {
		struct ap_env *same = (struct ap_env *)ap_envs_find(dst, src->v[i].name);
		/* Every file has a local; the later's own [local] only (a line
		 * of its own) takes the place of the earlier's. */
		if (same && !src->v[i].line && !strcmp(src->v[i].name, "local"))
			env_free(&src->v[i]);
		else if (same) {
			env_free(same);
			*same = src->v[i];
		} else
			dst->v[dst->n++] = src->v[i];
	}
	free(src->v);
	src->v = NULL;
	src->n = 0;
	return 0;
}

const struct ap_env *ap_envs_find(const struct ap_envs *envs, const char *name)
{
	for (size_t i = 0; i < envs->n; i++)
		if (!strcmp(envs->v[i].name, name))
			return &envs->v[i];
	return NULL;
}

int ap_env_remote(const struct ap_env *env)
{
	return env->exec.n && env->remote_shell;
}

void ap_env_describe(const struct ap_env *env, struct ap_buf *out)
{
	const struct ap_argv *parts[] = { &env->exec, &env->python };
	if (env->chroot)
		ap_buf_addf(out, "chroot %s: ", env->chroot);
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < parts[p]->n; i++)
			ap_buf_addf(out, "%s%s", out->len && out->data[out->len - 1] != ' '
				    ? " " : "", parts[p]->v[i]);
}

void ap_envs_free(struct ap_envs *envs)
{
	for (size_t i = 0; i < envs->n; i++)
		env_free(&envs->v[i]);
	free(envs->v);
	free(envs->path);
	memset(envs, 0, sizeof(*envs));
}

int ap_env_copy(const struct ap_env *env, struct ap_env *dst)
{
	*dst = *env;
	memset(&dst->bind, 0, sizeof(dst->bind));
	return ap_argv_extend(&dst->bind, &env->bind);
}

int ap_env_add_bind(struct ap_env *dst, const char *host, const char *inside)
{
	struct ap_buf w = { 0 };
	int r = ap_buf_addf(&w, "%s:%s", host, inside);
	r = r ? r : ap_argv_push(&dst->bind, ap_buf_str(&w));
	ap_buf_free(&w);
	return r;
}

void ap_env_extra_free(struct ap_env *dst)
{
	ap_argv_free(&dst->bind);
}
