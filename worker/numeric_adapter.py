# ---------------------------------------------------------------- operators: the device's adapter
#
# What apiparity may ask the numeric runner to adapt in a backend before its
# devices start (openreg's daemons forked, its driver serialized): applied
# in the runner only, stated in the bundle by apiparity (check/numeric.c's
# ap_numeric_adapter), said in the runner's log.

# The adapter apiparity may ask the runner for (ap_numeric_adapter states
# it in the bundle; keep the two in step).
_FORKED_DAEMONS = "openreg-forked-daemons"


def _forked_daemons(fds):
    """openreg-forked-daemons: pytorch_openreg starts each device's daemon
    with multiprocessing's "spawn" (a new interpreter that imports torch,
    some 2 s a daemon); this runner has torch imported, so its context is
    made "fork" and the daemons start at once, running the same code. fds
    (this runner's pipes to the worker) are closed in each forked child, as
    spawn would not have passed them. And its driver is serialized
    (_serialize_driver). Only where the module is there with a "spawn"
    context; says what it did on stderr (the runner's log)."""
    dd = sys.modules.get("pytorch_openreg._device_daemon")
    ctx = getattr(dd, "mp_context", None)
    if ctx is None or getattr(ctx, "_name", None) != "spawn":
        return

    def close_fds():
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
    import multiprocessing
    dd.mp_context = multiprocessing.get_context("fork")
    os.register_at_fork(after_in_child=close_fds)
    _serialize_driver(dd)
    sys.stderr.write("apiparity adapter: %s: pytorch_openreg's device daemons are forked "
                     "from the runner, not spawned\n" % _FORKED_DAEMONS)


def _serialize_driver(dd):
    """pytorch_openreg's driver talks to a device's daemon over two queues,
    a request put and then its answer got, with no lock: autograd's device
    thread (which runs a backward on the device, and frees what a backward
    that raised held, after grad has returned) and the runner's thread,
    using it at once, take each other's answers ("Failed to free memory
    pointer", a hang). Each exchange is made one step under a lock
    (re-entrant: a collection inside one may free a tensor), so that after a
    backward raised the runner can go on with the next sample."""
    import threading
    drv = getattr(dd, "Driver", None)
    run = getattr(drv, "run_on_executor", None)
    if run is None:
        return
    lock = threading.RLock()

    def run_on_executor(self, *args):
        with lock:
            return run(self, *args)
    drv.run_on_executor = run_on_executor
    _driver_serialized[0] = True
    sys.stderr.write("apiparity adapter: %s: pytorch_openreg's driver answers one thread "
                     "at a time\n" % _FORKED_DAEMONS)


# Whether the runner's device driver is safe to use from two threads
# (_serialize_driver): then a backward that raised does not end the runner.
_driver_serialized = [False]
