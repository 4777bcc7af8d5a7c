# Unit tests of worker/numeric_samples.py: OpInfo names, and nn modules as
# samples (see tests/worker/workertest.py).

import json
import types
import unittest

from workertest import W, has_torch as _has_torch


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


if __name__ == "__main__":
    unittest.main()
