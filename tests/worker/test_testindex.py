# Unit tests of worker/testindex.py: what the usage index files of a test
# file (see tests/worker/workertest.py).

import ast
import unittest

from workertest import W


USES_SRC = '''
import collections
import collections as co
from collections import OrderedDict as OD


class TestUses(object):
    def test_qualified(self):
        collections.OrderedDict()

    def test_module_alias(self):
        co.OrderedDict.fromkeys([])

    def test_class_alias(self):
        OD()

    def test_bare_name(self):
        other.OrderedDict()

    def test_leaf(self, d):
        d = collections.OrderedDict()
        d.move_to_end(1)

    def test_leaf_on_a_call(self):
        collections.OrderedDict().move_to_end(1)

    def test_nothing(self):
        pass

    def helper(self):
        collections.OrderedDict()


def test_module_level():
    collections.OrderedDict()
'''


class Usage(unittest.TestCase):
    """What the usage index files of a test file (apiparity matches a class
    against it: tests/unit/test-testindex.c)."""

    def setUp(self):
        self.keys = {}
        self.rec = W._index_source(USES_SRC, "test_uses.py", 7, self.keys)
        self.lines = USES_SRC.splitlines()
        self.names = [t[1] for t in self.rec["tests"]]

    def mentions(self, key):
        return sorted((self.names[ti], d) for fid, ti, ln, d, text in self.keys.get(key, []))

    def test_dotted_names_of_attribute_chains(self):
        expr = ast.parse("a.b.c", mode="eval").body
        self.assertEqual(W._dotted(expr), "a.b.c")
        self.assertIsNone(W._dotted(ast.parse("f().x", mode="eval").body))

    def test_imports_are_recorded_with_what_they_bind(self):
        self.assertEqual(self.rec["bindings"], [["import", "co", "collections"],
                                                ["from", "OD", "collections.OrderedDict"]])
        self.assertEqual(self.rec["imports"], ["collections"])

    def test_test_functions_are_methods_and_functions_named_test(self):
        self.assertEqual(sorted(self.names), ["test_bare_name", "test_class_alias",
                                              "test_leaf", "test_leaf_on_a_call",
                                              "test_module_alias",
                                              "test_module_level", "test_nothing",
                                              "test_qualified"])
        tests = dict((t[1], t) for t in self.rec["tests"])
        self.assertEqual(tests["test_qualified"][0], "TestUses")
        self.assertIsNone(tests["test_module_level"][0])
        self.assertEqual(self.keys["t test_nothing"], [[7, self.names.index("test_nothing")]])

    def test_mentions_are_filed_under_their_last_name_and_an_import_under_what_it_binds(self):
        self.assertEqual(self.mentions("u OrderedDict"), [
            ("test_bare_name", "other.OrderedDict"), ("test_class_alias", "OD"),
            ("test_leaf", "collections.OrderedDict"),
            ("test_leaf_on_a_call", "collections.OrderedDict"),
            ("test_module_alias", "co.OrderedDict"),
            ("test_module_level", "collections.OrderedDict"),
            ("test_qualified", "collections.OrderedDict")])

    def test_a_mention_carries_its_line_and_text(self):
        (fid, ti, ln, d, text), = [u for u in self.keys["u OrderedDict"]
                                   if self.names[u[1]] == "test_qualified"]
        self.assertEqual((fid, text), (7, "collections.OrderedDict()"))
        self.assertEqual(self.lines[ln - 1].strip(), text)

    def test_the_leaf_attribute_is_filed(self):
        self.assertEqual(self.mentions("u move_to_end"), [("test_leaf", "d.move_to_end")])

    # A known gap, kept visible: an attribute of a call's result
    # (f().leaf) is no dotted name and is not filed. Filing it changes which
    # official tests rank first.
    @unittest.expectedFailure
    def test_the_leaf_attribute_of_a_call_is_filed(self):
        self.assertIn("test_leaf_on_a_call", [m[0] for m in self.mentions("u move_to_end")])

    def test_a_test_that_mentions_nothing_is_filed_nowhere(self):
        self.assertNotIn("test_nothing", [self.names[u[1]] for v in self.keys.values()
                                          if isinstance(v, list) for u in v if len(u) == 5])

    def test_a_file_that_does_not_parse_is_an_error(self):
        self.assertIn("error", W._index_source("def (:\n", "bad.py", 0, {}))


if __name__ == "__main__":
    unittest.main()
