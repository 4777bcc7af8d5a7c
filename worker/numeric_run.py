# ---------------------------------------------------------------- operators: running the samples
#
# Every environment's side: the samples run on CPU and on each device, in a
# child that streams one frame per sample; outputs and gradients go back as
# tagged values, unjudged.

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
            before = _backward_raised[0]
            _backward_raised[0] = before or device != "cpu"  # until grad returns
            got = torch.autograd.grad(diff, leaves, [_grad_output(o) for o in diff],
                                      allow_unused=True)
            _backward_raised[0] = before
            grads = [g if g is not None else None for g in got]
    except Exception as e:
        return {"status": "raised", "exception": type(e).__name__, "message": _text(str(e))[:500]}
    return {"status": "ok", "outputs": [_tag(o, spanned=False) for o in outs],
            "grads": [_tag(g, spanned=False) for g in grads]}


# Whether a device's backward raised in this sample (set by _run_side until
# grad returns, cleared by _run_sample):
# what the failed backward held is still being freed on autograd's device
# thread, so the runner must not touch the device again (see _sample_runner).
_backward_raised = [False]


def _run_sample(fn, sample, devices, notrun):
    """One sample on CPU and each device: the part of each side. notrun:
    the sides apiparity said not to run it on, each with its reason."""
    import torch
    parts = {}
    _backward_raised[0] = False
    for dev in ["cpu"] + list(devices):
        if dev in notrun:
            parts[dev] = {"status": "notrun", "reason": notrun[dev]}
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


def _sample_runner(target, samples, start, devices, notrun, w):
    """The runner process: resolves the target and runs samples from start,
    one frame each ("begin" first, so that a crash is the sample's). Leaves
    when a device that raised where CPU did not no longer computes, and at
    once, without touching the device again, when it raised in the backward:
    what the failed backward held is freed later, on autograd's device
    thread, while this one would go on, and pytorch_openreg's driver, used
    from both threads at once, aborts ("Failed to free memory pointer") or
    hangs under load. The next runner starts the device afresh."""
    fn = _walk(target)[0]
    # Devices start here, before the first sample's clock: a backend's
    # start (a daemon that imports torch) is not a sample's time.
    send(w, {"type": "ready", "devices": dict((d, _device_works(d)) for d in devices)})
    for k in range(start, len(samples)):
        send(w, {"type": "begin", "i": k})
        parts = _run_sample(fn, samples[k], devices, notrun[k] if k < len(notrun) else {})
        send(w, {"type": "sample", "i": k, "parts": parts})
        cpu_raised = parts.get("cpu", {}).get("status") == "raised"
        raised = [d for d, p in parts.items()
                  if d != "cpu" and p.get("status") == "raised" and not cpu_raised]
        if raised and (_backward_raised[0] or not all(_device_works(d) for d in raised)):
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


def _lost(phase, status, limit_s):
    """What became of a sample during which the runner ended, as facts
    (apiparity decides the status): in the sample itself or before the
    runner's first sample began (phase "sample" or "start"), and how the
    runner ended (see _ended), under the limit of that phase."""
    return dict(_ended(status, limit_s), phase=phase)


def op_run(req):
    """Runs the samples (as op_samples made them, the same bytes) on CPU and
    on each device named, but not on the sides notrun names for a sample
    (apiparity's choice: the part says notrun, with apiparity's reason), in
    a runner child forked here (devices start in it, never in this
    process), each sample within timeout_s. Each sample's
    result is sent as its own frame ({"type": "sample", "i", "parts"} or
    {"type": "sample", "i", "lost"}: how the runner ended, see _lost) as it
    ends; after a sample that crashes or hangs the runner, a new runner goes
    on with the next."""
    import tempfile
    timeout = _limit(req, "timeout_s")
    start_s = _limit(req, "start_s")
    samples, devices, target = req["samples"], list(req.get("devices", [])), req["target"]
    notrun = req["notrun"]
    opinfo = {"available": True}
    try:
        _entries(target, _walk(target)[0])
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
                                                       notrun, w), log.fileno())
        try:
            current, status = _stream(pid, r, timeout, start_s, forward)
        finally:
            os.close(r)
        if current is not None:
            forward({"i": current, "lost": _lost("sample", status, timeout)})
        elif state["next"] == start:  # it ended before its first sample began
            for k in range(start, len(samples)):
                forward({"i": k, "lost": _lost("start", status, start_s)})
    log.seek(0)
    return {"ok": True, "data": {"sent": state["sent"], "runners": runners, "opinfo": opinfo,
                                 "log": log.read(65536).decode("utf-8", "replace")}}
