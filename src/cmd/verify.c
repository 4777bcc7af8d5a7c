/* apiparity verify - review a submission for a maintainer: ACCEPT or
 * CHANGES-NEEDED, each reason on its own line, as Markdown. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/err.h"
#include "base/text.h"
#include "evidence/sign.h"
#include "review/review.h"

int ap_cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "trust", required_argument, NULL, 't' }, { NULL, 0, NULL, 0 },
	};
	const char *policy_path = NULL, *trust_path = NULL;
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
		else
			return ap_opt_bad("verify", c, argv);
	}
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
		ap_review_markdown(argv[optind], reasons, &o, &out);
		ap_text_fputs(ap_buf_str(&out), AP_TEXT_BLOCK, stdout);
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
