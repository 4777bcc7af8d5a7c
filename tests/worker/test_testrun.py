# Unit tests of worker/testrun.py: a test's outcome as facts, what a test
# module defines, and the runner of a file's tests (real forks, crashes and
# hangs, no torch; see tests/worker/workertest.py).

import os
import types
import unittest

from workertest import W


class Outcomes(unittest.TestCase):
    def run_case(self, body):
        import unittest as ut
        ns = {"unittest": ut}
        exec("class T(unittest.TestCase):\n    def test_it(self):\n" +
             "".join("        %s\n" % l for l in body.splitlines()), ns)
        result = ut.TestResult()
        ut.TestSuite([ns["T"]("test_it")]).run(result)
        return W._unittest_facts(result)

    def test_facts_of_a_passing_test(self):
        f = self.run_case("pass")
        self.assertEqual(f, {"tests_run": 1, "errors": 0, "error": None, "failures": 0,
                             "failure": None, "skipped": 0, "skip": None,
                             "expected_failures": 0, "unexpected_successes": 0})

    def test_facts_carry_the_traceback_of_a_failure_and_an_error(self):
        f = self.run_case("self.assertEqual(1, 2)")
        self.assertEqual((f["failures"], f["errors"]), (1, 0))
        self.assertIn("AssertionError: 1 != 2", f["failure"])
        f = self.run_case("raise KeyError('k')")
        self.assertEqual((f["failures"], f["errors"]), (0, 1))
        self.assertIn("KeyError: 'k'", f["error"])

    def test_facts_carry_the_reason_of_a_skip(self):
        f = self.run_case("self.skipTest('needs cuda')")
        self.assertEqual((f["skipped"], f["skip"]), (1, "needs cuda"))

    def test_raised_facts_say_whether_it_was_an_assertion(self):
        self.assertIsNone(W._raised_facts(None))
        self.assertEqual(W._raised_facts(AssertionError("no")),
                         {"type": "AssertionError", "assertion": True,
                          "text": "AssertionError: no"})
        self.assertEqual(W._raised_facts(unittest.SkipTest("later"))["assertion"], False)


class Defined(unittest.TestCase):
    def test_classes_named_like_the_node_with_the_tests_named_like_it(self):
        mod = types.ModuleType("m")

        class TestA(object):
            def test_x(self):
                pass

        class TestACPU(object):
            test_x_cpu = test_x_float_cpu = test_y_cpu = TestA.test_x

        class Other(object):
            test_x = TestA.test_x
        mod.TestA, mod.TestACPU, mod.Other, mod.TestAValue = TestA, TestACPU, Other, 3
        got = W._defined(mod, [["TestA", "test_x"], [None, "test_fn"]])
        self.assertEqual(got, [
            {"class": "TestA", "test": "test_x", "classes": [
                {"name": "TestA", "own": True, "methods": ["test_x"]},
                {"name": "TestACPU", "own": False,
                 "methods": ["test_x_cpu", "test_x_float_cpu"]}]},
            {"class": None, "test": "test_fn", "classes": []}])


# A test file, as the runner sees it once imported: module-level test
# functions that pass, crash, hang, leave a global changed, or look at what
# the runner already reported (the read end of its result pipe, PIPE_R).
FILE_TESTS = """
import ctypes, os, select, signal, sys, time
SEEN = []
PIPE_R = None
def test_passes():
    print("pid", os.getpid())
def test_segfaults():
    print("pid", os.getpid())
    sys.stdout.flush()
    ctypes.string_at(0)
def test_killed():
    os.kill(os.getpid(), signal.SIGKILL)
def test_exits():
    os._exit(3)
def test_hangs():
    print("hanging")
    sys.stdout.flush()
    time.sleep(60)
def test_leaves_a_global():
    SEEN.append("left by a test")
def test_sees_the_global():
    assert SEEN == ["left by a test"], SEEN
def test_forks_and_both_return():
    print("pid", os.getpid())
    sys.stdout.flush()
    if os.fork() != 0:
        time.sleep(0.5)  # the forked process gets back to the runner's loop first
def test_sees_a_result_already_sent():
    # readable, not read: the runner's caller reads it
    assert select.select([PIPE_R], [], [], 10)[0], "nothing reported yet"
"""


class FileRunner(unittest.TestCase):
    """_run_tests: one child per file runs its tests one after another; a
    crash or a hang costs only the test it happens in."""

    def run_file(self, names, timeout=5):
        mod = types.ModuleType("test_file")
        exec(FILE_TESTS, mod.__dict__)
        r, w = os.pipe()
        mod.PIPE_R = r
        try:
            W._run_tests(mod, [[None, n] for n in names], timeout, w)
            os.close(w)
            w = None
            data = b""
            while True:
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(r)
            if w is not None:
                os.close(w)
        frames = W._frames(data)
        self.assertEqual([(f["type"], f["test"]) for f in frames], [("test", n) for n in names])
        return frames

    def status(self, f):
        if "status" in f:
            return f["status"]
        return "PASS" if f["function"]["raised"] is None else "FAIL"

    def pid(self, f):
        return int(f["output"].split()[1])

    def test_a_segfault_in_the_second_of_four_costs_only_that_test(self):
        fs = self.run_file(["test_passes", "test_segfaults", "test_passes", "test_passes"])
        self.assertEqual([self.status(f) for f in fs], ["PASS", "CRASH", "PASS", "PASS"])
        self.assertEqual(fs[1]["reason"], "SIGSEGV")
        pids = [self.pid(f) for f in fs]
        # One child for the first two, a fresh one for the rest, never the runner.
        self.assertEqual(pids[0], pids[1])
        self.assertNotEqual(pids[1], pids[2])
        self.assertEqual(pids[2], pids[3])
        self.assertNotIn(os.getpid(), pids)

    def test_a_test_that_dies_or_exits_is_a_crash_and_the_rest_run(self):
        fs = self.run_file(["test_killed", "test_exits", "test_passes"])
        self.assertEqual([(self.status(f), f.get("reason")) for f in fs],
                         [("CRASH", "SIGKILL"),
                          ("CRASH", "the test process exited with status 3 during the test"),
                          ("PASS", None)])

    def test_a_hang_in_the_second_is_a_timeout_and_the_third_and_fourth_run(self):
        fs = self.run_file(["test_passes", "test_hangs", "test_passes", "test_passes"], 1)
        self.assertEqual([self.status(f) for f in fs], ["PASS", "TIMEOUT", "PASS", "PASS"])
        self.assertEqual(fs[1]["reason"], "no result within 1 s")
        self.assertEqual(fs[1]["output"], "hanging\n")
        self.assertLess(fs[1]["duration_ms"], 5000)

    def test_each_test_has_its_own_output(self):
        fs = self.run_file(["test_passes", "test_leaves_a_global", "test_passes"])
        self.assertEqual([f["output"].split()[0] for f in fs if f["output"]], ["pid", "pid"])
        self.assertEqual(fs[1]["output"], "")

    def test_a_global_a_test_changed_is_seen_by_the_next_test_of_its_file(self):
        fs = self.run_file(["test_leaves_a_global", "test_sees_the_global"])
        self.assertEqual([self.status(f) for f in fs], ["PASS", "PASS"])

    def test_after_a_crash_the_rest_start_from_the_file_as_imported(self):
        fs = self.run_file(["test_leaves_a_global", "test_segfaults", "test_sees_the_global"])
        self.assertEqual([self.status(f) for f in fs], ["PASS", "CRASH", "FAIL"])

    def test_a_process_a_test_forks_runs_no_test_and_reports_nothing(self):
        fs = self.run_file(["test_forks_and_both_return", "test_passes", "test_passes"])
        self.assertEqual([self.status(f) for f in fs], ["PASS", "PASS", "PASS"])
        self.assertEqual(len(set(self.pid(f) for f in fs)), 1, [f["output"] for f in fs])

    def test_a_result_is_sent_when_its_test_ends_not_when_the_file_does(self):
        fs = self.run_file(["test_passes", "test_sees_a_result_already_sent"])
        self.assertEqual([self.status(f) for f in fs], ["PASS", "PASS"])


if __name__ == "__main__":
    unittest.main()
