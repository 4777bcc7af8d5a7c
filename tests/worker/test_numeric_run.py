# Unit tests of worker/numeric_run.py: what runs the samples (see
# tests/worker/workertest.py).

import unittest

from workertest import W, exit_status, frame, torch_or_none as _torch


class Stream(unittest.TestCase):
    def test_the_complete_frames_at_the_start_are_taken_with_their_bytes(self):
        whole = frame({"type": "sample", "i": 0}) + frame({"type": "begin", "i": 1})
        self.assertEqual(W._frames_used(whole + frame({"i": 2})[:6]),
                         ([{"type": "sample", "i": 0}, {"type": "begin", "i": 1}], len(whole)))
        self.assertEqual(W._frames_used(b"\x00\x00"), ([], 0))

    def test_a_sample_the_runner_ended_in_is_told_as_facts_not_a_status(self):
        self.assertEqual(W._lost("sample", None, 2.5),
                         {"phase": "sample", "timed_out": True, "signal": None,
                          "exit_status": None, "limit_s": 2.5})
        self.assertEqual(W._lost("sample", exit_status("SIGKILL"), 2.5),
                         {"phase": "sample", "timed_out": False, "signal": "SIGKILL",
                          "exit_status": None, "limit_s": 2.5})
        self.assertEqual(W._lost("start", exit_status(3), 60),
                         {"phase": "start", "timed_out": False, "signal": None,
                          "exit_status": 3, "limit_s": 60})


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


if __name__ == "__main__":
    unittest.main()
