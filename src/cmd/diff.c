#include "cmd/cmd.h"
#include "base/err.h"
int ap_cmd_diff(int argc, char **argv) { (void)argc; (void)argv; return ap_usage("diff: not yet"); }
