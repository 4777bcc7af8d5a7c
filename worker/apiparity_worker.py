# apiparity worker: runs inside the target interpreter, sent on stdin by apiparity.
#
# It holds no policy: apiparity (C) decides what to ask and how to judge the
# answers; this program only does what must happen inside the interpreter.
#
# Protocol: every message is a frame, a 4-byte big-endian length followed by that
# many bytes of UTF-8 JSON, on the stdin/stdout that apiparity gave us. Before
# anything else runs, the protocol descriptors are moved aside and fd 1 is pointed
# at fd 2, so a print() by torch, a plugin or a probe can never corrupt a frame.
#
# Works on Python 3.11 to 3.14 and torch 1.13 to 2.14; keep it that way (no
# match statements beyond 3.10, no new-only stdlib).

import json
import os
import struct
import sys
import time

PROTO = 1
MAX_FRAME = 64 << 20
# Written raw just before the hello: whatever the interpreter printed on stdout
# before this program ran (a sitecustomize, a .pth hook) comes before it, and
# apiparity skips it as noise instead of misreading it as a frame.
SYNC = b"\x00apiparity-worker-sync\x00"


def _take_protocol_fds():
    rfd = os.dup(0)
    wfd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return rfd, wfd


def _read_exact(fd, n):
    chunks = []
    while n > 0:
        b = os.read(fd, n)
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def recv(fd):
    head = _read_exact(fd, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    if n > MAX_FRAME:
        raise ValueError("oversized frame: %d bytes" % n)
    body = _read_exact(fd, n)
    if body is None:
        return None
    return json.loads(body.decode("utf-8"))


def send(fd, msg):
    body = json.dumps(msg, default=repr).encode("utf-8")
    data = struct.pack(">I", len(body)) + body
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _exc_text(e):
    return "%s: %s" % (type(e).__name__, e)


# ---------------------------------------------------------------- fingerprint

def _os_release():
    info = {}
    try:
        with open("/etc/os-release") as f:
            for line in f:
                k, sep, v = line.strip().partition("=")
                if sep:
                    info[k] = v.strip('"')
    except OSError:
        pass
    return info


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "processor\t: ar")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or None


def _torch_info(torch):
    v = getattr(torch, "version", None)
    info = {
        "version": str(torch.__version__),
        "git_version": getattr(v, "git_version", None),
        "debug": getattr(v, "debug", None),
        "cuda": getattr(v, "cuda", None),
        "hip": getattr(v, "hip", None),
        "file": getattr(torch, "__file__", None),
    }
    abi = getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", None)
    if abi is not None:
        info["cxx11_abi"] = bool(abi)
    return info


def _entry_point_plugins():
    """Distributions that register a torch.backends entry point (autoload)."""
    try:
        from importlib import metadata
    except ImportError:
        return []
    out = []
    try:
        eps = metadata.entry_points()
        group = eps.select(group="torch.backends") if hasattr(eps, "select") \
            else eps.get("torch.backends", [])
    except Exception:
        return []
    for ep in group:
        dist = getattr(ep, "dist", None)
        mod = ep.value.split(":", 1)[0]
        out.append({
            "name": ep.name,
            "module": mod,
            "version": getattr(dist, "version", None),
            "source": "entry-point",
            "imported": mod in sys.modules,
        })
    return out


def _plugins(names):
    import importlib
    import importlib.util
    out = _entry_point_plugins()
    seen = set(p["module"] for p in out)
    for name in names:
        if name in seen:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        p = {"name": name, "module": name, "source": "module",
             "version": None, "imported": False}
        try:
            mod = importlib.import_module(name)
            p["imported"] = True
            p["version"] = getattr(mod, "__version__", None)
        except Exception as e:
            p["error"] = _exc_text(e)
        out.append(p)
    return out


def _device_info(torch, kind):
    d = {"type": kind, "count": 0, "names": [], "available": False}
    mod = getattr(torch, kind, None)
    if mod is None or not hasattr(mod, "is_available"):
        d["reason"] = "no torch.%s module" % kind
        return d
    backends = getattr(torch, "backends", None)
    bmod = getattr(backends, kind, None)
    if bmod is not None and hasattr(bmod, "is_built") and not bmod.is_built():
        d["reason"] = "torch built without %s" % kind
        return d
    try:
        d["available"] = bool(mod.is_available())
        d["count"] = int(mod.device_count()) if hasattr(mod, "device_count") \
            else int(d["available"])
        if hasattr(mod, "get_device_name"):
            d["names"] = [str(mod.get_device_name(i)) for i in range(d["count"])]
    except Exception as e:
        d["available"] = False
        d["reason"] = _exc_text(e)
        return d
    if not d["available"]:
        d["reason"] = "torch.%s.is_available() is False" % kind
    return d


def _devices_in_child(torch, kinds):
    """Queries devices in a forked child, so that no driver is ever initialised
    in this process: a process that later forks probes must stay device-clean."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            res = [_device_info(torch, k) for k in kinds]
            send(w, {"devices": res})
        finally:
            os._exit(0)
    os.close(w)
    try:
        msg = recv(r)
    finally:
        os.close(r)
        _, status = os.waitpid(pid, 0)
    if msg is None:
        return [{"type": k, "count": 0, "names": [], "available": False,
                 "reason": "device query died (wait status %d)" % status}
                for k in kinds]
    return msg["devices"]


def op_fingerprint(req):
    import platform
    import socket
    osr = _os_release()
    u = os.uname()
    fp = {
        "os": {"name": osr.get("PRETTY_NAME"), "id": osr.get("ID"),
               "version_id": osr.get("VERSION_ID"),
               "kernel": u.release, "machine": u.machine},
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "cpu": {"model": _cpu_model(), "count": os.cpu_count()},
        "host": socket.gethostname(),
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        torch = _import_torch(alone=False)
    except BaseException as e:
        return {"ok": False, "error": "torch-import", "message": _exc_text(e),
                "partial": fp}
    fp["torch_import_ms"] = _TORCH_IMPORT_MS[0]
    fp["torch"] = _torch_info(torch)
    fp["plugins"] = _plugins(req.get("plugins", []))
    kinds = list(req.get("backends", []))
    pu1 = getattr(torch._C, "_get_privateuse1_backend_name", None)
    if pu1 is not None:
        name = pu1()
        fp["privateuse1"] = name
        # Only a backend that renamed PrivateUse1 is a device type to ask about.
        if name != "privateuseone" and name not in kinds:
            kinds.append(name)
    fp["devices"] = _devices_in_child(torch, kinds)
    fp["torch"]["num_threads"] = torch.get_num_threads()
    return {"ok": True, "data": fp}


# ---------------------------------------------------------------- resolve

_TORCH_IMPORT_MS = [None]


def _import_torch(alone):
    """Imports torch once. alone: with device-plugin autoload off, so that the
    target can be seen as upstream defines it, before any plugin could patch
    it. The device check goes through NVML, so that no driver is initialised
    in this process, which forks probes later."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    old = os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD")
    if alone:
        os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    t0 = time.monotonic()
    try:
        import torch
    finally:
        if old is None:
            os.environ.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
        else:
            os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = old
    _TORCH_IMPORT_MS[0] = int((time.monotonic() - t0) * 1000)
    return torch


def _load_plugins(torch, names):
    """Loads what autoload would have loaded, then the named plugin modules."""
    import importlib
    import importlib.util
    loaded, errors = [], []
    loader = getattr(torch, "_import_device_backends", None)
    if loader is not None:
        try:
            loader()
            loaded.extend(p["name"] for p in _entry_point_plugins())
        except Exception as e:
            errors.append(_exc_text(e))
    for name in names:
        try:
            if importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
                loaded.append(name)
        except Exception as e:
            errors.append("%s: %s" % (name, _exc_text(e)))
    return loaded, errors


def _walk(dotted):
    """Imports the longest importable module prefix of dotted, then follows
    attributes. Returns (obj, parent, deepest_found_name, missing_part)."""
    import importlib
    parts = dotted.split(".")
    obj, i = None, 0
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
            i = k
            break
        except ImportError:
            continue
        except Exception:
            break
    if obj is None:
        return None, None, "", parts[0]
    parent = None
    for j in range(i, len(parts)):
        if not hasattr(obj, parts[j]):
            return None, obj, ".".join(parts[:j]), parts[j]
        parent, obj = obj, getattr(obj, parts[j])
    return obj, parent, dotted, None


def _code_hash(obj):
    import hashlib
    fn = getattr(obj, "__func__", obj)
    fn = getattr(fn, "fget", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    h = hashlib.sha256(code.co_code)
    h.update(repr(code.co_consts).encode())
    h.update(repr(code.co_names).encode())
    return h.hexdigest()


def _qualname(obj):
    mod = getattr(obj, "__module__", None)
    qn = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qn is None:
        return None
    return "%s.%s" % (mod, qn) if mod else qn


def _identity(obj):
    ident = {"id": id(obj), "qualname": _qualname(obj), "code": _code_hash(obj)}
    if isinstance(obj, type):
        ident["members"] = dict((k, [id(v), _code_hash(v)])
                                for k, v in sorted(vars(obj).items())
                                if callable(v) or isinstance(v, (classmethod, staticmethod, property)))
    return ident


def _kind(obj, parent, name):
    import inspect
    import types
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(parent, type):
        raw = None
        for klass in parent.__mro__:
            if name in vars(klass):
                raw = vars(klass)[name]
                break
        if isinstance(raw, classmethod):
            return "classmethod"
        if isinstance(raw, staticmethod):
            return "staticmethod"
        if isinstance(raw, property):
            return "property"
        if inspect.isfunction(raw):
            return "method"
        if raw is not None and callable(raw):
            return "builtin-method"
    if inspect.isclass(obj):
        return "class"
    if inspect.isfunction(obj):
        return "function"
    if inspect.isbuiltin(obj):
        return "builtin"
    return "callable" if callable(obj) else "value"


def _source(obj, torch):
    import inspect
    fn = getattr(obj, "__func__", obj)
    fn = getattr(fn, "fget", fn)
    try:
        path = inspect.getsourcefile(fn)
        line = inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return None, None
    if path is None:
        return None, None
    root = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
    ap = os.path.abspath(path)
    if ap.startswith(root + os.sep):
        path = ap[len(root) + 1:]
    return path, line


def _nearest(parent, deepest, missing, want=5):
    import difflib
    if parent is None or missing is None:
        return []
    names = [n for n in dir(parent) if not n.startswith("__")]
    close = difflib.get_close_matches(missing, names, n=want, cutoff=0.5)
    prefix = deepest + "." if deepest else ""
    return [prefix + n for n in close]


def op_resolve(req):
    target = req["target"]
    fresh = "torch" not in sys.modules
    try:
        torch = _import_torch(alone=True)
    except BaseException as e:
        return {"ok": False, "error": "torch-import", "message": _exc_text(e)}
    before, _, _, _ = _walk(target)
    before_id = _identity(before) if before is not None else None
    loaded, errors = _load_plugins(torch, req.get("plugins", []))
    obj, parent, deepest, missing = _walk(target)
    res = {"target": target, "found": obj is not None, "plugins_loaded": loaded,
           "plugin_errors": errors, "torch_alone": fresh}
    if obj is None:
        res["deepest"] = deepest
        res["missing"] = missing
        res["nearest"] = _nearest(parent, deepest, missing)
        return {"ok": True, "data": res}
    import inspect
    name = target.rsplit(".", 1)[-1]
    res["kind"] = _kind(obj, parent, name)
    owner = parent if isinstance(parent, type) else None
    res["owner"] = _qualname(owner) if owner is not None else None
    res["canonical"] = _qualname(obj)
    res["module"] = getattr(obj, "__module__", None) or getattr(owner, "__module__", None)
    res["file"], res["line"] = _source(obj, torch)
    fn = getattr(obj, "__func__", obj)
    res["pure_python"] = inspect.isfunction(getattr(fn, "fget", fn)) or \
        (inspect.isclass(obj) and res["file"] is not None)
    try:
        res["signature"] = name + str(inspect.signature(obj))
    except (TypeError, ValueError):
        res["signature"] = None
    after_id = _identity(obj)
    res["patch"] = _patch_report(before_id, after_id)
    return {"ok": True, "data": res}


def _patch_report(before, after):
    if before is None:
        return {"compared": False, "why": "target appears only after plugins load"}
    changes = []
    for key in ("id", "qualname", "code"):
        if before[key] != after[key]:
            changes.append({"what": key, "before": str(before[key]), "after": str(after[key])})
    bm, am = before.get("members", {}), after.get("members", {})
    for k in sorted(set(bm) | set(am)):
        if bm.get(k) != am.get(k):
            changes.append({"what": "member " + k, "before": str(bm.get(k)),
                            "after": str(am.get(k))})
    return {"compared": True, "patched": bool(changes), "changes": changes}


# ---------------------------------------------------------------- probes

def _norm(v):
    """A value as a trace records it: comparable across processes."""
    import re
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, type):
        return "<class %s>" % v.__qualname__
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", repr(v))


class _DeviceTrace(object):
    """Records dispatched operators and the devices of the tensors they
    produce, through a TorchDispatchMode where this torch has one."""

    def __init__(self, torch):
        self.ops, self.devices, self.why = {}, {}, None
        self.mode = None
        try:
            from torch.utils._python_dispatch import TorchDispatchMode
        except ImportError as e:
            self.why = "no TorchDispatchMode in this torch: %s" % e
            return
        rec = self

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                name = str(getattr(func, "__name__", func))
                rec.ops[name] = rec.ops.get(name, 0) + 1
                for t in (out if isinstance(out, (list, tuple)) else [out]):
                    dev = getattr(t, "device", None)
                    if dev is not None:
                        rec.devices[str(dev.type)] = rec.devices.get(str(dev.type), 0) + 1
                return out
        self.mode = _Mode

    def result(self):
        if self.mode is None:
            return {"available": False, "why": self.why}
        return {"available": True, "ops": self.ops, "tensor_devices": self.devices}


class ProbeFailure(AssertionError):
    pass


def _run_probe_child(probe, wfd):
    import threading
    import traceback
    torch = sys.modules["torch"]
    steps = []

    def trace(step, value):
        # Sent as it happens: a probe that crashes later keeps its steps.
        st = {"step": str(step), "value": _norm(value)}
        steps.append(st)
        send(wfd, {"type": "step", "step": st})
        return value

    def check(cond, message="check failed"):
        if not cond:
            raise ProbeFailure(message)

    def resolve(dotted):
        obj = _walk(dotted)[0]
        if obj is None:
            raise LookupError("%s does not resolve" % dotted)
        return obj

    ns = {"torch": torch, "trace": trace, "check": check, "threading": threading,
          "resolve": resolve, "__name__": "apiparity_probe"}
    dt = _DeviceTrace(torch)
    result = {"status": "PASS", "reason": None}
    try:
        for name, expr in probe.get("bind", []):
            ns[name] = eval(expr, ns)
        code = compile(probe["code"], "<probe %s>" % probe["name"], "exec")
        if dt.mode is not None:
            with dt.mode():
                exec(code, ns)
        else:
            exec(code, ns)
    except ProbeFailure as e:
        result = {"status": "FAIL", "reason": str(e)}
    except BaseException as e:
        tb = traceback.format_exc(limit=-3)
        result = {"status": "ERROR", "reason": _exc_text(e), "traceback": tb}
    result["trace"] = steps
    result["device_trace"] = dt.result()
    result["type"] = "result"
    send(wfd, result)


def op_probe(req):
    """Runs one probe in a forked child, in its own process group, with its
    output captured and a timeout; a crash or hang is a result, not an error."""
    import signal
    import tempfile
    probe = req["probe"]
    timeout = float(req.get("timeout_s", 30))
    out = tempfile.TemporaryFile()
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.close(r)
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            _run_probe_child(probe, w)
        finally:
            os._exit(0)
    os.close(w)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    result, steps, status = _await_child(pid, r, timeout)
    os.close(r)
    if result is None:
        if status is None:
            result = {"status": "TIMEOUT", "reason": "no result within %g s" % timeout}
        elif os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            result = {"status": "CRASH", "reason": signal.Signals(sig).name}
        else:
            result = {"status": "ERROR",
                      "reason": "probe exited with status %d before reporting"
                      % os.WEXITSTATUS(status)}
        result["trace"] = steps
    result["duration_ms"] = int((time.monotonic() - t0) * 1000)
    out.seek(0)
    result["output"] = out.read(65536).decode("utf-8", "replace")
    out.close()
    return {"ok": True, "data": result}


def _frames(buf):
    """The complete frames at the start of buf, decoded."""
    out, i = [], 0
    while len(buf) - i >= 4:
        (n,) = struct.unpack(">I", buf[i:i + 4])
        if len(buf) - i - 4 < n:
            break
        out.append(json.loads(buf[i + 4:i + 4 + n].decode("utf-8")))
        i += 4 + n
    return out


def _split(frames):
    """(the result frame or None, the trace steps streamed before it)."""
    result = [f for f in frames if f.get("type") == "result"]
    steps = [f["step"] for f in frames if f.get("type") == "step"]
    if result:
        del result[0]["type"]
        return result[0], steps
    return None, steps


def _await_child(pid, rfd, timeout):
    """Reads the child's frames and reaps it; kills its group on timeout.
    Returns (result or None, the steps it traced, wait status or None for a
    timeout)."""
    import select
    import signal
    deadline = time.monotonic() + timeout
    buf = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return None, _split(_frames(buf))[1], None
        ready, _, _ = select.select([rfd], [], [], left)
        if not ready:
            continue
        chunk = os.read(rfd, 65536)
        if chunk:
            buf += chunk
            continue
        _, status = os.waitpid(pid, 0)
        try:
            os.killpg(pid, signal.SIGKILL)  # whatever the probe left behind
        except OSError:
            pass
        result, steps = _split(_frames(buf))
        return result, steps, status


OPS = {"fingerprint": op_fingerprint, "resolve": op_resolve, "probe": op_probe}


def main():
    rfd, wfd = _take_protocol_fds()
    os.write(wfd, SYNC)
    send(wfd, {"type": "hello", "proto": PROTO, "pid": os.getpid(),
               "python": sys.version.split()[0]})
    while True:
        req = recv(rfd)
        if req is None or req.get("op") == "exit":
            return 0
        fn = OPS.get(req.get("op"))
        if fn is None:
            reply = {"ok": False, "error": "unknown-op",
                     "message": "unknown op %r" % req.get("op")}
        else:
            try:
                reply = fn(req)
            except Exception as e:
                reply = {"ok": False, "error": "worker-exception",
                         "message": _exc_text(e)}
        reply["type"] = "result"
        send(wfd, reply)


if __name__ == "__main__":
    sys.exit(main())
