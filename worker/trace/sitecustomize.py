# apiparity's tracer, as the sitecustomize of a traced program's Python
# (`apiparity trace`: worker/trace/run.py puts this file's directory first on
# PYTHONPATH). It does nothing unless APIPARITY_TRACE names a journal
# descriptor, and takes that variable away, so that the Pythons the program
# starts in turn are not traced. Once torch has been imported (never before:
# a program that does not use torch pays nothing), a TorchFunctionMode sees
# every public API call that is not inside another (the name a user writes:
# torch.nn.functional.conv2d, torch.Tensor.add_), a TorchDispatchMode the
# aten operators under it, and a global forward pre-hook each nn.Module call.
#
# Identical calls are one case with a count. A case is written to the journal
# when first seen, as one JSON line: {"t": "case", "id", "api", "kind",
# "args", "kwargs"}, its tensors described, not stored ({"$desc": {dtype,
# shape, strides, device, requires_grad, min, max}}; with keep_values, a small
# tensor's values too, as "values"); at most max_cases per API, the calls past
# them counted. The counts, the aten operators per case and those over the
# bound go as {"t": "counts", ...} lines, at most once a second and at exit:
# a program killed keeps every case it made and the counts of the last line.
# Nothing here judges anything; a failure of the tracer stops the tracing,
# never the program.
import os
import sys


def _apiparity_trace():
    raw = os.environ.pop("APIPARITY_TRACE", None)
    if not raw:
        return
    import json
    cfg = json.loads(raw)
    fd = int(cfg["fd"])
    try:
        os.set_inheritable(fd, False)
    except OSError:
        return
    rec = _Recorder(fd, int(cfg.get("max_cases", 8)), bool(cfg.get("keep_values")))
    if "torch" in sys.modules:
        rec.install()
    else:
        sys.meta_path.insert(0, _TorchFinder(rec))


class _TorchFinder(object):
    """Installs the tracer once `import torch` has run to its end."""

    def __init__(self, rec):
        self.rec = rec

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run, rec = spec.loader.exec_module, self.rec

        def exec_module(module):
            run(module)
            rec.install()
        spec.loader.exec_module = exec_module
        return spec


_KEEP_MAX = 64      # elements of a tensor whose values --keep-values keeps
_FLUSH_S = 1.0      # between two counts lines


def _dtype_name(dt):
    return str(dt).split(".", 1)[-1]


class _Recorder(object):
    def __init__(self, fd, max_cases, keep_values):
        self.fd, self.max_cases, self.keep = fd, max_cases, keep_values
        self.cases = {}      # signature -> case id
        self.counts = []     # by case id
        self.aten = []       # by case id: the aten operators under it
        self.per_api = {}    # api -> cases kept
        self.over = {}       # api -> calls past max_cases
        self.names = {}      # function -> public name (None: not an API call)
        self.current = None  # the case whose call is running
        self.busy = False
        self.dead = False
        self.last = 0.0

    # -- the journal
    def write(self, rec):
        if self.dead:
            return
        import json
        data = (json.dumps(rec, separators=(",", ":"), allow_nan=False) + "\n").encode()
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:
            self.dead = True

    def flush(self):
        import time
        self.last = time.monotonic()
        self.write({"t": "counts", "counts": self.counts, "over": self.over,
                    "aten": [sorted(a) for a in self.aten]})

    # -- names
    def table(self, torch):
        """Each public function of torch's user-facing namespaces, by its
        object, with the name a user writes (the first namespace that has it
        wins: torch.nn.functional.conv2d rather than torch.conv2d)."""
        spaces = [("torch.nn.functional", torch.nn.functional)]
        for sub in ("linalg", "fft", "special"):
            if hasattr(torch, sub):
                spaces.append(("torch." + sub, getattr(torch, sub)))
        spaces += [("torch", torch), ("torch.Tensor", torch.Tensor)]
        for prefix, space in spaces:
            # a method's own name before its operator's (Tensor.neg, not
            # Tensor.__neg__, where both are one object)
            for attr in sorted(dir(space), key=lambda a: a.startswith("__")):
                if attr.startswith("_") and not (prefix == "torch.Tensor" and
                                                 attr.startswith("__") and attr.endswith("__")):
                    continue
                try:
                    obj = getattr(space, attr)
                    if callable(obj) and obj not in self.names:
                        self.names[obj] = prefix + "." + attr
                except Exception:
                    pass

    def name(self, func):
        try:
            return self.names[func]
        except (KeyError, TypeError):
            pass
        n = getattr(func, "__name__", None)
        if n in (None, "__get__", "__set__"):  # attribute reads and writes: no call
            name = None
        else:
            owner = getattr(func, "__objclass__", None) or getattr(func, "__self__", None)
            mod = getattr(func, "__module__", None)
            if owner is not None and type(owner) is type and \
                    owner.__name__ == "_VariableFunctionsClass":  # torch.xxx builtins
                name = "torch." + n
            elif owner is not None and type(owner) is type:
                name = "torch.Tensor." + n if "Tensor" in owner.__name__ else \
                    "%s.%s" % (owner.__module__, owner.__qualname__ + "." + n)
            else:
                name = "%s.%s" % (mod or "torch", getattr(func, "__qualname__", n))
        if name and any(p.startswith("_") and not (p.startswith("__") and p.endswith("__"))
                        for p in name.split(".")):
            name = None  # private (torch._C._set_grad_enabled): not a user's call
        try:
            self.names[func] = name
        except TypeError:
            pass
        return name

    # -- signatures and descriptions
    def sig(self, v):
        import torch
        if isinstance(v, torch.Tensor):
            return ("T", v.dtype, tuple(v.shape), v.stride() if v.layout == torch.strided
                    else str(v.layout), v.requires_grad, v.device.type)
        if isinstance(v, (list, tuple)):
            return (type(v).__name__,) + tuple(self.sig(x) for x in v)
        # Never str() or repr() of a value here: a tensor's repr pops the
        # modes to print, and inside this mode's handler (the mode already
        # popped) that breaks torch's mode stack (an INTERNAL ASSERT in
        # python_arg_parser.cpp, torch 2.6, in the program's next call).
        if isinstance(v, dict):
            return ("D",) + tuple((k, self.sig(x)) for k, x in
                                  sorted(v.items(), key=lambda kv: repr(type(kv[0])) +
                                         (kv[0] if isinstance(kv[0], str) else "")))
        if v is None or isinstance(v, (bool, int, float, str, complex)):
            return (type(v).__name__, v)
        return ("O", type(v).__name__, id(v))

    def desc(self, v):
        import math
        import torch
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v if abs(v) < 2 ** 53 else {"$int": str(v)}
        if isinstance(v, float):
            return v if math.isfinite(v) else {"$float": repr(v)}
        if isinstance(v, complex):
            return {"$complex": [self.desc(v.real), self.desc(v.imag)]}
        if isinstance(v, torch.Tensor):
            return {"$desc": self.tensor(v)}
        if isinstance(v, list):
            return [self.desc(x) for x in v]
        if isinstance(v, tuple):
            return {"$tuple": [self.desc(x) for x in v]}
        if isinstance(v, dict) and all(isinstance(k, str) and not k.startswith("$") for k in v):
            return dict((k, self.desc(x)) for k, x in v.items())
        if isinstance(v, torch.dtype):
            return {"$dtype": _dtype_name(v)}
        if isinstance(v, torch.device):
            return {"$device": v.type}
        if isinstance(v, slice):
            return {"$slice": [self.desc(v.start), self.desc(v.stop), self.desc(v.step)]}
        if v is Ellipsis:
            return {"$ellipsis": True}
        for kind in ("memory_format", "layout"):
            cls = getattr(torch, kind, None)
            if isinstance(cls, type) and isinstance(v, cls):
                name = str(v).split(".", 1)[-1]
                if getattr(torch, name, None) is v:
                    return {"$torch": name}
        return {"$opaque": type(v).__name__}

    def tensor(self, t):
        import torch
        d = {"dtype": _dtype_name(t.dtype), "shape": list(t.shape),
             "device": t.device.type, "requires_grad": bool(t.requires_grad)}
        if t.layout != torch.strided:
            d["layout"] = str(t.layout)
            return d
        d["strides"] = list(t.stride())
        if t.numel() and t.dtype != torch.bool and not t.is_complex() and t.device.type != "meta":
            x = t.detach()
            lo, hi = x.min().item(), x.max().item()
            d["min"], d["max"] = self.desc(lo), self.desc(hi)
        if self.keep and 0 < t.numel() <= _KEEP_MAX and t.device.type != "meta":
            d["values"] = self.desc(t.detach().cpu().reshape(-1).tolist())
        return d

    # -- the calls
    def case(self, api, kind, args, kwargs):
        """The case id of this call (counted), or None past max_cases."""
        key = (api, self.sig(args), self.sig(kwargs))
        cid = self.cases.get(key)
        if cid is not None:
            self.counts[cid] += 1
            return cid
        if self.per_api.get(api, 0) >= self.max_cases:
            self.over[api] = self.over.get(api, 0) + 1
            return None
        self.per_api[api] = self.per_api.get(api, 0) + 1
        cid = len(self.counts)
        self.cases[key] = cid
        self.counts.append(1)
        self.aten.append(set())
        self.write({"t": "case", "id": cid, "api": api, "kind": kind,
                    "args": [self.desc(a) for a in args],
                    "kwargs": dict((k, self.desc(v)) for k, v in kwargs.items())})
        return cid

    def call(self, func, args, kwargs):
        """Records a torch function call; returns the case it runs as."""
        if self.busy or self.dead:
            return self.current
        self.busy = True
        try:
            api = self.name(func)
            cid = self.case(api, "function", args, kwargs) if api else self.current
            import time
            if time.monotonic() - self.last > _FLUSH_S:
                self.flush()
            return cid
        except Exception:
            return self.current
        finally:
            self.busy = False

    def module(self, mod, args):
        if self.busy or self.dead:
            return
        self.busy = True
        try:
            import torch
            cls = type(mod)
            name = "torch.nn." + cls.__name__ if getattr(torch.nn, cls.__name__, None) is cls \
                else "%s.%s" % (cls.__module__, cls.__qualname__)
            self.case(name, "module", args, {})
        except Exception:
            pass
        finally:
            self.busy = False

    def install(self):
        import atexit
        import torch
        from torch.overrides import TorchFunctionMode
        from torch.utils._python_dispatch import TorchDispatchMode
        rec = self
        self.table(torch)

        class Calls(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                outer = rec.current
                rec.current = rec.call(func, args, kwargs)
                try:
                    return func(*args, **kwargs)
                finally:
                    rec.current = outer

        class Operators(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                cid = rec.current
                if cid is not None and not rec.busy:
                    rec.aten[cid].add(str(func))
                return func(*args, **(kwargs or {}))

        torch.nn.modules.module.register_module_forward_pre_hook(
            lambda mod, args: rec.module(mod, args))
        Operators().__enter__()
        Calls().__enter__()
        atexit.register(self.flush)
        self.flush()


try:
    _apiparity_trace()
except Exception as e:  # the program runs, untraced
    sys.stderr.write("apiparity trace: the tracer could not start: %s\n" % e)


def _next_sitecustomize():
    """The environment's own sitecustomize, which this file shadows."""
    import importlib.machinery
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        import importlib.util
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)


try:
    _next_sitecustomize()
except Exception:
    pass
