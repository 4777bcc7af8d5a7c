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


def _is_same(r, t):
    """Whether result r is the tensor t (the same object, or its memory)."""
    import torch
    return r is t or (isinstance(r, torch.Tensor) and isinstance(t, torch.Tensor) and
                      r.device == t.device and r.data_ptr() == t.data_ptr() and
                      r.shape == t.shape)


def _out_like(v):
    """What to pass as out= for a result v (a tensor or a tuple of them):
    new tensors like it, filled with what no kernel leaves by chance (NaN,
    else 0), so that one that does not write its out= is seen."""
    import torch
    if isinstance(v, (tuple, list)) and v and all(isinstance(t, torch.Tensor) for t in v):
        return tuple(_out_like(t) for t in v)
    if not isinstance(v, torch.Tensor):
        raise TypeError("no out= form: the function returns %s" % type(v).__name__)
    return torch.empty_like(v).fill_(float("nan") if v.is_floating_point() or v.is_complex()
                                      else 0)


def _call(fn, first, args, kwargs, form):
    """One form of the call: (what it returned, the outputs to compare,
    whether it wrote into the tensor it was given, or None where no form
    does: in place, into first; out=, into the out tensors)."""
    if form != "out":
        out = fn(first, *args, **kwargs)
        return out, out, _is_same(out, first) if form == "inplace" else None
    given = _out_like(fn(first, *args, **kwargs))
    out = fn(first, *args, out=given, **kwargs)
    written = _flat(given, [])
    pairs = list(zip(_flat(out, []), written))
    return out, given, len(pairs) == len(written) and all(_is_same(r, t) for r, t in pairs)


def _run_side(fn, s, device, inplace, grad, trace=_NoTrace, form=None):
    """Runs one sample on device: {status: "ok", outputs, grads[, alias]}
    or {status: "raised", exception, message}; form is the sample's (see
    op_samples: None, the target's own call). The forward runs inside trace()
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
    alias = None
    try:
        params = []
        if "module" in s:  # fn is the class: the module is the sample's
            fn, params = _module_call(fn, s["module"], device, grad)
        leaves = _leaves([inp, args, kwargs], []) + params if grad else []
        first = inp.clone() if inplace and isinstance(inp, torch.Tensor) else inp
        with trace():
            if "module" in s:
                out = fn(*args, **kwargs)
            else:
                out, shown, alias = _call(fn, first, args, kwargs, form)
        outs = _flat(out if "module" in s else shown, [])
        grads = []
        diff = [o for o in _flat(out, []) if isinstance(o, torch.Tensor) and o.requires_grad]
        if leaves and diff:
            before = _backward_raised[0]
            _backward_raised[0] = before or device != "cpu"  # until grad returns
            got = torch.autograd.grad(diff, leaves, [_grad_output(o) for o in diff],
                                      allow_unused=True)
            _backward_raised[0] = before
            grads = [g if g is not None else None for g in got]
    except Exception as e:
        return {"status": "raised", "exception": type(e).__name__, "message": _text(str(e))[:500]}
    part = {"status": "ok", "outputs": [_tag(o, spanned=False) for o in outs],
            "grads": [_tag(g, spanned=False) for g in grads]}
    if alias is not None:
        part["alias"] = bool(alias)
    return part


# Whether a device's backward raised in this sample (set by _run_side until
# grad returns, cleared by _run_sample):
# what the failed backward held is still being freed on autograd's device
# thread, so the runner must not touch the device again (see _sample_runner).
_backward_raised = [False]


def _run_sample(fn, sample, devices, notrun, w=None, k=None):
    """One sample on CPU and each device: the part of each side. notrun:
    the sides apiparity said not to run it on, each with its reason. With
    w, the CPU's part and time are sent as soon as they are known ({"type":
    "cpu", "i": k, "s", "part"}): the devices' limit for this sample is
    derived from it, and a sample lost on a device keeps what the CPU did."""
    import torch
    parts = {}
    _backward_raised[0] = False
    for dev in ["cpu"] + list(devices):
        if dev in notrun:
            parts[dev] = {"status": "notrun", "reason": notrun[dev]}
            continue
        dt = _DeviceTrace(torch) if dev != "cpu" else None
        trace = dt.mode if dt is not None and dt.mode is not None else _NoTrace
        # Each side of sample k draws from a generator seeded alike: a random
        # operator's CPU values are then the same in every environment,
        # whatever ran before it in this runner (a device side that drew from
        # the CPU's generator, an earlier sample).
        torch.manual_seed(k or 0)
        t0 = time.monotonic()
        try:
            parts[dev] = _run_side(fn, sample["sample"], dev, sample["inplace"],
                                   sample["grad"], trace, sample.get("form"))
        except Exception as e:  # the harness, not the operator: decoding, shipping
            parts[dev] = {"status": "error", "reason": _exc_text(e)}
        if dev == "cpu" and w is not None:
            send(w, {"type": "cpu", "i": k, "s": time.monotonic() - t0, "part": parts[dev]})
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
    once, without touching the device again, when it raised in the backward
    and the device's driver is not known to be safe from two threads
    (_serialize_driver): what the failed backward held is freed later, on
    autograd's device thread, while this one would go on, and
    pytorch_openreg's driver, used from both threads at once, aborts
    ("Failed to free memory pointer") or hangs under load. The next runner
    starts the device afresh."""
    fns = {None: _walk(target)[0]}
    # Devices start here, before the first sample's clock: a backend's
    # start (a daemon that imports torch) is not a sample's time.
    send(w, {"type": "ready", "devices": dict((d, _device_works(d)) for d in devices)})
    for k in range(start, len(samples)):
        send(w, {"type": "begin", "i": k})
        call = samples[k].get("call")
        if call not in fns:
            try:
                fns[call] = _walk(call)[0]
            except Exception as e:
                fns[call] = e
        if isinstance(fns[call], Exception):
            why = "%s does not resolve here: %s" % (call, _exc_text(fns[call]))
            parts = dict((d, {"status": "error", "reason": why}) for d in ["cpu"] + devices)
        else:
            parts = _run_sample(fns[call], samples[k], devices,
                                notrun[k] if k < len(notrun) else {}, w, k)
        send(w, {"type": "sample", "i": k, "parts": parts})
        cpu_raised = parts.get("cpu", {}).get("status") == "raised"
        raised = [d for d, p in parts.items()
                  if d != "cpu" and p.get("status") == "raised" and not cpu_raised]
        if raised and ((_backward_raised[0] and not _driver_serialized[0]) or
                       not all(_device_works(d) for d in raised)):
            return False
    return True


class _Asked:
    """A job's samples as the runner gets them: sample k is asked of the
    worker ({"type": "want", "i": k}) when the runner comes to it, and comes
    on cmd as its own frame. A job's samples may be megabytes (a reference
    sample of a million elements), and a runner that the device takes down
    after its third sample must not have paid for the whole list: each
    sample crosses the pipe once, whatever the number of runners."""

    def __init__(self, count, cmd, w):
        self.count, self.cmd, self.w, self.k, self.sample = count, cmd, w, None, None

    def __len__(self):
        return self.count

    def __getitem__(self, k):
        if k != self.k:
            send(self.w, {"type": "want", "i": k})
            self.sample = recv(self.cmd)
            if self.sample is None:
                raise ProtocolError("the worker closed the runner's jobs")
            self.k = k
        return self.sample


def _resident_runner(cmd, devices, w):
    """A runner kept between requests (see _resident): its devices start
    once, then it runs each job that comes on cmd ({target, count, start,
    notrun}; its samples asked for one by one, see _Asked) as
    _sample_runner does, each ended by {"type": "end"}. It leaves when cmd
    closes (the worker is done with it), and after a job that left a device
    it cannot trust (_sample_runner's rule): the next job gets a fresh
    runner."""
    while True:
        job = recv(cmd)
        if job is None or not _sample_runner(job["target"], _Asked(job["count"], cmd, w),
                                             job["start"], devices, job["notrun"], w):
            return
        send(w, {"type": "end"})


# The runner kept for the next op_run, so that a sweep's devices start once
# per worker, not once per API: {"pid", "r" (its frames), "cmd" (its jobs),
# "devices"}, or empty. It runs in the worker's own process group, so that
# when apiparity kills the worker's group, the runner and the daemons its
# devices started go with it (in a group of its own they would outlive it).
_RESIDENT = {}
# What every runner writes to stdout and stderr, appended (O_APPEND: the
# worker reads it at its own offsets while a runner writes).
_RUNNER_LOG = []


def _runner_log():
    import fcntl
    import tempfile
    if not _RUNNER_LOG:
        f = tempfile.TemporaryFile()
        fcntl.fcntl(f.fileno(), fcntl.F_SETFL, fcntl.fcntl(f.fileno(), fcntl.F_GETFL) | os.O_APPEND)
        _RUNNER_LOG.append(f)
    return _RUNNER_LOG[0].fileno()


def _drop_resident(end=True):
    """Closes this side of the kept runner's pipes and forgets it, if there
    is one; with end, ends it and what it started too, as _drop_kept ends a
    kept test runner (its daemons, orphaned to this process, are reaped with
    the other orphans). Without: it has ended, and been reaped."""
    k = dict(_RESIDENT)
    _RESIDENT.clear()
    if not k:
        return
    os.close(k["cmd"])
    try:
        if end:
            _supervise(k["pid"], k["r"], 0)
    finally:
        os.close(k["r"])


def _resident(devices, adapter=None):
    """The kept runner for devices (started here when there is none, or one
    for other devices or adapter), and whether it was started now."""
    if _RESIDENT and _RESIDENT["devices"] == devices and _RESIDENT["adapter"] == adapter:
        return _RESIDENT, False
    _drop_resident()
    cr, cw = os.pipe()

    def child(w):
        os.close(cw)
        if adapter == _FORKED_DAEMONS:
            _forked_daemons((w, cr))
        _resident_runner(cr, devices, w)
    pid, r = _spawn_child(child, _runner_log(), group=False)
    os.close(cr)
    _RESIDENT.update(pid=pid, r=r, cmd=cw, devices=devices, adapter=adapter)
    return _RESIDENT, True


def _job(target, samples, start, notrun):
    """The frame of a runner's job from start: the samples themselves are
    asked for one at a time (see _Asked), each encoded once per op_run."""
    return frame({"target": target, "count": len(samples), "start": start, "notrun": notrun})


def _give(k, job):
    """Sends job (a frame, see frame()) to the kept runner k; False when it
    is gone."""
    try:
        send_frame(k["cmd"], job)
        return True
    except OSError:
        return False


def _dead(pids):
    """The first of pids that has died, as facts {pid, signal, exit_status}
    (what its zombie says; both None once it is reaped), or None."""
    import signal
    for p in pids:
        st = _proc_stat(p)
        if st is not None and st[0] not in "ZX":
            continue
        code = st[2] if st is not None else None
        sig = code & 0x7f if code is not None else 0
        return {"pid": p, "signal": signal.Signals(sig).name if sig else None,
                "exit_status": (code >> 8) & 0xff if code is not None and not sig else None}
    return None


def _stream(pid, rfd, lim, on_frame, on_want=None):
    """Reads the runner's frames as they come, giving each sample's to
    on_frame; the runner has lim["start_s"] to be "ready", then each "begin"
    restarts the per-sample clock at lim["timeout_s"], and the CPU's time
    ("cpu") cuts it to lim["floor_s"] + lim["factor"] x that time (never
    above timeout_s): a device that hangs costs its sample's own limit. The
    runner's children when it is ready (a device's daemons) are watched: one
    that dies ends the runner after a second's grace, if it has not ended of
    itself. A runner's "want" (the next sample, see _Asked) is given to
    on_want. A kept runner's "end" (its job done) returns with it running.
    Returns {current: the index of the sample begun and not finished or
    None, end: whether the job ended, status: the wait status or None when
    stopped here or running,
    limit_s: the limit then running, cpu_s and cpu_part: the CPU's time and
    part (a _Part) of the current sample or None, daemon: the daemon that died (see
    _dead) or None}."""
    import select
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    res = {"current": None, "status": None, "limit_s": lim["start_s"], "cpu_s": None,
           "cpu_part": None, "daemon": None, "end": False}
    # a bytearray: appending to it and taking frames off its front cost what
    # they move, where bytes would copy the whole buffer for each pipe's
    # worth of a frame of megabytes
    buf, deadline, eof, watched, grace = bytearray(), time.monotonic() + lim["start_s"], False, [], None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                buf += b"" if eof else _drain(rfd)
            frames, used = _frames_used(buf, raw_samples=True)
            del buf[:used]
            now = time.monotonic()
            for f in frames:
                kind = f.get("type")
                if kind == "ready":
                    watched = _children(pid)
                if kind in ("begin", "ready"):
                    res.update(current=f.get("i"), limit_s=lim["timeout_s"], cpu_s=None,
                               cpu_part=None)
                    deadline = now + lim["timeout_s"]
                elif kind == "cpu" and isinstance(f.get("s"), (int, float)):
                    cut = min(lim["timeout_s"], lim["floor_s"] + lim["factor"] * f["s"])
                    res.update(limit_s=cut, cpu_s=f["s"], cpu_part=_Part(f))
                    deadline = now + cut
                elif kind == "sample":
                    res["current"] = None
                    on_frame(f)
                elif kind == "end":  # a kept runner's job is done; it waits
                    res["end"] = True
                elif kind == "want" and on_want is not None:
                    on_want(f.get("i"))
            if res["end"] and not done:
                return res
            if done:
                _end_child(pid, status)
                res["status"] = status
                return res
            if res["daemon"] is None and watched:
                res["daemon"] = _dead(watched)
                if res["daemon"] is not None:
                    grace = now + 1.0
            left = min(deadline, grace or deadline) - now
            if left <= 0:
                _end_child(pid, None)
                return res
            fds = ([] if eof else [rfd]) + ([] if pidfd is None else [pidfd])
            wait = min(left, 0.25) if watched or pidfd is None else left
            ready, _, _ = select.select(fds, [], [], wait)
            if rfd in ready:
                chunk = os.read(rfd, 1 << 20)
                buf += chunk
                eof = not chunk
    finally:
        if pidfd is not None:
            os.close(pidfd)


# The start of a runner's sample frame, and of its CPU frame (send() keeps
# the keys in the order _run_sample and _sample_runner give them, and the
# runner's values are wire-clean already).
_SAMPLE_FRAME = re.compile(rb'\{"type": "sample", "i": (\d+), ')
_CPU_FRAME = re.compile(rb'\{"type": "cpu", "i": (\d+), "s": ([0-9.eE+-]+), "part": ')


class _Part:
    """The CPU's part of a sample, from its "cpu" frame: decoded only when
    the sample is lost on a device and the part must be sent on its own."""

    def __init__(self, f):
        self.f = f

    def get(self):
        if "raw" in self.f:
            return (_frames(self.f["raw"])[0]).get("part")
        return self.f.get("part")


def _frames_used(buf, raw_samples=False):
    """(the complete frames at the start of buf, the bytes they take). With
    raw_samples, a runner's sample frame is not decoded: it comes as
    {"type": "sample", "i", "raw": the frame's bytes}, to be passed on as is
    (its tensors may be megabytes that decoding and encoding again would
    only copy); nor is its CPU frame's part ({"type": "cpu", "i", "s",
    "raw"}, see _Part)."""
    out, i = [], 0
    while len(buf) - i >= 4:
        (n,) = struct.unpack(">I", buf[i:i + 4])
        if len(buf) - i - 4 < n:
            break
        # the frame's one copy (a slice of a bytearray, then bytes of it,
        # would be two), taken through a view released at once
        one = bytes(memoryview(buf)[i:i + 4 + n])
        m = _SAMPLE_FRAME.match(one, 4) if raw_samples else None
        c = _CPU_FRAME.match(one, 4) if raw_samples and not m else None
        if m:
            out.append({"type": "sample", "i": int(m.group(1)), "raw": one})
        elif c:
            out.append({"type": "cpu", "i": int(c.group(1)), "s": float(c.group(2)), "raw": one})
        else:
            out += _frames(one)
        i += 4 + n
    return out, i


# Where op_run streams a frame per sample: apiparity's end of the protocol.
_reply_fd = [None]


def _lost(phase, res):
    """What became of a sample during which the runner ended, as facts
    (apiparity decides the status): in the sample itself or before the
    runner's first sample began (phase "sample" or "start"), how the runner
    ended (see _ended) under the limit then running, the CPU's time that
    limit was derived from, and the device daemon that died, if one did."""
    return dict(_ended(res["status"], res["limit_s"]), phase=phase, cpu_s=res["cpu_s"],
                daemon=res["daemon"])


def op_run(req):
    """Runs the samples (as op_samples made them, the same bytes) on CPU and
    on each device named, but not on the sides notrun names for a sample
    (apiparity's choice: the part says notrun, with apiparity's reason), in
    a runner child forked here (devices start in it, never in this
    process) and kept for the next request (see _resident), each sample
    within its limit (see _stream). Each sample's result is sent as its own
    frame ({"type": "sample", "i", "parts"} or {"type": "sample", "i",
    "lost"}: how the runner ended, see _lost) as it ends; after a sample
    that crashes or hangs the runner, a new runner goes on with the next."""
    lim = {"timeout_s": _limit(req, "timeout_s"), "start_s": _limit(req, "start_s"),
           "floor_s": _limit(req, "floor_s"), "factor": _limit(req, "factor")}
    samples, devices, target = req["samples"], list(req.get("devices", [])), req["target"]
    notrun = req["notrun"]
    opinfo = {"available": True}
    try:
        _entries(target, _walk(target)[0])
    except Exception as e:
        opinfo = {"available": False, "why": _exc_text(e)}
    logfd = _runner_log()
    log0 = os.fstat(logfd).st_size
    state = {"next": 0, "sent": 0}
    runners = 0

    def forward(f):
        state["sent"] += 1
        state["next"] = max(state["next"], int(f["i"]) + 1)
        if "raw" in f:  # the runner's own frame, passed on as it came
            send_frame(_reply_fd[0], f["raw"])
            return
        f["type"] = "sample"
        send(_reply_fd[0], f)
    while state["next"] < len(samples):
        start = state["next"]
        k, fresh = _resident(devices, req.get("adapter"))
        runners += fresh
        if not _give(k, _job(target, samples, start, notrun)) and not fresh:
            _drop_resident()  # the kept one had gone: a fresh one takes the job
            continue

        def want(i, k=k):  # a runner that has died is seen by _stream
            if isinstance(i, int) and 0 <= i < len(samples):
                _give(k, frame(samples[i]))
        res = _stream(k["pid"], k["r"], lim, forward, want)
        if not res["end"]:  # the runner ended, or was stopped: reaped there
            _drop_resident(end=False)
        if res["current"] is not None:
            lost = {"i": res["current"], "lost": _lost("sample", res)}
            if res["cpu_part"] is not None:  # what the CPU did stands
                lost["parts"] = {"cpu": res["cpu_part"].get()}
            forward(lost)
        elif state["next"] == start:  # it ended before its first sample began
            for i in range(start, len(samples)):
                forward({"i": i, "lost": _lost("start", res)})
    size = os.fstat(logfd).st_size
    text = os.pread(logfd, min(65536, size - log0), log0)
    return {"ok": True, "data": {"sent": state["sent"], "runners": runners, "opinfo": opinfo,
                                 "log": text.decode("utf-8", "replace")}}
