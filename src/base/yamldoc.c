#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "base/yamldoc.h"

#define AP_YAML_DEPTH 64

struct ap_yaml_state {
	json_t *stack[AP_YAML_DEPTH]; /* open containers */
	char *key[AP_YAML_DEPTH];     /* pending key of each open mapping */
	int depth;
	json_t *root;
};

static int yaml_fail(struct ap_buf *err, const char *name, const yaml_mark_t *m,
			const char *what)
{
	ap_buf_addf(err, "%s:%zu:%zu: %s", name, m->line + 1, m->column + 1, what);
	return -1;
}

/* Records in mapping o that its key starts at line (o's "__lines__"). */
static int key_line(json_t *o, const char *key, int line)
{
	json_t *lines = json_object_get(o, "__lines__");
	if (!lines && json_object_set_new(o, "__lines__", lines = json_object()))
		return -1;
	return json_object_set_new(lines, key, json_integer(line));
}

/* Places v (stolen), which starts at line, into the innermost open
 * container, or makes it the root. */
static int yaml_place(struct ap_yaml_state *st, json_t *v, int line, const char **why)
{
	if (st->depth == 0) {
		st->root = v;
		return 0;
	}
	json_t *top = st->stack[st->depth - 1];
	if (json_is_array(top))
		return json_array_append_new(top, v);
	char **key = &st->key[st->depth - 1];
	if (!*key) {
		if (!json_is_string(v)) {
			json_decref(v);
			return *why = "a mapping key must be a plain scalar", -1;
		}
		if (ap_yaml_meta(json_string_value(v))) {
			json_decref(v);
			return *why = "__line__ and __lines__ are keys the reader keeps for itself", -1;
		}
		if (json_object_get(top, json_string_value(v))) {
			json_decref(v);
			return *why = "duplicate key", -1;
		}
		*key = strdup(json_string_value(v));
		json_decref(v);
		return *key && !key_line(top, *key, line) ? 0 : -1;
	}
	int r = json_object_set_new(top, *key, v);
	free(*key);
	*key = NULL;
	return r;
}

static int yaml_open(struct ap_yaml_state *st, json_t *c, const yaml_mark_t *m,
			const char **why)
{
	if (st->depth == AP_YAML_DEPTH)
		return json_decref(c), *why = "nested too deeply", -1;
	if (json_is_object(c))
		json_object_set_new(c, "__line__", json_integer((json_int_t)m->line + 1));
	if (yaml_place(st, json_incref(c), (int)m->line + 1, why)) {
		json_decref(c);
		return -1;
	}
	st->key[st->depth] = NULL;
	st->stack[st->depth++] = c;
	json_decref(c); /* the parent (or root) holds it now */
	return 0;
}

static int yaml_event(struct ap_yaml_state *st, const yaml_event_t *ev, const char **why)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor || ev->data.scalar.tag)
			return *why = "anchors and tags are not allowed", -1;
		return yaml_place(st, json_stringn((const char *)ev->data.scalar.value,
						      ev->data.scalar.length),
				  (int)ev->start_mark.line + 1, why);
	case YAML_SEQUENCE_START_EVENT:
		if (ev->data.sequence_start.anchor || ev->data.sequence_start.tag)
			return *why = "anchors and tags are not allowed", -1;
		return yaml_open(st, json_array(), &ev->start_mark, why);
	case YAML_MAPPING_START_EVENT:
		if (ev->data.mapping_start.anchor || ev->data.mapping_start.tag)
			return *why = "anchors and tags are not allowed", -1;
		return yaml_open(st, json_object(), &ev->start_mark, why);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		free(st->key[st->depth - 1]);
		st->key[--st->depth] = NULL;
		return 0;
	case YAML_ALIAS_EVENT:
		return *why = "aliases are not allowed", -1;
	default:
		return 0;
	}
}

json_t *ap_yaml_parse(const char *text, size_t len, const char *name, struct ap_buf *err)
{
	struct ap_yaml_state st = { 0 };
	yaml_parser_t p;
	yaml_event_t ev;
	int done = 0, docs = 0, bad = 0;

	if (!yaml_parser_initialize(&p))
		return ap_buf_adds(err, "out of memory"), NULL;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && !bad) {
		const char *why = NULL;
		if (!yaml_parser_parse(&p, &ev)) {
			bad = yaml_fail(err, name, &p.problem_mark, p.problem ? p.problem : "parse error");
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
			why = "only one document per file";
		else if (yaml_event(&st, &ev, &why) && !why)
			why = "out of memory";
		if (why)
			bad = yaml_fail(err, name, &ev.start_mark, why);
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	for (int i = 0; i < st.depth; i++)
		free(st.key[i]);
	if (bad || !st.root) {
		if (!bad)
			ap_buf_addf(err, "%s: empty document", name);
		json_decref(st.root);
		return NULL;
	}
	return st.root;
}

json_t *ap_yaml_load(const char *path, struct ap_buf *err)
{
	struct ap_buf text = { 0 };
	int r = ap_read_all(path, &text);
	json_t *j = r ? (ap_buf_addf(err, "%s: %s", path, ap_strerror(r)), NULL)
		      : ap_yaml_parse(ap_buf_str(&text), text.len, path, err);
	ap_buf_free(&text);
	return j;
}

int ap_yaml_line(const json_t *o)
{
	return (int)json_integer_value(json_object_get(o, "__line__"));
}

int ap_yaml_key_line(const json_t *o, const char *key)
{
	int line = (int)json_integer_value(json_object_get(json_object_get(o, "__lines__"), key));
	return line ? line : ap_yaml_line(o);
}

int ap_yaml_meta(const char *key)
{
	return !strcmp(key, "__line__") || !strcmp(key, "__lines__");
}
