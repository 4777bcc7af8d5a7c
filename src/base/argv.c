#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/argv.h"
#include "base/buf.h"

int ap_argv_push(struct ap_argv *a, const char *s)
{
	char *copy = strdup(s);
	char **v = realloc(a->v, (a->n + 2) * sizeof(*v));
	if (!copy || !v) {
		free(copy);
		if (v)
			a->v = v;
		return -ENOMEM;
	}
	a->v = v;
	a->v[a->n++] = copy;
	a->v[a->n] = NULL;
	return 0;
}

int ap_argv_extend(struct ap_argv *a, const struct ap_argv *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (ap_argv_push(a, src->v[i]))
			return -ENOMEM;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int ap_argv_split(struct ap_argv *a, const char *s)
{
	struct ap_buf word = { 0 };
	int in_word = 0, err = 0;
	char quote = 0;

	for (const char *p = s;; p++) {
		char c = *p;
		if (quote && c == '\0') {
			err = -EINVAL;
			break;
		}
		if (quote) {
			if (c == quote)
				quote = 0;
			else if (c == '\\' && quote == '"' && (p[1] == '"' || p[1] == '\\'))
				err = ap_buf_add(&word, ++p, 1);
			else
				err = ap_buf_add(&word, &c, 1);
		} else if (c == '\0' || is_blank(c)) {
			if (in_word)
				err = ap_argv_push(a, ap_buf_str(&word));
			ap_buf_reset(&word);
			in_word = 0;
			if (c == '\0')
				break;
		} else if (c == '\'' || c == '"') {
			quote = c;
			in_word = 1;
		} else if (c == '\\') {
			if (p[1] == '\0') {
				err = -EINVAL;
				break;
			}
			err = ap_buf_add(&word, ++p, 1);
			in_word = 1;
		} else {
			err = ap_buf_add(&word, &c, 1);
			in_word = 1;
		}
		if (err)
			break;
	}
	ap_buf_free(&word);
	if (err)
		ap_argv_free(a);
	return err;
}

int ap_shell_quote(struct ap_buf *out, const char *s)
{
	int r = ap_buf_adds(out, "'");
	for (const char *p = s; !r && *p; p++)
		r = *p == '\'' ? ap_buf_adds(out, "'\\''") : ap_buf_add(out, p, 1);
	return r ? r : ap_buf_adds(out, "'");
}

void ap_argv_free(struct ap_argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = 0;
}
