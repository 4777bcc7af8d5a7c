# ---------------------------------------------------------------- official tests

# apiparity-indexer: begin
# The usage index's code (op_tests_index and all it calls here). apiparity
# names its indexer by the SHA-256 of what stands between these two markers,
# so an index is rebuilt when this code changes, and kept when the rest of the
# worker does (src/check/testindex.c); it uses nothing else of the worker but
# _exc_text. Keep what the index's content depends on in here.

def _test_files(root):
    """test*.py files under root, in a stable order."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        out.extend(os.path.join(d, f) for f in sorted(files)
                   if f.startswith("test") and f.endswith(".py"))
    return out


def _dotted(node):
    """'a.b.c' for a Name/Attribute chain, else None."""
    import ast
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _test_root(req):
    """The test/ directory: root itself, or root/test for a source tree."""
    root = req["root"].rstrip("/")
    if os.path.basename(root) != "test" and os.path.isdir(os.path.join(root, "test")):
        root = os.path.join(root, "test")
    return root


def _test_functions(tree):
    """(class name or None, function) for each test function of a module."""
    import ast
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        item.name.startswith("test"):
                    yield node.name, item
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name.startswith("test"):
            yield None, node


def _bindings(tree):
    """What each import of the file binds, in order: [kind, local name,
    dotted name] (plain `import a.b` binds only a, which needs no entry)."""
    import ast
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.extend(["from", a.asname or a.name, node.module + "." + a.name]
                       for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend(["import", a.asname, a.name] for a in node.names if a.asname)
    return out


def _index_uses(fn, fid, ti, lines, bound, keys):
    """Adds each Name and Attribute chain of test function fn to keys, under
    its last name ("u NAME"): [file id, test index, line, dotted, text]. A
    name an import binds is also filed under the last name of what it binds.
    An attribute of a call or subscript (f().x) is no chain and not filed:
    filing it would change which tests rank first."""
    import ast
    seen = set()
    for node in ast.walk(fn):
        if not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        d = _dotted(node)
        if d is None:
            continue
        names = [d.rsplit(".", 1)[-1]]
        names += bound.get(d, []) if "." not in d else []
        ln = node.lineno
        for k in names:
            if (k, ln, d) not in seen:
                seen.add((k, ln, d))
                text = lines[ln - 1].strip()[:200] if ln <= len(lines) else ""
                keys.setdefault("u " + k, []).append([fid, ti, ln, d, text])


def _index_file(path, fid, keys):
    """One test file's record for the usage index ({"tests", "imports",
    "bindings"}, or {"error"}); its tests and mentions go into keys."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, ValueError) as e:
        return {"error": _exc_text(e)}
    return _index_source(text, path, fid, keys)


def _index_source(text, path, fid, keys):
    """_index_file of source text."""
    import ast
    try:
        tree = ast.parse(text, path)
    except (SyntaxError, ValueError) as e:
        return {"error": _exc_text(e)}
    lines = text.splitlines()
    binds = _bindings(tree)
    bound = {}
    for _, local, full in binds:
        bound.setdefault(local, []).append(full.rsplit(".", 1)[-1])
    tests = []
    gens, decs = _generator_names(tree), []
    for owner, fn in _test_functions(tree):
        keys.setdefault("t " + fn.name, []).append([fid, len(tests)])
        _index_uses(fn, fid, len(tests), lines, bound, keys)
        _index_generated(fn, fid, len(tests), text, gens, decs, keys)
        tests.append([owner, fn.name, fn.lineno])
    if decs:
        keys["G %d" % fid] = _generator_facts(tree, text, decs)
    return {"tests": tests, "imports": _module_imports(tree), "bindings": binds}


# Tests generated from OpInfo and ModuleInfo: upstream parametrizes a test
# template by its @ops(LIST, dtypes=..., allowed_dtypes=...) or @modules(LIST)
# decorator, and instantiate_device_type_tests makes one class per device
# (TestCommonCPU) whose tests are named TEMPLATE_OP_DEVICE_DTYPE. What the
# index keeps of them is text (the decorator's source, the device
# decorators', the module-level assignments it refers to); the environment's
# Python evaluates it (see testgen.py) and apiparity judges it.

_GENERATORS = ("ops", "modules")

# Decorators that decide on which devices a template runs, by their name's
# start: onlyCPU, onlyCUDA, onlyNativeDeviceTypes, onlyOn(...),
# deviceCountAtLeast(n), skipMeta, skipCUDAIf(...) ...
_DEVICE_DECORATORS = ("only", "deviceCountAtLeast", "skip")

_TEXT_MAX = 2000


def _callee(node):
    """The last name of what a decorator or call calls (or is), else None."""
    import ast
    d = _dotted(node.func if isinstance(node, ast.Call) else node)
    return d.rsplit(".", 1)[-1] if d else None


def _generator_names(tree):
    """ops, modules, and each module-level name bound to them or to a
    functools.partial of them (test_ops' _variant_ops)."""
    import ast
    out = set(_GENERATORS)
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                isinstance(node.targets[0], ast.Name)):
            continue
        v = node.value
        if isinstance(v, ast.Call) and _callee(v) == "partial" and v.args:
            v = v.args[0]
        if _callee(v) in out:
            out.add(node.targets[0].id)
    return out


def _src(text, node):
    """node's source as written (None where longer than _TEXT_MAX)."""
    import ast
    seg = ast.get_source_segment(text, node) or ""
    return seg if len(seg) <= _TEXT_MAX else None


def _index_generated(fn, fid, ti, text, gens, decs, keys):
    """Files test ti of file fid under "D" when a generator decorates it:
    [file id, test index, line, generator (as called), decorator source
    (None: too long to keep), [device decorators' source]]; adds the
    decorator to decs."""
    import ast
    dec = next((d for d in fn.decorator_list
                if isinstance(d, ast.Call) and _callee(d) in gens), None)
    if dec is None:
        return
    devs = [_src(text, d) for d in fn.decorator_list
            if d is not dec and (_callee(d) or "").startswith(_DEVICE_DECORATORS)]
    decs.append(dec)
    keys.setdefault("D", []).append([fid, ti, dec.lineno, _callee(dec), _src(text, dec),
                                     [d for d in devs if d is not None]])


def _generator_facts(tree, text, decs):
    """What evaluating a file's generator decorators (decs) needs: its
    module-level assignments and plain functions ({name: [line, source]},
    [line, source, "def"] for a function; those the decorators name, and
    theirs in turn) and its instantiate_device_type_tests calls
    ([[class, source]])."""
    import ast
    assigns, inst = {}, []
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.If, ast.Try)):
            todo[:0] = node.body + getattr(node, "orelse", [])
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            assigns.setdefault(node.targets[0].id, [node.lineno, node.value, None])
        elif isinstance(node, ast.FunctionDef) and not node.decorator_list:
            assigns.setdefault(node.name, [node.lineno, node, "def"])
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                _callee(node.value) == "instantiate_device_type_tests" and node.value.args:
            cls = _dotted(node.value.args[0])
            if cls:
                inst.append([cls, _src(text, node.value)])
    wanted, todo = {}, list(decs)
    while todo:
        for n in ast.walk(todo.pop()):
            if isinstance(n, ast.Name) and n.id in assigns and n.id not in wanted:
                line, value, kind = assigns[n.id]
                wanted[n.id] = [line, ast.get_source_segment(text, value)] + \
                    ([kind] if kind else [])
                todo.append(value)
    return {"assigns": wanted, "instantiated": inst}


def op_tests_index(req):
    """Parses every test*.py file under root once and writes what apiparity
    looks tests up by into a new file of this environment (its path is the
    answer): one line per key, "KEY<tab>JSON", sorted by key. Keys: "F" (the
    files, by id), "f FILE" (its tests, imports, bindings), "t NAME" (the
    tests of that name), "u NAME" (the mentions of that name in tests),
    "D" (the tests a generator decorates), "G FID" (what their file's
    decorators need: see _generator_facts)."""
    import tempfile
    root = _test_root(req)
    base = os.path.dirname(root)
    files, keys = [], {}
    for path in _test_files(root):
        rel = os.path.relpath(path, base)
        if "\t" in rel or "\n" in rel:
            continue
        keys["f " + rel] = _index_file(path, len(files), keys)
        files.append(rel)
    keys["F"] = files
    fd, out = tempfile.mkstemp(prefix="apiparity-index.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for k in sorted(keys):
            f.write("%s\t%s\n" % (k, json.dumps(keys[k], separators=(",", ":"))))
    return {"ok": True, "data": {"path": out, "files": len(files)}}


def _module_imports(tree):
    """Module names imported at module level (also under if/try)."""
    import ast
    out, todo = [], list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
        elif isinstance(node, (ast.If, ast.Try)):
            todo[:0] = node.body + getattr(node, "orelse", []) + \
                [h for hd in getattr(node, "handlers", []) for h in hd.body]
    seen, uniq = set(), []
    for m in out:
        if m not in seen:
            seen.add(m)
            uniq.append(m)
    return uniq


# apiparity-indexer: end
