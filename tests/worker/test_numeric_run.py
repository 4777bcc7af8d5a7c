# Unit tests of worker/numeric_run.py: what runs the samples (see
# tests/worker/workertest.py).

import os
import unittest

from workertest import Driver, W, driver_calls, exit_status, frame, torch_or_none as _torch


class Stream(unittest.TestCase):
    def test_the_complete_frames_at_the_start_are_taken_with_their_bytes(self):
        whole = frame({"type": "sample", "i": 0}) + frame({"type": "begin", "i": 1})
        self.assertEqual(W._frames_used(whole + frame({"i": 2})[:6]),
                         ([{"type": "sample", "i": 0}, {"type": "begin", "i": 1}], len(whole)))
        self.assertEqual(W._frames_used(b"\x00\x00"), ([], 0))

    def test_a_runners_sample_frame_is_passed_on_as_it_came(self):
        # its tensors may be megabytes: the bytes go on undecoded; the CPU's
        # part is decoded only when asked for (a sample lost on the device)
        sample = frame({"type": "sample", "i": 7, "parts": {"cpu": {"status": "ok"}}})
        cpu = frame({"type": "cpu", "i": 7, "s": 2.5e-05, "part": {"status": "ok"}})
        other = frame({"i": 8, "type": "sample"})  # not the runner's order: decoded
        frames, used = W._frames_used(sample + cpu + other, raw_samples=True)
        self.assertEqual(used, len(sample + cpu + other))
        self.assertEqual(frames[0], {"type": "sample", "i": 7, "raw": sample})
        self.assertEqual((frames[1]["type"], frames[1]["i"], frames[1]["s"]), ("cpu", 7, 2.5e-05))
        self.assertEqual(W._Part(frames[1]).get(), {"status": "ok"})
        self.assertEqual(frames[2], {"i": 8, "type": "sample"})
        self.assertEqual(W._frames_used(sample)[0], [W._frames(sample)[0]])  # by default

    def test_a_sample_the_runner_ended_in_is_told_as_facts_not_a_status(self):
        res = {"status": None, "limit_s": 2.5, "cpu_s": 0.01, "daemon": None}
        self.assertEqual(W._lost("sample", res),
                         {"phase": "sample", "timed_out": True, "signal": None,
                          "exit_status": None, "limit_s": 2.5, "cpu_s": 0.01, "daemon": None})
        res.update(status=exit_status("SIGKILL"), cpu_s=None)
        self.assertEqual(W._lost("sample", res)["signal"], "SIGKILL")
        res.update(status=exit_status(3), limit_s=60)
        self.assertEqual(W._lost("start", res),
                         {"phase": "start", "timed_out": False, "signal": None,
                          "exit_status": 3, "limit_s": 60, "cpu_s": None, "daemon": None})


def _runner(daemon, then):
    """A runner (as op_run forks one) with one child of its own, a device's
    daemon that does daemon() (sleeping by default), ready once the daemon
    is there; then it does then(w) and hangs. Returns (pid, read end, the
    daemon's pid, the log)."""
    import tempfile
    import time
    log = tempfile.TemporaryFile()
    r, w = os.pipe()

    def run(out):
        child = os.fork()
        if child == 0:
            os.close(r)
            daemon()
            time.sleep(60)
            os._exit(0)
        os.write(w, b"%d\n" % child)
        W.send(out, {"type": "ready", "devices": {}})
        then(out)
        time.sleep(60)
    pid, rfd = W._spawn_child(run, log.fileno())
    os.close(w)
    daemon_pid = int(os.read(r, 64).split()[0])
    os.close(r)
    return pid, rfd, daemon_pid, log


@unittest.skipUnless(os.path.exists("/proc/self/stat"), "no /proc here")
class Watch(unittest.TestCase):
    """The runner's limits and its device's daemon, as _stream watches them:
    each test waits on the event, bounded by a limit far above it."""
    LIM = {"start_s": 30, "timeout_s": 30, "floor_s": 0.3, "factor": 1.0}

    def stream(self, pid, rfd, lim):
        import time
        t0 = time.monotonic()
        try:
            res = W._stream(pid, rfd, lim, lambda f: None)
        finally:
            os.close(rfd)
        return res, time.monotonic() - t0

    def test_a_daemon_that_dies_stops_its_runner_within_two_seconds(self):
        import signal
        pid, rfd, daemon, log = _runner(lambda: None, lambda w: W.send(w, {"type": "begin", "i": 4}))
        os.kill(daemon, signal.SIGKILL)
        res, took = self.stream(pid, rfd, self.LIM)
        # about a second (the poll, then a second's grace): far below the
        # 30-s limit; bounded loosely, a busy machine is slow
        self.assertLess(took, 10.0)
        self.assertEqual(res["current"], 4)
        self.assertIsNone(res["status"])  # stopped here, not ended by itself
        self.assertEqual(res["daemon"]["pid"], daemon)
        self.assertEqual(res["daemon"]["signal"], "SIGKILL")
        self.assertEqual(W._lost("sample", res)["daemon"]["signal"], "SIGKILL")

    def child_frames(self, run):
        """The sample frames _stream takes from a child that does run(w)."""
        got = []
        null = os.open(os.devnull, os.O_WRONLY)
        pid, rfd = W._spawn_child(run, null)
        os.close(null)
        try:
            res = W._stream(pid, rfd, self.LIM, got.append)
        finally:
            os.close(rfd)
        self.assertEqual((res["current"], os.WEXITSTATUS(res["status"])), (None, 0))
        return [W._frames(f["raw"])[0] if "raw" in f else f for f in got]

    def test_a_frame_of_megabytes_is_taken_once_and_whole(self):
        big = {"type": "sample", "i": 0, "parts": {"x": "0123456789abcdef" * (1 << 18)}}

        def run(out):
            W.send(out, {"type": "ready", "devices": {}})
            W.send(out, {"type": "begin", "i": 0})
            W.send(out, big)
        self.assertEqual(self.child_frames(run), [big])

    def test_a_forked_child_leaves_what_it_inherits_to_no_collection(self):
        # gc.freeze in the child: its collector then never writes to (and
        # so copies) the pages of the objects the worker holds
        import gc

        def run(out):
            W.send(out, {"type": "sample", "i": 0, "parts": {"frozen": gc.get_freeze_count()}})
        got = self.child_frames(run)
        self.assertGreater(got[0]["parts"]["frozen"], 1000)
        self.assertEqual(gc.get_freeze_count(), 0)  # the worker's own stay collectable

    def test_a_daemon_that_exits_is_told_by_its_status(self):
        pid, rfd, daemon, log = _runner(lambda: os._exit(1),
                                        lambda w: W.send(w, {"type": "begin", "i": 0}))
        res, took = self.stream(pid, rfd, self.LIM)
        self.assertLess(took, 10.0)
        self.assertEqual((res["daemon"]["signal"], res["daemon"]["exit_status"]), (None, 1))

    def test_the_cpus_time_cuts_the_devices_limit(self):
        def then(w):
            W.send(w, {"type": "begin", "i": 2})
            W.send(w, {"type": "cpu", "i": 2, "s": 0.2})
        pid, rfd, daemon, log = _runner(lambda: None, then)
        res, took = self.stream(pid, rfd, self.LIM)
        # 0.3 s + 1 x 0.2 s, not the 30-s timeout; the daemon lives on
        self.assertLess(took, 10.0)
        self.assertEqual((res["current"], res["limit_s"], res["cpu_s"], res["daemon"]),
                         (2, 0.5, 0.2, None))
        lim = dict(self.LIM, timeout_s=0.4)  # never above the timeout
        pid, rfd, daemon, log = _runner(lambda: None, then)
        res, took = self.stream(pid, rfd, lim)
        self.assertEqual(res["limit_s"], 0.4)

    def test_without_proc_there_is_nothing_to_watch(self):
        real = os.listdir

        def gone(path):
            raise FileNotFoundError(path)
        os.listdir = gone
        try:
            self.assertEqual(W._children(os.getpid()), [])
        finally:
            os.listdir = real

    def test_proc_stat_reads_a_zombies_exit_code(self):
        child = os.fork()
        if child == 0:
            os._exit(7)
        import time
        for _ in range(200):  # until it is a zombie
            st = W._proc_stat(child)
            if st is not None and st[0] == "Z":
                break
            time.sleep(0.01)
        self.assertEqual(W._dead([child]), {"pid": child, "signal": None, "exit_status": 7})
        self.assertIn(child, W._children(os.getpid()))
        os.waitpid(child, 0)
        self.assertIsNone(W._proc_stat(child))
        self.assertEqual(W._dead([child]), {"pid": child, "signal": None, "exit_status": None})
        self.assertIsNone(W._dead([os.getpid()]))


@unittest.skipUnless(os.path.exists("/proc/self/stat"), "no /proc here")
class Resident(unittest.TestCase):
    """op_run's runner kept between requests, with a stand-in for the
    sample loop (what it does to the process is the point here, not torch):
    it sends each sample's frame, then does what the sample asks ("die":
    exits in the middle; "leave": _sample_runner's early return)."""
    LIM = {"timeout_s": 30, "start_s": 30, "floor_s": 30, "factor": 1}

    def setUp(self):
        self.saved = W._sample_runner, W._reply_fd[0]
        self.r, W._reply_fd[0] = os.pipe()

        def fake(target, samples, start, devices, notrun, w):
            W.send(w, {"type": "ready", "devices": {}})
            for k in range(start, len(samples)):
                W.send(w, {"type": "begin", "i": k})
                if samples[k] == "die":
                    os._exit(3)
                parts = {"pid": os.getpid()}
                if samples[k] == "daemons":
                    parts.update(self.daemons(w))
                W.send(w, {"type": "sample", "i": k, "parts": parts})
                if samples[k] == "leave":
                    return False
            return True
        W._sample_runner = fake

    @staticmethod
    def daemons(w):
        """How the runner would start a device's daemon: the context of the
        (stand-in) pytorch_openreg module, and whether a child forked from
        the runner still holds the runner's pipe to the worker."""
        import sys
        dd = sys.modules["pytorch_openreg._device_daemon"]
        ctx = dd.mp_context
        calls = driver_calls(dd.Driver) if hasattr(dd, "Driver") else {}
        pid = os.fork()
        if pid == 0:
            try:
                os.fstat(w)
                os._exit(1)
            except OSError:
                os._exit(0)
        _, st = os.waitpid(pid, 0)
        return dict(calls, context=ctx._name, pipe_closed_in_child=os.WEXITSTATUS(st) == 0)

    def tearDown(self):
        import sys
        sys.modules.pop("pytorch_openreg._device_daemon", None)
        W._drop_resident()
        W._sample_runner = self.saved[0]
        os.close(W._reply_fd[0])
        os.close(self.r)
        W._reply_fd[0] = self.saved[1]

    def run_op(self, samples, adapter=None):
        """(op_run's data, the frames it forwarded)."""
        req = dict(self.LIM, op="run", target="no.such.target", samples=samples,
                   devices=["dev"], notrun=[])
        if adapter is not None:
            req["adapter"] = adapter
        data = W.op_run(req)["data"]
        import select
        buf = b""
        while select.select([self.r], [], [], 0)[0]:
            buf += os.read(self.r, 65536)
        frames, _ = W._frames_used(buf)
        return data, frames

    def test_the_next_request_gets_the_same_runner(self):
        data, frames = self.run_op(["a", "b"])
        self.assertEqual((data["sent"], data["runners"]), (2, 1))
        first = W._RESIDENT["pid"]
        self.assertEqual(set(f["parts"]["pid"] for f in frames), set([first]))
        data, frames = self.run_op(["c"])
        self.assertEqual((data["sent"], data["runners"]), (1, 0))
        self.assertEqual(frames[0]["parts"]["pid"], first)

    def test_each_sample_crosses_to_the_runners_once_and_only_when_asked(self):
        # what the worker gives its runners: a job names the samples'
        # count, never the samples; each sample goes once, when its runner
        # comes to it (the fake reads samples[k] up to three times)
        import json
        given, saved = [], W._give

        def record(k, data):
            given.append(json.loads(bytes(data[4:])))
            return saved(k, data)
        W._give = record
        try:
            data, frames = self.run_op(["a", "leave", "b", "c"])
        finally:
            W._give = saved
        self.assertEqual((data["sent"], data["runners"]), (4, 2))
        jobs = [g for g in given if isinstance(g, dict)]
        self.assertEqual([(j["start"], j["count"], "samples" in j) for j in jobs],
                         [(0, 4, False), (2, 4, False)])
        self.assertEqual([g for g in given if not isinstance(g, dict)], ["a", "leave", "b", "c"])

    def test_a_runner_that_dies_is_replaced_for_the_rest_and_the_next(self):
        data, frames = self.run_op(["a", "die", "b"])
        self.assertEqual(data["runners"], 2)
        self.assertEqual([f["i"] for f in frames], [0, 1, 2])
        self.assertEqual(frames[1]["lost"]["exit_status"], 3)
        second = frames[2]["parts"]["pid"]
        self.assertNotEqual(frames[0]["parts"]["pid"], second)
        data, frames = self.run_op(["c"])
        self.assertEqual((data["runners"], frames[0]["parts"]["pid"]), (0, second))

    def test_a_runner_that_leaves_is_not_given_the_next_request(self):
        data, frames = self.run_op(["leave"])
        self.assertEqual((data["sent"], data["runners"]), (1, 1))
        left = frames[0]["parts"]["pid"]
        data, frames = self.run_op(["c"])
        self.assertEqual(data["runners"], 1)
        self.assertNotEqual(frames[0]["parts"]["pid"], left)

    def test_the_adapter_asked_for_forks_openregs_daemons_from_the_runner(self):
        # A stand-in for pytorch_openreg's daemon module, as upstream's
        # holds its context: what the adapter changes is the point here.
        import multiprocessing
        import sys
        import types
        dd = types.ModuleType("pytorch_openreg._device_daemon")
        dd.mp_context = multiprocessing.get_context("spawn")

        class Standin(Driver):
            pass
        dd.Driver = Standin
        sys.modules[dd.__name__] = dd
        data, frames = self.run_op(["daemons"])
        self.assertEqual(frames[0]["parts"]["context"], "spawn")  # not asked: as upstream's
        self.assertTrue(frames[0]["parts"]["overlapped"])  # upstream's driver: no lock
        data, frames = self.run_op(["daemons"], adapter="openreg-forked-daemons")
        self.assertEqual(data["runners"], 1)  # another adapter: another runner
        self.assertEqual(frames[0]["parts"]["context"], "fork")
        self.assertTrue(frames[0]["parts"]["pipe_closed_in_child"])
        self.assertIn("apiparity adapter: openreg-forked-daemons: pytorch_openreg's device "
                      "daemons are forked from the runner, not spawned", data["log"])
        # one exchange at a time, and one may nest another (re-entrant)
        self.assertEqual((frames[0]["parts"]["overlapped"], frames[0]["parts"]["nested"]),
                         (False, "nested"))
        self.assertIn("apiparity adapter: openreg-forked-daemons: pytorch_openreg's driver "
                      "answers one thread at a time", data["log"])
        self.assertEqual(dd.mp_context._name, "spawn")  # in the runner only
        data, frames = self.run_op(["daemons"], adapter="no-such-adapter")
        self.assertEqual(frames[0]["parts"]["context"], "spawn")

    def test_other_devices_get_another_runner_and_the_last_ends_with_the_worker(self):
        self.run_op(["a"])
        first = W._RESIDENT["pid"]
        k, fresh = W._resident(["other"])
        self.assertTrue(fresh)
        self.assertIsNone(W._proc_stat(first))  # the first one is gone, reaped
        second = k["pid"]
        # in this process's group: apiparity's kill of the worker's group
        # takes it and what it started
        self.assertEqual(os.getpgid(second), os.getpgid(0))
        W._drop_resident()
        self.assertIsNone(W._proc_stat(second))
        self.assertEqual(W._RESIDENT, {})


@unittest.skipUnless(_torch() is not None, "no torch in this Python")
class Tensors(unittest.TestCase):
    def test_grad_output_is_made_from_the_shape_alone(self):
        torch = _torch()
        g = W._grad_output(torch.zeros(2, 9, dtype=torch.float32))
        self.assertEqual(g.dtype, torch.float32)
        self.assertEqual(g.flatten()[:3].tolist(), [-1.0, -0.125, 0.75])

    def test_outputs_flatten_in_order_and_inputs_give_what_requires_grad(self):
        torch = _torch()
        a, b = torch.ones(2), torch.zeros(1, requires_grad=True)
        c = torch.ones(3, requires_grad=True)
        self.assertEqual([type(x).__name__ for x in W._flat((a, [1, (b,)]), [])],
                         ["Tensor", "int", "Tensor"])
        self.assertEqual([x.shape[0] for x in W._leaves({"x": [a, b], "y": (c,)}, [])], [1, 3])

    def test_the_runner_calls_each_samples_own_callable(self):
        torch = _torch()
        x = W._tag(torch.tensor([-1.0, 2.0]))
        base = {"grad": False, "inplace": False,
                "sample": {"input": x, "args": {"$tuple": []}, "kwargs": {}}}
        samples = [dict(base), dict(base, form="method", call="torch.Tensor.neg"),
                   dict(base, form="inplace", call="torch.Tensor.neg_", inplace=True)]
        r, w = os.pipe()
        W._sample_runner("torch.abs", samples, 0, [], [], w)
        os.close(w)
        frames, _ = W._frames_used(os.read(r, 1 << 20))
        os.close(r)
        got = [W._untag(f["parts"]["cpu"]["outputs"][0], "cpu").tolist()
               for f in frames if f["type"] == "sample"]
        self.assertEqual(got, [[1.0, 2.0], [1.0, -2.0], [1.0, -2.0]])
        self.assertEqual([f["parts"]["cpu"].get("alias") for f in frames
                          if f["type"] == "sample"], [None, None, True])

    def test_each_form_is_called_as_upstream_calls_it(self):
        torch = _torch()
        x = torch.tensor([-1.0, 2.0, -3.0])
        out, shown, alias = W._call(torch.abs, x, (), {}, None)
        self.assertEqual((shown.tolist(), alias), ([1.0, 2.0, 3.0], None))
        first = x.clone()
        out, shown, alias = W._call(torch.Tensor.abs_, first, (), {}, "inplace")
        self.assertIs(out, first)
        self.assertEqual((first.tolist(), alias), ([1.0, 2.0, 3.0], True))
        out, shown, alias = W._call(torch.abs, x, (), {}, "out")
        self.assertEqual((shown.tolist(), alias), ([1.0, 2.0, 3.0], True))
        # an in-place form that answers with a new tensor, an out= that
        # writes elsewhere: both seen
        self.assertFalse(W._call(lambda t: t.abs(), x, (), {}, "inplace")[2])
        out, shown, alias = W._call(lambda t, out=None: t.abs(), x, (), {}, "out")
        self.assertFalse(alias)
        self.assertTrue(shown.isnan().all())  # what it was to write: what is compared
        # what out= is given shows a kernel that leaves it alone
        self.assertTrue(W._out_like(x).isnan().all())
        self.assertEqual(W._out_like(torch.ones(2, dtype=torch.int64)).tolist(), [0, 0])
        with self.assertRaises(TypeError):
            W._out_like(3)


if __name__ == "__main__":
    unittest.main()
