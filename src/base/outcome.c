/* outcome.c - the name tables of outcome.h: the one place each word is spelled. */
#include <stddef.h>
#include <string.h>

#include "base/outcome.h"

static const char *const status_names[AP_STATUS_COUNT] = {
	[AP_PASS] = "PASS",     [AP_FAIL] = "FAIL",       [AP_ERROR] = "ERROR",
	[AP_CRASH] = "CRASH",   [AP_TIMEOUT] = "TIMEOUT", [AP_NOTRUN] = "NOTRUN",
	[AP_WARN] = "WARN",     [AP_SKIP] = "SKIP",
};

static const char *const verdict_names[AP_VERDICT_COUNT] = {
	[AP_CONSISTENT] = "consistent",
	[AP_CONSISTENT_WITH_LIMITS] = "consistent-with-limits",
	[AP_INCONSISTENT] = "inconsistent",
	[AP_UNVERIFIED] = "unverified",
};

static const char *const line_verdict_names[AP_LINE_VERDICT_COUNT] = {
	[AP_LINE_CONSISTENT] = "consistent",
	[AP_LINE_INCONSISTENT] = "inconsistent",
	[AP_LINE_NOTRUN] = "not-run",
	[AP_LINE_ABSENT] = "absent",
};

static const char *const line_status_names[AP_LINE_STATUS_COUNT] = {
	[AP_LSTATUS_PRESENT] = "present",           [AP_LSTATUS_ABSENT] = "absent",
	[AP_LSTATUS_IMPORT_ERROR] = "import-error", [AP_LSTATUS_CRASH] = "crash",
	[AP_LSTATUS_TIMEOUT] = "timeout",           [AP_LSTATUS_ERROR] = "error",
};

static const char *const line_check_names[AP_LINE_CHECK_COUNT] = {
	[AP_LCHECK_NOTRUN] = "not-run",         [AP_LCHECK_CONSISTENT] = "consistent",
	[AP_LCHECK_INCONSISTENT] = "inconsistent", [AP_LCHECK_TIMEOUT] = "timeout",
	[AP_LCHECK_CRASH] = "crash",
};

static const char *const kind_names[AP_KIND_COUNT] = {
	[AP_KIND_PROBE] = "probe",           [AP_KIND_SCRIPT] = "script",
	[AP_KIND_NUMERIC] = "numeric",       [AP_KIND_OFFICIAL] = "official",
	[AP_KIND_CLAIM] = "claim",           [AP_KIND_SIGNATURE] = "signature",
	[AP_KIND_RESOLUTION] = "resolution", [AP_KIND_PLAN] = "plan",
};

static const char *name_of(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "?";
}

static int parse(const char *const *names, int n, const char *word)
{
	for (int i = 0; word && i < n; i++)
		if (!strcmp(word, names[i]))
			return i;
	return -1;
}

const char *ap_status_name(enum ap_status s)
{
	return name_of(status_names, AP_STATUS_COUNT, (int)s);
}

const char *ap_verdict_name(enum ap_verdict v)
{
	return name_of(verdict_names, AP_VERDICT_COUNT, (int)v);
}

const char *ap_line_verdict_name(enum ap_line_verdict v)
{
	return name_of(line_verdict_names, AP_LINE_VERDICT_COUNT, (int)v);
}

const char *ap_line_status_name(enum ap_line_status s)
{
	return name_of(line_status_names, AP_LINE_STATUS_COUNT, (int)s);
}

const char *ap_line_check_name(enum ap_line_check c)
{
	return name_of(line_check_names, AP_LINE_CHECK_COUNT, (int)c);
}

const char *ap_check_kind_name(enum ap_check_kind k)
{
	return name_of(kind_names, AP_KIND_COUNT, (int)k);
}

enum ap_check_kind ap_check_kind_parse(const char *word)
{
	return (enum ap_check_kind)parse(kind_names, AP_KIND_COUNT, word);
}

int ap_kind_verifies(enum ap_check_kind k)
{
	return k == AP_KIND_PROBE || k == AP_KIND_SCRIPT || k == AP_KIND_NUMERIC;
}

enum ap_status ap_status_parse(const char *word)
{
	return (enum ap_status)parse(status_names, AP_STATUS_COUNT, word);
}

enum ap_verdict ap_verdict_parse(const char *word)
{
	return (enum ap_verdict)parse(verdict_names, AP_VERDICT_COUNT, word);
}

enum ap_line_verdict ap_line_verdict_parse(const char *word)
{
	return (enum ap_line_verdict)parse(line_verdict_names, AP_LINE_VERDICT_COUNT, word);
}

enum ap_line_status ap_line_status_parse(const char *word)
{
	return (enum ap_line_status)parse(line_status_names, AP_LINE_STATUS_COUNT, word);
}

enum ap_line_check ap_line_check_parse(const char *word)
{
	return (enum ap_line_check)parse(line_check_names, AP_LINE_CHECK_COUNT, word);
}

int ap_status_failed(enum ap_status s)
{
	return s == AP_FAIL || s == AP_ERROR || s == AP_CRASH || s == AP_TIMEOUT;
}

int ap_status_is(const char *word, enum ap_status s)
{
	return ap_status_parse(word) == s;
}

int ap_verdict_is(const char *word, enum ap_verdict v)
{
	return ap_verdict_parse(word) == v;
}
