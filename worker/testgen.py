# ---------------------------------------------------------------- official tests: generated tests
#
# The tests upstream generates for an operator: the usage index holds each
# @ops/@modules decorator's source and what it refers to; here, in the
# environment's own Python, the decorator is evaluated, narrowed to the
# target's OpInfo (or ModuleInfo) entries, and upstream's own parametrizer
# names the tests it would make for a device, so that the names are exactly
# upstream's. Nothing is judged here: the device decorators and the ranking
# are apiparity's.

_GEN_BASE = None
_GEN_MODULES = ("torch.testing._internal.common_methods_invocations",
                "torch.testing._internal.common_device_type")


def _gen_base():
    """The names a decorator may use without importing them itself: those
    of OpInfo's and the device-type tests' modules, torch, functools."""
    global _GEN_BASE
    if _GEN_BASE is None:
        import functools
        import importlib
        import itertools
        ns = {"torch": __import__("torch"), "functools": functools,
              "itertools": itertools, "partial": functools.partial}
        for m in _GEN_MODULES:
            ns.update((k, v) for k, v in vars(importlib.import_module(m)).items()
                      if not k.startswith("__"))
        _GEN_BASE = ns
    return _GEN_BASE


def _gen_define(name, ns, facts, depth):
    """Binds name in ns from the file's module-level assignment of it, or
    from its import of a torch module; False when the file has neither."""
    import importlib
    assign = facts.get("assigns", {}).get(name)
    if assign and len(assign) > 2 and assign[2] == "def":
        # A function of the file (a filter): defined as the file defines it;
        # a name it uses is looked up when it is called.
        exec(compile(assign[1], "<test file>", "exec"), ns)
        return name in ns
    if assign:
        ns[name] = _gen_eval(assign[1], ns, facts, depth + 1)
        return True
    for kind, local, full in facts.get("bindings", []):
        if local != name or not full.startswith("torch."):
            continue
        if kind == "import":
            ns[name] = importlib.import_module(full)
        else:
            mod, _, attr = full.rpartition(".")
            ns[name] = getattr(importlib.import_module(mod), attr)
        return True
    return False


def _gen_eval(text, ns, facts, depth=0):
    """The value of expression text (from the test file) in ns, the names
    it lacks bound first from the file's facts."""
    if text is None or depth > 8:
        raise ValueError("the decorator's source is not in the index")
    code = compile(text.strip(), "<decorator>", "eval")
    for _ in range(32):
        try:
            return eval(code, ns)
        except NameError as e:
            if not getattr(e, "name", None) or not _gen_define(e.name, ns, facts, depth):
                raise
    raise ValueError("too many names to resolve")


def _gen_for_device(facts, cls, device):
    """Whether instantiate_device_type_tests makes cls for device: None
    when it does (or cannot be told), else the call that leaves it out."""
    import ast
    pu1 = _pu1_name()
    for c, text in facts.get("instantiated", []):
        if c != cls:
            continue
        try:
            call = ast.parse(text, mode="eval").body
            kw = {k.arg: ast.literal_eval(k.value) for k in call.keywords
                  if k.arg in ("only_for", "except_for")}
        except (SyntaxError, ValueError):
            return None
        names = {device, "privateuse1"} if device == pu1 else {device}

        def listed(v):
            v = [v] if isinstance(v, str) else list(v or [])
            return bool(names.intersection(v))
        if ("only_for" in kw and kw["only_for"] and not listed(kw["only_for"])) or \
                listed(kw.get("except_for")):
            return text
        return None
    return "%s is not instantiated per device in its file" % cls


def _pu1_name():
    import torch
    try:
        return torch._C._get_privateuse1_backend_name()
    except Exception:
        return None


def _gen_entries(target):
    """The target's OpInfo entries and ModuleInfo entries here."""
    obj = _walk(target)[0]
    ops = _match_ops(target, obj)
    mods = []
    if isinstance(obj, type):
        try:
            from torch.testing._internal.common_modules import module_db
            mods = [m for m in module_db if m.module_cls is obj]
        except Exception:
            mods = []
    return ops, mods


def _gen_names(dec, ops, mods, cls, test, device):
    """The [class, test, dtype] upstream instantiates from decorator object
    dec for device, narrowed to the target's entries."""
    from torch.testing._internal.common_device_type import _dtype_test_suffix
    if hasattr(dec, "op_list"):
        dec.op_list = mine = [op for op in dec.op_list if any(op is o for o in ops)]
    elif hasattr(dec, "module_info_list"):
        dec.module_info_list = mine = [m for m in dec.module_info_list
                                       if any(m is o for o in mods)]
    else:
        raise ValueError("not an ops or modules decorator: %s" % type(dec).__name__)
    if not mine:  # upstream refuses an empty list: the target is not in it
        return []

    def template(self, device, dtype, op):
        pass
    template.__name__ = test
    dev_cls = type(cls + "Device", (), {"device_type": device})
    gen_cls = type(cls, (), {})
    base = "PRIVATEUSE1" if device == _pu1_name() and device != "cpu" else device.upper()
    out = []
    for _, suffix, kwargs, _ in dec._parametrize_test(template, gen_cls, dev_cls):
        dt = kwargs.get("dtypes", kwargs.get("dtype"))
        name = "%s%s_%s%s" % (test, "_" + suffix if suffix else "", device, _dtype_test_suffix(dt))
        out.append([cls + base, name, _dtype_test_suffix(dt)[1:] or None])
    return sorted(out)


def op_tests_generated(req):
    """For each decorated test template of req["templates"] ([file, class,
    test, decorator source]), the tests upstream generates from it for the
    target on req["device"], with the file's facts (req["facts"][file]:
    assigns, bindings, instantiated); and whether each of req["modules"]
    imports here."""
    device = req["device"]
    try:
        ops, mods = _gen_entries(req["target"])
        base = _gen_base()
        why = None
    except Exception as e:
        ops, mods, base, why = [], [], {}, _exc_text(e)
    out = []
    for file, cls, test, text in req["templates"] if ops or mods else []:
        facts = req.get("facts", {}).get(file, {})
        entry = {"names": []}
        try:
            # Named also where the instantiation leaves the device out, so
            # that apiparity can list them as such.
            entry["not_for_device"] = _gen_for_device(facts, cls, device)
            dec = _gen_eval(text, dict(base), facts)
            entry["names"] = _gen_names(dec, ops, mods, cls, test, device)
        except Exception as e:
            entry["error"] = _exc_text(e)
        out.append(entry)
    return {"ok": True, "data": {
        "error": why, "ops": [op.formatted_name for op in ops] +
        [m.formatted_name for m in mods], "templates": out,
        "present": {m: _installed(m) for m in req.get("modules", [])}}}
