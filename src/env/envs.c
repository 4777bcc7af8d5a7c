#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env/envs.h"
#include "base/err.h"
#include "base/fsutil.h"

/* The environments file is INI as inih and Python's configparser read it:
 * [section] headers, key = value (or key: value), comments from ';' or '#' at
 * the start of a line or ' ;' after a value, an indented line continuing the
 * key above it. It is parsed here, line by line, so that a line of any length
 * (long exec, setenv and bind lines are normal) is read whole and every error
 * names the line it is about. */
#define AP_ENVS_FILE_MAX (1u << 20)

struct ap_envs_parse {
	struct ap_envs *envs;
	const char *root;
	struct ap_buf *err;
	const char *file;
	unsigned seen;       /* keys set in the current section, a bit each */
	int line;            /* the line being parsed */
	const char *section; /* the latest [section] ("" before the first) */
	int section_line;    /* where its header is */
	const char *key;     /* the latest key since it: an indented line continues it */
	int err_line;        /* the line the error in err is about */
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
	"plugins", NULL
};

/* A dotted Python module name: identifiers (ASCII) joined by single dots. */
static int module_name_ok(const char *w)
{
	static const char first[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";
	for (;;) {
		if (!*w || !strchr(first, *w))
			return 0;
		w += strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");
		if (!*w)
			return 1;
		if (*w++ != '.')
			return 0;
	}
}

/* plugins = module...: each a module name, which the worker imports. */
static int env_plugins(struct ap_envs_parse *ps, struct ap_env *e, const char *val)
{
	int r = ap_argv_split(&e->plugins, val);
	if (r == -EINVAL)
		return ap_buf_adds(ps->err, "'plugins': unterminated quote or trailing backslash"),
		       -1;
	if (r)
		return ap_buf_adds(ps->err, "out of memory"), -1;
	for (size_t i = 0; i < e->plugins.n; i++)
		if (!module_name_ok(e->plugins.v[i]))
			return ap_buf_addf(ps->err, "plugins: '%s' is not a Python module name",
					   e->plugins.v[i]), -1;
	return 0;
}

/* setenv = NAME=VALUE...; bind = /host/dir:/dir/in/chroot... */
static int env_words(struct ap_envs_parse *ps, struct ap_env *e, const char *key,
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

static int env_set(struct ap_envs_parse *ps, struct ap_env *e,
		      const char *key, const char *val)
{
	int k = 0;
	while (ap_env_keys[k] && strcmp(ap_env_keys[k], key))
		k++;
	if (!ap_env_keys[k])
		return ap_buf_addf(ps->err, "unknown key '%s' (known: label, device, "
				   "chroot, exec, python, remote_shell, setenv, bind, plugins)", key), -1;
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
		r = set_path(&e->chroot, val, ps->root);
	else if (!strcmp(key, "remote_shell"))
		r = yes_no(val, &e->remote_shell) ? -EINVAL : 0;
	else if (!strcmp(key, "setenv") || !strcmp(key, "bind"))
		return env_words(ps, e, key, val);
	else if (!strcmp(key, "plugins"))
		return env_plugins(ps, e, val);
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

/* Records the error about line; returns 0, for "return envs_fail(...)". */
__attribute__((format(printf, 3, 4)))
static int envs_fail(struct ap_envs_parse *ps, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ap_buf_vaddf(ps->err, fmt, ap);
	va_end(ap);
	ps->err_line = line;
	return 0;
}

/* Handles one key; 0 with a message in ps->err, and err_line set, if it is wrong. */
static int envs_key(struct ap_envs_parse *ps, const char *key, const char *val)
{
	struct ap_envs *envs = ps->envs;
	const char *section = ps->section;

	if (!*section)
		return envs_fail(ps, ps->line, "'%s' outside of any [environment]", key);
	struct ap_env *e = envs->n ? &envs->v[envs->n - 1] : NULL;
	if (!e || e->line != ps->section_line) {
		if (!ap_env_name_ok(section))
			return envs_fail(ps, ps->section_line, "bad environment name '%s' "
					    "(letters, digits, '.', '_', '-')", section);
		for (size_t i = 0; i < envs->n; i++)
			if (!strcmp(envs->v[i].name, section))
				return envs_fail(ps, ps->section_line,
						    "environment [%s] defined twice", section);
		if (!(e = envs_add(envs, section)))
			return envs_fail(ps, ps->line, "out of memory");
		e->file = ps->file;
		e->line = ps->section_line;
		ps->seen = 0;
	}
	if (env_set(ps, e, key, val)) {
		ps->err_line = ps->line;
		return 0;
	}
	return 1;
}

static char *rstrip(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static char *lskip(char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* The first of chars in s, or the ';' of an inline comment (after a space),
 * or the end of s. */
static char *find_or_comment(char *s, const char *chars)
{
	int was_space = 0;
	while (*s && !(chars && strchr(chars, *s)) && !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return s;
}

static int envs_not_ini(struct ap_envs_parse *ps)
{
	return envs_fail(ps, ps->line, "not an INI line (expected [name] or key = value)");
}

/* Parses one line (without its newline); 0 with err and err_line set if it is wrong. */
static int envs_line(struct ap_envs_parse *ps, char *line)
{
	char *start = lskip(rstrip(line)), *end;
	if (!*start || *start == ';' || *start == '#')
		return 1;
	if (start > line && ps->key) {
		*find_or_comment(start, NULL) = '\0';
		return envs_key(ps, ps->key, rstrip(start));
	}
	if (*start == '[') {
		if (*(end = find_or_comment(start + 1, "]")) != ']')
			return envs_not_ini(ps);
		*end = '\0';
		ps->section = start + 1;
		ps->section_line = ps->line;
		ps->key = NULL;
		return 1;
	}
	end = find_or_comment(start, "=:");
	if (*end != '=' && *end != ':')
		return envs_not_ini(ps);
	*end = '\0';
	char *val = end + 1;
	*find_or_comment(val, NULL) = '\0';
	ps->key = rstrip(start);
	return envs_key(ps, ps->key, rstrip(lskip(val)));
}

/* Parses text (len bytes, NUL-terminated, changed in place); 0 or -AP_ECONFIG
 * with "file:line: why" in err. */
static int envs_parse_text(struct ap_envs_parse *ps, char *text, size_t len)
{
	char *p = text, *end = text + len;
	const char *nul = memchr(text, '\0', len);
	if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *next = nl ? nl + 1 : end;
		ps->line++;
		if (nul && nul < next) {
			envs_fail(ps, ps->line, "a NUL byte at column %zu (a text file has none)",
				     (size_t)(nul - p) + 1);
			break;
		}
		if (nl)
			*nl = '\0';
		if (!envs_line(ps, p))
			break;
		p = next;
	}
	if (!ps->err_line)
		return 0;
	struct ap_buf msg = { 0 };
	ap_buf_addf(&msg, "%s:%d: %s", ps->file, ps->err_line, ap_buf_str(ps->err));
	ap_buf_reset(ps->err);
	ap_buf_adds(ps->err, ap_buf_str(&msg));
	ap_buf_free(&msg);
	return -AP_ECONFIG;
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
	struct ap_envs_parse ps = { .envs = envs, .root = root, .err = err, .section = "",
				    .file = envs->path };
	int r = envs_parse_text(&ps, text, len);
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
		ap_argv_free(&e->plugins);
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
