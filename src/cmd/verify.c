/* apiparity verify - review a submission for a maintainer: ACCEPT or
 * CHANGES-NEEDED, each reason on its own line, as Markdown. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/err.h"
#include "base/text.h"
#include "review/review.h"

int ap_cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' }, { NULL, 0, NULL, 0 },
	};
	const char *policy_path = NULL;
	struct ap_buf err = { 0 }, out = { 0 };
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != 'p')
			return ap_usage("verify: unknown option '%s'", argv[optind - 1]);
		policy_path = optarg;
	}
	if (argc - optind != 1)
		return ap_usage("verify: name the submission directory");
	json_t *policy = ap_policy_load(policy_path, &err);
	if (!policy) {
		rc = ap_fail(-AP_ECONFIG, "verify --policy", &err);
		ap_buf_free(&err);
		return rc;
	}
	json_t *reasons = ap_review(argv[optind], policy, &err);
	if (!reasons)
		rc = ap_fail(-AP_ECONFIG, "verify", &err);
	else {
		ap_review_markdown(argv[optind], reasons, policy, &out);
		ap_text_fputs(ap_buf_str(&out), AP_TEXT_BLOCK, stdout);
		rc = json_array_size(reasons) ? AP_EXIT_FAILED : AP_EXIT_OK;
	}
	json_decref(policy);
	json_decref(reasons);
	ap_buf_free(&err);
	ap_buf_free(&out);
	return rc;
}
