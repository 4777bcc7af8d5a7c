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
    t0 = time.monotonic()
    try:
        import torch
    except BaseException as e:
        return {"ok": False, "error": "torch-import", "message": _exc_text(e),
                "partial": fp}
    fp["torch_import_ms"] = int((time.monotonic() - t0) * 1000)
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


OPS = {"fingerprint": op_fingerprint}


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
