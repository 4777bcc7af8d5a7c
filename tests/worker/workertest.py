# What the worker's unit tests (tests/worker/test_<module>.py, one file for
# each module of worker/) share: W, the worker as one module, and a few
# helpers.
#
# The tests run against the program the binary embeds, the modules joined by
# the build: tests/integration/t-worker.sh puts it into sys.modules as
# "apiparity_worker" (no file needs to exist inside a chroot), and any python3
# here loads it from build/apiparity_worker.py (make build/apiparity_worker.py
# first; APIPARITY_WORKER names another file):
#   python3 -m unittest discover -s tests/worker
# Importing it must not start its main loop.

import importlib.util
import json
import os
import struct
import sys


def _load_worker():
    if "apiparity_worker" in sys.modules:
        return sys.modules["apiparity_worker"]
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get("APIPARITY_WORKER") or \
        os.path.join(here, "..", "..", "build", "apiparity_worker.py")
    if not os.path.isfile(path):
        raise ImportError("no worker program at %s: make build/apiparity_worker.py" % path)
    spec = importlib.util.spec_from_file_location("apiparity_worker", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["apiparity_worker"] = mod
    return mod


W = _load_worker()


def frame(obj):
    """obj as one frame of the worker's protocol."""
    body = json.dumps(obj).encode("utf-8")
    return struct.pack(">I", len(body)) + body


def has_torch():
    return importlib.util.find_spec("torch") is not None


def torch_or_none():
    try:
        import torch
        return torch
    except Exception:
        return None


def exit_status(how):
    """The wait status of a child that ends how: an exit code, or the name of
    the signal that kills it ("SIGSEGV")."""
    import signal
    pid = os.fork()
    if pid == 0:
        if isinstance(how, str):
            os.kill(os.getpid(), getattr(signal, how))
        os._exit(how if isinstance(how, int) else 1)
    return os.waitpid(pid, 0)[1]


class Driver:
    """pytorch_openreg's driver as far as apiparity's adapter touches it
    (worker/numeric_adapter.py): an exchange with a daemon that the first of
    two threads to enter holds until the second enters or a second passes
    (a second thread that enters meanwhile has overlapped it); "nest" makes
    one exchange inside another. Subclass it per test: the state is the
    class's."""
    busy, overlapped, peer = 0, False, None

    def run_on_executor(self, device, cmd):
        if cmd == "nest":
            return self.run_on_executor(device, "inner")
        if cmd == "inner":
            return "nested"
        cls = type(self)
        cls.busy += 1
        if cls.busy > 1:
            cls.overlapped = True
            cls.peer.set()
        else:
            cls.peer.wait(1)
        cls.busy -= 1
        return cmd


def within(fn, limit=10):
    """fn's answer, from a thread given limit seconds: a lock that is not
    re-entrant deadlocks a nested call, and a test must fail, not hang."""
    import threading
    got = []
    t = threading.Thread(target=lambda: got.append(fn()), daemon=True)
    t.start()
    t.join(limit)
    return got[0] if got else "still waiting after %d s" % limit


def driver_calls(driver):
    """Two threads use the (stand-in) driver at once, as autograd's device
    thread and the runner's do, then one call nests another (a collection
    inside an exchange): whether the two overlapped, and what the nested
    call answered."""
    import threading
    driver.peer = threading.Event()
    d = driver()
    both = [threading.Thread(target=d.run_on_executor, args=(0, "x")) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    return {"overlapped": driver.overlapped,
            "nested": within(lambda: d.run_on_executor(0, "nest"))}
