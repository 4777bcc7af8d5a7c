# ---------------------------------------------------------------- probes

def _norm(v):
    """A value as a trace records it: comparable across processes, and any
    string exact (see "values on the wire")."""
    import re
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, str):
        if _clean(v):
            return v
        return {"$bytes": base64.b64encode(v.encode("utf-8", "surrogatepass")).decode("ascii")}
    if isinstance(v, type):
        return _norm("<class %s>" % v.__qualname__)
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    return _norm(re.sub(r"0x[0-9a-fA-F]+", "0x?", repr(v)))


class _DeviceTrace(object):
    """Records dispatched operators and the devices of the tensors they
    produce, through a TorchDispatchMode where this torch has one."""

    def __init__(self, torch):
        self.ops, self.devices, self.why = {}, {}, None
        self.mode = None
        try:
            from torch.utils._python_dispatch import TorchDispatchMode
        except ImportError as e:
            self.why = "no TorchDispatchMode in this torch: %s" % e
            return
        rec = self

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                name = str(getattr(func, "__name__", func))
                rec.ops[name] = rec.ops.get(name, 0) + 1
                for t in (out if isinstance(out, (list, tuple)) else [out]):
                    dev = getattr(t, "device", None)
                    if dev is not None:
                        rec.devices[str(dev.type)] = rec.devices.get(str(dev.type), 0) + 1
                return out
        self.mode = _Mode

    def result(self):
        if self.mode is None:
            return {"available": False, "why": self.why}
        return {"available": True, "ops": self.ops, "tensor_devices": self.devices}


class ProbeFailure(AssertionError):
    pass


def _run_probe_child(probe, wfd):
    import threading
    import traceback
    torch = sys.modules["torch"]
    steps = []

    def trace(step, value):
        # Sent as it happens: a probe that crashes later keeps its steps.
        st = {"step": str(step), "value": _norm(value)}
        steps.append(st)
        send(wfd, {"type": "step", "step": st})
        return value

    def check(cond, message="check failed"):
        if not cond:
            raise ProbeFailure(message)

    def resolve(dotted):
        obj = _walk(dotted)[0]
        if obj is None:
            raise LookupError("%s does not resolve" % dotted)
        return obj

    ns = {"torch": torch, "trace": trace, "check": check, "threading": threading,
          "resolve": resolve, "__name__": "apiparity_probe"}
    dt = _DeviceTrace(torch)
    raised = None
    try:
        for name, expr in probe.get("bind", []):
            ns[name] = eval(expr, ns)
        code = compile(probe["code"], "<probe %s>" % probe["name"], "exec")
        if dt.mode is not None:
            with dt.mode():
                exec(code, ns)
        else:
            exec(code, ns)
    except BaseException as e:
        raised = _raised(e, traceback.format_exc(limit=-3))
    send(wfd, {"type": "result", "raised": raised, "trace": steps,
               "device_trace": dt.result()})


def _raised(e, tb):
    """What a probe raised, as facts: its type's name, whether check() raised
    it (a ProbeFailure: the probe's own verdict, not an error), its message
    and the traceback's tail. apiparity decides what that makes the probe."""
    return {"type": type(e).__name__, "check": isinstance(e, ProbeFailure),
            "message": str(e), "traceback": tb}


# ---------------------------------------------------------------- supervision
#
# A child's result counts when the child itself ends, whatever its own children
# still hold open; then its process group is killed, and so is anything that
# escaped the group (a setsid daemon): orphans come to this process, as the
# subreaper or as PID 1 of the environment's PID namespace (chroots).

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# How long a child's pipe is still read once the child has exited.
DRAIN_S = 0.2
# The protocol descriptors, closed in every child: a probe, or a daemon it
# starts, must never hold apiparity's pipes open past the worker's end.
_protocol_fds = ()
_libc = None


def _prctl(option, arg):
    """prctl(2) through ctypes; False where that is not possible."""
    global _libc
    try:
        if _libc is None:
            import ctypes
            _libc = ctypes.CDLL(None, use_errno=True)
        return _libc.prctl(option, arg, 0, 0, 0) == 0
    except Exception:
        return False


def _children(ppid):
    """The pids whose parent is ppid, from /proc."""
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc here: none to be found
        return out
    for name in names:
        if name.isdigit():
            st = _proc_stat(int(name))
            if st is not None and st[1] == ppid:
                out.append(int(name))
    return out


def _proc_stat(pid):
    """(state, ppid, exit code or None) of pid from /proc/PID/stat, or None
    when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    if len(fields) < 2:
        return None
    code = int(fields[49]) if len(fields) > 49 and fields[0] in "ZX" else None
    return fields[0], int(fields[1]), code


def _reap_orphans():
    """Kills and reaps every child of this process but the runners it keeps
    (_KEPT, _RESIDENT): called when none of its own is running, so each is something a
    probe or test left behind."""
    import signal
    kept = set(k["pid"] for k in list(_KEPT.values()) + [_RESIDENT] if k)
    for _ in range(8):  # a killed orphan's own children come next
        kids = [pid for pid in _children(os.getpid()) if pid not in kept]
        if not kids:
            return
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in kids:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass


def _drain(rfd):
    """What rfd holds now, read for at most DRAIN_S seconds."""
    import select
    out = []
    end = time.monotonic() + DRAIN_S
    while time.monotonic() < end and select.select([rfd], [], [], 0)[0]:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        out.append(chunk)
    return b"".join(out)


def _read_until_exit(pid, rfd, deadline):
    """Reads rfd until the child pid exits, then what the pipe still holds.
    Returns (the bytes, its wait status), or (the bytes, None) at the deadline
    with the child still running."""
    import select
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    buf, eof = bytearray(), False  # appended to in place (see _stream)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return buf + (b"" if eof else _drain(rfd)), status
            left = deadline - time.monotonic()
            if left <= 0:
                return buf, None
            fds = ([] if eof else [rfd]) + ([] if pidfd is None else [pidfd])
            ready, _, _ = select.select(fds, [], [], left if pidfd is not None
                                        else min(left, 0.05))
            if rfd in ready:
                chunk = os.read(rfd, 65536)
                buf += chunk
                eof = not chunk
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _spawn_child(fn, out_fd, group=True):
    """Forks a child in its own process group (in this one when not group),
    its stdout and stderr on out_fd, that runs fn(wfd) and exits; returns
    (pid, the read end). The child dies with this process (parent-death
    signal)."""
    global _protocol_fds
    import signal
    parent = os.getpid()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            # What the child inherits is out of its collector's reach: a
            # collection would write to every object's header, copying each
            # page of the parent it shares (hundreds of MB once torch and
            # op_db are loaded) for nothing the child made. O(1): lists merge.
            gc.freeze()
            if group:
                os.setpgid(0, 0)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:
                os._exit(1)
            for fd in _protocol_fds:
                os.close(fd)
            _protocol_fds = ()  # their numbers may be reused from here on
            os.close(r)
            os.dup2(out_fd, 1)
            os.dup2(out_fd, 2)
            fn(w)
        except BaseException as e:
            send(w, {"type": "result", "harness": _exc_text(e)})
        finally:
            os._exit(0)
    os.close(w)
    try:
        if group:
            os.setpgid(pid, pid)  # also here: whichever runs first wins the race
    except OSError:
        pass
    return pid, r


def _forked(fn, timeout, out_fd=None):
    """Runs fn(wfd) in a child (see _spawn_child) with a timeout; returns
    (its result frame or None, the steps it traced, wait status or None on
    timeout)."""
    devnull = os.open(os.devnull, os.O_WRONLY) if out_fd is None else None
    try:
        pid, r = _spawn_child(fn, out_fd if out_fd is not None else devnull)
    finally:
        if devnull is not None:
            os.close(devnull)
    try:
        return _await_child(pid, r, timeout)
    finally:
        os.close(r)


def _ended(status, limit_s):
    """How a child ended, as facts (apiparity decides what that makes its
    result): at the limit (status None), by a signal (its name), or by its
    own exit (the status), with the limit it ran under."""
    import signal
    signalled = status is not None and os.WIFSIGNALED(status)
    return {"timed_out": status is None,
            "signal": signal.Signals(os.WTERMSIG(status)).name if signalled else None,
            "exit_status": os.WEXITSTATUS(status)
            if status is not None and not signalled else None,
            "limit_s": limit_s}


def op_probe(req):
    """Runs one probe in a forked child, in its own process group, with its
    output captured and a timeout; a crash or hang is a result, not an error.
    The reply is facts: the child's result frame (what it raised, its trace
    and device trace) or null, the steps it streamed, how it ended."""
    import tempfile
    probe = req["probe"]
    timeout = _limit(req, "timeout_s")
    out = tempfile.TemporaryFile()
    t0 = time.monotonic()
    result, steps, status = _forked(lambda w: _run_probe_child(probe, w), timeout, out.fileno())
    data = {"result": result, "steps": steps, "ended": _ended(status, timeout),
            "duration_ms": int((time.monotonic() - t0) * 1000)}
    out.seek(0)
    data["output"] = out.read(65536).decode("utf-8", "replace")
    out.close()
    return {"ok": True, "data": data}


def _frames(buf):
    """The complete frames at the start of buf, decoded; one that does not
    decode to an object is {"type": "unreadable"}."""
    out, i = [], 0
    while len(buf) - i >= 4:
        (n,) = struct.unpack(">I", buf[i:i + 4])
        if len(buf) - i - 4 < n:
            break
        try:
            f = json.loads(buf[i + 4:i + 4 + n].decode("utf-8"))
        except ValueError:
            f = None
        out.append(f if isinstance(f, dict) else {"type": "unreadable"})
        i += 4 + n
    return out


def _split(frames):
    """(the result frame or None, the trace steps streamed before it). A
    frame the child sent that could not be read makes the result
    {"unreadable": true}: it costs that child's result, not the session."""
    result = [f for f in frames if f.get("type") == "result"]
    steps = [f.get("step") for f in frames if f.get("type") == "step"]
    if any(f.get("type") == "unreadable" for f in frames):
        return {"unreadable": True, "trace": steps}, steps
    if result:
        del result[0]["type"]
        return result[0], steps
    return None, steps


def _end_child(pid, status):
    """Kills what is left of the child's process group (all of it on a
    timeout, status None; a child in this process's group, itself), reaps
    the child, then whatever escaped the group."""
    import signal
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    if status is None:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
    _reap_orphans()


def _supervise(pid, rfd, timeout):
    """The one loop that watches a child (see _spawn_child): reads its frames
    until the child itself exits (not until its pipe closes: a daemon it
    started may still hold that), then kills what is left of its group and
    reaps whatever escaped it; on timeout kills the group first. Returns (the
    frames it sent, wait status or None for a timeout)."""
    buf, status = _read_until_exit(pid, rfd, time.monotonic() + timeout)
    _end_child(pid, status)
    return _frames(buf), status


def _await_child(pid, rfd, timeout):
    """(result or None, the steps it traced, wait status or None for a
    timeout) of a child that reports one result (see _supervise)."""
    frames, status = _supervise(pid, rfd, timeout)
    result, steps = _split(frames)
    return (result if status is not None else None), steps, status


# ---------------------------------------------------------------- packages

def op_package(req):
    """The dpkg record of a package in this environment (no dpkg needed)."""
    name, rec, out = req["name"], {}, None
    try:
        with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip() == "":
                    if rec.get("Package") == name and "installed" in rec.get("Status", ""):
                        out = rec
                        break
                    rec = {}
                elif not line[0].isspace() and ":" in line:
                    k, v = line.split(":", 1)
                    rec[k] = v.strip()
            else:
                if rec.get("Package") == name:
                    out = rec
    except OSError as e:
        return {"ok": True, "data": {"found": False, "why": _exc_text(e)}}
    if out is None:
        return {"ok": True, "data": {"found": False, "why": "%s is not installed" % name}}
    src = out.get("Source", name).split(" ")[0]
    ver = out.get("Version")
    m = out.get("Source", "").split("(")
    if len(m) > 1:
        ver = m[1].rstrip(")").strip()
    osr = _os_release()
    return {"ok": True, "data": {"found": True, "source": src, "version": ver,
                                 "codename": osr.get("VERSION_CODENAME")}}
