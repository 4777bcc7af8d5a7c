# Unit tests of worker/numeric_samples.py: OpInfo names, and nn modules as
# samples (see tests/worker/workertest.py).

import json
import types
import unittest

from workertest import W, has_torch as _has_torch, torch_or_none as _torch


class Modules(unittest.TestCase):
    """nn modules as samples: the module's state made once and shipped."""

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_a_module_runs_with_the_shipped_state_wherever_it_is_built(self):
        import torch
        inp = types.SimpleNamespace(
            constructor_input=types.SimpleNamespace(args=(3, 2), kwargs={}),
            forward_input=types.SimpleNamespace(args=(torch.ones(4, 3, dtype=torch.float64,
                                                                 requires_grad=True),),
                                                kwargs={}), desc="")
        s = W._module_sample(torch.nn.Linear, inp, torch.float64, 7)
        self.assertEqual(s["input"], None)
        self.assertEqual(sorted(s["module"]["state"]), ["bias", "weight"])
        self.assertEqual(s["module"]["state"]["weight"]["$tensor"]["dtype"], "float64")
        s = json.loads(json.dumps(s))  # as it travels
        torch.manual_seed(99)  # another seed here: the state is the reference's
        part = W._run_side(torch.nn.Linear, s, "cpu", False, True)
        self.assertEqual(part["status"], "ok")
        self.assertEqual((len(part["outputs"]), len(part["grads"])), (1, 3))
        torch.manual_seed(7)
        want = torch.nn.Linear(3, 2).to(torch.float64)(torch.ones(4, 3, dtype=torch.float64))
        got = W._untag(part["outputs"][0], "cpu")
        self.assertTrue(torch.equal(got, want.detach()))
        # the weight's gradient: grad_output summed over the batch, times ones
        gw = W._untag(part["grads"][1], "cpu")
        self.assertEqual(tuple(gw.shape), (2, 3))

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_an_nn_module_class_is_told_from_a_function_and_a_tensor_class(self):
        import torch
        self.assertTrue(W._is_module_class(torch.nn.Linear))
        self.assertFalse(W._is_module_class(torch.nn.functional.linear))
        self.assertFalse(W._is_module_class(torch.Tensor))


class Entries(unittest.TestCase):
    def test_opinfo_names_of_targets(self):
        self.assertEqual(W._target_name("torch.nn.functional.relu"), "nn.functional.relu")
        self.assertEqual(W._target_name("torch.Tensor.index_add_"), "index_add")
        self.assertEqual(W._target_name("torch.Tensor.__add__"), "__add__")


def _has_opinfo():
    """Whether OpInfo's database imports here (it needs expecttest)."""
    try:
        W._op_db()
        return True
    except Exception:
        return False


@unittest.skipUnless(_torch() is not None, "no torch in this Python")
class Forms(unittest.TestCase):
    def test_a_noncontiguous_copy_keeps_the_values_and_loses_the_layout(self):
        torch = _torch()

        class S(object):
            input = torch.arange(6.0).reshape(2, 3).requires_grad_()
            args = (torch.tensor(2.0), [torch.ones(3)])
            kwargs = {"alpha": 2}
        tagged = W._noncontiguous(S)
        x = W._untag(tagged["input"], "cpu")
        self.assertFalse(x.is_contiguous())
        self.assertEqual(x.stride(), (6, 2))
        self.assertTrue(x.requires_grad)
        self.assertTrue(torch.equal(x.detach(), S.input.detach()))
        scalar, (vec,) = W._untag(tagged["args"], "cpu")
        self.assertEqual(scalar.stride(), ())  # a 0-d tensor has no layout to lose
        self.assertFalse(vec.is_contiguous())
        self.assertEqual(W._untag(tagged["kwargs"], "cpu"), {"alpha": 2})

    def test_no_grad_strips_requires_grad_everywhere(self):
        t = {"$tensor": {"dtype": "float32", "requires_grad": True}}
        self.assertEqual(W._no_grad({"input": t, "args": {"$tuple": [t, 1]}}),
                         {"input": {"$tensor": {"dtype": "float32", "requires_grad": False}},
                          "args": {"$tuple": [{"$tensor": {"dtype": "float32",
                                                            "requires_grad": False}}, 1]}})

    @unittest.skipUnless(_has_opinfo(), "no OpInfo database in this Python")
    def test_abs_comes_in_each_form_its_opinfo_names(self):
        r = W.op_samples({"target": "torch.abs", "dtypes": ["float32", "bool"],
                          "max_samples": 1, "seed": 0})["data"]
        first = [s for s in r["samples"] if s["kind"] == "sample" and s["dtype"] == "float32"]
        self.assertEqual([(s.get("form"), s.get("call"), s["inplace"]) for s in first],
                         [(None, None, False), ("method", "torch.Tensor.abs", False),
                          ("inplace", "torch.Tensor.abs_", True), ("out", "torch.abs", False),
                          ("noncontiguous", None, False)])
        out = [s for s in first if s.get("form") == "out"][0]
        self.assertFalse(out["grad"])
        self.assertNotIn('"requires_grad": true', json.dumps(out["sample"]))
        # bool: not claimed on CPU, so one sample asks who accepts it
        self.assertEqual([(s["kind"], s["grad"]) for s in r["samples"] if s["dtype"] == "bool"],
                         [("dtype", False)])

    @unittest.skipUnless(_has_opinfo(), "no OpInfo database in this Python")
    def test_past_the_limit_the_first_broadcasting_sample_is_kept(self):
        r = W.op_samples({"target": "torch.add", "dtypes": ["float32"], "max_samples": 1,
                          "seed": 0})["data"]
        kept = [s for s in r["samples"] if s["kind"] == "sample" and "form" not in s]
        self.assertGreater(len(kept), 1)
        shapes = [(s["sample"]["input"]["$tensor"]["shape"],
                   s["sample"]["args"]["$tuple"][0].get("$tensor", {}).get("shape"))
                  for s in kept]
        self.assertTrue(any(a != b and b is not None for a, b in shapes), shapes)


if __name__ == "__main__":
    unittest.main()
