#!/bin/bash
# apiparity and its worker name the same operations: the table of
# src/env/protocol.c (printed by tests/tools/protocol-ops) and the worker's
# OPS table (the dict literal in worker/*.py, read with Python's own parser,
# never run) hold the same names; what the worker's loop answers itself
# (exit) is what the C table says is answered there; and every limit an
# operation of the worker demands (_limit(req, NAME) in its function) is one
# the C table says that request carries, so no request goes without it.
. "$(dirname "$0")/lib.sh"
plan 8
cd "$TOP"
OPS_TOOL=$(dirname "$APIPARITY")/tests/protocol-ops

# The worker's side, one operation a line: "NAME ops LIMITS" for each key of
# OPS (LIMITS: those its function reads with _limit(req, ...), or "-"),
# "NAME loop" for each op the main loop compares req.get("op") with.
read_ops='import ast, sys
ops, funcs, loop, where = {}, {}, set(), []
for path in sys.argv[1:]:
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            funcs[node.name] = node
        d = None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "OPS"
                                                for t in node.targets):
            d = node.value
            where.append(path)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "OPS" and \
                node.func.attr == "update" and node.args:
            d = node.args[0]
        elif isinstance(node, ast.Compare):
            sides = [node.left] + node.comparators
            asks = any(isinstance(s, ast.Call) and isinstance(s.func, ast.Attribute) and
                       s.func.attr == "get" and s.args and
                       isinstance(s.args[0], ast.Constant) and s.args[0].value == "op"
                       for s in sides)
            loop |= {s.value for s in sides if asks and isinstance(s, ast.Constant)
                     and isinstance(s.value, str)}
        if d is None:
            continue
        if not isinstance(d, ast.Dict):
            sys.exit("%s:%d: OPS is not a dict literal" % (path, node.lineno))
        for k, v in zip(d.keys, d.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                sys.exit("%s:%d: a key of OPS is not a string" % (path, node.lineno))
            ops[k.value] = v.id if isinstance(v, ast.Name) else None
if len(where) != 1:
    sys.exit("OPS is assigned %d times (in %s), not once" % (len(where), " ".join(where) or "no file"))
def limits(fn):
    return sorted({c.args[1].value for c in ast.walk(funcs[fn]) if isinstance(c, ast.Call)
                   and isinstance(c.func, ast.Name) and c.func.id == "_limit" and
                   len(c.args) == 2 and isinstance(c.args[0], ast.Name) and c.args[0].id == "req"
                   and isinstance(c.args[1], ast.Constant)}) if fn in funcs else []
for name in sorted(ops):
    print(name, "ops", ",".join(limits(ops[name])) or "-")
for name in sorted(loop):
    print(name, "loop")'

# differences WORKER_DIR - one line per disagreement between the C table and
# the worker whose sources are WORKER_DIR/*.py; nothing when they agree.
differences() {
	local c w
	c=$("$OPS_TOOL") || { echo "protocol-ops failed"; return; }
	w=$(py "$read_ops" "$1"/*.py 2>&1) || { echo "reading OPS: $w"; return; }
	comm -23 <(awk '{print $1, $2}' <<< "$c" | sort) <(awk '{print $1, $2}' <<< "$w" | sort) |
		sed 's/^/only in apiparity: /'
	comm -13 <(awk '{print $1, $2}' <<< "$c" | sort) <(awk '{print $1, $2}' <<< "$w" | sort) |
		sed 's/^/only in the worker: /'
	# each limit the worker demands of an op, in the C table's limits for it
	while read -r name kind lim; do
		[ "$kind" = ops ] && [ "$lim" != - ] || continue
		local have
		have=$(awk -v n="$name" '$1 == n {print $4}' <<< "$c")
		for l in ${lim//,/ }; do
			case ",$have," in *",$l,"*) ;; *) echo "$name: the worker demands $l, apiparity does not send it" ;; esac
		done
	done <<< "$w"
}

run 0 the_c_table_is_printed "$OPS_TOOL"
contains "$out" '^tests_run ops root,file,setenv timeout_s,deadline_s$' the_table_names_tests_run_with_its_limits
found=$(py "$read_ops" worker/*.py 2>&1)
contains "$found" '^tests_run ops deadline_s,timeout_s$' the_worker_s_ops_are_read_with_their_limits
equals "$(differences worker)" "" apiparity_and_the_worker_name_the_same_operations

# The check can fail, on either side: an op the worker lacks, one it adds,
# and a limit it demands that apiparity does not send.
doctor() { # doctor PYTHON-RE REPLACEMENT - a copy of worker/ with the first match replaced
	rm -rf "$T/w"; mkdir -p "$T/w"; cp worker/*.py "$T/w/"
	py 'import re, sys, glob
for p in sorted(glob.glob(sys.argv[1] + "/*.py")):
    s = open(p, encoding="utf-8").read()
    t = re.sub(sys.argv[2], sys.argv[3], s, count=1)
    if t != s:
        open(p, "w", encoding="utf-8").write(t)
        break
else:
    sys.exit("no match")' "$T/w" "$1" "$2"
}
doctor '"same_object"\s*:\s*op_same_object\s*,?' ''
contains "$(differences "$T/w")" '^only in apiparity: same_object ops$' an_op_the_worker_lacks_is_found
doctor 'OPS\s*=\s*\{' 'OPS = {"teleport": op_resolve, '
contains "$(differences "$T/w")" '^only in the worker: teleport ops$' an_op_only_the_worker_has_is_found
doctor '_limit\(req,\s*"start_s"\)' '_limit(req, "warmup_s")'
contains "$(differences "$T/w")" '^run: the worker demands warmup_s' a_limit_apiparity_does_not_send_is_found
doctor 'req\.get\("op"\)\s*==\s*"exit"' 'req.get("op") == "quit"'
contains "$(differences "$T/w")" 'only in the worker: quit loop' what_the_loop_answers_is_compared

done_testing
