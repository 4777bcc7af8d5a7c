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

import base64
import json
import math
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


# ---------------------------------------------------------------- values on the wire
#
# Any value a probe, torch or a plugin produces must reach apiparity as data:
# a frame that its strict JSON reader (jansson) refuses would cost the whole
# environment. So every message is sent through _wire(), and:
#  - a string that is clean (encodes as UTF-8, holds no NUL) travels as is;
#  - in a trace value (_norm) any other string travels as {"$bytes": base64 of
#    its UTF-8, lone surrogates encoded as by Python's "surrogatepass"}, so it
#    round-trips exactly and traces compare byte for byte;
#  - in text that people read (reasons, step names, output, messages: _text)
#    a NUL is written as the four characters \x00 and a lone surrogate, which
#    is what Python makes of bytes that are not UTF-8, as \udcNN;
#  - a float that JSON cannot hold travels as {"$float": "nan"|"inf"|"-inf"},
#    an integer beyond 64 bits as {"$int": "digits"} (hex digits with a 0x
#    prefix past Python's limit on decimal conversion);
#  - anything else is its repr(), as text.
# A single-key object named "$bytes", "$float" or "$int" with a string value
# is therefore always such a tagged value (_norm makes no other objects).

_INT64 = 1 << 63


def _clean(s):
    """Whether s can travel as a JSON string as is."""
    if "\x00" in s:
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(s):
    """s as clean text, for what people read (see above)."""
    if _clean(s):
        return s
    return s.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def _number(v):
    """A number as a strict JSON reader takes it (see above)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else {"$float": repr(v)}
    if -_INT64 <= v < _INT64:
        return int(v)
    try:
        return {"$int": str(v)}
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return {"$int": hex(v)}


def _wire(v):
    """v with every string clean text, every number a JSON one, anything
    else its repr: what send() puts in a frame (see above)."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str):
        return _text(v)
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, dict):
        return {_text(str(k)): _wire(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_wire(x) for x in v]
    return _text(repr(v))


def send(fd, msg):
    body = json.dumps(_wire(msg), allow_nan=False).encode("utf-8")
    data = struct.pack(">I", len(body)) + body
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _exc_text(e):
    return "%s: %s" % (type(e).__name__, e)


class ProtocolError(Exception):
    """A request that lacks what apiparity must send."""


def _limit(req, key):
    """A limit in seconds from the request. apiparity sets every limit; a
    missing one is a protocol error, never a default chosen here."""
    if not isinstance(req.get(key), (int, float)) or isinstance(req.get(key), bool):
        raise ProtocolError("%s request without the limit %r" % (req.get("op"), key))
    return float(req[key])


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
        why = (result or {}).get("reason") or \
            _outcome(None, status, [], timeout, "device query")["reason"]
        return [{"type": k, "count": 0, "names": [], "available": False,
                 "reason": "device query: %s" % why} for k in kinds]
    return result["devices"]


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
    # torch's modules, functions and classes live as long as this process:
    # kept out of the collector's sight, they are not walked by each of its
    # full collections, nor in each forked child, where walking them copies
    # every page they sit on (bench/check-overhead measures the gain).
    import gc
    gc.freeze()
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
    res["signature_data"] = _signature_data(obj, res["kind"], name, torch)
    ovl = res["signature_data"].get("overloads") or [{}]
    res["signature"] = ovl[0].get("text")
    after_id = _identity(obj)
    res["patch"] = _patch_report(before_id, after_id)
    return {"ok": True, "data": res}


# ---------------------------------------------------------------- signatures
#
# A callable's signature as data, for apiparity to compare across
# environments: {"callable", "source", "why", "op", "overloads": [{"name",
# "text", "params": [{"name", "kind", "default" | "default_repr",
# "annotation"}] or null, "returns"}]}. source says where it came from:
# "inspect" (Python's own signature), "schema" (the aten operator's schemas,
# one overload each, for a builtin without a Python signature), "docstring"
# (the docstring's first line, the last resort; params null when it does not
# parse), or null with why. A default travels as a value ("default", a tagged
# value where JSON needs one) when it is None, a bool, a number, a string or a
# list of those, else as its repr ("default_repr", addresses masked); a
# parameter without a default has neither key.

_PARAM_KINDS = ("positional-only", "positional-or-keyword", "var-positional",
                "keyword-only", "var-keyword")


def _plain(v):
    """Whether v travels as a JSON value (see above)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    return isinstance(v, (list, tuple)) and all(_plain(x) for x in v)


def _default(v):
    import re
    if _plain(v):
        return {"default": _norm(v)}
    return {"default_repr": _text(re.sub(r"0x[0-9a-fA-F]+", "0x?", repr(v)))}


def _annotation(a):
    import inspect
    if a is inspect.Parameter.empty:
        return None
    return _text(a if isinstance(a, str) else inspect.formatannotation(a))


def _inspect_overload(name, sig):
    params = []
    for p in sig.parameters.values():
        d = {"name": p.name, "kind": _PARAM_KINDS[int(p.kind)],
             "annotation": _annotation(p.annotation)}
        if p.default is not p.empty:
            d.update(_default(p.default))
        params.append(d)
    return {"name": "", "text": _text(name + str(sig)), "params": params,
            "returns": _annotation(sig.return_annotation)}


def _schema_overload(s):
    params = []
    for a in s.arguments:
        d = {"name": a.name, "kind": "keyword-only" if a.kwarg_only else "positional-or-keyword",
             "annotation": str(a.type)}
        has = getattr(a, "has_default_value", None)
        if has() if has is not None else a.default_value is not None:
            d.update(_default(a.default_value))
        params.append(d)
    return {"name": s.overload_name, "text": _text(str(s)), "params": params,
            "returns": ", ".join(str(r.type) for r in s.returns)}


def _schemas(torch, names):
    """The aten schemas of the first of names that is an operator."""
    get = getattr(torch._C, "_jit_get_schemas_for_operator", None)
    for n in names if get is not None else ():
        try:
            found = get("aten::" + n)
        except Exception:
            continue
        if found:
            return "aten::" + n, [_schema_overload(s) for s in found]
    return None, None


def _doc_overload(doc):
    """The signature on a docstring's first line, as torch writes it for its
    builtins: "add(input, other, *, alpha=1, out=None) -> Tensor"."""
    import ast
    import re
    first = doc.strip().splitlines()[0].strip() if isinstance(doc, str) and doc.strip() else ""
    m = re.match(r"^([A-Za-z_][\w.]*)\((.*)\)\s*(?:->\s*(.+))?$", first)
    if not m:
        return None
    ovl = {"name": "", "text": _text(first), "params": None, "returns": m.group(3)}
    try:
        args = ast.parse("def _f(%s): pass" % m.group(2)).body[0].args
    except (SyntaxError, ValueError):
        return ovl
    kinds = [(a, 0) for a in args.posonlyargs] + [(a, 1) for a in args.args]
    defaults = [None] * (len(kinds) - len(args.defaults)) + list(args.defaults)
    kinds = [(a, k, d) for (a, k), d in zip(kinds, defaults)]
    if args.vararg:
        kinds.append((args.vararg, 2, None))
    kinds += [(a, 3, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        kinds.append((args.kwarg, 4, None))
    ovl["params"] = []
    for a, k, d in kinds:
        p = {"name": a.arg, "kind": _PARAM_KINDS[k], "annotation": None}
        if d is not None:
            try:
                p.update(_default(ast.literal_eval(d)))
            except ValueError:
                p["default_repr"] = _text(ast.unparse(d))
        ovl["params"].append(p)
    return ovl


def _signature_data(obj, kind, name, torch):
    import inspect
    data = {"callable": callable(obj) and kind not in ("module", "property", "value"),
            "source": None, "why": None, "op": None, "overloads": []}
    if not data["callable"]:
        data["why"] = "not callable (%s)" % kind
        return data
    try:
        data["overloads"] = [_inspect_overload(name, inspect.signature(obj))]
        data["source"] = "inspect"
        return data
    except (TypeError, ValueError):
        pass
    own = getattr(obj, "__name__", None)
    names = [n for n in (own, name) if isinstance(n, str)]
    data["op"], ovls = _schemas(torch, sorted(set(names), key=names.index))
    if ovls:
        data["source"], data["overloads"] = "schema", ovls
        return data
    ovl = _doc_overload(getattr(obj, "__doc__", None))
    if ovl is not None:
        data["source"], data["overloads"] = "docstring", [ovl]
        return data
    data["why"] = ("no Python signature, no aten operator schema for %s, and the "
                   "docstring does not start with a signature" % " or ".join(names))
    return data


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
    """A value as a trace records it: comparable across processes, and any
    string exact (see "values on the wire")."""
    import re
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, str):
        if _clean(v):
            return v
        return {"$bytes": base64.b64encode(v.encode("utf-8", "surrogatepass")).decode("ascii")}
    if isinstance(v, type):
        return _norm("<class %s>" % v.__qualname__)
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    return _norm(re.sub(r"0x[0-9a-fA-F]+", "0x?", repr(v)))


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


# ---------------------------------------------------------------- supervision
#
# A child's result counts when the child itself ends, whatever its own children
# still hold open; then its process group is killed, and so is anything that
# escaped the group (a setsid daemon): orphans come to this process, as the
# subreaper or as PID 1 of the environment's PID namespace (chroots).

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# How long a child's pipe is still read once the child has exited.
DRAIN_S = 0.2
# The protocol descriptors, closed in every child: a probe, or a daemon it
# starts, must never hold apiparity's pipes open past the worker's end.
_protocol_fds = ()
_libc = None


def _prctl(option, arg):
    """prctl(2) through ctypes; False where that is not possible."""
    global _libc
    try:
        if _libc is None:
            import ctypes
            _libc = ctypes.CDLL(None, use_errno=True)
        return _libc.prctl(option, arg, 0, 0, 0) == 0
    except Exception:
        return False


def _children(ppid):
    """The pids whose parent is ppid, from /proc."""
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == ppid:
            out.append(int(name))
    return out


def _reap_orphans():
    """Kills and reaps every child of this process but the runners it keeps
    (_KEPT): called when none of its own is running, so each is something a
    probe or test left behind."""
    import signal
    kept = set(k["pid"] for k in _KEPT.values())
    for _ in range(8):  # a killed orphan's own children come next
        kids = [pid for pid in _children(os.getpid()) if pid not in kept]
        if not kids:
            return
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in kids:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass


def _drain(rfd):
    """What rfd holds now, read for at most DRAIN_S seconds."""
    import select
    out = []
    end = time.monotonic() + DRAIN_S
    while time.monotonic() < end and select.select([rfd], [], [], 0)[0]:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        out.append(chunk)
    return b"".join(out)


def _read_until_exit(pid, rfd, deadline):
    """Reads rfd until the child pid exits, then what the pipe still holds.
    Returns (the bytes, its wait status), or (the bytes, None) at the deadline
    with the child still running."""
    import select
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    buf, eof = b"", False
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return buf + (b"" if eof else _drain(rfd)), status
            left = deadline - time.monotonic()
            if left <= 0:
                return buf, None
            fds = ([] if eof else [rfd]) + ([] if pidfd is None else [pidfd])
            ready, _, _ = select.select(fds, [], [], left if pidfd is not None
                                        else min(left, 0.05))
            if rfd in ready:
                chunk = os.read(rfd, 65536)
                buf += chunk
                eof = not chunk
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _spawn_child(fn, out_fd):
    """Forks a child in its own process group, its stdout and stderr on
    out_fd, that runs fn(wfd) and exits; returns (pid, the read end). The
    child dies with this process (parent-death signal)."""
    global _protocol_fds
    import signal
    parent = os.getpid()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:
                os._exit(1)
            for fd in _protocol_fds:
                os.close(fd)
            _protocol_fds = ()  # their numbers may be reused from here on
            os.close(r)
            os.dup2(out_fd, 1)
            os.dup2(out_fd, 2)
            fn(w)
        except BaseException as e:
            send(w, {"type": "result", "status": "ERROR", "reason": _exc_text(e)})
        finally:
            os._exit(0)
    os.close(w)
    try:
        os.setpgid(pid, pid)  # also here: whichever runs first wins the race
    except OSError:
        pass
    return pid, r


def _forked(fn, timeout, out_fd=None):
    """Runs fn(wfd) in a child (see _spawn_child) with a timeout; returns
    (its result frame or None, the steps it traced, wait status or None on
    timeout)."""
    devnull = os.open(os.devnull, os.O_WRONLY) if out_fd is None else None
    try:
        pid, r = _spawn_child(fn, out_fd if out_fd is not None else devnull)
    finally:
        if devnull is not None:
            os.close(devnull)
    try:
        return _await_child(pid, r, timeout)
    finally:
        os.close(r)


def _outcome(result, status, steps, timeout, what):
    """A result for a child that sent none: TIMEOUT, CRASH or ERROR."""
    import signal
    if result is not None:
        return result
    if status is None:
        result = {"status": "TIMEOUT", "reason": "no result within %g s" % timeout}
    elif os.WIFSIGNALED(status):
        result = {"status": "CRASH", "reason": signal.Signals(os.WTERMSIG(status)).name}
    else:
        result = {"status": "ERROR", "reason": "%s exited with status %d before reporting"
                  % (what, os.WEXITSTATUS(status))}
    result["trace"] = steps
    return result


def op_probe(req):
    """Runs one probe in a forked child, in its own process group, with its
    output captured and a timeout; a crash or hang is a result, not an error."""
    import tempfile
    probe = req["probe"]
    timeout = _limit(req, "timeout_s")
    out = tempfile.TemporaryFile()
    t0 = time.monotonic()
    result, steps, status = _forked(lambda w: _run_probe_child(probe, w), timeout, out.fileno())
    result = _outcome(result, status, steps, timeout, "probe")
    result["duration_ms"] = int((time.monotonic() - t0) * 1000)
    out.seek(0)
    result["output"] = out.read(65536).decode("utf-8", "replace")
    out.close()
    return {"ok": True, "data": result}


def _frames(buf):
    """The complete frames at the start of buf, decoded; one that does not
    decode to an object is {"type": "unreadable"}."""
    out, i = [], 0
    while len(buf) - i >= 4:
        (n,) = struct.unpack(">I", buf[i:i + 4])
        if len(buf) - i - 4 < n:
            break
        try:
            f = json.loads(buf[i + 4:i + 4 + n].decode("utf-8"))
        except ValueError:
            f = None
        out.append(f if isinstance(f, dict) else {"type": "unreadable"})
        i += 4 + n
    return out


def _split(frames):
    """(the result frame or None, the trace steps streamed before it). A
    frame the child sent that could not be read makes the result an ERROR:
    it cost that probe, not the session."""
    result = [f for f in frames if f.get("type") == "result"]
    steps = [f.get("step") for f in frames if f.get("type") == "step"]
    if any(f.get("type") == "unreadable" for f in frames):
        return {"status": "ERROR", "reason": "unreadable result frame", "trace": steps}, steps
    if result:
        del result[0]["type"]
        return result[0], steps
    return None, steps


def _end_child(pid, status):
    """Kills what is left of the child's process group (all of it on a
    timeout, status None), reaps the child, then whatever escaped the group."""
    import signal
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    if status is None:
        os.waitpid(pid, 0)
    _reap_orphans()


def _supervise(pid, rfd, timeout):
    """The one loop that watches a child (see _spawn_child): reads its frames
    until the child itself exits (not until its pipe closes: a daemon it
    started may still hold that), then kills what is left of its group and
    reaps whatever escaped it; on timeout kills the group first. Returns (the
    frames it sent, wait status or None for a timeout)."""
    buf, status = _read_until_exit(pid, rfd, time.monotonic() + timeout)
    _end_child(pid, status)
    return _frames(buf), status


def _await_child(pid, rfd, timeout):
    """(result or None, the steps it traced, wait status or None for a
    timeout) of a child that reports one result (see _supervise)."""
    frames, status = _supervise(pid, rfd, timeout)
    result, steps = _split(frames)
    return (result if status is not None else None), steps, status


# ---------------------------------------------------------------- packages

def op_package(req):
    """The dpkg record of a package in this environment (no dpkg needed)."""
    name, rec, out = req["name"], {}, None
    try:
        with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip() == "":
                    if rec.get("Package") == name and "installed" in rec.get("Status", ""):
                        out = rec
                        break
                    rec = {}
                elif not line[0].isspace() and ":" in line:
                    k, v = line.split(":", 1)
                    rec[k] = v.strip()
            else:
                if rec.get("Package") == name:
                    out = rec
    except OSError as e:
        return {"ok": True, "data": {"found": False, "why": _exc_text(e)}}
    if out is None:
        return {"ok": True, "data": {"found": False, "why": "%s is not installed" % name}}
    src = out.get("Source", name).split(" ")[0]
    ver = out.get("Version")
    m = out.get("Source", "").split("(")
    if len(m) > 1:
        ver = m[1].rstrip(")").strip()
    osr = _os_release()
    return {"ok": True, "data": {"found": True, "source": src, "version": ver,
                                 "codename": osr.get("VERSION_CODENAME")}}


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


def _load_test_module(path, root):
    import importlib.util
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


def _unittest_facts(result):
    """What a unittest.TestResult saw, for apiparity to judge: how many ran,
    and the last traceback or reason of each kind with their counts."""
    def last(items):
        return items[-1][1] if items else None
    return {"tests_run": result.testsRun,
            "errors": len(result.errors), "error": last(result.errors),
            "failures": len(result.failures), "failure": last(result.failures),
            "skipped": len(result.skipped), "skip": last(result.skipped),
            "expected_failures": len(result.expectedFailures),
            "unexpected_successes": len(result.unexpectedSuccesses)}


def _raised_facts(e):
    """What a module-level test function raised (None: nothing)."""
    if e is None:
        return None
    return {"type": type(e).__name__, "assertion": isinstance(e, AssertionError),
            "text": _exc_text(e)}


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
    result = unittest.TestResult()
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
            res = {"status": "ERROR", "reason": _exc_text(e)}
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
    """The result of the test a file's child died in, by its wait status."""
    import signal
    if os.WIFSIGNALED(status):
        return {"status": "CRASH", "reason": signal.Signals(os.WTERMSIG(status)).name}
    return {"status": "CRASH", "reason": "the test process exited with status %d during the test"
            % os.WEXITSTATUS(status)}


def _one_child(mod, nodes, timeout, w, out_fd):
    """Forks a child of this runner that runs nodes (see _file_child) and
    sends w a test frame for each result as it comes, each test within
    timeout seconds of the one before. Returns how many of nodes have their
    result: all, or those up to and including the test that the child died
    in (CRASH) or passed its deadline in (TIMEOUT: the child is killed)."""
    pid, r = _spawn_child(lambda cw: _file_child(mod, nodes, cw, out_fd), out_fd)
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    buf, done, how, status = b"", 0, "frame", None
    start, t0 = os.fstat(out_fd).st_size, time.monotonic()
    try:
        while done < len(nodes) and how == "frame":
            buf, how, status = _await_frames(pid, r, pidfd, buf, t0 + timeout)
            frames, buf = _take_frames(buf)
            for f in frames[:len(nodes) - done]:
                res = f if f.get("type") == "result" else \
                    {"status": "ERROR", "reason": "unreadable result frame"}
                start = _test_frame(res, nodes[done], t0, out_fd, start, f.get("out_end"), w)
                done, t0 = done + 1, time.monotonic()
    finally:
        if pidfd is not None:
            os.close(pidfd)
        os.close(r)
        # All results in, it died, or it hangs: what is left of it goes.
        _end_child(pid, status)
    if done < len(nodes):  # it died in, or hung in, nodes[done]
        res = _death(status) if how == "exit" else \
            {"status": "TIMEOUT", "reason": "no result within %g s" % timeout}
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


# ---------------------------------------------------------------- sweep
#
# A sweep catalogs the public surface, one catalog entry (a module or a class)
# per request, so that thousands of names cost one round trip per entry and
# a crash or a hang costs only the entry being walked. apiparity journals each
# API as the answer arrives and decides everything else (verdicts, what to
# skip on --resume, when to give up on an entry).

_SWEEP_BEFORE = {}   # api -> identity before the plugins loaded (when any load)
_SWEEP_STATE = {}    # "plugins": names loaded, "compare": whether _SWEEP_BEFORE holds


def _sweep_public(names):
    """Public names, sorted: no leading underscore, and ASCII identifiers
    only (a name set with setattr can be any string; the matrix keys and
    the pages' file names are built from these)."""
    return sorted(n for n in names if isinstance(n, str) and not n.startswith("_") and
                  n.isidentifier() and n.isascii())


def _sweep_foreign(obj):
    """Whether obj is a class or function a module imported from outside torch
    (typing.Any, os.path): not part of torch's surface."""
    import inspect
    if not (inspect.isclass(obj) or inspect.isroutine(obj)):
        return False
    m = getattr(obj, "__module__", None)
    return isinstance(m, str) and m != "torch" and not m.startswith("torch.")


def _sweep_plugins_own(api, obj):
    """Whether a name from outside torch is a plugin's doing, and so part of
    the surface: it replaced what torch had there (a patch), or it comes
    from a plugin that was loaded (an addition)."""
    if not _SWEEP_STATE.get("compare"):
        return False
    if api in _SWEEP_BEFORE:
        return True
    top = (getattr(obj, "__module__", None) or "").split(".")[0]
    return top in _SWEEP_STATE.get("tops", ())


def _sweep_walked_below(cls, exclude):
    """Whether a deeper catalog entry walks cls's members: a module entry of
    exclude that cls is defined under and that holds it by its name
    (torch.autograd.Function is torch.autograd.function's Function, which
    the entry torch.autograd.function walks). A class re-exported by its
    parent module is one API; its members are walked once, where it lives."""
    m = getattr(cls, "__module__", None)
    name = getattr(cls, "__name__", None)
    if not isinstance(m, str) or not _sweep_public([name]):
        return False
    for x in exclude:
        mod = sys.modules.get(x)
        if mod is not None and (m == x or m.startswith(x + ".")) and \
                getattr(mod, name, None) is cls:
            return True
    return False


def _sweep_members(entry, walk, exclude):
    """Yields (api, key, owner, parent, name, obj | exception) for every public
    name of the entry (see specs/catalog.txt), in a stable order. Each API
    once: a name that is a catalog entry of its own is that entry's (its own
    line, a class entry's first API), and a class's members are walked
    under the entry it is defined in (_sweep_walked_below)."""
    import importlib
    import inspect
    import types
    if walk == "module":
        root = importlib.import_module(entry)
    else:
        root, parent, _, missing = _walk(entry)
        if root is None:
            raise ImportError("%s has no attribute %s" % (entry, missing))
        yield entry, entry, None, parent, entry.rsplit(".", 1)[-1], root
    classes = []
    names = dir(root)
    for n in _sweep_public(names):
        api = entry + "." + n
        if walk == "module" and api in exclude:
            continue
        try:
            obj = getattr(root, n)
        except Exception as e:
            yield api, api if walk == "module" else _sweep_key(entry, n), \
                None if walk == "module" else entry, root, n, e
            continue
        if walk == "module":
            if isinstance(obj, types.ModuleType):
                if not obj.__name__.startswith(entry + "."):
                    continue
            elif _sweep_foreign(obj) and not _sweep_plugins_own(api, obj):
                continue
            yield api, api, None, root, n, obj
            m = getattr(obj, "__module__", None)
            if inspect.isclass(obj) and isinstance(m, str) and \
                    (m == entry or m.startswith(entry + ".")) and not _sweep_tensor_type(obj) \
                    and not _sweep_walked_below(obj, exclude):
                classes.append((api, obj))
        else:
            yield api, _sweep_key(entry, n), entry, root, n, obj
    for capi, cls in classes:
        for n in _sweep_public(_sweep_own(cls)):
            api = capi + "." + n
            try:
                obj = getattr(cls, n)
            except Exception as e:
                obj = e
            yield api, _sweep_key(capi, n), capi, cls, n, obj


def _sweep_tensor_type(cls):
    """The legacy tensor types (torch.cuda.FloatTensor, ...) carry a copy of
    every Tensor method: walking them would list torch.Tensor's surface again
    for each of them. torch.Tensor has its own catalog entry."""
    torch = sys.modules.get("torch")
    if type(cls).__name__ == "tensortype":
        return True
    try:
        return torch is not None and issubclass(cls, torch.Tensor)
    except TypeError:
        return False


def _sweep_own(cls):
    """The members a class carries itself: its own, and those of private
    bases (torch.autograd.Function's forward lives in _SingleLevelFunction,
    Tensor's methods in TensorBase), which torch documents as the class's.
    A public base's members are that base's APIs (nn.Module's), not again
    each subclass's."""
    names = set(vars(cls))
    for base in getattr(cls, "__mro__", ())[1:]:
        if base is not object and getattr(base, "__name__", "").startswith("_"):
            names.update(vars(base))
    return list(names)


def _sweep_key(owner, name):
    """A member as the pages name it: its class's name, a dot, the member."""
    return owner.rsplit(".", 1)[-1] + "." + name


_CLASS_LINES = {}


def _class_line(path, qualname):
    """The line of class qualname in path: one ast parse per file, however
    many classes it defines (inspect parses the file again for each)."""
    import ast
    if path not in _CLASS_LINES:
        found = {}
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError):
            tree = None

        def visit(node, prefix):
            for c in getattr(node, "body", ()):
                if isinstance(c, ast.ClassDef):
                    found.setdefault(prefix + c.name, c.lineno)
                    visit(c, prefix + c.name + ".")
        if tree is not None:
            visit(tree, "")
        _CLASS_LINES[path] = found
    return _CLASS_LINES[path].get(qualname)


def _sweep_source(obj, root):
    """(file relative to torch's parent directory, line), fast: a function's
    code object, a class's module and one parse of its file."""
    import inspect
    fn = getattr(obj, "__func__", obj)
    fn = getattr(fn, "fget", fn)
    path = line = None
    code = getattr(fn, "__code__", None)
    if inspect.isfunction(fn) and code is not None:
        path, line = code.co_filename, code.co_firstlineno
    elif inspect.isclass(obj):
        mod = sys.modules.get(getattr(obj, "__module__", None) or "")
        path = getattr(mod, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            line = _class_line(path, getattr(obj, "__qualname__", ""))
        else:
            path = None
    if not isinstance(path, str) or not path.endswith(".py"):
        return None, None
    ap = os.path.abspath(path)
    if ap.startswith(root + os.sep):
        path = ap[len(root) + 1:]
    return path, line


def _sweep_api(api, key, owner, parent, name, obj, torch, root, depth):
    import inspect
    d = {"api": api, "key": key, "owner": owner}
    if isinstance(obj, Exception):
        d.update({"status": "error", "reason": "reading it raised " + _exc_text(obj)})
        return d
    d["status"] = "present"
    d["kind"] = _kind(obj, parent, name)
    d["file"], d["line"] = _sweep_source(obj, root)
    fn = getattr(obj, "__func__", obj)
    d["pure_python"] = inspect.isfunction(getattr(fn, "fget", fn)) or \
        (inspect.isclass(obj) and d["file"] is not None)
    if depth != "resolve":
        try:
            sig = _signature_data(obj, d["kind"], name, torch)
            d["signature"] = [o.get("text") for o in sig.get("overloads") or []] or None
        except Exception as e:
            d["signature"] = ["<error: %s>" % _exc_text(e)]
    if depth in ("probe", "numeric"):
        # The class whose family a member belongs to (check's rule: its
        # owner, else itself), by its canonical name: apiparity picks the
        # checks from it; it is not a matrix field.
        cls = parent if owner else obj if inspect.isclass(obj) else None
        d["canonical"] = _qualname(cls) if cls is not None else None
    if _SWEEP_STATE.get("compare"):
        before = _SWEEP_BEFORE.get(api)
        d["plugin_added"] = before is None
        d["patched"] = None if before is None else before != _sweep_identity(obj)
    return d


def _sweep_identity(obj):
    return (id(obj), _code_hash(obj))


def op_sweep_begin(req):
    """Imports torch alone; when a plugin is to load, first notes what every
    catalog entry holds (so that a plugin's patch shows), then loads it."""
    import importlib.util
    try:
        torch = _import_torch(alone=True)
    except BaseException as e:
        return {"ok": False, "error": "torch-import", "message": _exc_text(e)}
    wanted = [p for p in req.get("plugins", []) if importlib.util.find_spec(p) is not None]
    compare = bool(wanted or _entry_point_plugins())
    _SWEEP_BEFORE.clear()
    for e in req.get("entries", []) if compare else ():
        try:
            for api, _, _, _, _, obj in _sweep_members(e["name"], e["walk"],
                                                       set(e.get("exclude", []))):
                if not isinstance(obj, Exception):
                    _SWEEP_BEFORE[api] = _sweep_identity(obj)
        except Exception:
            continue
    loaded, errors = _load_plugins(torch, req.get("plugins", [])) if compare else ([], [])
    tops = set(n.split(".")[0] for n in loaded)
    tops.update(p.get("module", "").split(".")[0] for p in _entry_point_plugins()
                if isinstance(p, dict))
    _SWEEP_STATE.update({"compare": bool(loaded), "plugins": loaded, "tops": tops})
    return {"ok": True, "data": {"torch": torch.__version__, "plugins_loaded": loaded,
                                 "plugin_errors": errors}}


def _sweep_walk(req, torch, root, apis):
    import warnings
    skip, exclude = set(req.get("skip", [])), set(req.get("exclude", []))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notes on access: noise here
        for api, key, owner, parent, name, obj in _sweep_members(req["entry"], req["walk"],
                                                                 exclude):
            if api in skip:
                continue
            try:
                apis.append(_sweep_api(api, key, owner, parent, name, obj, torch, root,
                                       req.get("depth", "resolve")))
            except Exception as e:  # an object whose every attribute raises
                apis.append({"api": api, "key": key, "owner": owner, "status": "error",
                             "reason": "inspecting it raised " + _exc_text(e)})


def op_sweep_walk(req):
    """Walks one catalog entry: {"entry", "walk": "module"|"class", "exclude":
    [apis of classes walked by their own entry], "skip": [apis journaled
    already], "depth": "resolve"|"signature"|"probe"|"numeric"} (probe and
    numeric walk as signature does, and add each API's "canonical" class;
    apiparity then asks for the checks API by API). Answers {"status": "ok",
    "apis"}, {"status": "import-error", "reason"} when the entry does not
    import, or {"status": "error", "reason", "apis"} when the walk broke."""
    torch = sys.modules.get("torch") or _import_torch(alone=True)
    root = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
    apis = []
    try:
        _sweep_walk(req, torch, root, apis)
    except Exception as e:
        # Nothing walked: the entry does not import here. Part walked: the
        # walk broke; what it measured stands, and the entry is an error.
        return {"ok": True, "data": {"status": "error" if apis else "import-error",
                                     "reason": _exc_text(e), "apis": apis}}
    return {"ok": True, "data": {"status": "ok", "apis": apis}}


# ---------------------------------------------------------------- operators (OpInfo)
#
# The numeric check: in the reference environment, op_samples finds the
# OpInfo entries of the target and serializes their samples as data; in every
# environment, op_run runs those samples (the same bytes) on CPU and on each
# device, and ships every output and gradient as raw bytes. apiparity (C)
# compares them; nothing here judges a number.
#
# Tagged values (besides $bytes, $float, $int above): {"$tensor": {dtype,
# shape, strides, requires_grad, data}} (data: base64 of the little-endian
# bytes of the storage the view spans, from its first element; strides in
# elements), {"$tuple": [...]}, {"$complex": [re, im]}, {"$dtype": "float32"},
# {"$device": "cpu"}, {"$torch": "contiguous_format"} (an attribute of torch),
# {"$slice": [start, stop, step]}, {"$ellipsis": true}. A list is a list; a
# dict with string keys is an object.

class Unserializable(Exception):
    pass


_TENSOR_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                  "bfloat16", "float32", "float64", "complex64", "complex128")


def _dtype_name(dt):
    return str(dt).split(".", 1)[-1]


def _tensor_bytes(t):
    """The bytes of a contiguous CPU tensor."""
    import torch
    u8 = t.reshape(-1).view(torch.uint8) if t.numel() else t.new_empty(0).view(torch.uint8)
    try:
        return u8.numpy().tobytes()
    except Exception:  # no numpy in this environment
        return bytes(u8.tolist())


def _tensor_tag(t, spanned):
    """A tensor as data. spanned: the storage its view reads, with its
    strides (an input, sent as it is); else its contents, contiguous (an
    output)."""
    import torch
    name = _dtype_name(t.dtype)
    if name not in _TENSOR_DTYPES or t.layout != torch.strided:
        raise Unserializable("tensor of %s, %s" % (t.dtype, t.layout))
    c = t.detach()
    for fix in ("resolve_conj", "resolve_neg"):
        if hasattr(c, fix):
            c = getattr(c, fix)()
    c = c.to("cpu")
    shape, strides = list(c.shape), list(c.stride())
    if spanned and c.numel() and all(s >= 0 for s in strides):
        span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        flat = torch.as_strided(c, (span,), (1,), c.storage_offset()).contiguous()
    else:
        c = c.contiguous()
        strides, flat = list(c.stride()), c
    return {"$tensor": {"dtype": name, "shape": shape, "strides": strides,
                        "requires_grad": bool(t.requires_grad),
                        "data": base64.b64encode(_tensor_bytes(flat)).decode("ascii")}}


def _tag(v, spanned=True):
    """v as a tagged value (see above); Unserializable for what has no tag."""
    import torch
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, complex):
        return {"$complex": [_number(v.real), _number(v.imag)]}
    if isinstance(v, torch.Tensor):
        return _tensor_tag(v, spanned)
    if isinstance(v, list):
        return [_tag(x, spanned) for x in v]
    if isinstance(v, tuple):
        return {"$tuple": [_tag(x, spanned) for x in v]}
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        if any(k.startswith("$") for k in v):
            raise Unserializable("dict key starting with $")
        return dict((k, _tag(x, spanned)) for k, x in v.items())
    if isinstance(v, torch.dtype):
        return {"$dtype": _dtype_name(v)}
    if isinstance(v, torch.device):
        return {"$device": v.type}
    if isinstance(v, slice):
        return {"$slice": [_tag(v.start), _tag(v.stop), _tag(v.step)]}
    if v is Ellipsis:
        return {"$ellipsis": True}
    for kind in ("memory_format", "layout", "qscheme"):
        cls = getattr(torch, kind, None)
        if isinstance(cls, type) and isinstance(v, cls):
            name = str(v).split(".", 1)[-1]
            if getattr(torch, name, None) is v:
                return {"$torch": name}
    raise Unserializable("a value of type %s" % type(v).__name__)


def _untensor(d, device):
    """A tensor from its tag, on device, with the strides it was sent with
    (on CPU; a device keeps them where .to() does)."""
    import torch
    dt = getattr(torch, d["dtype"], None)
    if d["dtype"] not in _TENSOR_DTYPES or not isinstance(dt, torch.dtype):
        raise Unserializable("dtype %r" % d["dtype"])
    raw = bytearray(base64.b64decode(d["data"]))
    shape, strides = [int(n) for n in d["shape"]], [int(s) for s in d["strides"]]
    if raw:
        t = torch.frombuffer(raw, dtype=torch.uint8).view(dt).as_strided(shape, strides, 0)
    else:
        t = torch.empty_strided(shape, strides, dtype=dt)
    t = t.to(device)
    if d.get("requires_grad"):
        t.requires_grad_(True)
    return t


def _untag(v, device):
    """A value from its tag (the reverse of _tag), tensors on device; a
    $device of cpu becomes device, so factory arguments follow the run."""
    import torch
    if isinstance(v, list):
        return [_untag(x, device) for x in v]
    if not isinstance(v, dict):
        return v
    if len(v) == 1:
        (k, x), = v.items()
        if k == "$tensor":
            return _untensor(x, device)
        if k == "$tuple":
            return tuple(_untag(y, device) for y in x)
        if k == "$float":
            return float(x)
        if k == "$int":
            return int(x, 0)
        if k == "$complex":
            return complex(_untag(x[0], device), _untag(x[1], device))
        if k == "$dtype":
            return getattr(torch, x)
        if k == "$device":
            return torch.device(device if x == "cpu" else x)
        if k == "$torch":
            return getattr(torch, x)
        if k == "$slice":
            return slice(*[_untag(y, device) for y in x])
        if k == "$ellipsis":
            return Ellipsis
        if k == "$bytes":
            return base64.b64decode(x).decode("utf-8", "surrogatepass")
    return dict((k, _untag(x, device)) for k, x in v.items())


def _op_db():
    """OpInfo's database of this torch, imported once (upstream's testing
    helpers read /proc and set flags; that happens here, not in a probe)."""
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def _variants(op):
    """Every callable an OpInfo entry stands for, its aliases' too."""
    out = [getattr(op, k, None) for k in ("op", "method_variant", "inplace_variant",
                                          "operator_variant", "inplace_operator_variant")]
    for a in getattr(op, "aliases", ()) or ():
        out += [getattr(a, k, None) for k in ("op", "method_variant", "inplace_variant")]
    return [f for f in out if f is not None]


def _op_names(op):
    names = [op.name] + [getattr(a, "name", None) for a in getattr(op, "aliases", ()) or ()]
    return [n for n in names if n]


def _target_name(target):
    """The OpInfo name a dotted target would have: torch.nn.functional.relu
    is nn.functional.relu, torch.Tensor.index_add_ is index_add."""
    name = target[len("torch."):] if target.startswith("torch.") else target
    if name.startswith("Tensor."):
        name = name[len("Tensor."):]
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    return name


def _match_ops(target, obj):
    """The OpInfo entries of target: those one of whose callables is obj,
    else those named as the target (a name or an alias)."""
    db = _op_db()
    same = [op for op in db if any(f is obj for f in _variants(op))]
    if same or obj is None:
        return same
    name = _target_name(target)
    return [op for op in db if name in _op_names(op)]


def _is_inplace(target, obj, op):
    return obj is not None and (obj is getattr(op, "inplace_variant", None) or
                                obj is getattr(op, "inplace_operator_variant", None)) or \
        (target.rsplit(".", 1)[-1].endswith("_") and not target.endswith("__"))


def _dtype_names(dts):
    return sorted(_dtype_name(d) for d in dts)


def _op_facts(op, devices):
    """What this environment's OpInfo says of op: its dtypes per device."""
    facts = {"name": op.name, "variant": op.variant_test_name,
             "supports_autograd": bool(getattr(op, "supports_autograd", False)),
             "has_reference_inputs": getattr(op, "reference_inputs_func", None) is not None,
             "has_error_inputs": getattr(op, "error_inputs_func", None) is not None,
             "dtypes": {}}
    for dev in ["cpu"] + list(devices):
        try:
            facts["dtypes"][dev] = _dtype_names(op.supported_dtypes(dev))
        except Exception as e:
            facts["dtypes"][dev] = None
            facts.setdefault("why", {})[dev] = _exc_text(e)
    return facts


# nn modules: an nn.Module class that an entry of ModuleInfo's database
# (torch.testing._internal.common_modules.module_db) stands for gets the same
# numeric checks. The reference makes each sample: the module built once,
# after torch.manual_seed(seed), from the entry's constructor arguments and
# cast to the dtype, its state_dict (parameters and buffers) shipped as
# tensors beside the forward inputs, all in "sample" (so its digest covers
# them). Every environment builds the module from the same arguments, loads
# that state, moves it to the device and runs forward in eval mode; the
# gradients shipped are the inputs' and then the parameters' (in
# parameters() order), against the same fixed grad_output.

def _is_module_class(obj):
    import torch
    return isinstance(obj, type) and issubclass(obj, torch.nn.Module)


def _match_modules(obj):
    from torch.testing._internal.common_modules import module_db
    return [mi for mi in module_db if mi.module_cls is obj]


def _module_facts(mi, devices):
    """What this environment's ModuleInfo says of mi: its dtypes per device."""
    facts = {"name": mi.name, "variant": "", "module": True, "supports_autograd": True,
             "has_reference_inputs": False, "has_error_inputs": False, "dtypes": {}}
    for dev in ["cpu"] + list(devices):
        try:
            facts["dtypes"][dev] = _dtype_names(mi.supported_dtypes(dev))
        except Exception as e:
            facts["dtypes"][dev] = None
            facts.setdefault("why", {})[dev] = _exc_text(e)
    return facts


def _entries(target, obj):
    """The entries that stand for target (ModuleInfo's for an nn.Module
    class, else OpInfo's), and the function that tells their facts."""
    if _is_module_class(obj):
        return _match_modules(obj), _module_facts
    return _match_ops(target, obj), _op_facts


def _module_sample(cls, mod_in, dt, seed):
    """One ModuleInfo input as a sample: forward inputs, and the module."""
    import torch
    c, f = mod_in.constructor_input, mod_in.forward_input
    torch.manual_seed(seed)
    m = cls(*c.args, **c.kwargs).to(dt)
    return {"input": None, "args": _tag(tuple(f.args)), "kwargs": _tag(dict(f.kwargs)),
            "module": {"args": _tag(tuple(c.args)), "kwargs": _tag(dict(c.kwargs)),
                       "dtype": _dtype_name(dt),
                       "state": dict((k, _tag(v)) for k, v in m.state_dict().items())}}


def _module_samples(req, obj):
    """op_samples for an nn.Module class: at most max_samples of each
    ModuleInfo entry's inputs per dtype asked that CPU supports, made after
    torch.manual_seed(seed), each module built after it too."""
    import itertools
    import torch
    limit, seed = int(req["max_samples"]), int(req["seed"])
    mods = _match_modules(obj)
    samples, skipped = [], []
    for mi in mods:
        cpu = _dtype_names(mi.supported_dtypes("cpu"))
        for name in [n for n in req["dtypes"] if n in cpu]:
            dt = getattr(torch, name)
            grad = dt.is_floating_point or dt.is_complex
            base = {"op": mi.name, "variant": "", "dtype": name, "kind": "sample",
                    "grad": grad, "inplace": False}
            torch.manual_seed(seed)
            try:
                inputs = list(itertools.islice(mi.module_inputs_func(
                    mi, device="cpu", dtype=dt, requires_grad=grad, training=False), limit))
            except Exception as e:
                skipped.append(dict(base, index=-1, why=_exc_text(e)))
                continue
            for k, mod_in in enumerate(inputs):
                try:
                    samples.append(dict(base, index=k, desc=mod_in.desc,
                                        sample=_module_sample(obj, mod_in, dt, seed)))
                except Unserializable as e:
                    skipped.append(dict(base, index=k, why="unserializable: %s" % e))
                except Exception as e:
                    skipped.append(dict(base, index=k, why=_exc_text(e)))
    return {"ok": True, "data": {"seed": seed, "samples": samples, "skipped": skipped,
                                 "ops": [_module_facts(mi, []) for mi in mods]}}


def _module_call(cls, spec, device, grad):
    """The module of a sample, built here in eval mode, as (a function that
    runs its forward on device with the reference's state, the parameters
    to differentiate). The state is given to forward as plain tensors on
    the device (functional_call), not moved in with Module.to(): a backend
    may refuse nn.Parameter objects (upstream's openreg does), and what is
    compared is what the module computes with those parameters."""
    import torch
    try:
        from torch.func import functional_call
    except ImportError:  # torch 1.13
        from torch.nn.utils.stateless import functional_call
    m = cls(*_untag(spec["args"], "cpu"), **_untag(spec["kwargs"], "cpu"))
    m = m.to(getattr(torch, spec["dtype"])).eval()
    state = dict((n, b.detach().to(device)) for n, b in m.named_buffers())
    state.update((k, _untag(v, device)) for k, v in spec["state"].items())
    params = [state[n] for n, _ in m.named_parameters() if n in state]
    for p in params if grad else ():
        p.requires_grad_(True)
    return (lambda *a, **k: functional_call(m, state, a, k)), params


def op_opinfo(req):
    """The OpInfo entries of the target in this torch (none: not an operator
    OpInfo covers), with the dtypes each supports on CPU and each device."""
    target = req["target"]
    try:
        _import_torch(alone=False)
        ops, facts_of = _entries(target, _walk(target)[0])
    except Exception as e:
        return {"ok": True, "data": {"available": False, "why": _exc_text(e), "ops": []}}
    return {"ok": True, "data": {"available": True, "inplace": any(
        _is_inplace(target, _walk(target)[0], op) for op in ops),
        "ops": [facts_of(op, req.get("devices", [])) for op in ops]}}


def _sample_tag(s):
    return {"input": _tag(s.input), "args": _tag(tuple(s.args)), "kwargs": _tag(dict(s.kwargs))}


def _take(gen, limit, seen, skipped, base):
    """Up to limit samples of gen not seen before (as data), serialized."""
    import itertools
    out = []
    for k, s in enumerate(itertools.islice(gen, limit + 64)):
        if len(out) == limit:
            break
        if base.get("inplace") and getattr(s, "broadcasts_input", False):
            skipped.append(dict(base, index=k, why="broadcasts its input: no in-place form"))
            continue
        try:
            tagged = _sample_tag(s)
        except Unserializable as e:
            skipped.append(dict(base, index=k, why="unserializable: %s" % e))
            continue
        key = json.dumps(tagged, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        out.append(dict(base, index=k, sample=tagged))
    return out


def op_samples(req):
    """The samples of the target's OpInfo entries in this torch, for the
    dtypes asked that CPU supports: at most max_samples each of
    sample_inputs and reference_inputs per dtype, and of error_inputs, each
    made after torch.manual_seed(seed)."""
    import torch
    target, limit, seed = req["target"], int(req["max_samples"]), int(req["seed"])
    obj = _walk(target)[0]
    if _is_module_class(obj):
        return _module_samples(req, obj)
    ops = _match_ops(target, obj)
    samples, skipped = [], []
    for op in ops:
        inplace = _is_inplace(target, obj, op)
        cpu = _dtype_names(op.supported_dtypes("cpu"))
        try:
            bw = _dtype_names(op.supported_backward_dtypes("cpu")) \
                if getattr(op, "supports_autograd", False) else []
        except Exception:
            bw = []
        for name in req["dtypes"]:
            if name not in cpu:
                continue
            dt = getattr(torch, name)
            grad = name in bw
            seen = set()
            for kind in ("sample", "reference"):
                if kind == "reference" and getattr(op, "reference_inputs_func", None) is None:
                    continue
                torch.manual_seed(seed)
                base = {"op": op.name, "variant": op.variant_test_name, "dtype": name,
                        "kind": kind, "grad": grad, "inplace": inplace}
                try:
                    gen = (op.sample_inputs if kind == "sample" else op.reference_inputs)(
                        "cpu", dt, requires_grad=grad)
                    samples += _take(gen, limit, seen, skipped, base)
                except Exception as e:
                    skipped.append(dict(base, index=-1, why=_exc_text(e)))
        if getattr(op, "error_inputs_func", None) is None:
            continue
        torch.manual_seed(seed)
        base = {"op": op.name, "variant": op.variant_test_name, "dtype": None,
                "kind": "error", "grad": False, "inplace": inplace}
        try:
            import itertools
            for k, e in enumerate(itertools.islice(op.error_inputs("cpu"), limit)):
                try:
                    samples.append(dict(base, index=k, sample=_sample_tag(e.sample_input),
                                        error_type=getattr(e.error_type, "__name__", None)))
                except Unserializable as x:
                    skipped.append(dict(base, index=k, why="unserializable: %s" % x))
        except Exception as x:
            skipped.append(dict(base, index=-1, why=_exc_text(x)))
    return {"ok": True, "data": {"seed": seed, "samples": samples, "skipped": skipped,
                                 "ops": [_op_facts(op, []) for op in ops]}}


def _grad_output(t):
    """A grad_output for t made from its shape alone, the same in every torch:
    small multiples of 1/8 in [-1, 1]."""
    import torch
    n = t.numel()
    g = (torch.arange(n, dtype=torch.float64) * 7 % 17 - 8) / 8
    return g.reshape(t.shape).to(dtype=t.dtype, device=t.device)


def _flat(v, out):
    """The leaves of an output (tensors, values) in order."""
    import torch
    if isinstance(v, torch.Tensor):
        out.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _flat(x, out)
    else:
        out.append(v)
    return out


def _leaves(v, out):
    """The tensors of an input that require grad, in order."""
    import torch
    if isinstance(v, torch.Tensor):
        if v.requires_grad:
            out.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _leaves(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            _leaves(x, out)
    return out


class _NoTrace(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _run_side(fn, s, device, inplace, grad, trace=_NoTrace):
    """Runs one sample on device: {status: "ok", outputs, grads} or
    {status: "raised", exception, message}. The forward runs inside trace()
    (a device trace's TorchDispatchMode), the backward outside it: the
    autograd engine carries a dispatch mode into its device thread, and
    there, when an operator of the backward raises, upstream's openreg
    aborts the process ("terminate called after throwing an instance of
    'pybind11::error_already_set'": its C++ side calls back into Python where
    it cannot fail), where without the mode it raises as it would for a user
    (a limit of the backend, not a crash)."""
    import torch
    inp = _untag(s["input"], device)
    args = _untag(s["args"], device)
    kwargs = _untag(s["kwargs"], device)
    try:
        params = []
        if "module" in s:  # fn is the class: the module is the sample's
            fn, params = _module_call(fn, s["module"], device, grad)
        leaves = _leaves([inp, args, kwargs], []) + params if grad else []
        first = inp.clone() if inplace and isinstance(inp, torch.Tensor) else inp
        with trace():
            out = fn(*args, **kwargs) if "module" in s else fn(first, *args, **kwargs)
        outs = _flat(out, [])
        grads = []
        diff = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        if leaves and diff:
            got = torch.autograd.grad(diff, leaves, [_grad_output(o) for o in diff],
                                      allow_unused=True)
            grads = [g if g is not None else None for g in got]
    except Exception as e:
        return {"status": "raised", "exception": type(e).__name__, "message": _text(str(e))[:500]}
    return {"status": "ok", "outputs": [_tag(o, spanned=False) for o in outs],
            "grads": [_tag(g, spanned=False) for g in grads]}


def _supported(facts, sample, device):
    """Why this environment's OpInfo says sample's dtype does not run on
    device, or None."""
    if sample["dtype"] is None:
        return None
    op = facts.get((sample["op"], sample["variant"]))
    if op is None:
        return None  # no entry here to say otherwise: it runs
    dts = op["dtypes"].get(device)
    if dts is not None and sample["dtype"] not in dts:
        return "dtype %s is not supported on %s by this torch's OpInfo for %s" % (
            sample["dtype"], device, sample["op"])
    return None


def _run_sample(fn, sample, devices, facts):
    """One sample on CPU and each device: the part of each side."""
    import torch
    parts = {}
    for dev in ["cpu"] + list(devices):
        why = _supported(facts, sample, dev)
        if why is not None:
            parts[dev] = {"status": "notrun", "reason": why}
            continue
        dt = _DeviceTrace(torch) if dev != "cpu" else None
        trace = dt.mode if dt is not None and dt.mode is not None else _NoTrace
        try:
            parts[dev] = _run_side(fn, sample["sample"], dev, sample["inplace"],
                                   sample["grad"], trace)
        except Exception as e:  # the harness, not the operator: decoding, shipping
            parts[dev] = {"status": "error", "reason": _exc_text(e)}
        if dt is not None:
            parts[dev]["device_trace"] = dt.result()
    return parts


def _device_works(device):
    """Whether device still computes: after it raised where CPU did not, it
    may have lost its daemon or driver."""
    import torch
    try:
        return (torch.ones(2, device=device) + 1).cpu().tolist() == [2.0, 2.0]
    except Exception:
        return False


def _sample_runner(target, samples, start, devices, facts, w):
    """The runner process: resolves the target and runs samples from start,
    one frame each ("begin" first, so that a crash is the sample's). Leaves
    when a device that raised where CPU did not no longer computes: the next
    runner starts it afresh."""
    fn = _walk(target)[0]
    # Devices start here, before the first sample's clock: a backend's
    # start (a daemon that imports torch) is not a sample's time.
    send(w, {"type": "ready", "devices": dict((d, _device_works(d)) for d in devices)})
    for k in range(start, len(samples)):
        send(w, {"type": "begin", "i": k})
        parts = _run_sample(fn, samples[k], devices, facts)
        send(w, {"type": "sample", "i": k, "parts": parts})
        cpu_raised = parts.get("cpu", {}).get("status") == "raised"
        if any(p.get("status") == "raised" and not cpu_raised and not _device_works(d)
               for d, p in parts.items() if d != "cpu"):
            return


def _stream(pid, rfd, timeout, start_s, on_frame):
    """Reads the runner's frames as they come, giving each sample's to
    on_frame; the runner has start_s to be "ready", then each "begin"
    restarts the per-sample clock. Returns (the index of the sample begun and
    not finished or None, wait status or None on timeout)."""
    import select
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    buf, current, deadline, eof = b"", None, time.monotonic() + start_s, False
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                buf += b"" if eof else _drain(rfd)
            frames, used = _frames_used(buf)
            buf = buf[used:]
            for f in frames:
                if f.get("type") in ("begin", "ready"):
                    current, deadline = f.get("i"), time.monotonic() + timeout
                elif f.get("type") == "sample":
                    current = None
                    on_frame(f)
            if done:
                _end_child(pid, status)
                return current, status
            left = deadline - time.monotonic()
            if left <= 0:
                _end_child(pid, None)
                return current, None
            fds = ([] if eof else [rfd]) + ([] if pidfd is None else [pidfd])
            ready, _, _ = select.select(fds, [], [], min(left, 0.05) if pidfd is None else left)
            if rfd in ready:
                chunk = os.read(rfd, 1 << 20)
                buf += chunk
                eof = not chunk
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _frames_used(buf):
    """(the complete frames at the start of buf, the bytes they take)."""
    out, i = [], 0
    while len(buf) - i >= 4:
        (n,) = struct.unpack(">I", buf[i:i + 4])
        if len(buf) - i - 4 < n:
            break
        out += _frames(buf[i:i + 4 + n])
        i += 4 + n
    return out, i


# Where op_run streams a frame per sample: apiparity's end of the protocol.
_reply_fd = [None]


def _lost(status, timeout):
    """What became of a sample during which the runner ended."""
    import signal
    if status is None:
        return {"status": "TIMEOUT", "reason": "no result within %g s" % timeout}
    if os.WIFSIGNALED(status):
        return {"status": "CRASH", "reason": signal.Signals(os.WTERMSIG(status)).name}
    return {"status": "CRASH", "reason": "the runner exited with status %d during the sample"
            % os.WEXITSTATUS(status)}


def op_run(req):
    """Runs the samples (as op_samples made them, the same bytes) on CPU and
    on each device named, in a runner child forked here (devices start in
    it, never in this process), each sample within timeout_s. Each sample's
    result is sent as its own frame ({"type": "sample", "i", "parts"} or
    {"type": "sample", "i", "lost"}) as it ends; a sample that crashes or
    hangs the runner is CRASH or TIMEOUT, and a new runner goes on with the
    next."""
    import tempfile
    timeout = _limit(req, "timeout_s")
    start_s = _limit(req, "start_s")
    samples, devices, target = req["samples"], list(req.get("devices", [])), req["target"]
    facts, opinfo = {}, {"available": True}
    try:
        ops, facts_of = _entries(target, _walk(target)[0])
        for op in ops:
            facts[(op.name, getattr(op, "variant_test_name", ""))] = facts_of(op, devices)
    except Exception as e:
        opinfo = {"available": False, "why": _exc_text(e)}
    log = tempfile.TemporaryFile()
    state = {"next": 0, "sent": 0}
    runners = 0

    def forward(f):
        state["sent"] += 1
        state["next"] = max(state["next"], int(f["i"]) + 1)
        f["type"] = "sample"
        send(_reply_fd[0], f)
    while state["next"] < len(samples):
        start = state["next"]
        runners += 1
        pid, r = _spawn_child(lambda w: _sample_runner(target, samples, start, devices,
                                                       facts, w), log.fileno())
        try:
            current, status = _stream(pid, r, timeout, start_s, forward)
        finally:
            os.close(r)
        if current is not None:
            forward({"i": current, "lost": _lost(status, timeout)})
        elif state["next"] == start:  # it ended before its first sample began
            why = {"status": "TIMEOUT", "reason": "the devices did not start within %g s"
                   % start_s} if status is None else \
                {"status": "ERROR", "reason": "the runner ended before the sample began"}
            for k in range(start, len(samples)):
                forward({"i": k, "lost": why})
    log.seek(0)
    return {"ok": True, "data": {"sent": state["sent"], "runners": runners, "opinfo": opinfo,
                                 "log": log.read(65536).decode("utf-8", "replace")}}


OPS = {"fingerprint": op_fingerprint, "resolve": op_resolve, "probe": op_probe,
       "package": op_package, "tests_index": op_tests_index, "same_object": op_same_object,
       "tests_preflight": op_tests_preflight, "tests_import": op_tests_import,
       "tests_run": op_tests_run,
       "opinfo": op_opinfo, "samples": op_samples, "run": op_run}
OPS.update({"sweep_begin": op_sweep_begin, "sweep_walk": op_sweep_walk})


def _no_main_to_rerun():
    """multiprocessing's spawn start method re-runs the parent's __main__ in
    every interpreter it starts, found by __main__.__spec__ (a module name)
    or __main__.__file__ (a path). A backend's device daemon is started that
    way: upstream's pytorch_openreg spawns one per device, from the probe that
    first uses the device. The worker is that __main__, and it came on stdin:
    re-running it could only fail (for `python -` the path is '<stdin>', so
    the daemon dies of FileNotFoundError and the probe waits for its device
    forever), or start a second worker. apiparity's bootstrap (`python -c`)
    sets neither, but an interpreter's start-up (a sitecustomize, a wrapper)
    may: both go, so that a spawned interpreter imports only what the target
    it was given needs. The worker's own code is never re-run there."""
    main = sys.modules.get("__main__")
    if getattr(main, "__file__", None) is not None:
        del main.__file__
    if getattr(main, "__spec__", None) is not None:
        main.__spec__ = None


def main():
    global _protocol_fds
    _no_main_to_rerun()
    rfd, wfd = _take_protocol_fds()
    _protocol_fds = (rfd, wfd)
    _reply_fd[0] = wfd
    # Orphans of probes and tests come here, to be killed when they end.
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
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
            except ProtocolError as e:
                reply = {"ok": False, "error": "protocol", "message": str(e)}
            except Exception as e:
                reply = {"ok": False, "error": "worker-exception",
                         "message": _exc_text(e)}
        reply["type"] = "result"
        send(wfd, reply)


if __name__ == "__main__":
    sys.exit(main())
