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
    if mod is not None and not hasattr(mod, "is_available") and \
            kind == _privateuse1(torch):
        return _sparse_device_info(torch, kind, mod, d)
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


# How many device indexes are tried when nothing else tells the count.
MAX_DEVICES_PROBED = 16


def _privateuse1(torch):
    """The name a plugin gave PrivateUse1, or None where it has none (or this
    torch cannot say)."""
    pu1 = getattr(torch._C, "_get_privateuse1_backend_name", None)
    name = pu1() if pu1 is not None else None
    return name if name != "privateuseone" else None


def _count_from(torch, kind, mod, notes):
    """(count, how it was learned) for a backend without device_count, or
    (None, None): torch's own accelerator API asks the backend's hooks."""
    acc = getattr(torch, "accelerator", None)
    if acc is None and not hasattr(mod, "device_count"):
        notes.append("this torch has no torch.accelerator")
        return None, None
    try:
        if hasattr(mod, "device_count"):
            return int(mod.device_count()), "torch.%s.device_count()" % kind
        if acc.current_accelerator().type == kind:
            return int(acc.device_count()), "torch.accelerator.device_count()"
        notes.append("torch.accelerator's device is %s" % acc.current_accelerator().type)
    except Exception as e:
        notes.append("torch.accelerator: %s" % _exc_text(e))
    return None, None


def _allocates(torch, kind, count):
    """How many of the indexes 0.. (count of them, or up to
    MAX_DEVICES_PROBED) take a tensor, and the error that stopped it."""
    n, err = 0, None
    for i in range(count if count is not None else MAX_DEVICES_PROBED):
        try:
            torch.empty(1, device="%s:%d" % (kind, i))
        except Exception as e:
            err = e
            break
        n += 1
    return n, err


def _sparse_device_info(torch, kind, mod, d):
    """A PrivateUse1 backend whose torch.<kind> module lacks the usual API
    (upstream's pytorch_openreg registers an empty one): what can be learned
    by other means, using the device (this runs in a child), and in notes what
    could not be learned and why."""
    missing = [f for f in ("is_available", "device_count", "get_device_name")
               if not hasattr(mod, f)]
    notes = ["torch.%s has no %s" % (kind, ", ".join(missing))]
    count, how = _count_from(torch, kind, mod, notes)
    took, err = _allocates(torch, kind, count)
    if count is None and took:
        count, how = took, "tensors allocated on %s:0 to %s:%d" % (kind, kind, took - 1)
    elif count is None:
        notes.append("device_count: unknown")
    if how:
        notes.append("count from %s" % how)
    if count and took < count:
        notes.append("only %d of %d devices took a tensor" % (took, count))
    d["available"] = bool(count) and took > 0
    d["count"] = count or 0
    if hasattr(mod, "get_device_name"):
        d["names"] = [str(mod.get_device_name(i)) for i in range(d["count"])]
    else:
        d["names"] = ["unknown"] * d["count"]
        notes.append("model: unknown")
    d["notes"] = notes
    if not d["available"]:
        d["reason"] = "no %s device took a tensor%s" % (
            kind, ": " + _exc_text(err) if err is not None else "")
    return d


def _may_init_driver(torch, kind):
    """Whether asking torch about kind could initialise a driver: only when
    torch was built with that backend (asking a CPU-only build is free). A
    renamed PrivateUse1 backend is always asked away: it may be learned only
    by using its device."""
    mod = getattr(torch, kind, None)
    if mod is not None and kind == _privateuse1(torch):
        return True
    if mod is None or not hasattr(mod, "is_available"):
        return False
    bmod = getattr(getattr(torch, "backends", None), kind, None)
    for built in (getattr(mod, "_is_compiled", None), getattr(bmod, "is_built", None)):
        try:
            if built is not None and not built():
                return False
        except Exception:
            pass
    return True


def _devices(torch, kinds, timeout):
    """The devices of each kind: those torch was not built for are answered
    here, the rest in a child (see _devices_in_child), which costs a fork."""
    away = [k for k in kinds if _may_init_driver(torch, k)]
    found = dict((k, _device_info(torch, k)) for k in kinds if k not in away)
    if away:
        found.update(zip(away, _devices_in_child(torch, away, timeout)))
    return [found[k] for k in kinds]


def _devices_in_child(torch, kinds, timeout):
    """Queries devices in a supervised child (see _spawn_child), so that no
    driver is ever initialised in this process: a process that later forks
    probes must stay device-clean. Whatever the query starts (a backend's
    device daemons) ends with the child."""
    def child(w):
        send(w, {"type": "result", "devices": [_device_info(torch, k) for k in kinds]})
    result, _, status = _forked(child, timeout)
    if result is None or not isinstance(result.get("devices"), list):
        why = _device_query_failed(result, status, timeout)
        return [{"type": k, "count": 0, "names": [], "available": False,
                 "reason": "device query: %s" % why} for k in kinds]
    return result["devices"]


def _device_query_failed(result, status, timeout):
    """Why the device query's child gave no devices (a fingerprint's reason,
    not a check's status)."""
    import signal
    if result is not None and (result.get("harness") or result.get("unreadable")):
        return result.get("harness") or "unreadable result frame"
    if status is None:
        return "no result within %g s" % timeout
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return "device query exited with status %d before reporting" % os.WEXITSTATUS(status)


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
    fp["devices"] = _devices(torch, kinds, _limit(req, "device_timeout_s"))
    fp["torch"]["num_threads"] = torch.get_num_threads()
    return {"ok": True, "data": fp}
