/* matrix.c - the support matrix's lines: built, ordered, judged, written and
 * read back (see matrix.h for the format). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "evidence/matrix.h"

/* Every key of a line, in the order it is written. */
static const char *const line_keys[] = {
	"schema", "env", "module", "api", "key", "owner", "status", "kind", "file", "line",
	"pure_python", "signature", "patched", "plugin_added", "check", "verdict", "reason",
};
#define NKEYS (sizeof(line_keys) / sizeof(line_keys[0]))

static const char *const statuses[] = {
	"present", "absent", "import-error", "crash", "timeout", "error", NULL,
};
static const char *const check_counts[] = { "checks", "passed", "failed", "notrun", "samples" };
#define NCOUNTS (sizeof(check_counts) / sizeof(check_counts[0]))

static int one_of(const char *s, const char *const *set)
{
	for (; s && *set; set++)
		if (!strcmp(s, *set))
			return 1;
	return 0;
}

json_t *ap_matrix_line(const char *env, const char *module, const char *api, const char *status)
{
	json_t *l = json_object();
	for (size_t i = 0; l && i < NKEYS; i++)
		json_object_set_new(l, line_keys[i], json_null());
	if (!l)
		return NULL;
	json_object_set_new(l, "schema", json_string(AP_MATRIX_SCHEMA));
	json_object_set_new(l, "env", json_string(env));
	json_object_set_new(l, "module", json_string(module));
	json_object_set_new(l, "api", json_string(api));
	json_object_set_new(l, "key", json_string(api));
	json_object_set_new(l, "status", json_string(status));
	json_object_set_new(l, "plugin_added", json_false());
	return l;
}

static const char *str(const json_t *l, const char *key)
{
	return json_string_value(json_object_get(l, key));
}

json_t *ap_matrix_check(enum ap_line_check status, const char *reason, const char *family,
			json_t *operators, const size_t counts[5], const char *digest)
{
	json_t *c = json_pack("{s:s, s:s?, s:s?, s:o?}", "status", ap_line_check_name(status),
			      "reason", reason,
			      "family", family, "operators", operators);
	if (!c)
		return NULL;
	for (size_t i = 0; i < NCOUNTS; i++)
		json_object_set_new(c, check_counts[i], json_integer((json_int_t)counts[i]));
	json_object_set_new(c, "digest", digest ? json_string(digest) : json_null());
	return c;
}

int ap_matrix_check_is(const json_t *line, enum ap_line_check st)
{
	const char *s = str(json_object_get(line, "check"), "status");
	return s && ap_line_check_parse(s) == st;
}

enum ap_line_verdict ap_matrix_verdict(const json_t *line)
{
	return ap_line_verdict_parse(str(line, "verdict"));
}

/* The order of environments that line_cmp sorts by (qsort_r's context). */
struct env_order {
	const char *const *envs;
	size_t n;
};

static size_t env_pos(const struct env_order *o, const char *env)
{
	for (size_t i = 0; env && i < o->n; i++)
		if (!strcmp(o->envs[i], env))
			return i;
	return o->n;
}

static int line_cmp(const void *a, const void *b, void *ctx)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(str(x, "api") ? str(x, "api") : "", str(y, "api") ? str(y, "api") : "");
	if (!c)
		c = strcmp(str(x, "module") ? str(x, "module") : "",
			   str(y, "module") ? str(y, "module") : "");
	if (c)
		return c;
	size_t px = env_pos(ctx, str(x, "env")), py = env_pos(ctx, str(y, "env"));
	if (px != py)
		return px < py ? -1 : 1;
	return strcmp(str(x, "env") ? str(x, "env") : "", str(y, "env") ? str(y, "env") : "");
}

void ap_matrix_sort(json_t *lines, const char *const *envs, size_t nenvs)
{
	size_t n = json_array_size(lines);
	json_t **v = n ? malloc(n * sizeof(*v)) : NULL;
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(lines, i));
	struct env_order o = { envs, nenvs };
	qsort_r(v, n, sizeof(*v), line_cmp, &o);
	json_array_clear(lines);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(lines, v[i]);
	free(v);
}

static int present(const json_t *l)
{
	return str(l, "status") && !strcmp(str(l, "status"), "present");
}

static void set_verdict(json_t *l, enum ap_line_verdict verdict, char *reason)
{
	json_object_set_new(l, "verdict", json_string(ap_line_verdict_name(verdict)));
	json_object_set_new(l, "reason", reason ? json_string(reason) : json_null());
	free(reason);
}

/* "WHAT ENV" as a new string (never NULL unless out of memory). */
static char *why(const char *what, const char *env)
{
	struct ap_buf s = { 0 };
	ap_buf_addf(&s, "%s%s", what, env);
	return s.data;
}

/* Whether the line's own checks failed there (see matrix.h). */
static int check_failed(const json_t *l)
{
	return ap_matrix_check_is(l, AP_LCHECK_INCONSISTENT) || ap_matrix_check_is(l, AP_LCHECK_CRASH) ||
	       ap_matrix_check_is(l, AP_LCHECK_TIMEOUT);
}

/* "check STATUS: REASON" as a new string. */
static char *check_why(const json_t *l)
{
	const json_t *c = json_object_get(l, "check");
	struct ap_buf s = { 0 };
	ap_buf_addf(&s, "check %s: %s", str(c, "status"), str(c, "reason") ? str(c, "reason") : "-");
	return s.data;
}

/* Judges lines [from, to) of one api against its reference (see matrix.h). */
static void judge_api(json_t *lines, size_t from, size_t to, const char *reference)
{
	const json_t *ref = NULL;
	for (size_t i = from; reference && i < to; i++) {
		const json_t *l = json_array_get(lines, i);
		if (present(l) && !strcmp(str(l, "env"), reference))
			ref = l;
	}
	for (size_t i = from; !ref && i < to; i++)
		if (present(json_array_get(lines, i)))
			ref = json_array_get(lines, i);
	for (size_t i = from; i < to; i++) {
		json_t *l = json_array_get(lines, i);
		const char *st = str(l, "status");
		const char *renv = ref ? str(ref, "env") : "";
		if (!strcmp(st, "absent"))
			set_verdict(l, AP_LINE_ABSENT, strdup("absent in this environment's torch"));
		else if (!present(l))
			/* the walk's own error says why; kept as it is, so judging
			 * twice changes nothing */
			set_verdict(l, AP_LINE_NOTRUN, json_is_string(json_object_get(l, "reason")) ?
				    strdup(str(l, "reason")) : why("not measured: ", st));
		else if (l != ref &&
			 !json_equal(json_object_get(l, "kind"), json_object_get(ref, "kind")))
			set_verdict(l, AP_LINE_INCONSISTENT, why("kind differs from ", renv));
		else if (l != ref && !json_equal(json_object_get(l, "signature"),
						 json_object_get(ref, "signature")))
			set_verdict(l, AP_LINE_INCONSISTENT, why("signature differs from ", renv));
		else if (check_failed(l))
			set_verdict(l, AP_LINE_INCONSISTENT, check_why(l));
		else
			set_verdict(l, AP_LINE_CONSISTENT, NULL);
	}
}

int ap_matrix_same_api(const json_t *a, const json_t *b)
{
	const char *x = str(a, "api"), *y = str(b, "api"), *mx = str(a, "module"), *my = str(b, "module");
	return x && y && mx && my && !strcmp(x, y) && !strcmp(mx, my);
}

void ap_matrix_judge(json_t *lines, const char *reference)
{
	size_t n = json_array_size(lines), from = 0;
	for (size_t i = 1; i <= n; i++) {
		if (i < n && ap_matrix_same_api(json_array_get(lines, from), json_array_get(lines, i)))
			continue;
		judge_api(lines, from, i, reference);
		from = i;
	}
}

int ap_matrix_render(const json_t *lines, struct ap_buf *out)
{
	size_t i;
	const json_t *l;
	int r = 0;
	json_array_foreach(lines, i, l) {
		for (size_t k = 0; !r && k < NKEYS; k++) {
			const json_t *v = json_object_get(l, line_keys[k]);
			char *s = json_dumps(v ? v : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
			r = s ? ap_buf_addf(out, "%s\"%s\":%s", k ? "," : "{", line_keys[k], s) : -ENOMEM;
			free(s);
		}
		r = r ? r : ap_buf_adds(out, "}\n");
		if (r)
			return r;
	}
	return 0;
}

/* Whether s is a name: ASCII letters, digits, '_', '.' and the characters
 * of extra; never a '/', so no name read back can lead a path astray. */
static int name_ok(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '.' || (*extra && strchr(extra, *s))))
			return 0;
	return 1;
}

/* Whether v is null or a string. */
static int opt_str(const json_t *v)
{
	return !v || json_is_null(v) || json_is_string(v);
}

/* Why a line's check breaks the format (see matrix.h), or NULL. */
static const char *check_problem(const json_t *c)
{
	size_t i;
	const json_t *x;
	if (!c || json_is_null(c))
		return NULL;
	if (!json_is_object(c) || ap_line_check_parse(str(c, "status")) == AP_LINE_CHECK_UNKNOWN)
		return "check must be null or an object whose status is one of consistent, "
		       "inconsistent, not-run, crash, timeout";
	if (!opt_str(json_object_get(c, "reason")) || !opt_str(json_object_get(c, "family")) ||
	    !opt_str(json_object_get(c, "digest")))
		return "check's reason, family and digest must be strings or null";
	for (i = 0; i < NCOUNTS; i++) {
		x = json_object_get(c, check_counts[i]);
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return "check's counts must be numbers";
	}
	x = json_object_get(c, "operators");
	if (x && !json_is_null(x) && !json_is_array(x))
		return "check's operators must be a list of strings or null";
	const json_t *o;
	json_array_foreach(x, i, o)
		if (!json_is_string(o))
			return "check's operators must be a list of strings or null";
	return NULL;
}

/* Why line l breaks the format, or NULL. */
static const char *line_problem(const json_t *l)
{
	if (!json_is_object(l))
		return "not a JSON object";
	if (!str(l, "schema") || strcmp(str(l, "schema"), AP_MATRIX_SCHEMA))
		return "no \"schema\": \"" AP_MATRIX_SCHEMA "\"";
	if (!str(l, "env") || !*str(l, "env") || !str(l, "api") || !*str(l, "api") ||
	    !str(l, "module"))
		return "env, module and api must be strings";
	if (!name_ok(str(l, "env"), "-") || !name_ok(str(l, "module"), "") ||
	    !name_ok(str(l, "api"), ""))
		return "env, module and api must be names (letters, digits, '_', '.', and '-' in env)";
	if (!one_of(str(l, "status"), statuses))
		return "status is not one of present, absent, import-error, crash, timeout, error";
	const json_t *v = json_object_get(l, "verdict");
	if (v && !json_is_null(v) &&
	    ap_line_verdict_parse(json_string_value(v)) == AP_LINE_VERDICT_UNKNOWN)
		return "verdict is not one of consistent, inconsistent, not-run, absent";
	static const char *const strs[] = { "key", "owner", "kind", "file", "reason" };
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++)
		if (!opt_str(json_object_get(l, strs[k])))
			return "key, owner, kind, file and reason must be strings or null";
	const char *cp = check_problem(json_object_get(l, "check"));
	if (cp)
		return cp;
	const json_t *sig = json_object_get(l, "signature");
	size_t i;
	const json_t *s;
	if (sig && !json_is_null(sig) && !json_is_array(sig))
		return "signature must be a list of strings or null";
	json_array_foreach(sig, i, s)
		if (!json_is_string(s))
			return "signature must be a list of strings or null";
	return NULL;
}

static int read_lines(const char *path, const struct ap_buf *text, json_t *lines,
		      struct ap_buf *err)
{
	const char *p = ap_buf_str(text), *end = p + text->len;
	for (int no = 1; p < end; no++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_error_t jerr;
		const char *why = NULL;
		json_t *l = NULL;
		if (len > AP_MATRIX_MAX_LINE)
			why = "line too long";
		else if (memchr(p, '\0', len))
			why = "NUL byte";
		else if (!(l = json_loadb(p, len, 0, &jerr)))
			why = jerr.text;
		else
			why = line_problem(l);
		if (why) {
			ap_buf_addf(err, "%s:%d: %s", path, no, why);
			json_decref(l);
			return -AP_EPROTO;
		}
		json_array_append_new(lines, l);
		p = nl ? nl + 1 : end;
	}
	return 0;
}

int ap_matrix_read(const char *path, json_t **lines, struct ap_buf *err)
{
	struct ap_buf text = { 0 }, file = { 0 };
	*lines = NULL;
	int r = ap_read_file_limited(path, AP_MATRIX_MAX_BYTES, &text);
	if (r == -EISDIR) {
		ap_buf_addf(&file, "%s/%s", path, AP_MATRIX_NAME);
		path = ap_buf_str(&file);
		r = ap_read_file_limited(path, AP_MATRIX_MAX_BYTES, &text);
	}
	json_t *out = r ? NULL : json_array();
	if (r)
		ap_buf_addf(err, "%s: %s", path, ap_strerror(r));
	else if (!out)
		r = -ENOMEM;
	else if ((r = read_lines(path, &text, out, err)))
		json_decref(out);
	else
		*lines = out;
	ap_buf_free(&text);
	ap_buf_free(&file);
	return r;
}

json_t *ap_matrix_envs(const json_t *lines)
{
	json_t *envs = json_array(), *seen = json_object();
	size_t i;
	const json_t *l;
	json_array_foreach(lines, i, l) {
		const char *e = str(l, "env");
		if (e && !json_object_get(seen, e)) {
			json_object_set_new(seen, e, json_true());
			json_array_append_new(envs, json_string(e));
		}
	}
	json_decref(seen);
	return envs;
}
