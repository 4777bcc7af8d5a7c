# Unit tests of worker/cases.py: a traced call's arguments made again from
# their description (see tests/worker/workertest.py).

import json
import unittest

from workertest import W, has_torch as _has_torch


def _desc(dtype, shape, strides=None, **kw):
    d = {"dtype": dtype, "shape": shape, "device": "cpu", "requires_grad": False}
    if strides is not None:
        d["strides"] = strides
    d.update(kw)
    return {"$desc": d}


class Made(unittest.TestCase):
    """Each tensor as its description says: dtype, shape, layout, range."""

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_a_tensor_has_the_dtype_shape_and_range_described(self):
        t = W._made(_desc("float32", [2, 3, 4], [12, 4, 1], min=-2.5, max=7.0))
        self.assertEqual((str(t.dtype), tuple(t.shape)), ("torch.float32", (2, 3, 4)))
        self.assertGreaterEqual(t.min().item(), -2.5)
        self.assertLessEqual(t.max().item(), 7.0)
        self.assertGreater(t.max().item() - t.min().item(), 1.0)  # spread, not a constant
        i = W._made(_desc("int64", [50], [1], min=3, max=5))
        self.assertEqual(sorted(set(i.tolist())), [3, 4, 5])

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_a_noncontiguous_layout_is_kept(self):
        # channels_last: the program's strides, not contiguous ones
        t = W._made(_desc("float32", [2, 3, 4, 5], [60, 1, 15, 3]))
        self.assertEqual(list(t.stride()), [60, 1, 15, 3])
        self.assertFalse(t.is_contiguous())

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_kept_values_are_the_values(self):
        t = W._made(_desc("int64", [2, 2], [2, 1], values=[1, 0, 7, 3]))
        self.assertEqual(t.tolist(), [[1, 0], [7, 3]])

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_requires_grad_only_where_described_and_possible(self):
        self.assertTrue(W._made(_desc("float32", [2], [1], requires_grad=True)).requires_grad)
        self.assertFalse(W._made(_desc("int64", [2], [1], requires_grad=True)).requires_grad)

    def test_an_opaque_value_cannot_be_made(self):
        with self.assertRaises(W.Unserializable):
            W._made([1, {"$opaque": "Generator"}])

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_tuples_and_tags_are_made_as_they_were(self):
        v = W._made({"$tuple": [1, {"$dtype": "float64"}, [2, {"$float": "inf"}]]})
        import torch
        self.assertEqual(v, (1, torch.float64, [2, float("inf")]))


class CaseSamples(unittest.TestCase):
    """op_case_samples: a sample of kind case per case, in the shape op_run
    runs, the same bytes for the same seed."""

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_cases_become_samples_and_what_cannot_be_made_is_skipped(self):
        cases = [{"id": 4, "count": 3, "args": [_desc("float32", [2, 3], [3, 1], requires_grad=True)],
                  "kwargs": {"inplace": True}},
                 {"id": 5, "count": 1, "args": [{"$opaque": "Stream"}], "kwargs": {}}]
        req = {"target": "torch.nn.functional.relu", "cases": cases, "seed": 0}
        a = W.op_case_samples(json.loads(json.dumps(req)))["data"]
        self.assertEqual(len(a["samples"]), 1)
        s = a["samples"][0]
        self.assertEqual((s["kind"], s["index"], s["count"], s["dtype"], s["grad"], s["inplace"]),
                         ("case", 4, 3, "float32", True, True))
        self.assertEqual(s["sample"]["input"]["$tensor"]["shape"], [2, 3])
        self.assertEqual([x["index"] for x in a["skipped"]], [5])
        b = W.op_case_samples(json.loads(json.dumps(req)))["data"]
        self.assertEqual(b["samples"][0]["sample"], s["sample"])  # seeded: the same bytes

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_a_case_runs_as_a_sample_on_the_cpu(self):
        cases = [{"id": 0, "count": 1, "args": [_desc("float32", [4], [1], min=-1.0, max=1.0), 2.0],
                  "kwargs": {}}]
        s = W.op_case_samples({"target": "torch.mul", "cases": cases, "seed": 1})["data"]["samples"][0]
        import torch
        part = W._run_side(torch.mul, json.loads(json.dumps(s["sample"])), "cpu", False, False)
        x = W._untag(s["sample"]["input"], "cpu")
        self.assertTrue(torch.equal(W._untag(part["outputs"][0], "cpu"), x * 2.0))


if __name__ == "__main__":
    unittest.main()
