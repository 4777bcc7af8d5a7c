/* protocol-ops - prints the table of the worker's operations that apiparity
 * holds (src/env/protocol.h), one operation a line: its name, then "ops" when
 * the worker's OPS table must hold it or "loop" when its loop answers it,
 * then its fields and its limits (comma-separated, "-" for none). For
 * tests/integration/t-protocol.sh, which compares it with the worker's own
 * table. A maintenance tool, not part of apiparity. Exit 0. */
#include <stdio.h>

#include "env/protocol.h"

static void list(const char *const *v)
{
	putchar(' ');
	if (!*v)
		putchar('-');
	for (; *v; v++)
		printf("%s%s", *v, v[1] ? "," : "");
}

int main(void)
{
	for (int i = 0; i < AP_OP_COUNT; i++) {
		printf("%s %s", ap_op_name((enum ap_op)i),
		       ap_op_dispatched((enum ap_op)i) ? "ops" : "loop");
		list(ap_op_fields((enum ap_op)i));
		list(ap_op_limits((enum ap_op)i));
		putchar('\n');
	}
	return 0;
}
