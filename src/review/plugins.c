/* plugins.c - what a backend plugin adds to torch (see plugins.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/ini.h"
#include "base/text.h"
#include "review/plugins.h"

#define BUILTIN_NAME "specs/plugin-apis.ini"

static const char *const keys[] = { "backend", "generates", "device_module", "where", NULL };
enum { K_BACKEND, K_GENERATES, K_DEVICE_MODULE, K_WHERE, K_COUNT };

/* The parts of upstream's generate_methods_for_privateuse1_backend: its
 * keyword, the classes it sets attributes on (as pages name them) and
 * whether it sets is_BACKEND beside BACKEND (backend_registration.py). */
static const struct part {
	unsigned bit;
	const char *word, *flag;
	const char *const *classes;
	int is_too;
} parts[] = {
	{ AP_PLUGIN_TENSOR, "tensor", "for_tensor", (const char *const[]){ "torch.Tensor", NULL }, 1 },
	{ AP_PLUGIN_MODULE, "module", "for_module",
	  (const char *const[]){ "torch.nn.Module", "torch.nn.modules.module.Module", NULL }, 0 },
	{ AP_PLUGIN_STORAGE, "storage", "for_storage",
	  (const char *const[]){ "torch.TypedStorage", "torch.storage.TypedStorage",
				 "torch.UntypedStorage", "torch.storage.UntypedStorage", NULL }, 1 },
	{ AP_PLUGIN_PACKED_SEQUENCE, "packed_sequence", "for_packed_sequence",
	  (const char *const[]){ "torch.nn.utils.rnn.PackedSequence", NULL }, 1 },
};
#define NPARTS (sizeof(parts) / sizeof(parts[0]))

/* One plugin while its section is read. */
struct entry {
	struct ap_ini_record rec;
	struct ap_plugin p;
};

static void plugin_free(struct ap_plugin *p)
{
	free(p->package);
	free(p->backend);
	free(p->where);
	free(p->at);
}

/* generates = WORD... of parts[], or "none". */
static int set_generates(struct ap_plugin *p, const char *val, struct ap_buf *err)
{
	const char *s = val;
	while (*(s += strspn(s, " \t"))) {
		size_t n = strcspn(s, " \t"), i = 0;
		while (i < NPARTS && !(strlen(parts[i].word) == n && !strncmp(parts[i].word, s, n)))
			i++;
		if (i < NPARTS)
			p->generates |= parts[i].bit;
		else if (!(n == 4 && !strncmp(s, "none", 4) && !strcmp(val, "none")))
			return ap_ini_fail(err, "generates: '%.*s' is none of tensor, module, storage, "
					   "packed_sequence (or none alone)", (int)n, s);
		s += n;
	}
	return 0;
}

static int set_key(void *rec, int key, const char *val, struct ap_buf *err)
{
	struct ap_plugin *p = &((struct entry *)rec)->p;
	if (!*val)
		return ap_ini_fail(err, "%s: empty%s", keys[key], key == K_WHERE ?
				   " (name the plugin's code that adds the names)" : "");
	switch (key) {
	case K_BACKEND:
		if (!ap_dotted_name_ok(val, 64) || strchr(val, '.'))
			return ap_ini_fail(err, "backend: '%s' is not a name", val);
		return (p->backend = strdup(val)) ? 0 : ap_ini_fail(err, "out of memory");
	case K_GENERATES:
		return set_generates(p, val, err);
	case K_DEVICE_MODULE:
		if (strcmp(val, "yes") && strcmp(val, "no"))
			return ap_ini_fail(err, "device_module: '%s' is not yes or no", val);
		p->device_module = !strcmp(val, "yes");
		return 0;
	default:
		return (p->where = strdup(val)) ? 0 : ap_ini_fail(err, "out of memory");
	}
}

int ap_plugins_parse(struct ap_plugins *out, const char *text, size_t len, const char *name,
		     struct ap_buf *err)
{
	static const char *const hints[] = { NULL, NULL, NULL,
					     " (name the plugin's code that adds the names)" };
	struct ap_ini_records r = { "plugin", keys, hints, sizeof(struct entry), set_key, NULL, 0 };
	memset(out, 0, sizeof(*out));
	int e = ap_ini_records_parse(&r, text, len, name, err);
	struct entry *v = r.v;
	if (!e && r.n && !(out->v = calloc(r.n, sizeof(*out->v))))
		e = -ENOMEM;
	for (size_t i = 0; i < r.n; i++) {
		v[i].p.package = v[i].rec.name; /* moved: the record keeps nothing */
		v[i].p.at = v[i].rec.where;
		if (e)
			plugin_free(&v[i].p);
		else
			out->v[out->n++] = v[i].p;
	}
	free(r.v);
	return e;
}

/* ap_ini_load()'s view of ap_plugins_parse(). */
static int parse_any(void *out, const char *text, size_t len, const char *name,
		     struct ap_buf *err)
{
	return ap_plugins_parse(out, text, len, name, err);
}

int ap_plugins_load(struct ap_plugins *x, const char *path, struct ap_buf *err)
{
	memset(x, 0, sizeof(*x));
	return ap_ini_load(path, "plugin APIs file", ap_default_plugins, ap_default_plugins_len,
			   BUILTIN_NAME, parse_any, x, err);
}

/* name is prefix or a name under it. */
static int at_or_under(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(name, prefix, n) && (!name[n] || name[n] == '.');
}

/* The part of p's generate call that sets name, or NULL. */
static const struct part *generated(const struct ap_plugin *p, const char *name)
{
	const char *dot = strrchr(name, '.');
	if (!dot)
		return NULL;
	const char *member = dot + 1;
	int is = !strncmp(member, "is_", 3) && !strcmp(member + 3, p->backend);
	if (!is && strcmp(member, p->backend))
		return NULL;
	for (size_t i = 0; i < NPARTS; i++) {
		if (!(p->generates & parts[i].bit) || (is && !parts[i].is_too))
			continue;
		for (const char *const *c = parts[i].classes; *c; c++)
			if (strlen(*c) == (size_t)(dot - name) && !strncmp(name, *c, (size_t)(dot - name)))
				return &parts[i];
	}
	return NULL;
}

static void generate_call(const struct ap_plugin *p, struct ap_buf *how)
{
	ap_buf_adds(how, "torch.utils.generate_methods_for_privateuse1_backend(");
	for (size_t i = 0; i < NPARTS; i++)
		ap_buf_addf(how, "%s%s=%s", i ? ", " : "", parts[i].flag,
			    p->generates & parts[i].bit ? "True" : "False");
	ap_buf_adds(how, ")");
}

const struct ap_plugin *ap_plugin_adding(const struct ap_plugins *ps, const char *name,
					 struct ap_buf *how)
{
	for (size_t i = 0; ps && name && i < ps->n; i++) {
		const struct ap_plugin *p = &ps->v[i];
		struct ap_buf mod = { 0 };
		ap_buf_addf(&mod, "torch.%s", p->backend);
		int device = p->device_module && at_or_under(name, ap_buf_str(&mod));
		ap_buf_free(&mod);
		if (!device && !generated(p, name))
			continue;
		if (how && device)
			ap_buf_addf(how, "torch._register_device_module('%s', ...)", p->backend);
		else if (how)
			generate_call(p, how);
		return p;
	}
	return NULL;
}

void ap_plugins_free(struct ap_plugins *p)
{
	for (size_t i = 0; i < p->n; i++)
		plugin_free(&p->v[i]);
	free(p->v);
	memset(p, 0, sizeof(*p));
}
