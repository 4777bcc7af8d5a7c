#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/sha256.h"
#include "check/verdict.h"
#include "evidence/manifest.h"
#include "review/outputs.h"

/* A top-level manifest is a line per report output: a few hundred bytes. */
#define AP_OUTPUT_MANIFEST_MAX (1 << 20)

static const char *const ap_reports[] = { "report.md", "report.en.md", "report.html",
					  "report.json", "junit.xml", "matrix.png", NULL };

void ap_output_card_name(const char *env, struct ap_buf *out)
{
	ap_buf_addf(out, "card-%s.png", env);
}

static int is_card_of(const char *name, const char *env)
{
	struct ap_buf b = { 0 };
	ap_output_card_name(env, &b);
	int r = !strcmp(name, ap_buf_str(&b));
	ap_buf_free(&b);
	return r;
}

int ap_output_known(const char *name, const struct ap_submission *s)
{
	const char *k;
	json_t *v;
	for (int i = 0; ap_reports[i]; i++)
		if (!strcmp(name, ap_reports[i]))
			return 1;
	for (size_t i = 0; i < s->n; i++)
		if (is_card_of(name, s->v[i].name))
			return 1;
	json_object_foreach(s->broken, k, v)
		if (is_card_of(name, k))
			return 1;
	return 0;
}

/* The report outputs present in dir as regular files, sorted: a new array
 * of n names (ap_dir_free()), or NULL with *n 0. */
static char **outputs_present(const char *dir, const struct ap_submission *s, size_t *n)
{
	char **v;
	size_t all, k = 0;
	*n = 0;
	if (ap_dir_list(dir, AP_DIR_REGULAR, &v, &all))
		return NULL;
	for (size_t i = 0; i < all; i++)
		if (ap_output_known(v[i], s))
			v[k++] = v[i];
		else
			free(v[i]);
	if (!k) {
		free(v);
		return NULL;
	}
	*n = k;
	return v;
}

int ap_output_manifest(const char *dir, const struct ap_submission *s, struct ap_buf *err)
{
	size_t n;
	char **v = outputs_present(dir, s, &n);
	struct ap_buf text = { 0 }, path = { 0 };
	int r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		char hex[AP_SHA256_HEX_LEN + 1];
		ap_buf_reset(&path);
		ap_buf_addf(&path, "%s/%s", dir, v[i]);
		if ((r = ap_sha256_file(ap_buf_str(&path), hex)))
			ap_buf_addf(err, "%s: %s", ap_buf_str(&path), strerror(-r));
		else
			ap_buf_addf(&text, "%s  %s\n", hex, v[i]);
	}
	ap_buf_reset(&path);
	ap_buf_addf(&path, "%s/%s", dir, AP_MANIFEST_NAME);
	if (!r && (r = ap_write_atomic(ap_buf_str(&path), text.data ? text.data : "", text.len)))
		ap_buf_addf(err, "%s: %s", ap_buf_str(&path), strerror(-r));
	ap_dir_free(v, n);
	ap_buf_free(&text);
	ap_buf_free(&path);
	return r;
}

/* The names a manifest listed so far. */
struct listed {
	char **v;
	size_t n;
};

static int listed_has(const struct listed *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return 1;
	return 0;
}

/* Adds name to l; out of memory, l stays as it was (the name reads as not
 * listed, so verify says so: never a silent pass). */
static void listed_add(struct listed *l, const char *name)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return;
	l->v = v;
	if ((v[l->n] = strdup(name)))
		l->n++;
}

/* One line of the top-level manifest; listed remembers the names seen. */
static void verify_line(const char *dir, const struct ap_submission *s, const char *line,
			size_t len, int no, struct listed *listed, json_t *reasons)
{
	char hex[AP_SHA256_HEX_LEN + 1], name[256];
	struct ap_buf path = { 0 };
	size_t nlen = len > AP_SHA256_HEX_LEN + 2 ? len - AP_SHA256_HEX_LEN - 2 : 0;
	if (!nlen || nlen >= sizeof(name) || strncmp(line + AP_SHA256_HEX_LEN, "  ", 2)) {
		ap_reason_add(reasons, "%s:%d: malformed line", AP_MANIFEST_NAME, no);
		return;
	}
	memcpy(name, line + AP_SHA256_HEX_LEN + 2, nlen);
	name[nlen] = '\0';
	if (!ap_output_known(name, s) || listed_has(listed, name)) {
		ap_reason_add(reasons, "%s:%d: '%s' is %s", AP_MANIFEST_NAME, no, name,
			      ap_output_known(name, s) ? "listed twice" : "not a report output");
		return;
	}
	listed_add(listed, name);
	ap_buf_addf(&path, "%s/%s", dir, name);
	int r = ap_sha256_file(ap_buf_str(&path), hex);
	if (r)
		ap_reason_add(reasons, "%s: listed in %s but cannot be read: %s", name, AP_MANIFEST_NAME,
			      strerror(-r));
	else if (strncmp(hex, line, AP_SHA256_HEX_LEN))
		ap_reason_add(reasons, "%s: sha256 does not match %s (changed after the report)", name,
			      AP_MANIFEST_NAME);
	ap_buf_free(&path);
}

void ap_output_verify(const char *dir, const struct ap_submission *s, json_t *reasons)
{
	struct ap_buf path = { 0 }, text = { 0 };
	struct listed listed = { NULL, 0 };
	size_t n;
	ap_buf_addf(&path, "%s/%s", dir, AP_MANIFEST_NAME);
	int r = ap_read_file_limited(ap_buf_str(&path), AP_OUTPUT_MANIFEST_MAX, &text);
	if (r && r != -ENOENT)
		ap_reason_add(reasons, "%s: cannot be read: %s", AP_MANIFEST_NAME, strerror(-r));
	int no = 0;
	for (const char *p = text.data; !r && p && *p; no++) {
		size_t len = strcspn(p, "\n");
		verify_line(dir, s, p, len, no + 1, &listed, reasons);
		p += len + (p[len] == '\n');
	}
	char **v = r ? NULL : outputs_present(dir, s, &n);
	for (size_t i = 0; v && i < n; i++)
		if (!listed_has(&listed, v[i]))
			ap_reason_add(reasons, "%s: report output not listed in %s", v[i], AP_MANIFEST_NAME);
	if (v)
		ap_dir_free(v, n);
	ap_dir_free(listed.v, listed.n);
	ap_buf_free(&path);
	ap_buf_free(&text);
}
