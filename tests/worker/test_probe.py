# Unit tests of worker/probe.py: trace values and the frames a supervised
# child streams (see tests/worker/workertest.py).

import unittest

from workertest import W, frame, exit_status


class Norm(unittest.TestCase):
    def test_plain_values_stay_as_they_are(self):
        for v in (None, True, False, 0, -7, "text", ""):
            self.assertEqual(W._norm(v), v)

    def test_a_class_is_named_by_its_qualname(self):
        class Inner(object):
            pass
        self.assertEqual(W._norm(dict), "<class dict>")
        self.assertEqual(W._norm(Inner), "<class Norm.test_a_class_is_named_by_its_qualname.<locals>.Inner>")

    def test_lists_and_tuples_become_lists_of_normalised_values(self):
        self.assertEqual(W._norm((1, [None, (int,)])), [1, [None, ["<class int>"]]])

    def test_addresses_in_a_repr_are_masked(self):
        o = object()
        self.assertEqual(W._norm(o), "<object object at 0x?>")
        self.assertEqual(W._norm(o), W._norm(object()))


class Frames(unittest.TestCase):
    def test_complete_frames_are_decoded_in_order(self):
        buf = frame({"type": "step", "step": {"step": "a", "value": 1}}) + frame({"type": "result"})
        self.assertEqual(W._frames(buf), [{"type": "step", "step": {"step": "a", "value": 1}},
                                          {"type": "result"}])

    def test_a_cut_frame_at_the_end_is_left_out(self):
        buf = frame({"n": 1}) + frame({"n": 2})[:-1]
        self.assertEqual(W._frames(buf), [{"n": 1}])
        self.assertEqual(W._frames(frame({"n": 1})[:3]), [])
        self.assertEqual(W._frames(b""), [])

    def test_split_gives_the_result_and_the_steps_streamed_before_it(self):
        frames = [{"type": "step", "step": {"step": "a", "value": 1}},
                  {"type": "step", "step": {"step": "b", "value": 2}},
                  {"type": "result", "status": "PASS"}]
        result, steps = W._split(frames)
        self.assertEqual(result, {"status": "PASS"})
        self.assertEqual([s["step"] for s in steps], ["a", "b"])

    def test_an_unreadable_frame_is_a_fact_of_the_result(self):
        result, steps = W._split([{"type": "step", "step": {"step": "a", "value": 1}},
                                  {"type": "unreadable"}])
        self.assertEqual(result, {"unreadable": True, "trace": [{"step": "a", "value": 1}]})
        self.assertNotIn("status", result)

    def test_split_without_a_result_keeps_the_steps(self):
        result, steps = W._split([{"type": "step", "step": {"step": "a", "value": 1}}])
        self.assertIsNone(result)
        self.assertEqual(steps, [{"step": "a", "value": 1}])


class Facts(unittest.TestCase):
    """The worker reports what happened; apiparity (check/probe.c) decides
    what status that is."""

    def test_how_a_child_ended_is_facts(self):
        self.assertEqual(W._ended(None, 7), {"timed_out": True, "signal": None,
                                             "exit_status": None, "limit_s": 7})
        self.assertEqual(W._ended(exit_status("SIGSEGV"), 7),
                         {"timed_out": False, "signal": "SIGSEGV", "exit_status": None,
                          "limit_s": 7})
        self.assertEqual(W._ended(exit_status(4), 7),
                         {"timed_out": False, "signal": None, "exit_status": 4, "limit_s": 7})

    def test_what_a_probe_raised_says_whether_check_raised_it(self):
        r = W._raised(W.ProbeFailure("no grad"), "tb")
        self.assertEqual(r, {"type": "ProbeFailure", "check": True, "message": "no grad",
                             "traceback": "tb"})
        # a bare assert is not check(): an error of the probe, as before
        r = W._raised(AssertionError("x"), "tb")
        self.assertEqual((r["type"], r["check"], r["message"]), ("AssertionError", False, "x"))
        self.assertFalse(W._raised(ValueError("bad"), "")["check"])


if __name__ == "__main__":
    unittest.main()
