# ---------------------------------------------------------------- traced cases, made again
#
# `apiparity check --cases`: a traced program's calls (evidence/cases.h),
# their tensors described, not stored. In the reference environment,
# op_case_samples makes each case's arguments again from its description
# (seeded, in the range the program's tensor had, with its strides) as a
# sample of the numeric check, kind "case"; op_run then runs them everywhere
# as it runs OpInfo's samples. Which cases to make is apiparity's choice,
# made before it asks.

def _contiguous_strides(shape):
    out, n = [], 1
    for d in reversed(shape):
        out.append(n)
        n *= max(int(d), 1)
    return list(reversed(out))


def _bound(v, default):
    if isinstance(v, dict):  # {"$float": "inf"}, {"$int": "..."}
        v = _untag(v, "cpu")
    try:
        v = float(v)
    except (TypeError, ValueError):
        return default
    return v if v == v and abs(v) != float("inf") else default


def _made_tensor(d):
    """A tensor as the description d says: its dtype, shape and strides,
    its values (kept), or values drawn in the range [min, max] it had."""
    import torch
    dt = getattr(torch, d["dtype"], None)
    if d["dtype"] not in _TENSOR_DTYPES or not isinstance(dt, torch.dtype):
        raise Unserializable("dtype %r" % d["dtype"])
    shape = [int(n) for n in d["shape"]]
    if "values" in d:
        t = torch.tensor(_untag(d["values"], "cpu"), dtype=dt).reshape(shape)
    elif dt == torch.bool:
        t = torch.randint(0, 2, shape).bool()
    elif dt.is_floating_point or dt.is_complex:
        lo, hi = _bound(d.get("min"), -1.0), _bound(d.get("max"), 1.0)
        wide = torch.rand(shape, dtype=torch.float64) * (hi - lo) + lo
        t = wide.to(dt)
    else:
        lo, hi = int(_bound(d.get("min"), 0)), int(_bound(d.get("max"), 9))
        t = torch.randint(lo, hi + 1, shape, dtype=torch.int64).to(dt)
    strides = [int(s) for s in d.get("strides", [])]
    if strides and strides != _contiguous_strides(shape) and t.numel():
        try:  # the program's layout (channels_last, a transpose): kept
            s = torch.empty_strided(shape, strides, dtype=dt)
            s.copy_(t)
            t = s
        except Exception:
            pass
    if d.get("requires_grad") and (dt.is_floating_point or dt.is_complex):
        t.requires_grad_(True)
    return t


def _made(v):
    """A described value made again (the tracer's tags: numeric_tags.py's,
    and $desc for a tensor)."""
    if isinstance(v, list):
        return [_made(x) for x in v]
    if not isinstance(v, dict):
        return v
    if len(v) == 1:
        (k, x), = v.items()
        if k == "$desc":
            return _made_tensor(x)
        if k == "$tuple":
            return tuple(_made(y) for y in x)
        if k == "$opaque":
            raise Unserializable("a value of type %s" % x)
        if k.startswith("$"):
            return _untag(v, "cpu")
    return dict((k, _made(x)) for k, x in v.items())


def _first_dtype(v):
    import torch
    if isinstance(v, torch.Tensor):
        return _dtype_name(v.dtype)
    for x in (v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else ()):
        d = _first_dtype(x)
        if d:
            return d
    return None


def op_case_samples(req):
    """The samples of the cases asked, each made after
    torch.manual_seed(seed + its id): {"seed", "samples", "skipped", "ops"}
    as op_samples answers."""
    import torch
    target, seed = req["target"], int(req["seed"])
    inplace = target.rsplit(".", 1)[-1].endswith("_") and not target.endswith("__")
    samples, skipped = [], []
    for case in req["cases"]:
        cid = int(case["id"])
        base = {"op": target, "variant": "", "kind": "case", "index": cid, "inplace": inplace,
                "count": int(case.get("count", 1))}
        try:
            torch.manual_seed(seed + cid)
            args, kwargs = _made(case["args"]), _made(case["kwargs"])
            if not args:
                raise Unserializable("no positional argument")
            sample = {"input": _tag(args[0]), "args": _tag(tuple(args[1:])),
                      "kwargs": _tag(kwargs)}
        except Exception as e:
            skipped.append(dict(base, why=_exc_text(e)))
            continue
        grad = any(t.requires_grad for t in _leaves([args, kwargs], []))
        # F.relu(x, inplace=True) writes into x as relu_ does: the runner
        # gives it a copy (a leaf that requires grad cannot be written into;
        # in the program it was an activation, which can)
        base["inplace"] = inplace or kwargs.get("inplace") is True
        samples.append(dict(base, dtype=_first_dtype([args, kwargs]) or "none", grad=grad,
                            sample=sample))
    return {"ok": True, "data": {"seed": seed, "samples": samples, "skipped": skipped,
                                 "ops": []}}
