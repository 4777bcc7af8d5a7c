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
    for owner, fn in _test_functions(tree):
        keys.setdefault("t " + fn.name, []).append([fid, len(tests)])
        _index_uses(fn, fid, len(tests), lines, bound, keys)
        tests.append([owner, fn.name, fn.lineno])
    return {"tests": tests, "imports": _module_imports(tree), "bindings": binds}


def op_tests_index(req):
    """Parses every test*.py file under root once and writes what apiparity
    looks tests up by into a new file of this environment (its path is the
    answer): one line per key, "KEY<tab>JSON", sorted by key. Keys: "F" (the
    files, by id), "f FILE" (its tests, imports, bindings), "t NAME" (the
    tests of that name), "u NAME" (the mentions of that name in tests)."""
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
