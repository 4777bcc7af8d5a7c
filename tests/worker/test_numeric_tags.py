# Unit tests of worker/numeric_tags.py: the numeric check's samples and
# outputs as tagged data, and back (see tests/worker/workertest.py).

import base64
import json
import unittest

from workertest import W, torch_or_none as _torch


@unittest.skipUnless(_torch() is not None, "no torch in this Python")
class TaggedValues(unittest.TestCase):
    """The numeric check's samples and outputs as data, and back."""

    def roundtrip(self, v):
        wire = json.loads(json.dumps(W._tag(v)))
        return wire, W._untag(wire, "cpu")

    def test_a_tensor_round_trips_with_dtype_shape_strides_and_bytes(self):
        torch = _torch()
        for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                   torch.bool, torch.complex64, torch.uint8):
            t = (torch.arange(12, dtype=torch.float64) - 5).reshape(3, 4).to(dt)
            wire, back = self.roundtrip(t)
            self.assertEqual(wire["$tensor"]["dtype"], str(dt).split(".")[1])
            self.assertEqual(wire["$tensor"]["shape"], [3, 4])
            self.assertEqual(back.dtype, dt)
            self.assertTrue(torch.equal(back, t), dt)

    def test_a_strided_view_keeps_its_strides_and_only_the_bytes_it_reads(self):
        torch = _torch()
        base = torch.arange(20, dtype=torch.float32).reshape(4, 5)
        t = base[1:, ::2]
        wire, back = self.roundtrip(t)
        self.assertEqual(wire["$tensor"]["strides"], [5, 2])
        self.assertEqual(len(base64.b64decode(wire["$tensor"]["data"])), 4 * (1 + 2 * 5 + 2 * 2))
        self.assertEqual(back.stride(), (5, 2))
        self.assertTrue(torch.equal(back, t))

    def test_expanded_empty_and_zero_dim_tensors_round_trip(self):
        torch = _torch()
        for t in (torch.tensor([1.5, -2.0]).expand(3, 2), torch.empty(0, 3),
                  torch.tensor(7, dtype=torch.int64)):
            _, back = self.roundtrip(t)
            self.assertEqual(back.shape, t.shape)
            self.assertTrue(torch.equal(back, t))

    def test_requires_grad_travels(self):
        torch = _torch()
        wire, back = self.roundtrip(torch.ones(2, requires_grad=True))
        self.assertTrue(wire["$tensor"]["requires_grad"])
        self.assertTrue(back.requires_grad and back.is_leaf)

    def test_other_arguments_round_trip(self):
        torch = _torch()
        v = {"dim": 1, "alpha": float("inf"), "dtype": torch.float16, "z": 1 + 2j,
             "s": slice(1, None, 2), "e": Ellipsis, "t": (1, [2, None]), "device": torch.device("cpu"),
             "mf": torch.contiguous_format, "name": "tanh", "big": 1 << 70}
        wire, back = self.roundtrip(v)
        self.assertEqual(wire["alpha"], {"$float": "inf"})
        self.assertEqual(back, v)

    def test_a_cpu_device_argument_follows_the_run(self):
        torch = _torch()
        self.assertEqual(W._untag({"$device": "cpu"}, "meta"), torch.device("meta"))

    def test_what_has_no_tag_is_refused(self):
        with self.assertRaises(W.Unserializable):
            W._tag(object())
        with self.assertRaises(W.Unserializable):
            W._tag({"$tensor": 1})

    def test_outputs_travel_contiguous(self):
        torch = _torch()
        t = torch.arange(6.0).reshape(2, 3).t()
        wire = W._tag(t, spanned=False)
        self.assertEqual(wire["$tensor"]["strides"], [2, 1])
        self.assertTrue(torch.equal(W._untag(wire, "cpu"), t))


if __name__ == "__main__":
    unittest.main()
