# ---------------------------------------------------------------- operators: OpInfo entries and samples
#
# The OpInfo (and ModuleInfo) entries a target stands for, with the dtypes
# each supports (op_opinfo, in every environment), their samples as tagged
# data (op_samples, in the reference), and an nn module built from a sample.

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
