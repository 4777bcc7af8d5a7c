/* outcome.h - the words of results, spelled once.
 *
 * A check's status (PASS ... SKIP), an environment's verdict, and the
 * sweep's per-line words are enums here; each has one name table in
 * outcome.c, the only place in src/ where those words are written (a test
 * greps for strays). Files and frames carry the words; code compares enums.
 * Parsing a word that is not in a table gives the table's "unknown" value,
 * never a guess.
 */
#ifndef AP_OUTCOME_H
#define AP_OUTCOME_H

/* A check's outcome (DESIGN.md, "Result taxonomy"), in the order a legend
 * lists them (report.html). */
enum ap_status {
	AP_PASS,    /* the assertion about behaviour held */
	AP_FAIL,    /* an assertion about behaviour failed */
	AP_ERROR,   /* the harness or the setup broke */
	AP_CRASH,   /* a signal ended the child */
	AP_TIMEOUT, /* the child ran past its limit */
	AP_WARN,    /* ran, with something a reviewer should read */
	AP_NOTRUN,  /* not run, with a reason (absent-in-this-version, ...) */
	AP_SKIP,    /* the test skipped itself (unittest's SkipTest) */
	AP_STATUS_COUNT,
	AP_STATUS_UNKNOWN = -1, /* a word no table holds */
};

/* An environment's verdict on a target (check/verdict.h decides it). */
enum ap_verdict {
	AP_CONSISTENT,
	AP_CONSISTENT_WITH_LIMITS,
	AP_INCONSISTENT,
	AP_UNVERIFIED,
	AP_VERDICT_COUNT,
	AP_VERDICT_UNKNOWN = -1,
};

/* A sweep line's verdict (evidence/matrix.h): against the reference line. */
enum ap_line_verdict {
	AP_LINE_CONSISTENT,
	AP_LINE_INCONSISTENT,
	AP_LINE_NOTRUN,
	AP_LINE_ABSENT,
	AP_LINE_VERDICT_COUNT,
	AP_LINE_VERDICT_UNKNOWN = -1,
};

/* What a sweep line measured in its environment (evidence/matrix.h): the
 * API is there, absent there, or its entry's walk failed. */
enum ap_line_status {
	AP_LSTATUS_PRESENT,
	AP_LSTATUS_ABSENT,
	AP_LSTATUS_IMPORT_ERROR,
	AP_LSTATUS_CRASH,
	AP_LSTATUS_TIMEOUT,
	AP_LSTATUS_ERROR,
	AP_LINE_STATUS_COUNT,
	AP_LINE_STATUS_UNKNOWN = -1,
};

/* What a sweep line's checks came to (probe and numeric depths); in order of
 * how bad, the worst of several wins (autocheck.c). */
enum ap_line_check {
	AP_LCHECK_NOTRUN,
	AP_LCHECK_CONSISTENT,
	AP_LCHECK_INCONSISTENT,
	AP_LCHECK_TIMEOUT,
	AP_LCHECK_CRASH,
	AP_LINE_CHECK_COUNT,
	AP_LINE_CHECK_UNKNOWN = -1,
};

/* What a check is (bundle.h: a check's "kind"). */
enum ap_check_kind {
	AP_KIND_PROBE,      /* a family spec's probe */
	AP_KIND_SCRIPT,     /* a --script of the user's */
	AP_KIND_NUMERIC,    /* one OpInfo sample, compared (check/numeric.h) */
	AP_KIND_OFFICIAL,   /* an upstream test */
	AP_KIND_CLAIM,      /* a --claimed node id */
	AP_KIND_SIGNATURE,  /* the signature against the reference's */
	AP_KIND_RESOLUTION, /* the target's resolution */
	AP_KIND_PLAN,       /* what was planned and why not run */
	AP_KIND_COUNT,
	AP_KIND_UNKNOWN = -1,
};

/* The word of each value ("PASS", "consistent-with-limits", "not-run");
 * "?" for a value outside its enum. */
const char *ap_status_name(enum ap_status s);
const char *ap_verdict_name(enum ap_verdict v);
const char *ap_line_verdict_name(enum ap_line_verdict v);
const char *ap_line_status_name(enum ap_line_status s);
const char *ap_line_check_name(enum ap_line_check c);
const char *ap_check_kind_name(enum ap_check_kind k);

/* The value a word names; the *_UNKNOWN value for NULL or any other word. */
enum ap_status ap_status_parse(const char *word);
enum ap_verdict ap_verdict_parse(const char *word);
enum ap_line_verdict ap_line_verdict_parse(const char *word);
enum ap_line_status ap_line_status_parse(const char *word);
enum ap_line_check ap_line_check_parse(const char *word);
enum ap_check_kind ap_check_kind_parse(const char *word);

/* Whether a check of kind k verifies behaviour when it passes: a probe, a
 * script or a numeric check. */
int ap_kind_verifies(enum ap_check_kind k);

/* Whether a status is a failed outcome: FAIL, ERROR, CRASH or TIMEOUT. */
int ap_status_failed(enum ap_status s);

/* Whether word is the word of s (word may be NULL: no). */
int ap_status_is(const char *word, enum ap_status s);

/* Whether word is the word of v (word may be NULL: no). */
int ap_verdict_is(const char *word, enum ap_verdict v);

#endif
