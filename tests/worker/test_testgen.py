# Unit tests of worker/testgen.py and of the decorator part of the usage
# index (worker/testindex.py): what the index keeps of @ops/@modules
# templates, and how their decorators are evaluated with the file's facts
# (see tests/worker/workertest.py). Naming the tests themselves needs
# upstream's OpInfo, and is tested in the environments (t-testgen).

import unittest
from unittest import mock

from workertest import W


GEN_SRC = '''
from functools import partial
from torch.testing._internal.common_device_type import ops, onlyCUDA
import torch

_float_ops = partial(ops, allowed_dtypes=(torch.float32,))


def _keep(op):
    return op.supports_out


_kept = [op for op in op_db if _keep(op)]
_unused = 3


class TestGen(TestCase):
    @onlyCUDA
    @ops(op_db, allowed_dtypes=(torch.float32,))
    def test_plain(self, device, dtype, op):
        pass

    @_float_ops(_kept)
    def test_alias(self, device, dtype, op):
        pass

    @parametrize("x", [1])
    def test_not_generated(self, x):
        pass


instantiate_device_type_tests(TestGen, globals(), only_for="cpu")
'''


class DecoratorIndex(unittest.TestCase):
    def setUp(self):
        self.keys = {}
        self.rec = W._index_source(GEN_SRC, "test_gen.py", 4, self.keys)

    def test_each_generated_template_is_filed_with_its_decorator_and_devices(self):
        self.assertEqual(self.keys["D"], [
            [4, 0, 19, "ops", "ops(op_db, allowed_dtypes=(torch.float32,))", ["onlyCUDA"]],
            [4, 1, 23, "_float_ops", "_float_ops(_kept)", []]])

    def test_a_template_of_another_decorator_is_not_filed(self):
        self.assertEqual([d[1] for d in self.keys["D"]], [0, 1])
        self.assertEqual(self.rec["tests"][2][1], "test_not_generated")

    def test_the_names_a_decorator_uses_are_kept_and_theirs_in_turn(self):
        facts = self.keys["G 4"]
        self.assertEqual(sorted(facts["assigns"]), ["_float_ops", "_keep", "_kept"])
        self.assertEqual(facts["assigns"]["_keep"][2], "def")
        self.assertTrue(facts["assigns"]["_keep"][1].startswith("def _keep(op):"))
        self.assertEqual(facts["assigns"]["_kept"][1], "[op for op in op_db if _keep(op)]")

    def test_the_instantiations_are_kept(self):
        self.assertEqual(self.keys["G 4"]["instantiated"], [
            ["TestGen", 'instantiate_device_type_tests(TestGen, globals(), only_for="cpu")']])

    def test_a_file_without_templates_has_no_facts(self):
        keys = {}
        W._index_source("class T:\n    def test_a(self):\n        pass\n", "t.py", 2, keys)
        self.assertNotIn("D", keys)
        self.assertNotIn("G 2", keys)


class Evaluation(unittest.TestCase):
    FACTS = {"assigns": {"_double": [3, "_base * 2"], "_base": [2, "21"],
                         "_odd": [4, "def _odd(x):\n    return x % 2\n", "def"],
                         "_loop": [5, "_loop + 1"]},
             "bindings": [["from", "sep", "os.sep"], ["from", "tsize", "torch.Size"]]}

    def test_a_name_is_bound_from_the_files_assignment(self):
        self.assertEqual(W._gen_eval("_double + 0", {}, self.FACTS), 42)

    def test_a_function_of_the_file_is_defined_as_written(self):
        self.assertEqual(W._gen_eval("list(filter(_odd, range(5)))", {}, self.FACTS), [1, 3])

    def test_a_name_the_file_neither_assigns_nor_imports_from_torch_stays_unknown(self):
        with self.assertRaises(NameError):
            W._gen_eval("sep", {}, self.FACTS)
        with self.assertRaises(NameError):
            W._gen_eval("nowhere", {}, self.FACTS)

    def test_an_assignment_of_itself_ends(self):
        with self.assertRaises((NameError, ValueError, RecursionError)):
            W._gen_eval("_loop", {}, self.FACTS)

    def test_a_decorator_too_long_to_keep_is_no_value(self):
        with self.assertRaises(ValueError):
            W._gen_eval(None, {}, self.FACTS)


class Instantiation(unittest.TestCase):
    def facts(self, call):
        return {"instantiated": [["TestA", call]]}

    def for_device(self, call, device, cls="TestA"):
        with mock.patch.object(W, "_pu1_name", lambda: "openreg"):
            return W._gen_for_device(self.facts(call), cls, device)

    def test_only_for_cpu_leaves_a_backend_out(self):
        call = 'instantiate_device_type_tests(TestA, globals(), only_for="cpu")'
        self.assertEqual(self.for_device(call, "openreg"), call)
        self.assertIsNone(self.for_device(call, "cpu"))

    def test_privateuse1_in_only_for_admits_the_backend(self):
        call = 'instantiate_device_type_tests(TestA, globals(), only_for=("cpu", "privateuse1"))'
        self.assertIsNone(self.for_device(call, "openreg"))

    def test_except_for_leaves_the_device_out(self):
        call = 'instantiate_device_type_tests(TestA, globals(), except_for=["openreg"])'
        self.assertEqual(self.for_device(call, "openreg"), call)
        self.assertIsNone(self.for_device(call, "cpu"))

    def test_a_plain_instantiation_admits_every_device(self):
        call = "instantiate_device_type_tests(TestA, globals())"
        self.assertIsNone(self.for_device(call, "openreg"))

    def test_a_class_not_instantiated_per_device_is_said(self):
        self.assertEqual(self.for_device("instantiate_device_type_tests(TestA, globals())",
                                         "cpu", cls="TestB"),
                         "TestB is not instantiated per device in its file")

    def test_arguments_that_are_no_literals_are_taken_to_admit(self):
        call = "instantiate_device_type_tests(TestA, globals(), only_for=DEVICES)"
        self.assertIsNone(self.for_device(call, "openreg"))


if __name__ == "__main__":
    unittest.main()
