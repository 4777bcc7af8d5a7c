/* words.h - the words of the reports, in Chinese and English.
 *
 * Every fixed sentence, heading and label that report.md, report.html and
 * the PNG pictures show comes from this one table, so the renderers agree on
 * what a section is called in each language. A few entries are printf
 * formats, with the same conversions in both languages: M_TITLE, M_RESULTS
 * M_DIFF, M_SIG_SAME, M_SIG_OTHER and M_SIG_AS take a string (escaped for the
 * output), M_STEPS a size_t, M_STEPS_DIFFER two (steps, differing steps), and
 * M_NUMERIC_ROW nine strings (samples, passed, failed, not run, max_abs,
 * max_rel, worst ratio, rtol, atol), M_LIMIT_ROW a long long (samples).
 */
#ifndef AP_WORDS_H
#define AP_WORDS_H

enum ap_lang { AP_LANG_ZH, AP_LANG_EN };

enum ap_msg {
	M_TITLE, M_COVERS, M_SCOPE, M_TARGET, M_OFFICIAL_CASE, M_NONE_FOUND, M_FOCUSED,
	M_RESULTS, M_PYTHON, M_TORCH, M_PLUGIN, M_DEVICES, M_PROBES, M_EXIT, M_EVIDENCE,
	M_OFFICIAL, M_ABSENT, M_NEAREST, M_ENV_ERROR, M_ADAPT, M_IMPL, M_DOCS, M_DOCS_NOT,
	M_DOCS_NONE, M_DOCS_ENTRY, M_DOCS_CLASS, M_DOCS_CONTRA, M_DOCS_OK, M_DOCS_UNCOMPARED, M_CONCLUSION,
	M_PASSED_IN, M_FAILED_IN, M_UNVERIFIED_IN, M_VERDICT, M_REASONS, M_NONE, M_NOT_RUN,
	M_PATCH_NEEDED, M_PATCH_NOT, M_DIFF, M_SUPPORTED, M_UNSUPPORTED, M_MISSING,
	/* the page (report.html) and the pictures */
	M_MATRIX, M_CHECK, M_KIND, M_REFERENCE, M_TRACES, M_STEPS, M_STEPS_DIFFER, M_NO_TRACES,
	M_NOT_IN_ENV, M_CARDS, M_LEGEND,
	/* signatures */
	M_SIGS, M_SIG_REF, M_SIG_SAME, M_SIG_OTHER, M_SIG_AS, M_SIG_NONE, M_SIG_ENV, M_SIG_STATUS,
	M_SIG_SOURCE, M_SIG_TEXT, M_SIG_AGAINST, M_SIG_DIFFS,
	/* numeric checks */
	M_NUMERIC, M_NUMERIC_ROW, M_NUMERIC_CHART, M_LIMITS, M_LIMIT_ROW, M_COUNT
};

/* The word m in language l (never NULL). */
const char *ap_word(enum ap_lang l, enum ap_msg m);

#endif
