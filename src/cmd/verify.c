/* apiparity verify - review a submission for a maintainer: ACCEPT or
 * CHANGES-NEEDED, each reason on its own line, as Markdown (or, with
 * --format, as JSON for bots or JUnit XML for CI). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

struct verify_opts {
	const char *policy, *trust, *format;
};

#define AT(field) offsetof(struct verify_opts, field)
static const struct ap_opt verify_opts[] = {
	{ "policy", "FILE", "the review policy (default: the built-in one)", AT(policy), NULL, 0 },
	{ "trust", "FILE", "accepts only manifests signed by a public key of this PEM file",
	  AT(trust), NULL, 0 },
	{ "format", "md|json|junit", "the review as Markdown, JSON or JUnit XML (default md)",
	  AT(format), NULL, 0 },
};
#undef AT

static const struct ap_optset verify_set = { "verify", "DIR",
	"review a submission: ACCEPT or CHANGES-NEEDED (exit 0 or 1)", AP_OPTS(verify_opts) };
const struct ap_optset *const ap_verify_optsets[] = { &verify_set, NULL };

int ap_cmd_verify(int argc, char **argv)
{
	struct verify_opts vo = { NULL, NULL, "md" };
	struct ap_buf err = { 0 }, out = { 0 };
	struct ap_trust *trust = NULL;
	struct ap_policy *policy = NULL;
	json_t *reasons = NULL, *met = NULL;
	int rc = ap_cli_parse(&verify_set, argc, argv, &vo);
	if (rc)
		return rc < 0 ? AP_EXIT_OK : rc;
	if (strcmp(vo.format, "md") && strcmp(vo.format, "json") && strcmp(vo.format, "junit"))
		return ap_usage("verify: --format is md, json or junit, not '%s'", vo.format);
	if (argc - optind != 1)
		return ap_usage("verify: name the submission directory");
	if (!(policy = ap_policy_load(vo.policy, &err))) {
		rc = ap_fail(-AP_ECONFIG, "verify --policy", &err);
		goto out;
	}
	if (vo.trust && (rc = ap_trust_load(vo.trust, &trust, &err))) {
		rc = ap_fail(rc, "verify --trust", &err);
		goto out;
	}
	struct ap_review_opts o = { policy, trust, met = json_array() };
	reasons = ap_review(argv[optind], &o, &err);
	if (!reasons)
		rc = ap_fail(-AP_ECONFIG, "verify", &err);
	else {
		verify_print(argv[optind], reasons, &o, vo.format, &out);
		rc = json_array_size(reasons) ? AP_EXIT_FAILED : AP_EXIT_OK;
	}
out:
	json_decref(met);
	ap_trust_free(trust);
	ap_policy_free(policy);
	json_decref(reasons);
	ap_buf_free(&err);
	ap_buf_free(&out);
	return rc;
}
