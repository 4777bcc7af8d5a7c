/* fuzz-bundle - everything that reads a bundle.json someone handed in: the
 * verdict and comparison, the report model and every renderer. */
#include <stdint.h>
#include <string.h>

#include "review/html.h"
#include "review/report.h"
#include "evidence/submission.h"
#include "check/verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *b = json_loadb((const char *)data, size, 0, NULL);
	if (!b)
		return 0;
	struct ap_sub_env env = { "fuzz", "/nonexistent", b };
	struct ap_submission s = { "/nonexistent", &env, 1, NULL };
	json_t *diff = ap_trace_diff(json_object_get(b, "checks"), json_object_get(b, "checks"));
	json_t *copy = json_deep_copy(b);
	if (json_is_object(copy)) {
		ap_adaptation_decide(copy);
		ap_verdict_decide(copy);
	}
	struct ap_report *m = ap_report_model(&s, NULL);
	struct ap_buf out = { 0 };
	if (m) {
		json_t *j = ap_report_json(m);
		ap_report_markdown(m, AP_LANG_ZH, &out);
		ap_report_markdown(m, AP_LANG_EN, &out);
		ap_report_html(m, AP_LANG_ZH, &out);
		ap_report_html(m, AP_LANG_EN, &out);
		ap_report_junit(m, &out);
		json_decref(j);
	}
	ap_buf_free(&out);
	ap_report_free(m);
	json_decref(copy);
	json_decref(diff);
	json_decref(b);
	return 0;
}
