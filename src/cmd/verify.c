/* apiparity verify - review a submission for a maintainer: ACCEPT or
 * CHANGES-NEEDED, each reason on its own line, as Markdown (or, with
 * --format, as JSON for bots or JUnit XML for CI). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/err.h"
#include "base/text.h"
#include "evidence/sign.h"
#include "review/review.h"

/* The review in format (md, json or junit) on stdout. Markdown goes through
 * the terminal filter; JSON and XML are escaped for their own syntax and hold
 * no raw control character. */
static void verify_print(const char *dir, const json_t *reasons, const struct ap_review_opts *o,
			 const char *format, struct ap_buf *out)
{
	if (!strcmp(format, "json")) {
		json_t *j = ap_review_json(dir, reasons, o);
		char *s = json_dumps(j, JSON_INDENT(2));
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(j);
		return;
	}
	if (!strcmp(format, "junit"))
		ap_review_junit(dir, reasons, o, out);
	else
		ap_review_markdown(dir, reasons, o, out);
	ap_text_fputs(ap_buf_str(out), AP_TEXT_BLOCK, stdout);
}

int ap_cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "trust", required_argument, NULL, 't' }, { "format", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *policy_path = NULL, *trust_path = NULL, *format = "md";
	struct ap_buf err = { 0 }, out = { 0 };
	struct ap_trust *trust = NULL;
	json_t *policy = NULL, *reasons = NULL;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		if (c == 'p')
			policy_path = optarg;
		else if (c == 't')
			trust_path = optarg;
		else if (c == 'f')
			format = optarg;
		else
			return ap_opt_bad("verify", c, argv);
	}
	if (strcmp(format, "md") && strcmp(format, "json") && strcmp(format, "junit"))
		return ap_usage("verify: --format is md, json or junit, not '%s'", format);
	if (argc - optind != 1)
		return ap_usage("verify: name the submission directory");
	if (!(policy = ap_policy_load(policy_path, &err))) {
		rc = ap_fail(-AP_ECONFIG, "verify --policy", &err);
		goto out;
	}
	if (trust_path && (rc = ap_trust_load(trust_path, &trust, &err))) {
		rc = ap_fail(rc, "verify --trust", &err);
		goto out;
	}
	struct ap_review_opts o = { policy, trust };
	reasons = ap_review(argv[optind], &o, &err);
	if (!reasons)
		rc = ap_fail(-AP_ECONFIG, "verify", &err);
	else {
		verify_print(argv[optind], reasons, &o, format, &out);
		rc = json_array_size(reasons) ? AP_EXIT_FAILED : AP_EXIT_OK;
	}
out:
	ap_trust_free(trust);
	json_decref(policy);
	json_decref(reasons);
	ap_buf_free(&err);
	ap_buf_free(&out);
	return rc;
}
