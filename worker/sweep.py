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
#   subclasses are not walked for members.


def _sweep_private(name, rules):
    """Whether name is spelled as the rules' private names are."""
    return any(name.startswith(p) for p in rules["private"])


def _sweep_public(names, rules):
    """Public names, sorted: none of the rules' private prefixes, and ASCII
    identifiers only (a name set with setattr can be any string; the matrix
    keys and the pages' file names are built from these)."""
    return sorted(n for n in names if isinstance(n, str) and not _sweep_private(n, rules) and
                  n.isidentifier() and n.isascii())


def _sweep_under(m, pkgs):
    """Whether module name m is one of pkgs or under one of them."""
    return any(m == p or m.startswith(p + ".") for p in pkgs)


def _sweep_foreign(obj, rules):
    """Whether obj is a class or function a module imported from outside the
    rules' own packages (typing.Any, os.path): not part of the surface."""
    import inspect
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


def _sweep_members(entry, walk, exclude, rules):
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
    for n in _sweep_public(names, rules):
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
            elif _sweep_foreign(obj, rules) and not _sweep_plugins_own(api, obj):
                continue
            yield api, api, None, root, n, obj
            m = getattr(obj, "__module__", None)
            if inspect.isclass(obj) and isinstance(m, str) and \
                    (m == entry or m.startswith(entry + ".")) and \
                    not _sweep_unwalked(obj, rules) and not _sweep_walked_below(obj, exclude, rules):
                classes.append((api, obj))
        else:
            yield api, _sweep_key(entry, n), entry, root, n, obj
    for capi, cls in classes:
        for n in _sweep_public(_sweep_own(cls, rules), rules):
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
        if base is not object and _sweep_private(getattr(base, "__name__", ""), rules):
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notes on access: noise here
        for api, key, owner, parent, name, obj in _sweep_members(req["entry"], req["walk"],
                                                                 exclude, req["surface"]):
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
    already], "depth": "resolve"|"signature"|"probe"|"numeric", "surface":
    the rules of what is API surface} (probe and
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
