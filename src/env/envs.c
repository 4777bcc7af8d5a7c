#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env/envs.h"
#include "base/err.h"

struct ap_envs_parse {
	struct ap_envs *envs;
	const char *root;
	struct ap_buf *err;
	const char *file;
	unsigned seen; /* keys set in the current section, a bit each */
	FILE *in;
	int line;         /* the line inih is on, counted as it reads */
	int section_line; /* where the latest [section] header is */
	int key_seen;     /* a key since it: an indented line continues that key */
	int fail_line;    /* where the handler first failed; 0: it has not */
	int err_line;     /* the line that failure is about */
};

int ap_env_name_ok(const char *name)
{
	if (!*name || *name == '.' || strlen(name) > 64)
		return 0;
	for (const char *p = name; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr("._-", *p))
			return 0;
	return 1;
}

static struct ap_env *ap_envs_add(struct ap_envs *envs, const char *name)
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

static int ap_set_path(char **dst, const char *val, const char *root)
{
	struct ap_buf b = { 0 };
	if (val[0] != '/' && root && ap_buf_addf(&b, "%s/", root))
		return -ENOMEM;
	if (ap_buf_adds(&b, val))
		return ap_buf_free(&b), -ENOMEM;
	*dst = b.data;
	return 0;
}

static int ap_yes_no(const char *val, int *out)
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
	"label", "device", "chroot", "exec", "python", "remote_shell", "setenv", "bind", NULL
};

/* setenv = NAME=VALUE...; bind = /host/dir:/dir/in/chroot... */
static int ap_env_words(struct ap_envs_parse *ps, struct ap_env *e, const char *key,
			const char *val)
{
	int env = !strcmp(key, "setenv");
	struct ap_argv *a = env ? &e->setenv : &e->bind;
	int r = ap_argv_split(a, val);
	if (r == -EINVAL)
		return ap_buf_addf(ps->err, "'%s': unterminated quote or trailing backslash",
				   key), -1;
	if (r)
		return ap_buf_adds(ps->err, "out of memory"), -1;
	for (size_t i = 0; i < a->n; i++) {
		const char *w = a->v[i], *sep = strchr(w, env ? '=' : ':');
		int ok = sep && sep != w && (env ? strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"abcdefghijklmnopqrstuvwxyz0123456789_") == (size_t)(sep - w)
			: w[0] == '/' && sep[1] == '/');
		if (!ok)
			return ap_buf_addf(ps->err, env ? "setenv: '%s' is not NAME=VALUE"
					   : "bind: '%s' is not /host/dir:/dir/inside", w), -1;
	}
	return 0;
}

static int ap_env_set(struct ap_envs_parse *ps, struct ap_env *e,
		      const char *key, const char *val)
{
	int k = 0;
	while (ap_env_keys[k] && strcmp(ap_env_keys[k], key))
		k++;
	if (!ap_env_keys[k])
		return ap_buf_addf(ps->err, "unknown key '%s' (known: label, device, "
				   "chroot, exec, python, remote_shell, setenv, bind)", key), -1;
	if (ps->seen & (1u << k))
		return ap_buf_addf(ps->err, "key '%s' given twice in [%s]", key, e->name), -1;
	ps->seen |= 1u << k;
	if (!*val && strcmp(key, "label"))
		return ap_buf_addf(ps->err, "key '%s' has no value", key), -1;
	if ((!strcmp(key, "chroot") && e->exec.n) || (!strcmp(key, "exec") && e->chroot))
		return ap_buf_addf(ps->err, "[%s]: chroot and exec cannot be combined",
				   e->name), -1;

	int r = 0;
	if (!strcmp(key, "label"))
		r = (e->label = strdup(val)) ? 0 : -ENOMEM;
	else if (!strcmp(key, "device"))
		r = (e->device = strdup(val)) ? 0 : -ENOMEM;
	else if (!strcmp(key, "chroot"))
		r = ap_set_path(&e->chroot, val, ps->root);
	else if (!strcmp(key, "remote_shell"))
		r = ap_yes_no(val, &e->remote_shell) ? -EINVAL : 0;
	else if (!strcmp(key, "setenv") || !strcmp(key, "bind"))
		return ap_env_words(ps, e, key, val);
	else {
		struct ap_argv *a = !strcmp(key, "exec") ? &e->exec : &e->python;
		r = ap_argv_split(a, val);
		if (r == -EINVAL)
			return ap_buf_addf(ps->err, "'%s': unterminated quote or "
					   "trailing backslash", key), -1;
	}
	if (r == -EINVAL)
		return ap_buf_addf(ps->err, "'%s' must be yes or no, not '%s'", key, val), -1;
	return r ? (ap_buf_adds(ps->err, "out of memory"), -1) : 0;
}

/* inih's reader: it tells the handler nothing of section headers, so they are
 * noticed here, for "[a] ... [a]" to read as two sections and for errors about
 * a section to name its header's line. */
static char *ap_envs_read(char *str, int num, void *stream)
{
	struct ap_envs_parse *ps = stream;
	if (!fgets(str, num, ps->in))
		return NULL;
	const char *p = str + (++ps->line == 1 && !strncmp(str, "\xEF\xBB\xBF", 3) ? 3 : 0);
	size_t indent = strspn(p, " \t");
	if (p[indent] == '[' && !(indent && ps->key_seen)) {
		ps->section_line = ps->line;
		ps->key_seen = 0;
	}
	return str;
}

/* Handles one key; 0 with a message in ps->err, and err_line set, if it is wrong. */
static int ap_envs_key(struct ap_envs_parse *ps, const char *section, const char *key,
		       const char *val)
{
	struct ap_envs *envs = ps->envs;

	ps->err_line = ps->line;
	if (!*section)
		return ap_buf_addf(ps->err, "'%s' outside of any [environment]", key), 0;
	struct ap_env *e = envs->n ? &envs->v[envs->n - 1] : NULL;
	if (!e || e->line != ps->section_line) {
		ps->err_line = ps->section_line;
		if (!ap_env_name_ok(section))
			return ap_buf_addf(ps->err, "bad environment name '%s' (letters, "
					   "digits, '.', '_', '-')", section), 0;
		for (size_t i = 0; i < envs->n; i++)
			if (!strcmp(envs->v[i].name, section))
				return ap_buf_addf(ps->err, "environment [%s] defined "
						   "twice", section), 0;
		if (!(e = ap_envs_add(envs, section)))
			return ap_buf_adds(ps->err, "out of memory"), 0;
		e->file = ps->file;
		e->line = ps->section_line;
		ps->seen = 0;
		ps->err_line = ps->line;
	}
	return ap_env_set(ps, e, key, val) == 0;
}

/* inih goes on after an error and reports the first one's line; only the
 * first one's message is kept, so that the two agree. */
static int ap_envs_handler(void *user, const char *section, const char *key,
			   const char *val)
{
	struct ap_envs_parse *ps = user;
	ps->key_seen = 1;
	if (ps->fail_line)
		return 0;
	if (!ap_envs_key(ps, section, key, val))
		ps->fail_line = ps->line;
	return !ps->fail_line;
}

/* An entry is whole once its section is parsed: fill in defaults, check sense. */
static int ap_env_finish(struct ap_env *e, struct ap_buf *err)
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
	return 0;
}

static int ap_envs_add_local(struct ap_envs *envs)
{
	for (size_t i = 0; i < envs->n; i++)
		if (!strcmp(envs->v[i].name, "local"))
			return 0;
	struct ap_env *e = ap_envs_add(envs, "local");
	if (!e || !(e->label = strdup("this machine")))
		return -ENOMEM;
	return 0;
}

static int ap_envs_read_all(struct ap_envs *envs, const char *path, const char *root,
			    struct ap_buf *err)
{
	struct ap_envs_parse ps = { .envs = envs, .root = root, .err = err };
	int builtin = !path || !strcmp(path, "-");
	int r;

	memset(envs, 0, sizeof(*envs));
	envs->path = strdup(builtin ? "(built-in reference environments)" : path);
	if (!envs->path)
		return -ENOMEM;
	ps.in = builtin ? fmemopen((void *)ap_reference_envs, strlen(ap_reference_envs), "r")
			: fopen(path, "r");
	if (!ps.in && builtin)
		return -ENOMEM;
	if (!ps.in) {
		ap_buf_addf(err, "%s: %s", path, strerror(errno));
		return -AP_ECONFIG;
	}
	ps.file = envs->path;
	r = ini_parse_stream(ap_envs_read, &ps, ap_envs_handler, &ps);
	fclose(ps.in);
	if (r != 0) {
		struct ap_buf msg = { 0 };
		if (r > 0 && r != ps.fail_line)
			ap_buf_reset(err); /* an earlier line is not INI at all */
		if (r < 0)
			ap_buf_adds(err, "cannot read file");
		else if (!err->len)
			ap_buf_adds(err, "not an INI line (expected [name] or key = value)");
		ap_buf_addf(&msg, "%s:%d: %s", envs->path,
			    r == ps.fail_line ? ps.err_line : r > 0 ? r : 0, ap_buf_str(err));
		ap_buf_reset(err);
		ap_buf_adds(err, ap_buf_str(&msg));
		ap_buf_free(&msg);
		return -AP_ECONFIG;
	}
	for (size_t i = 0; i < envs->n; i++)
		if ((r = ap_env_finish(&envs->v[i], err)))
			return r;
	if ((r = ap_envs_add_local(envs)) || (r = ap_env_finish(&envs->v[envs->n - 1], err)))
		return r;
	return 0;
}

int ap_envs_load(struct ap_envs *envs, const char *path, const char *root,
		 struct ap_buf *err)
{
	int r = ap_envs_read_all(envs, path, root, err);
	if (r)
		ap_envs_free(envs);
	return r;
}

const struct ap_env *ap_envs_find(const struct ap_envs *envs, const char *name)
{
	for (size_t i = 0; i < envs->n; i++)
		if (!strcmp(envs->v[i].name, name))
			return &envs->v[i];
	return NULL;
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
	for (size_t i = 0; i < envs->n; i++) {
		struct ap_env *e = &envs->v[i];
		free(e->name);
		free(e->label);
		free(e->device);
		free(e->chroot);
		ap_argv_free(&e->exec);
		ap_argv_free(&e->python);
		ap_argv_free(&e->setenv);
		ap_argv_free(&e->bind);
	}
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
