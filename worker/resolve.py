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


def _own_doc(obj):
    """Whether obj carries a docstring of its own: a non-blank __doc__ that
    is not its type's (an int's __doc__ is int's); None when reading it
    raised. A fact; what a docs page makes of it is apiparity's."""
    import inspect
    try:
        doc = getattr(obj, "__doc__", None)
        if not isinstance(doc, str) or not doc.strip():
            return False
        return inspect.isclass(obj) or doc is not getattr(type(obj), "__doc__", None)
    except Exception:
        return None


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
    res["doc"] = _own_doc(obj)
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
