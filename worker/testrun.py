# ---------------------------------------------------------------- official tests: running a file's tests
#
# A runner process imports a test file once; a child of it runs the tests one
# after another, each within its timeout, and streams one frame per test; a
# crash or a hang costs only its test, and a fresh child runs the rest.

# The adapter apiparity supplies to a backend whose device module lacks
# what upstream's PrivateUse1TestBase needs: in torch 2.6,
# instantiate_device_type_tests adds that base only when
# torch.<backend>.is_available() exists and is true, and its setUpClass
# calls current_device() (device_count() for multi-device tests). Applied in
# the test runner only, when apiparity asks for it (setenv
# APIPARITY_TEST_ADAPTER=privateuse1), before the test module is imported;
# each function is added only where the module lacks it, and what was added
# is said on stderr (the run's log). apiparity states the same in the bundle
# (ap_official_adapter), so keep the two in step.
_ADAPTER_ENV = "APIPARITY_TEST_ADAPTER"


def _asked_in_child(fn, timeout=60):
    """fn() as a child forked here answers it (an int; 1 where it fails), so
    that what fn starts (a device) starts there, not in this process."""
    import select
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.write(w, b"%d" % int(fn()))
        finally:
            os._exit(0)
    os.close(w)
    try:
        ready = select.select([r], [], [], timeout)[0]
        text = os.read(r, 64) if ready else b""
    finally:
        os.close(r)
        try:
            os.kill(pid, 9)
        except OSError:
            pass
        os.waitpid(pid, 0)
    return int(text) if text.strip().isdigit() else 1


def _privateuse1_adapter():
    """Adds is_available (True), current_device (0) and device_count
    (torch.accelerator's, asked once in a child; 1 where torch has none) to
    the PrivateUse1 backend's device module where it lacks them. None of
    them starts the device here: they are called while the test module is
    imported, in the runner, and a device started there could not be used
    by the tests forked from it (openreg's driver starts its daemons on any
    call, and a test killed while waiting on them leaves their queue's lock
    held for every later test). Returns the names added."""
    import torch
    name = torch._C._get_privateuse1_backend_name()
    mod = getattr(torch, name, None)
    if mod is None or name == "privateuseone":
        return []
    acc = getattr(torch, "accelerator", None)
    known = []

    def device_count():
        if not known:
            known.append(_asked_in_child(acc.device_count) if acc is not None else 1)
        return known[0]
    fill = {"is_available": lambda: True, "device_count": device_count,
            "current_device": lambda: 0}
    added = []
    for attr, fn in fill.items():
        if not hasattr(mod, attr):
            setattr(mod, attr, fn)
            added.append(attr)
    if added:
        sys.stderr.write("apiparity adapter: added to torch.%s for upstream's "
                         "PrivateUse1TestBase: %s\n" % (name, ", ".join(added)))
    # The device bases are chosen when common_device_type is imported: where
    # this process imported it before (the worker naming generated tests),
    # they are chosen again, now that the backend says it is available.
    cdt = sys.modules.get("torch.testing._internal.common_device_type")
    if added and cdt is not None and hasattr(cdt, "get_device_type_test_bases"):
        cdt.device_type_test_bases = cdt.get_device_type_test_bases()
        sys.stderr.write("apiparity adapter: device test bases chosen again: %s\n" %
                         ", ".join(b.__name__ for b in cdt.device_type_test_bases))
    return added


def _load_test_module(path, root):
    import importlib.util
    if os.environ.get(_ADAPTER_ENV) == "privateuse1":
        _privateuse1_adapter()
    fdir = os.path.dirname(path)
    for d in (root, fdir):
        if d not in sys.path:
            sys.path.insert(0, d)
    os.chdir(fdir)
    name = os.path.splitext(os.path.basename(path))[0]
    sys.argv = [path]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _try_import(path, root, timeout, setenv, names):
    def child(w):
        try:
            os.environ.update(setenv)
            mod = _load_test_module(path, root)
            send(w, {"type": "result", "ok": True, "defined": _defined(mod, names)})
        except BaseException as e:
            send(w, {"type": "result", "ok": False, "error": _exc_text(e),
                     "missing": getattr(e, "name", None)
                     if isinstance(e, ImportError) else None})
    t0 = time.monotonic()
    res, _, status = _forked(child, timeout)
    if res is None:
        res = {"ok": False, "error": "import did not finish (%s)" %
               ("timeout" if status is None else "wait status %d" % status)}
    res["ms"] = int((time.monotonic() - t0) * 1000)
    return res


# The frames an exception's facts keep, innermost last.
_FRAMES = 8


def _exc_facts(e):
    """What exception e is, for apiparity to word: its type's name,
    qualified name and module, its message (str(e)), its notes and its last
    frames. message is None where str() fails, notes None where __notes__ is
    no sequence or a note's str() fails, module None where it is no string."""
    import collections.abc
    import traceback
    try:
        message = str(e)
    except Exception:
        message = None
    notes = getattr(e, "__notes__", None)
    try:
        notes = [] if notes is None else [str(n) for n in notes] \
            if isinstance(notes, collections.abc.Sequence) and not isinstance(notes, str) \
            else None
    except Exception:
        notes = None
    frames = [{"file": f.f_code.co_filename, "line": line, "function": f.f_code.co_name}
              for f, line in traceback.walk_tb(e.__traceback__)][-_FRAMES:]
    module = type(e).__module__
    return {"type": type(e).__name__, "qualname": type(e).__qualname__,
            "module": module if isinstance(module, str) else None,
            "message": message, "notes": notes, "frames": frames}


def _facts_result():
    """A unittest.TestResult that also keeps, for the traceback text of each
    error and failure, the facts of its exception (see _exc_facts)."""
    import unittest

    class FactsResult(unittest.TestResult):
        def __init__(self):
            super().__init__()
            self.exc_facts = {}

        def _exc_info_to_string(self, err, test):
            text = super()._exc_info_to_string(err, test)
            self.exc_facts[id(text)] = (text, _exc_facts(err[1]))
            return text
    return FactsResult()


def _unittest_facts(result):
    """What a unittest.TestResult saw, for apiparity to judge: how many ran,
    and the last traceback or reason of each kind with their counts, and the
    facts of the last error's and the last failure's exceptions (None where
    the result kept none)."""
    def last(items):
        return items[-1][1] if items else None

    def exc(items):
        kept = getattr(result, "exc_facts", {}).get(id(last(items))) if items else None
        return kept[1] if kept is not None and kept[0] is last(items) else None
    return {"tests_run": result.testsRun,
            "errors": len(result.errors), "error": last(result.errors),
            "error_exception": exc(result.errors),
            "failures": len(result.failures), "failure": last(result.failures),
            "failure_exception": exc(result.failures),
            "skipped": len(result.skipped), "skip": last(result.skipped),
            "expected_failures": len(result.expectedFailures),
            "unexpected_successes": len(result.unexpectedSuccesses)}


def _raised_facts(e):
    """What a module-level test function raised (None: nothing)."""
    if e is None:
        return None
    return {"type": type(e).__name__, "assertion": isinstance(e, AssertionError),
            "text": _exc_text(e), "exception": _exc_facts(e)}


def _test_result(mod, owner, name):
    """What one test of the imported module did, run in this process."""
    import unittest
    if owner is None:
        fn = getattr(mod, name)
        raised = None
        try:
            fn()
        except BaseException as e:
            raised = e
        return {"function": {"raised": _raised_facts(raised)}}
    cls = getattr(mod, owner, None)
    if cls is None or not hasattr(cls, name):
        return {"defined": False}
    result = _facts_result()
    unittest.TestSuite([cls(name)]).run(result)
    return {"unittest": _unittest_facts(result)}


def _defined(mod, names):
    """For each [class, test] of names, what the imported module defines that
    could be it: every class whose name starts with the class's (a
    device-generic class exists only as TestFooCPU and the like), whether the
    test is the class's own, and its methods whose names start with the
    test's (parametrized tests). apiparity decides which of them run."""
    out = []
    for owner, name in names:
        classes = []
        for cname in sorted(dir(mod)) if owner is not None else []:
            cls = getattr(mod, cname)
            if not cname.startswith(owner) or not isinstance(cls, type):
                continue
            classes.append({"name": cname, "own": name in vars(cls),
                            "methods": sorted(m for m in dir(cls) if m.startswith(name))})
        out.append({"class": owner, "test": name, "classes": classes})
    return out


def _collect(mod, file, pattern):
    """The tests unittest would collect from the imported module (classes it
    defines or imports), whose node id matches pattern (case-insensitive)."""
    import re
    import unittest
    rx = re.compile(pattern, re.I)
    out = []
    for cname, cls in sorted(vars(mod).items()):
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        for m in unittest.TestLoader().getTestCaseNames(cls):
            if rx.search("%s::%s::%s" % (file, cname, m)):
                out.append((cname, m))
    return out


def _runner(req, w):
    """The runner process: imports the test module once, then runs the tests
    in a child of it (see _run_tests), so that a crash or hang in one test
    loses no other result."""
    root = _test_root(req)
    path = os.path.join(os.path.dirname(root), req["file"])
    os.environ.update(req.get("setenv", {}))
    t0 = time.monotonic()
    try:
        mod = _load_test_module(path, root)
    except BaseException as e:
        send(w, {"type": "import", "ok": False, "error": _exc_text(e),
                 "missing": e.name if isinstance(e, ImportError) else None,
                 "ms": int((time.monotonic() - t0) * 1000)})
        return
    send(w, {"type": "import", "ok": True, "ms": int((time.monotonic() - t0) * 1000)})
    nodes = _collect(mod, req["file"], req["select"]) if "select" in req else req["nodes"]
    _run_tests(mod, nodes, _limit(req, "timeout_s"), w)


def _kept_runner(req, path, root, w, cmd):
    """A runner that imports the module once, sends the import's answer with
    what the module defines of req["names"], then runs the nodes that the
    next frame on cmd names (none, or a closed cmd: it just exits)."""
    os.environ.update(req.get("setenv", {}))
    t0 = time.monotonic()
    try:
        mod = _load_test_module(path, root)
        imp = {"type": "import", "ok": True, "defined": _defined(mod, req.get("names", []))}
    except BaseException as e:
        imp = {"type": "import", "ok": False, "error": _exc_text(e),
               "missing": e.name if isinstance(e, ImportError) else None}
    imp["ms"] = int((time.monotonic() - t0) * 1000)
    send(w, imp)
    run = recv(cmd) if imp["ok"] else None
    if run and run.get("nodes"):
        _run_tests(mod, run["nodes"], _limit(run, "timeout_s"), w)


def _file_child(mod, nodes, w, out_fd):
    """The child of a file: runs nodes one after another in this process, so
    that what a test leaves (a global changed, a lazy init done) is there for
    the next, as in upstream's own runner, and sends each result as a frame
    the moment its test ends, with where its output ends in out_fd."""
    me = os.getpid()
    for owner, name in nodes:
        try:
            res = _test_result(mod, owner, name)
        except BaseException as e:
            res = {"broken": _exc_text(e)}
        if os.getpid() != me:
            os._exit(0)  # a process the test forked returned here: not ours to report
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        try:
            res["out_end"] = os.lseek(out_fd, 0, os.SEEK_CUR)
        except OSError:
            pass
        res["type"] = "result"
        send(w, res)


def _take_frames(buf):
    """(the complete frames at the start of buf, decoded as _frames does,
    the bytes after them)."""
    i = 0
    while len(buf) - i >= 4 and len(buf) - i - 4 >= struct.unpack(">I", buf[i:i + 4])[0]:
        i += 4 + struct.unpack(">I", buf[i:i + 4])[0]
    return _frames(buf[:i]), buf[i:]


def _await_frames(pid, rfd, pidfd, buf, deadline):
    """Reads rfd into buf until it holds a whole frame, the child pid exits
    or the deadline passes. Returns (buf, "frame", "exit" or "timeout", the
    wait status of the child when it exited, reaped)."""
    import select
    eof = False
    while not _take_frames(buf)[0]:
        left = deadline - time.monotonic()
        if left <= 0:
            return buf, "timeout", None
        done, status = os.waitpid(pid, os.WNOHANG) if pidfd is None else (0, None)
        if done:
            return buf + (b"" if eof else _drain(rfd)), "exit", status
        fds = ([] if eof else [rfd]) + ([] if pidfd is None else [pidfd])
        ready = select.select(fds, [], [], left if pidfd is not None else min(left, 0.05))[0]
        if rfd in ready:
            chunk = os.read(rfd, 65536)
            buf += chunk
            eof = not chunk
        elif pidfd is not None and pidfd in ready:
            status = os.waitpid(pid, 0)[1]
            return buf + (b"" if eof else _drain(rfd)), "exit", status
    return buf, "frame", None


def _test_frame(res, node, t0, out_fd, start, end, w):
    """Sends the test frame of node's result res: its duration since t0 and
    its output, out_fd from start to end (None: to what is written now);
    returns where its output ended."""
    size = os.fstat(out_fd).st_size
    end = size if not isinstance(end, int) else max(start, min(end, size))
    out = os.pread(out_fd, min(end - start, 65536), start) if end > start else b""
    res.pop("type", None)
    res.pop("out_end", None)
    res.update({"type": "test", "class": node[0], "test": node[1],
                "duration_ms": int((time.monotonic() - t0) * 1000),
                "output": out.decode("utf-8", "replace")})
    send(w, res)
    return end


def _death(status):
    """How the child of a file that died in a test ended, by its wait status:
    the signal that killed it (its number, and its name where Python knows
    it), or its exit status. apiparity words it."""
    import signal
    if os.WIFSIGNALED(status):
        n = os.WTERMSIG(status)
        try:
            name = signal.Signals(n).name
        except ValueError:
            name = None
        return {"died": {"signal": n, "signal_name": name}}
    return {"died": {"exit_status": os.WEXITSTATUS(status)}}


def _one_child(mod, nodes, timeout, w, out_fd):
    """Forks a child of this runner that runs nodes (see _file_child) and
    sends w a test frame for each result as it comes, each test within
    timeout seconds of the one before. Returns how many of nodes have their
    result: all, or those up to and including the test that the child died
    in (CRASH) or passed its deadline in (TIMEOUT: the child is killed)."""
    # Where the child's output starts, read before it can write any.
    start = os.fstat(out_fd).st_size
    pid, r = _spawn_child(lambda cw: _file_child(mod, nodes, cw, out_fd), out_fd)
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    buf, done, how, status = b"", 0, "frame", None
    t0 = time.monotonic()
    try:
        while done < len(nodes) and how == "frame":
            buf, how, status = _await_frames(pid, r, pidfd, buf, t0 + timeout)
            frames, buf = _take_frames(buf)
            for f in frames[:len(nodes) - done]:
                res = f if f.get("type") == "result" else {"broken": "unreadable result frame"}
                start = _test_frame(res, nodes[done], t0, out_fd, start, f.get("out_end"), w)
                done, t0 = done + 1, time.monotonic()
    finally:
        if pidfd is not None:
            os.close(pidfd)
        os.close(r)
        # All results in, it died, or it hangs: what is left of it goes.
        _end_child(pid, status)
    if done < len(nodes):  # it died in, or hung in, nodes[done]
        res = _death(status) if how == "exit" else {"died": {"timeout_s": timeout}}
        _test_frame(res, nodes[done], t0, out_fd, start, None, w)
        done += 1
    return done


def _run_tests(mod, nodes, timeout, w):
    """Runs each [class, test] of the imported module: one child, forked
    from this runner, runs the file's tests one after another; when it dies
    in a test or passes a test's deadline, that test is CRASH or TIMEOUT and
    a fresh child, forked again from the module as imported, runs the rest."""
    import gc
    import tempfile
    # What the import made is kept out of the collector's sight: a collection
    # in the child would otherwise touch, and so copy, every page of it.
    gc.freeze()
    out = tempfile.TemporaryFile()
    try:
        todo = list(nodes)
        while todo:
            todo = todo[_one_child(mod, todo, timeout, w, out.fileno()):]
    finally:
        out.close()


def op_tests_run(req):
    """Runs the given tests of one file (exactly those named, or those of -k):
    a runner process imports the module once (or the preflight's runner
    has), a child of it runs the tests one after another, each within
    timeout_s (see _run_tests), and the runner ends within deadline_s."""
    import tempfile
    _limit(req, "timeout_s")
    deadline = _limit(req, "deadline_s")
    token = _runner_import(req["runner"])[1] if "runner" in req else None
    kept = _KEPT.pop(token, None) if token is not None else None
    _drop_kept()
    if kept is not None:  # the preflight's runner, the module imported
        try:
            send(kept["cmd"], {"nodes": req["nodes"], "timeout_s": req["timeout_s"]})
        except OSError:
            pass  # it died waiting: its end is its answer
        os.close(kept["cmd"])
        pid, r, log = kept["pid"], kept["r"], kept["log"]
    else:
        log = tempfile.TemporaryFile()
        pid, r = _spawn_child(lambda w: _runner(req, w), log.fileno())
    try:
        frames, _ = _supervise(pid, r, deadline)
    finally:
        os.close(r)
    log.seek(0)
    imp = [kept["import"]] if kept is not None else \
        [f for f in frames if f.get("type") == "import"]
    return {"ok": True, "data": {
        "import": imp[0] if imp else {"ok": False, "error": "runner died before importing"},
        "tests": [f for f in frames if f.get("type") == "test"],
        "log": log.read(1 << 20).decode("utf-8", "replace")}}
