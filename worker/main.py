# ---------------------------------------------------------------- main
#
# The table of operations (OPS: a request's "op" -> its function, one literal
# that a test can read) and the loop that answers requests until "exit".

OPS = {"fingerprint": op_fingerprint, "resolve": op_resolve, "probe": op_probe,
       "package": op_package, "tests_index": op_tests_index, "same_object": op_same_object,
       "tests_preflight": op_tests_preflight, "tests_import": op_tests_import,
       "tests_run": op_tests_run, "tests_generated": op_tests_generated,
       "opinfo": op_opinfo, "samples": op_samples, "run": op_run,
       "case_samples": op_case_samples,
       "sweep_begin": op_sweep_begin, "sweep_walk": op_sweep_walk}


def _no_main_to_rerun():
    """multiprocessing's spawn start method re-runs the parent's __main__ in
    every interpreter it starts, found by __main__.__spec__ (a module name)
    or __main__.__file__ (a path). A backend's device daemon is started that
    way: upstream's pytorch_openreg spawns one per device, from the probe that
    first uses the device. The worker is that __main__, and it came on stdin:
    re-running it could only fail (for `python -` the path is '<stdin>', so
    the daemon dies of FileNotFoundError and the probe waits for its device
    forever), or start a second worker. apiparity's bootstrap (`python -c`)
    sets neither, but an interpreter's start-up (a sitecustomize, a wrapper)
    may: both go, so that a spawned interpreter imports only what the target
    it was given needs. The worker's own code is never re-run there."""
    main = sys.modules.get("__main__")
    if getattr(main, "__file__", None) is not None:
        del main.__file__
    if getattr(main, "__spec__", None) is not None:
        main.__spec__ = None


def main():
    global _protocol_fds
    _no_main_to_rerun()
    rfd, wfd = _take_protocol_fds()
    _protocol_fds = (rfd, wfd)
    _reply_fd[0] = wfd
    # Orphans of probes and tests come here, to be killed when they end.
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    os.write(wfd, SYNC)
    send(wfd, {"type": "hello", "proto": PROTO, "pid": os.getpid(),
               "python": sys.version.split()[0]})
    while True:
        req = recv(rfd)
        if req is None or req.get("op") == "exit":
            _drop_resident()
            return 0
        fn = OPS.get(req.get("op"))
        if fn is None:
            reply = {"ok": False, "error": "unknown-op",
                     "message": "unknown op %r" % req.get("op")}
        else:
            try:
                reply = fn(req)
            except ProtocolError as e:
                reply = {"ok": False, "error": "protocol", "message": str(e)}
            except Exception as e:
                reply = {"ok": False, "error": "worker-exception",
                         "message": _exc_text(e)}
        reply["type"] = "result"
        send(wfd, reply)


if __name__ == "__main__":
    sys.exit(main())
