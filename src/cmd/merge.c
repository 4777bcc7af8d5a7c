/* apiparity merge - placeholder replaced below */
#include "cmd/cmd.h"
#include "base/err.h"
int ap_cmd_merge(int argc, char **argv) { (void)argc; (void)argv; return ap_usage("merge: not yet"); }
