# ---------------------------------------------------------------- official tests: preflight
#
# Before a test file runs: where each module it imports comes from (the test
# tree or the interpreter), whether it imports here, and the runner a
# preflight may keep, the module imported, for the tests_run that follows.

_RESOLVED = {}


def _same_object(dotted, target):
    """Whether a torch-rooted dotted name is the target object (an alias)."""
    if dotted not in _RESOLVED:
        obj = _walk(dotted)[0] if dotted.split(".")[0] in sys.modules else None
        _RESOLVED[dotted] = obj
    return _RESOLVED[dotted] is target and target is not None


def op_same_object(req):
    """For each dotted name, whether it is the same object as target here:
    how apiparity tells another name of the target from a namesake."""
    target = _walk(req["target"])[0] if req["target"].split(".")[0] in sys.modules else None
    return {"ok": True, "data": {"same": [_same_object(d, target) for d in req["names"]]}}


def _local_path(root, module):
    """The file or package under root that would provide module, or None."""
    rel = module.replace(".", os.sep)
    for cand in (rel + ".py", os.path.join(rel, "__init__.py")):
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    if os.path.isdir(os.path.join(root, rel)):
        return rel + os.sep
    return None


def _installed(module):
    import importlib.util
    top = module.split(".")[0]
    if top in sys.builtin_module_names:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def op_tests_preflight(req):
    """What a test file needs: its test-local modules, third-party modules,
    and whether importing it works here; nothing is judged."""
    import ast
    root = _test_root(req)
    base = os.path.dirname(root)
    path = os.path.join(base, req["file"])
    res = {"file": req["file"], "file_exists": os.path.isfile(path), "modules": []}
    if not res["file_exists"]:
        return {"ok": True, "data": res}
    imports = req.get("imports")  # from the usage index, else read here
    if imports is None:
        with open(path, encoding="utf-8") as f:
            imports = _module_imports(ast.parse(f.read(), path))
    fdir = os.path.dirname(path)
    for m in imports:
        # Installed first: test/ has directories named like stdlib modules
        # (typing), which the interpreter's own copy shadows.
        if _installed(m):
            res["modules"].append({"module": m, "where": "installed", "present": True})
            continue
        if _local_path(fdir, m) or _local_path(root, m):
            res["modules"].append({"module": m, "where": "local", "present": True})
            continue
        top = m.split(".")[0]
        testish = any(p.startswith("test") for p in m.split(".")) or \
            os.path.isdir(os.path.join(root, top))
        entry = {"module": m, "where": "local" if testish else "installed", "present": False}
        if testish:
            entry["path"] = os.path.relpath(os.path.join(root, m.replace(".", os.sep) + ".py"), base)
        res["modules"].append(entry)
    if req.get("try_import") and all(e["present"] for e in res["modules"]) and \
            req.get("keep"):
        token = _start_runner(req, path, root, _limit(req, "timeout_s"))
        if req.get("wait", True):
            res["import"], token = _runner_import(token)
        if token is not None:
            res["runner"] = token
    elif req.get("try_import") and all(e["present"] for e in res["modules"]):
        res["import"] = _try_import(path, root, _limit(req, "timeout_s"),
                                    req.get("setenv", {}), req.get("names", []))
    return {"ok": True, "data": res}


# Runners kept from a preflight (keep) for the tests_run that follows it, so
# that a test file is imported once: token -> {pid, r, cmd, log, import (its
# answer, None until read), t0 (its start), deadline (of its import)}.
_KEPT = {}


def _drop_kept():
    """Ends the runners no run took: each exits when its command pipe closes
    (one still importing is killed)."""
    for token in list(_KEPT):
        k = _KEPT.pop(token)
        os.close(k["cmd"])
        try:
            _supervise(k["pid"], k["r"], 0 if k["import"] is None else 5)
        finally:
            os.close(k["r"])
            k["log"].close()


def _read_frame(rfd, deadline):
    """The first frame rfd delivers before deadline, or None (EOF, timeout)."""
    import select
    buf = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([rfd], [], [], left)
        if not ready:
            continue
        chunk = os.read(rfd, 65536)
        if not chunk:
            return None
        buf += chunk
        frames = _frames(buf)
        if frames:
            return frames[0]


def _start_runner(req, path, root, timeout):
    """Starts a runner that imports the file and waits (see _kept_runner),
    kept under the token it returns; its import's answer is read by
    _runner_import, so that the worker can do other work meanwhile."""
    import tempfile
    _drop_kept()
    cr, cw = os.pipe()
    log = tempfile.TemporaryFile()

    def child(w):
        os.close(cw)
        _kept_runner(req, path, root, w, cr)
    t0 = time.monotonic()
    pid, r = _spawn_child(child, log.fileno())
    os.close(cr)
    token = "%d" % pid
    _KEPT[token] = {"pid": pid, "r": r, "cmd": cw, "log": log, "import": None,
                    "t0": t0, "deadline": t0 + timeout}
    return token


def _runner_import(token):
    """(the import's answer of the kept runner token, as _try_import's, and
    the token, None when it did not import: then the runner is gone)."""
    k = _KEPT.get(token)
    if k is None:
        return {"ok": False, "error": "no such runner"}, None
    if k["import"] is None:
        k["import"] = _read_frame(k["r"], k["deadline"])
    imp = k["import"]
    if imp is not None and imp.get("ok"):
        return imp, token
    del _KEPT[token]
    os.close(k["cmd"])
    try:
        _, status = _supervise(k["pid"], k["r"], 0 if imp is None else
                               max(0, k["deadline"] - time.monotonic()))
    finally:
        os.close(k["r"])
        k["log"].close()
    if imp is None:
        imp = {"ok": False, "error": "import did not finish (%s)" %
               ("timeout" if status is None else "wait status %d" % status)}
    imp.pop("type", None)
    imp["ms"] = int((time.monotonic() - k["t0"]) * 1000)
    return imp, None


def op_tests_import(req):
    """The import's answer of a runner that a tests_preflight with keep and
    no wait started (see _runner_import)."""
    imp, token = _runner_import(req["runner"])
    return {"ok": True, "data": {"import": imp, "runner": token}}
