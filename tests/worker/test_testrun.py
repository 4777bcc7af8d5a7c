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
        result = W._facts_result()
        ut.TestSuite([ns["T"]("test_it")]).run(result)
        return W._unittest_facts(result)

    def test_facts_of_a_passing_test(self):
        f = self.run_case("pass")
        self.assertEqual(f, {"tests_run": 1, "errors": 0, "error": None,
                             "error_exception": None, "failures": 0, "failure": None,
                             "failure_exception": None, "skipped": 0, "skip": None,
                             "expected_failures": 0, "unexpected_successes": 0})

    def test_facts_of_a_failure_are_its_exceptions_type_message_and_frames(self):
        f = self.run_case("x = 1\nself.assertEqual(x, 2)")
        e = f["failure_exception"]
        self.assertEqual((e["type"], e["qualname"], e["module"], e["message"], e["notes"]),
                         ("AssertionError", "AssertionError", "builtins", "1 != 2", []))
        self.assertIn("test_it", [fr["function"] for fr in e["frames"]])
        self.assertTrue(all(isinstance(fr["line"], int) for fr in e["frames"]))
        self.assertLessEqual(len(e["frames"]), W._FRAMES)
        self.assertIsNone(f["error_exception"])

    def test_the_traceback_ends_with_the_lines_its_facts_give(self):
        # what apiparity checks before it words a reason from the facts
        import sys
        body = ("class Odd(Exception):\n    pass\n"
                "x = Odd('first\\nsecond')\n")
        if sys.version_info >= (3, 11):
            body += "x.add_note('hint: RuntimeError: not the cause')\n"
        f = self.run_case(body + "raise x")
        e = f["error_exception"]
        mod = "" if e["module"] in ("builtins", "__main__") else e["module"] + "."
        tail = "%s%s: %s\n" % (mod, e["qualname"], e["message"]) + \
            "".join(n + "\n" for n in e["notes"])
        self.assertEqual(e["qualname"], "T.test_it.<locals>.Odd")
        self.assertTrue(f["error"].endswith(tail), (f["error"], tail))

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
        facts = W._raised_facts(AssertionError("no"))
        self.assertEqual(facts["exception"]["message"], "no")
        del facts["exception"]
        self.assertEqual(facts, {"type": "AssertionError", "assertion": True,
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
        # as apiparity judges the facts (check/official.c)
        if "died" in f:
            return "TIMEOUT" if "timeout_s" in f["died"] else "CRASH"
        if "broken" in f:
            return "ERROR"
        return "PASS" if f["function"]["raised"] is None else "FAIL"

    def pid(self, f):
        return int(f["output"].split()[1])

    def test_a_segfault_in_the_second_of_four_costs_only_that_test(self):
        fs = self.run_file(["test_passes", "test_segfaults", "test_passes", "test_passes"])
        self.assertEqual([self.status(f) for f in fs], ["PASS", "CRASH", "PASS", "PASS"])
        self.assertEqual(fs[1]["died"], {"signal": 11, "signal_name": "SIGSEGV"})
        pids = [self.pid(f) for f in fs]
        # One child for the first two, a fresh one for the rest, never the runner.
        self.assertEqual(pids[0], pids[1])
        self.assertNotEqual(pids[1], pids[2])
        self.assertEqual(pids[2], pids[3])
        self.assertNotIn(os.getpid(), pids)

    def test_a_test_that_dies_or_exits_is_a_crash_and_the_rest_run(self):
        fs = self.run_file(["test_killed", "test_exits", "test_passes"])
        self.assertEqual([(self.status(f), f.get("died")) for f in fs],
                         [("CRASH", {"signal": 9, "signal_name": "SIGKILL"}),
                          ("CRASH", {"exit_status": 3}),
                          ("PASS", None)])

    def test_a_hang_in_the_second_is_a_timeout_and_the_third_and_fourth_run(self):
        fs = self.run_file(["test_passes", "test_hangs", "test_passes", "test_passes"], 1)
        self.assertEqual([self.status(f) for f in fs], ["PASS", "TIMEOUT", "PASS", "PASS"])
        self.assertEqual(fs[1]["died"], {"timeout_s": 1})
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
