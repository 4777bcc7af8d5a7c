# ---------------------------------------------------------------- sweep
#
# A sweep catalogs the public surface, one catalog entry (a module or a class)
# per request, so that thousands of names cost one round trip per entry and
# a crash or a hang costs only the entry being walked. apiparity journals each
# API as the answer arrives and decides everything else (verdicts, what to
# skip on --resume, when to give up on an entry).

_SWEEP_BEFORE = {}   # api -> identity before the plugins loaded (when any load)
_SWEEP_STATE = {}    # "plugins": names loaded, "compare": whether _SWEEP_BEFORE holds


# What counts as API surface is apiparity's to say (src/check/surface.h): every
# sweep_begin and sweep_walk request carries the rules as "surface", and the
# functions below apply what they are given:
#   private: name prefixes that are not public; own: the packages whose
#   classes and functions are the surface; skip_metatypes: type names of
#   classes not walked for members; skip_bases: dotted classes whose
#   subclasses are not walked for members; foreign_types: modules whose
#   instances are no API (typing aliases, TypeVars, __future__ features).


def _sweep_private(name, rules):
    """Whether name is spelled as the rules' private names are."""
    return any(name.startswith(p) for p in rules["private"])


def _sweep_public(names, rules):
    """Public names, sorted: none of the rules' private prefixes, and ASCII
    identifiers only (a name set with setattr can be any string; the matrix
    keys and the pages' file names are built from these)."""
    return sorted(n for n in names if isinstance(n, str) and not _sweep_private(n, rules) and
                  n.isidentifier() and n.isascii())


def _sweep_names(obj):
    """The names getattr reaches on obj, as far as they can be listed: dir(),
    a module's __all__ (names a module-level __getattr__ serves lazily are
    listed there), and for an object standing in for a module (a PropModule:
    torch.backends.cudnn wraps the real module and forwards attribute reads
    to it) the names of the module it wraps."""
    import types
    try:
        names = set(dir(obj))
    except Exception:
        names = set()
    mods = [obj]
    if isinstance(obj, types.ModuleType) and type(obj) is not types.ModuleType:
        # what its own class defines (PropModule's ContextProp descriptors:
        # cudnn.allow_tf32), and the module it wraps
        for klass in type(obj).__mro__:
            if klass not in (types.ModuleType, object):
                names.update(vars(klass))
        mods += [v for v in vars(obj).values() if type(v) is types.ModuleType and
                 getattr(v, "__name__", None) == obj.__name__]
        names.update(dir(mods[-1]) if len(mods) > 1 else ())
    for m in mods if isinstance(obj, types.ModuleType) else ():
        listed = vars(m).get("__all__")
        if isinstance(listed, (list, tuple)):
            names.update(n for n in listed if isinstance(n, str))
    return names


def _sweep_reaches(obj, listed, rules):
    """The names getattr reaches on obj (a module or class the walk listed
    members of) that have no line of their own, sorted: private names,
    members inherited from a public base (whose own lines they are), names
    imported from outside torch, a class's dunders that it or a torch base
    defines (pybind __init__). The audit finds a page's name here before it
    calls it absent."""
    import types
    module = isinstance(obj, types.ModuleType)
    plain, out = set(dir(obj)), []
    names = _sweep_names(obj)
    if module:
        plain |= _sweep_submodules(obj)  # import reaches them
        names |= plain
    else:
        names |= _sweep_meta_names(obj)
    for n in names:
        if not isinstance(n, str) or n in listed or not n.isidentifier() or not n.isascii():
            continue
        if n not in plain and not hasattr(obj, n):
            continue  # a name __all__ lists that the module does not have
        if module and n == "__getattr__" and _sweep_serves(obj):
            out.append(n)  # the module serves names no walk can list
            continue
        if n.startswith("__") and n.endswith("__"):
            if module or not any(n in vars(b) for b in obj.__mro__[:-1]) or \
                    not callable(getattr(obj, n, None)):
                continue  # a module's or class's bookkeeping (__doc__, __dict__)
        elif not module and _sweep_private(n, rules):
            continue
        out.append(n)
    return sorted(out)


def _sweep_submodules(mod):
    """The names of a package's submodules, imported or not: import reaches
    them (torch.utils.data.backward_compatibility), though dir() lists only
    those something imported already."""
    import pkgutil
    path = getattr(mod, "__path__", None)
    try:
        return set(m.name for m in pkgutil.iter_modules(path)) if path else set()
    except Exception:
        return set()


def _sweep_meta_names(cls):
    """What a class's metaclass defines (a property WORLD on the metaclass of
    torch.distributed.GroupMember): getattr reaches it on the class, dir()
    does not list it."""
    names = set()
    for meta in type(cls).__mro__:
        if meta not in (type, object):
            names.update(vars(meta))
    return names


def _sweep_serves(mod):
    """Whether a module serves names through a module-level __getattr__ (PEP
    562: torch's deprecated has_cuda), which no listing shows: reaches says
    so, and nothing under it is called absent or removed."""
    import types
    return "__getattr__" in vars(mod) and type(mod) is types.ModuleType


def _sweep_under(m, pkgs):
    """Whether module name m is one of pkgs or under one of them."""
    return any(m == p or m.startswith(p + ".") for p in pkgs)


def _sweep_foreign(obj, rules):
    """Whether obj is a class or function a module imported from outside the
    rules' own packages (typing.Any, os.path): not part of the surface."""
    import inspect
    if type(obj).__module__ in rules.get("foreign_types", ()):
        return True  # typing.Optional, a TypeVar, __future__.annotations
    if not (inspect.isclass(obj) or inspect.isroutine(obj)):
        return False
    m = getattr(obj, "__module__", None)
    return isinstance(m, str) and not _sweep_under(m, rules["own"])


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


def _sweep_walked_below(cls, exclude, rules):
    """Whether a deeper catalog entry walks cls's members: a module entry of
    exclude that cls is defined under and that holds it by its name
    (torch.autograd.Function is torch.autograd.function's Function, which
    the entry torch.autograd.function walks). A class re-exported by its
    parent module is one API; its members are walked once, where it lives."""
    m = getattr(cls, "__module__", None)
    name = getattr(cls, "__name__", None)
    if not isinstance(m, str) or not _sweep_public([name], rules):
        return False
    for x in exclude:
        mod = sys.modules.get(x)
        if mod is not None and (m == x or m.startswith(x + ".")) and \
                getattr(mod, name, None) is cls:
            return True
    return False


class _SweepMissing(ImportError):
    """A class entry whose class this torch does not have."""


def _sweep_absent(entry, e):
    """Whether e, raised by the walk of entry before it listed anything,
    says the entry is not in this torch at all (its own module, or a torch
    package above it, does not exist; a class entry's class is not there),
    rather than that something it needs failed (a third-party package
    missing, an error on import)."""
    if isinstance(e, _SweepMissing):
        return True
    name = getattr(e, "name", None) if isinstance(e, ModuleNotFoundError) else None
    return isinstance(name, str) and (entry == name or entry.startswith(name + ".")) and \
        name.split(".")[0] == entry.split(".")[0]


def _sweep_private_module(m, rules):
    """Whether module name m has a private part (torch._C._distributed_c10d):
    no catalog entry walks what is defined there, so a public module that
    re-exports a class from it (torch.distributed.GradBucket) walks it."""
    return any(_sweep_private(p, rules) for p in m.split(".")) and _sweep_under(m, rules["own"])


def _sweep_members(entry, walk, exclude, rules, walked=None):
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
            raise _SweepMissing("%s has no attribute %s" % (entry, missing))
        yield entry, entry, None, parent, entry.rsplit(".", 1)[-1], root
    classes, listed = [], set()
    names = _sweep_names(root)
    for n in _sweep_public(names, rules):
        api = entry + "." + n
        if walk == "module" and api in exclude:
            continue
        try:
            obj = getattr(root, n)
        except AttributeError as e:
            if walk == "module" and n not in dir(root):
                continue  # a name __all__ lists that the module does not have
            yield api, api if walk == "module" else _sweep_key(entry, n), \
                None if walk == "module" else entry, root, n, e
            continue
        except Exception as e:
            yield api, api if walk == "module" else _sweep_key(entry, n), \
                None if walk == "module" else entry, root, n, e
            continue
        if walk == "module":
            if isinstance(obj, types.ModuleType):
                if not obj.__name__.startswith(entry + "."):
                    continue
            elif _sweep_foreign(obj, rules) and not _sweep_plugins_own(api, obj):
                continue
            listed.add(n)
            yield api, api, None, root, n, obj
            m = getattr(obj, "__module__", None)
            if inspect.isclass(obj) and isinstance(m, str) and \
                    (m == entry or m.startswith(entry + ".") or
                     _sweep_private_module(m, rules)) and \
                    not _sweep_unwalked(obj, rules) and not _sweep_walked_below(obj, exclude, rules):
                classes.append((api, obj))
        else:
            listed.add(n)
            yield api, _sweep_key(entry, n), entry, root, n, obj
    if walked is not None:
        walked[entry] = (root, listed)
    for capi, cls in classes:
        own = _sweep_public(_sweep_own(cls, rules), rules)
        if walked is not None:
            walked[capi] = (cls, set(own))
        for n in own:
            api = capi + "." + n
            try:
                obj = getattr(cls, n)
            except Exception as e:
                obj = e
            yield api, _sweep_key(capi, n), capi, cls, n, obj


def _sweep_class(path):
    """The class a dotted path names among the modules loaded, or None."""
    mod, _, name = path.rpartition(".")
    obj = getattr(sys.modules.get(mod), name, None)
    return obj if isinstance(obj, type) else None


def _sweep_unwalked(cls, rules):
    """Whether the rules say cls's members are not walked: its type is one
    of skip_metatypes (the legacy tensor types, torch.cuda.FloatTensor, ...,
    carry a copy of every Tensor method), or it derives from one of
    skip_bases (torch.Tensor, which has its own catalog entry)."""
    if type(cls).__name__ in rules["skip_metatypes"]:
        return True
    for path in rules["skip_bases"]:
        base = _sweep_class(path)
        try:
            if base is not None and issubclass(cls, base):
                return True
        except TypeError:
            continue
    return False


def _sweep_own(cls, rules):
    """The members a class carries itself: its own, and those of private
    bases (torch.autograd.Function's forward lives in _SingleLevelFunction,
    Tensor's methods in TensorBase), which torch documents as the class's.
    A public base's members are that base's APIs (nn.Module's), not again
    each subclass's."""
    names = set(vars(cls))
    for base in getattr(cls, "__mro__", ())[1:]:
        m = getattr(base, "__module__", None)
        if base is not object and (_sweep_private(getattr(base, "__name__", ""), rules) or
                                   isinstance(m, str) and _sweep_private_module(m, rules)):
            names.update(vars(base))
    return list(names)


def _sweep_key(owner, name):
    """A member as the pages name it: its class's name, a dot, the member."""
    return owner.rsplit(".", 1)[-1] + "." + name


_CLASS_LINES = {}


# self.X = ..., self.X: T = ..., self.X += ... (not self.X == ...): a regular
# expression over a class's own lines, far cheaper than walking its tree.
import re  # noqa: E402 (the sweep's own; the bundle's modules import as they need)
_ON_SELF = re.compile(r"\bself\.([A-Za-z_]\w*)\s*(?::[^=\n]*)?"
                      r"(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")


def _class_info(path, qualname):
    """(line, names assigned on self) of class qualname in path, or None: one
    parse per file, however many classes it defines (inspect parses the
    file again for each); the names are what the class's own lines assign
    on self, in any of its methods."""
    import ast
    if path not in _CLASS_LINES:
        found, text = {}, b""
        try:
            with open(path, "rb") as f:
                text = f.read()
            tree = ast.parse(text)
        except (OSError, SyntaxError, ValueError):
            tree = None

        def visit(node, prefix):
            for c in getattr(node, "body", ()):
                if isinstance(c, ast.ClassDef):
                    found.setdefault(prefix + c.name, (c.lineno, c.end_lineno))
                    visit(c, prefix + c.name + ".")
        if tree is not None:
            visit(tree, "")
        _CLASS_LINES[path] = [found, text]
    cached = _CLASS_LINES[path]
    info = cached[0].get(qualname)
    if info is not None and not isinstance(info[1], set):
        if isinstance(cached[1], bytes):  # split once per file, when first asked
            cached[1] = cached[1].decode("utf-8", "replace").split("\n")
        own = "\n".join(cached[1][info[0] - 1:info[1]])
        info = cached[0][qualname] = (info[0], set(_ON_SELF.findall(own)))
    return info


def _class_line(path, qualname):
    info = _class_info(path, qualname)
    return info[0] if info else None


def _sweep_on_self(cls, reached, rules):
    """The names that cls or a torch class of its MRO assigns on self in its
    source and that getattr does not reach on the class itself: members set
    only on instances, with the source to show it (sorted)."""
    names = set()
    for klass in getattr(cls, "__mro__", ()):
        if not _sweep_under(getattr(klass, "__module__", None) or "", rules["own"]):
            continue  # the standard library's classes (enum, typing) are not read
        mod = sys.modules.get(getattr(klass, "__module__", None) or "")
        path = getattr(mod, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            info = _class_info(path, getattr(klass, "__qualname__", ""))
            names.update(info[1] if info else ())
    return sorted(n for n in names if n not in reached and n.isidentifier())


def _sweep_source(obj, root):
    """(file relative to torch's parent directory, line), fast: a function's
    code object, a class's module and one parse of its file. A class whose
    module's file has no `class` statement for it has no file: a C type
    that torch gives its own module's name (torch.layout says "torch")."""
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
        if line is None:
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
    if inspect.isclass(obj):
        d["defined"] = _sweep_defined(obj)
    d["file"], d["line"] = _sweep_source(obj, root)
    fn = getattr(obj, "__func__", obj)
    d["pure_python"] = inspect.isfunction(getattr(fn, "fget", fn)) or \
        (inspect.isclass(obj) and (d["file"] is not None or _python_members(obj)))
    d["doc"] = _own_doc(obj)
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


def _python_members(cls):
    """Whether a class made without a `class` statement (a namedtuple, a
    type() call) holds Python functions of its own: Python, not C."""
    import inspect
    try:
        return any(inspect.isfunction(getattr(v, "__func__", v)) for v in vars(cls).values())
    except Exception:
        return False


def _sweep_defined(cls):
    """Where a class is defined, as one dotted path: its module and
    qualname (torch.distributions.von_mises.VonMises, whatever path the
    walk found it by); None for a class made in a function."""
    qn = _qualname(cls)
    return qn if isinstance(qn, str) and "<" not in qn and \
        isinstance(getattr(cls, "__module__", None), str) else None


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
    rules = req["surface"]
    wanted = [p for p in req.get("plugins", []) if importlib.util.find_spec(p) is not None]
    compare = bool(wanted or _entry_point_plugins())
    _SWEEP_BEFORE.clear()
    for e in req.get("entries", []) if compare else ():
        try:
            for api, _, _, _, _, obj in _sweep_members(e["name"], e["walk"],
                                                       set(e.get("exclude", [])), rules):
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
    rules, walked = req["surface"], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notes on access: noise here
        for api, key, owner, parent, name, obj in _sweep_members(req["entry"], req["walk"],
                                                                 exclude, rules, walked):
            if api in skip:
                continue
            try:
                apis.append(_sweep_api(api, key, owner, parent, name, obj, torch, root,
                                       req.get("depth", "resolve")))
            except Exception as e:  # an object whose every attribute raises
                apis.append({"api": api, "key": key, "owner": owner, "status": "error",
                             "reason": "inspecting it raised " + _exc_text(e)})
        _sweep_walked(req, apis, walked, skip, rules)


def _sweep_walked(req, apis, walked, skip, rules):
    """Adds to the lines of what the walk listed members of (the module
    entry, which gets a line of its own here, and each class) what else
    getattr reaches on it, and a class's members set only on instances."""
    import inspect
    entry = req["entry"]
    if req["walk"] == "module" and entry in walked and entry not in skip:
        apis.insert(0, {"api": entry, "key": entry, "owner": None, "status": "present",
                        "kind": "module"})
    by_api = {d["api"]: d for d in apis if d.get("status") == "present"}
    for api, (obj, listed) in walked.items():
        d = by_api.get(api)
        if d is None:
            continue
        try:
            d["reaches"] = _sweep_reaches(obj, listed, rules)
            if inspect.isclass(obj):
                d["on_self"] = _sweep_on_self(obj, listed | set(d["reaches"]) | set(dir(obj)),
                                              rules)
        except Exception:
            continue  # what getattr reaches is a help to the audit, not a measurement


def op_sweep_walk(req):
    """Walks one catalog entry: {"entry", "walk": "module"|"class", "exclude":
    [apis of classes walked by their own entry], "skip": [apis journaled
    already], "depth": "resolve"|"signature"|"probe"|"numeric", "surface":
    the rules of what is API surface} (probe and
    numeric walk as signature does, and add each API's "canonical" class;
    apiparity then asks for the checks API by API). Answers {"status": "ok",
    "apis"}, {"status": "import-error", "reason"} when the entry does not
    import, {"status": "absent", "reason"} when this torch has no such module
    or class, or {"status": "error", "reason", "apis"} when the walk broke."""
    torch = sys.modules.get("torch") or _import_torch(alone=True)
    root = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
    apis = []
    try:
        _sweep_walk(req, torch, root, apis)
    except Exception as e:
        # Nothing walked: the entry does not import here. Part walked: the
        # walk broke; what it measured stands, and the entry is an error.
        status = "error" if apis else "absent" if _sweep_absent(req["entry"], e) else \
            "import-error"
        return {"ok": True, "data": {"status": status,
                                     "reason": _exc_text(e), "apis": apis}}
    return {"ok": True, "data": {"status": "ok", "apis": apis}}
