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


def _decorator_reason(d):
    """What a test decorator says: unittest.skip's reason (its closure), or
    the decorator's name (expectedFailure)."""
    code = getattr(d, "__code__", None)
    free = getattr(code, "co_freevars", ())
    if "reason" in free and d.__closure__:
        return str(d.__closure__[free.index("reason")].cell_contents)
    return getattr(d, "__name__", type(d).__name__)


def _compare_skip(op, dtype):
    """What op's OpInfo decorators say of upstream's device-against-CPU test
    (TestCommon.test_compare_cpu) for dtype on any device ("output is
    non-deterministic" for empty, normal, dropout...), or None when they
    leave it to run. A fact of this torch's OpInfo; apiparity decides."""
    for d in getattr(op, "decorators", ()):
        try:
            if getattr(d, "test_name", None) == "test_compare_cpu" and \
                    d.is_active("TestCommon", "test_compare_cpu", None, dtype, {}):
                return "; ".join(_decorator_reason(x) for x in d.decorators)
        except Exception:
            continue
    return None


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


def _empty_input(s):
    import torch
    return any(isinstance(t, torch.Tensor) and t.numel() == 0
               for t in [s.input] + list(s.args) + list(s.kwargs.values()))


_EXTRA_MAX = 1 << 16  # bytes of a sample taken beyond the limit (broadcast, empty)


def _take(gen, limit, seen, skipped, base):
    """Up to limit samples of gen not seen before (as data), serialized, as
    (sample, SampleInput) pairs; then, from the next 64, the first that
    broadcasts its input and the first with an empty tensor, when none
    taken did (and is small): the shapes a kernel most often gets wrong."""
    import itertools
    out, want = [], {"broadcasts": True, "empty": True}
    for k, s in enumerate(itertools.islice(gen, limit + 64)):
        extra = [w for w, test in (("broadcasts", getattr(s, "broadcasts_input", False)),
                                   ("empty", _empty_input(s))) if test and want[w]]
        if len(out) >= limit and not extra:
            continue
        if base.get("inplace") and getattr(s, "broadcasts_input", False):
            skipped.append(dict(base, index=k, why="broadcasts its input: no in-place form"))
            continue
        try:
            tagged = _sample_tag(s)
        except Unserializable as e:
            skipped.append(dict(base, index=k, why="unserializable: %s" % e))
            continue
        key = json.dumps(tagged, sort_keys=True)
        if key in seen or (len(out) >= limit and len(key) > _EXTRA_MAX):
            continue
        seen.add(key)
        for w in extra:
            want[w] = False
        out.append((dict(base, index=k, sample=tagged), s))
        if len(out) >= limit and not any(want.values()):
            break
    return out


# The forms a sample runs in (test_ops' test_variant_consistency_eager,
# test_out, test_noncontiguous_samples): besides the call the target names,
# each other callable its OpInfo entry has (function, method, in place), the
# out= form of the function, and the same call on noncontiguous copies of
# its tensors. Each is a sample of its own, "form" naming it and "call" the
# callable (a dotted name this worker walks to) where it is not the target.

def _callable_path(op, f):
    """A dotted name that walks to f, or None."""
    import torch
    name = getattr(f, "__name__", None)
    if not name:
        return None
    mod = op.name.rsplit(".", 1)[0] if "." in op.name else None
    for path in ["torch.Tensor." + name, "torch." + name] + \
            (["torch.%s.%s" % (mod, name)] if mod else []):
        try:
            if _walk(path)[0] is f:
                return path
        except Exception:
            pass
    return None


def _no_grad(tagged):
    """tagged with no tensor requiring grad (an out= call cannot have one)."""
    if isinstance(tagged, list):
        return [_no_grad(x) for x in tagged]
    if not isinstance(tagged, dict):
        return tagged
    if set(tagged) == {"$tensor"}:
        return {"$tensor": dict(tagged["$tensor"], requires_grad=False)}
    return dict((k, _no_grad(x)) for k, x in tagged.items())


def _noncontiguous(s):
    """s with each tensor a noncontiguous copy (same values, every other
    element of a buffer twice its size), as test_ops' noncontiguous_like."""
    import torch

    def nc(t):
        if not isinstance(t, torch.Tensor) or t.numel() == 0 or t.dim() == 0:
            return t
        wide = torch.repeat_interleave(t.detach().contiguous(), 2, dim=-1)
        return wide[..., ::2].requires_grad_(t.requires_grad)

    def walk(v):
        if isinstance(v, (list, tuple)):
            return type(v)(walk(x) for x in v)
        if isinstance(v, dict):
            return dict((k, walk(x)) for k, x in v.items())
        return nc(v)
    return {"input": _tag(walk(s.input)), "args": _tag(walk(tuple(s.args))),
            "kwargs": _tag(walk(dict(s.kwargs)))}


def _skip(sample, form, why):
    """What the skipped list says of sample's form that is not made."""
    return dict(dict((k, v) for k, v in sample.items() if k != "sample"), form=form, why=why)


_FORMS_MAX = 1 << 20  # bytes of a sample made in its other forms too


def _forms(op, obj, sample, s, skipped):
    """The samples of the other forms of sample (s its SampleInput), for a
    sample under _FORMS_MAX bytes as data: a large one (reference_inputs'
    1024 x 1024) would take five times its room for what a small one shows."""
    out = []
    if sample["kind"] not in ("sample", "reference"):
        return out
    size = len(json.dumps(sample["sample"]))
    if size > _FORMS_MAX:
        skipped.append(_skip(sample, "*", "%d bytes as data: its other forms are made "
                             "only for samples under %d" % (size, _FORMS_MAX)))
        return out
    calls = [("function", op.op, False), ("method", op.method_variant, False),
             ("inplace", op.inplace_variant, True)]
    for form, f, inplace in calls:
        if f is None or f is obj:
            continue
        if inplace and getattr(s, "broadcasts_input", False):
            continue
        path = _callable_path(op, f)
        if path is None:
            skipped.append(_skip(sample, form, "its %s variant has no dotted name here" % form))
            continue
        out.append(dict(sample, form=form, call=path, inplace=inplace))
    fpath = _callable_path(op, op.op) if op.op is not None else None
    if getattr(op, "supports_out", False) and fpath is not None:
        out.append(dict(sample, form="out", call=fpath, inplace=False, grad=False,
                        sample=_no_grad(sample["sample"])))
    try:
        out.append(dict(sample, form="noncontiguous", sample=_noncontiguous(s)))
    except Unserializable as e:
        skipped.append(_skip(sample, "noncontiguous", "unserializable: %s" % e))
    return out


def _dtype_sample(op, name, seed, skipped):
    """The first sample of a dtype op's OpInfo does not claim on CPU (kind
    "dtype"): whether each side accepts it is what test_dtypes checks."""
    import itertools
    import torch
    torch.manual_seed(seed)
    base = {"op": op.name, "variant": op.variant_test_name, "dtype": name, "kind": "dtype",
            "grad": False, "inplace": False}
    skip = _compare_skip(op, getattr(torch, name))
    if skip is not None:
        base["compare_skip"] = skip
    try:
        for k, s in enumerate(itertools.islice(op.sample_inputs("cpu", getattr(torch, name)),
                                               8)):
            try:
                return [dict(base, index=k, sample=_sample_tag(s))]
            except Unserializable:
                continue
    except Exception as e:
        skipped.append(dict(base, index=-1, why=_exc_text(e)))
    return []


def op_samples(req):
    """The samples of the target's OpInfo entries in this torch, for the
    dtypes asked that CPU supports: at most max_samples each of
    sample_inputs and reference_inputs per dtype (and one that broadcasts
    and one empty where the next few have them), each in every form
    (_forms); error_inputs; and, last, one sample of each dtype asked that
    CPU does not support (_dtype_sample); each made after
    torch.manual_seed(seed)."""
    import torch
    target, limit, seed = req["target"], int(req["max_samples"]), int(req["seed"])
    obj = _walk(target)[0]
    if _is_module_class(obj):
        return _module_samples(req, obj)
    ops = _match_ops(target, obj)
    samples, skipped, last = [], [], []
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
                last += _dtype_sample(op, name, seed, skipped)
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
                skip = _compare_skip(op, dt)
                if skip is not None:
                    base["compare_skip"] = skip
                try:
                    gen = (op.sample_inputs if kind == "sample" else op.reference_inputs)(
                        "cpu", dt, requires_grad=grad)
                    for sample, s in _take(gen, limit, seen, skipped, base):
                        samples += [sample] + _forms(op, obj, sample, s, skipped)
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
    # the dtype samples last: a backend that loses its device on a refusal
    # (openreg) then needs no new runner for the samples after them
    return {"ok": True, "data": {"seed": seed, "samples": samples + last, "skipped": skipped,
                                 "ops": [_op_facts(op, []) for op in ops]}}
