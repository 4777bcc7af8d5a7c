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
    """The bytes of a contiguous CPU tensor (one whose dimensions of size 1
    keep another stride, as a noncontiguous input's may, counts: copied
    into a flat one first, which views as bytes)."""
    import torch
    flat = torch.empty(t.numel(), dtype=t.dtype).copy_(t.reshape(-1))
    u8 = flat.view(torch.uint8)
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
    (a noncontiguous input stays noncontiguous on the device too)."""
    import torch
    dt = getattr(torch, d["dtype"], None)
    if d["dtype"] not in _TENSOR_DTYPES or not isinstance(dt, torch.dtype):
        raise Unserializable("dtype %r" % d["dtype"])
    raw = bytearray(base64.b64decode(d["data"]))
    shape, strides = [int(n) for n in d["shape"]], [int(s) for s in d["strides"]]
    if raw:  # the span, moved whole, then viewed: .to() of a view with gaps packs it
        flat = torch.frombuffer(raw, dtype=torch.uint8).view(dt)
        t = flat.to(device).as_strided(shape, strides, 0)
    else:
        t = torch.empty_strided(shape, strides, dtype=dt).to(device)
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
