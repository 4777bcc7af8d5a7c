#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fsutil.h"
#include "evidence/journal.h"

struct ap_journal {
	int fd;
};

/* Offset just past the last '\n' among the first size bytes of fd, 0 if none. */
static int last_line_end(int fd, off_t size, off_t *end)
{
	char chunk[AP_LINE_CHUNK];
	off_t pos = size;

	while (pos > 0) {
		size_t n = pos < (off_t)sizeof(chunk) ? (size_t)pos : sizeof(chunk);
		ssize_t got = pread(fd, chunk, n, pos - (off_t)n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got != (ssize_t)n)
			return got < 0 ? -errno : -EIO;
		pos -= (off_t)n;
		char *nl = memrchr(chunk, '\n', n);
		if (nl) {
			*end = pos + (nl - chunk) + 1;
			return 0;
		}
	}
	*end = 0;
	return 0;
}

/* Whether the len bytes at off in fd parse as a record, as a reader would. */
static int line_parses(int fd, off_t off, size_t len, int *ok)
{
	char *line = malloc(len ? len : 1);
	if (!line)
		return -ENOMEM;
	ssize_t got = pread(fd, line, len, off);
	int r = got < 0 ? -errno : (size_t)got != len ? -EIO : 0;
	json_t *rec = r || memchr(line, '\0', len) ? NULL : json_loadb(line, len, 0, NULL);
	*ok = rec != NULL;
	json_decref(rec);
	free(line);
	return r;
}

/* A crash can leave a record cut short at the end. Appending after it would
 * glue the next record onto it and turn a tolerated torn last line into a bad
 * line in the middle, so the torn record (which a reader drops anyway) goes. */
static int drop_torn_tail(int fd)
{
	struct stat st;
	off_t end, start;
	int ok = 1, r;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	if ((r = last_line_end(fd, st.st_size, &end)))
		return r;
	if (end > 0 && (r = last_line_end(fd, end - 1, &start)))
		return r;
	if (end > 0 && (r = line_parses(fd, start, (size_t)(end - 1 - start), &ok)))
		return r;
	if (!ok)
		end = start;
	if (end == st.st_size)
		return 0;
	if (ftruncate(fd, end) || fsync(fd))
		return -errno;
	return 0;
}

struct ap_journal *ap_journal_open(const char *path)
{
	struct ap_journal *j = malloc(sizeof(*j));
	if (!j)
		return NULL;
	j->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	int r = j->fd < 0 ? -errno : drop_torn_tail(j->fd);
	if (!r)
		return j;
	if (j->fd >= 0)
		close(j->fd);
	free(j);
	errno = -r;
	return NULL;
}


/* Writes line and fsyncs it; on failure cuts the file back to size so that no
 * part of the record stays behind for a reader to stumble on. */
static int append_line(int fd, const char *line, size_t len, off_t size)
{
	int r = ap_write_all(fd, line, len);
	if (!r && fsync(fd))
		r = -errno;
	if (r && size >= 0 && !ftruncate(fd, size))
		(void)fsync(fd);
	return r;
}

int ap_journal_append(struct ap_journal *j, const json_t *rec)
{
	struct stat st;
	char *s = json_dumps(rec, JSON_COMPACT);
	if (!s)
		return -EINVAL;
	size_t len = strlen(s);
	/* The string's NUL becomes the newline: one write, so no torn line
	 * unless the write itself is cut short. */
	s[len++] = '\n';
	int r = fstat(j->fd, &st) ? -errno : 0;
	if (!r)
		r = append_line(j->fd, s, len, S_ISREG(st.st_mode) ? st.st_size : -1);
	free(s);
	return r;
}

int ap_journal_append_all(struct ap_journal *j, const json_t *recs)
{
	struct ap_buf lines = { 0 };
	struct stat st;
	size_t i;
	json_t *rec;
	int r = 0;
	json_array_foreach(recs, i, rec) {
		char *s = json_dumps(rec, JSON_COMPACT);
		r = s ? ap_buf_adds(&lines, s) : -EINVAL;
		r = r ? r : ap_buf_add(&lines, "\n", 1);
		free(s);
		if (r)
			break;
	}
	if (!r && lines.len)
		r = fstat(j->fd, &st) ? -errno :
		    append_line(j->fd, lines.data, lines.len, S_ISREG(st.st_mode) ? st.st_size : -1);
	ap_buf_free(&lines);
	return r;
}

void ap_journal_close(struct ap_journal *j)
{
	if (!j)
		return;
	close(j->fd);
	free(j);
}


/* Parses one line into records. A bad line is fatal unless it is the last:
 * that one is what a crash mid-append leaves, and is only reported via torn. */
static int journal_read_line(const char *path, const char *line, size_t len, int lineno,
			int last, json_t *records, int *torn, struct ap_buf *err)
{
	json_error_t jerr;
	json_t *rec = NULL;

	if (!memchr(line, '\0', len))
		rec = json_loadb(line, len, 0, &jerr);
	else
		snprintf(jerr.text, sizeof(jerr.text), "NUL byte in record");
	if (rec)
		return json_array_append_new(records, rec) ? -ENOMEM : 0;
	if (last) {
		*torn = 1;
		return 0;
	}
	ap_buf_addf(err, "%s:%d: %s", path, lineno, jerr.text);
	return -AP_EPROTO;
}

static int split_lines(const char *path, const struct ap_buf *text, json_t *records,
			  int *torn, struct ap_buf *err)
{
	const char *p = text->data, *end = text->data + text->len;
	int lineno = 0, r = 0;

	while (!r && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		lineno++;
		if (!nl) {
			/* no newline: the append that wrote it never finished */
			*torn = 1;
			break;
		}
		r = journal_read_line(path, p, (size_t)(nl - p), lineno, nl + 1 == end,
				 records, torn, err);
		p = nl + 1;
	}
	return r;
}

int ap_journal_read(const char *path, json_t **records, int *torn, struct ap_buf *err)
{
	struct ap_buf text = { 0 };

	*records = NULL;
	*torn = 0;
	json_t *recs = json_array();
	if (!recs)
		return -ENOMEM;
	int r = ap_read_all(path, &text);
	if (!r)
		r = split_lines(path, &text, recs, torn, err);
	ap_buf_free(&text);
	if (r) {
		json_decref(recs);
		*torn = 0;
		return r;
	}
	*records = recs;
	return 0;
}

/* --- reading as evidence ------------------------------------------------ */

/* Whether v nests deeper than max (arrays and objects count a level each). */
static int too_deep(const json_t *v, int max)
{
	size_t i;
	const char *k;
	json_t *x;
	if (!json_is_array(v) && !json_is_object(v))
		return 0;
	if (max == 0)
		return 1;
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (too_deep(x, max - 1))
				return 1;
		return 0;
	}
	json_object_foreach((json_t *)v, k, x)
		if (too_deep(x, max - 1))
			return 1;
	return 0;
}

static int is_text(const json_t *o, const char *key)
{
	return json_is_string(json_object_get(o, key));
}

/* Why the check data c breaks the schema, or NULL. */
static const char *check_schema(const json_t *c)
{
	const json_t *reason = json_object_get(c, "reason"), *trace = json_object_get(c, "trace");
	size_t i;
	json_t *st;
	if (!json_is_object(c))
		return "a check record's data is not an object";
	if (!is_text(c, "name") || !is_text(c, "kind") || !is_text(c, "status"))
		return "a check record needs a string name, kind and status";
	if (reason && !json_is_string(reason) && !json_is_null(reason))
		return "a check's reason is neither a string nor null";
	if (!json_is_array(trace))
		return "a check record needs a trace (an array)";
	json_array_foreach(trace, i, st)
		if (!json_is_object(st) || !is_text(st, "step"))
			return "a trace entry needs a string step";
	return NULL;
}

static const char *const record_types[AP_RECORD_COUNT] = {
	[AP_RECORD_START] = "start", [AP_RECORD_RESOLUTION] = "resolution",
	[AP_RECORD_FINGERPRINT] = "fingerprint", [AP_RECORD_CHECK] = "check",
	[AP_RECORD_ERROR] = "error",
};

enum ap_record_type ap_record_type_parse(const char *word)
{
	for (int i = 0; word && i < AP_RECORD_COUNT; i++)
		if (!strcmp(word, record_types[i]))
			return (enum ap_record_type)i;
	return AP_RECORD_UNKNOWN;
}

const char *ap_record_type_name(enum ap_record_type type)
{
	return type >= 0 && type < AP_RECORD_COUNT ? record_types[type] : "?";
}

/* Why rec breaks the journal's schema, or NULL. */
static const char *record_schema(const json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	if (!json_is_object(rec) || !type || !json_object_get(rec, "data"))
		return "not a record {\"type\": ..., \"data\": ...}";
	switch (ap_record_type_parse(type)) {
	case AP_RECORD_UNKNOWN:
		return "unknown record type";
	case AP_RECORD_CHECK:
		return check_schema(json_object_get(rec, "data"));
	default:
		return NULL;
	}
}

/* A problem's text: "line N: " and a short reason of this file's own. */
#define AP_PROBLEM_MAX 256

static void problem(json_t *problems, int lineno, const char *why)
{
	char text[AP_PROBLEM_MAX];
	snprintf(text, sizeof(text), "line %d: %s", lineno, why);
	json_array_append_new(problems, json_string(text));
}

/* One line (without its newline) into records, or its problem. */
static void validate_line(const char *line, size_t len, int lineno, json_t *records,
			  json_t *problems)
{
	json_error_t jerr;
	json_t *rec = NULL;
	const char *why = NULL;
	if (len > AP_JOURNAL_MAX_LINE)
		why = "longer than the limit of a record";
	else if (memchr(line, '\0', len))
		why = "NUL byte in record";
	else if (!(rec = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)))
		why = jerr.text;
	else if (too_deep(rec, AP_JOURNAL_MAX_DEPTH))
		why = "nested deeper than the limit of a record";
	else
		why = record_schema(rec);
	if (why)
		problem(problems, lineno, why);
	else
		json_array_append(records, rec);
	json_decref(rec);
}

int ap_journal_validate(const char *path, json_t **records, json_t **problems)
{
	struct ap_buf text = { 0 };
	*records = json_array();
	*problems = json_array();
	int r = *records && *problems ? ap_read_bounded(path, AP_JOURNAL_MAX_BYTES, O_NOFOLLOW, &text)
				       : -ENOMEM;
	const char *p = ap_buf_str(&text), *end = p + text.len;
	for (int lineno = 1; !r && p < end; lineno++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			problem(*problems, lineno, "a record cut short (no newline at the end)");
			break;
		}
		validate_line(p, (size_t)(nl - p), lineno, *records, *problems);
		p = nl + 1;
	}
	ap_buf_free(&text);
	if (r) {
		json_decref(*records);
		json_decref(*problems);
		*records = *problems = NULL;
	}
	return r;
}

int ap_journal_facts(const json_t *records, struct ap_journal_facts *f)
{
	json_t *checks = json_array(), *r;
	size_t i;
	int rc = checks ? 0 : -ENOMEM;
	memset(f, 0, sizeof(*f));
	json_array_foreach(rc ? NULL : records, i, r) {
		enum ap_record_type t = ap_record_type_parse(json_string_value(json_object_get(r,
											"type")));
		const json_t *data = json_object_get(r, "data");
		if (t == AP_RECORD_UNKNOWN)
			continue;
		if (!f->count[t]++)
			f->first[t] = data;
		if (t == AP_RECORD_CHECK && json_array_append(checks, (json_t *)data))
			rc = -ENOMEM;
	}
	f->resolved_target = json_string_value(json_object_get(f->first[AP_RECORD_RESOLUTION],
								"target"));
	if (!rc)
		rc = ap_checks_facts(checks, &f->checks, &f->nchecks);
	json_decref(checks);
	if (rc)
		ap_journal_facts_free(f);
	return rc;
}

void ap_journal_facts_free(struct ap_journal_facts *f)
{
	ap_checks_facts_free(f->checks, f->nchecks);
	memset(f, 0, sizeof(*f));
}
