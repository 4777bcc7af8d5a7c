# Unit tests of worker/resolve.py: a callable's signature as data (see
# tests/worker/workertest.py).

import os
import types
import unittest

from workertest import W, has_torch as _has_torch


class Signatures(unittest.TestCase):
    """A callable's signature as data (see "signatures" in the worker)."""

    def data(self, obj, kind="function", name="f"):
        return W._signature_data(obj, kind, name, None)

    def test_parameters_carry_name_kind_default_and_annotation(self):
        def f(a, /, b: int = 2, *args, c=None, d, **kw) -> str:
            pass
        d = self.data(f)
        self.assertEqual((d["callable"], d["source"], d["why"]), (True, "inspect", None))
        (o,) = d["overloads"]
        self.assertEqual(o["text"], "f(a, /, b: int = 2, *args, c=None, d, **kw) -> str")
        self.assertEqual(o["returns"], "str")
        self.assertEqual([(p["name"], p["kind"]) for p in o["params"]],
                         [("a", "positional-only"), ("b", "positional-or-keyword"),
                          ("args", "var-positional"), ("c", "keyword-only"), ("d", "keyword-only"),
                          ("kw", "var-keyword")])
        self.assertEqual(o["params"][1], {"name": "b", "kind": "positional-or-keyword",
                                          "annotation": "int", "default": 2})

    def test_no_default_and_a_none_default_are_told_apart(self):
        def f(a, b=None):
            pass
        a, b = self.data(f)["overloads"][0]["params"]
        self.assertFalse("default" in a or "default_repr" in a)
        self.assertEqual(b["default"], None)
        self.assertIn("default", b)

    def test_defaults_json_cannot_hold_are_tagged_values(self):
        def f(a=float("nan"), b=1 << 70, c="x\x00y", d=(1, 2.5)):
            pass
        ps = self.data(f)["overloads"][0]["params"]
        self.assertEqual([p["default"] for p in ps],
                         [{"$float": "nan"}, {"$int": str(1 << 70)}, {"$bytes": "eAB5"}, [1, 2.5]])

    def test_other_defaults_are_their_repr_with_addresses_masked(self):
        marker = object()

        def f(a=marker, b=int):
            pass
        ps = self.data(f)["overloads"][0]["params"]
        self.assertEqual([p.get("default_repr") for p in ps], ["<object object at 0x?>", "<class 'int'>"])
        self.assertNotIn("default", ps[0])

    def test_a_class_has_its_constructors_signature(self):
        class K(object):
            def __init__(self, x, y=3):
                pass
        o = self.data(K, "class", "K")["overloads"][0]
        self.assertEqual(o["text"], "K(x, y=3)")

    def test_what_is_not_callable_has_no_signature_and_says_why(self):
        d = self.data(os, "module", "os")
        self.assertEqual((d["callable"], d["source"], d["overloads"]), (False, None, []))
        self.assertEqual(d["why"], "not callable (module)")

    def test_the_docstring_is_the_last_resort(self):
        class Opaque(object):
            __signature__ = "not a signature"  # inspect.signature raises TypeError
            __doc__ = "opaque(input, other, *, alpha=1, out=None) -> Tensor\n\nMore."

            def __call__(self):
                pass
        d = W._signature_data(Opaque(), "callable", "opaque", types.SimpleNamespace(_C=None))
        self.assertEqual(d["source"], "docstring")
        (o,) = d["overloads"]
        self.assertEqual((o["text"], o["returns"]), ("opaque(input, other, *, alpha=1, out=None) -> Tensor",
                                                     "Tensor"))
        self.assertEqual([(p["name"], p["kind"], p.get("default", "-")) for p in o["params"]],
                         [("input", "positional-or-keyword", "-"), ("other", "positional-or-keyword", "-"),
                          ("alpha", "keyword-only", 1), ("out", "keyword-only", None)])

    def test_a_docstring_signature_that_does_not_parse_keeps_its_text(self):
        o = W._doc_overload("zeros(*size, *, out=None, layout=torch.strided) -> Tensor")
        self.assertEqual((o["text"], o["params"]), ("zeros(*size, *, out=None, layout=torch.strided) -> Tensor",
                                                    None))
        o = W._doc_overload("full(size, fill_value, *, layout=torch.strided)")
        self.assertEqual(o["params"][2], {"name": "layout", "kind": "keyword-only", "annotation": None,
                                          "default_repr": "torch.strided"})

    def test_no_signature_anywhere_says_why(self):
        class Opaque(object):
            __signature__ = "not a signature"
            __doc__ = "Returns something."

            def __call__(self):
                pass
        d = W._signature_data(Opaque(), "callable", "opaque", types.SimpleNamespace(_C=None))
        self.assertEqual((d["source"], d["overloads"]), (None, []))
        self.assertIn("no Python signature, no aten operator schema for opaque", d["why"])

    @unittest.skipUnless(_has_torch(), "needs torch")
    def test_a_builtin_operator_has_its_aten_schemas(self):
        import torch
        d = W._signature_data(torch.Tensor.index_add_, "builtin-method", "index_add_", torch)
        self.assertEqual((d["source"], d["op"]), ("schema", "aten::index_add_"))
        alpha = d["overloads"][0]["params"][-1]
        self.assertEqual((alpha["name"], alpha["kind"], alpha["default"]), ("alpha", "keyword-only", 1))
        d = W._signature_data(torch.add, "builtin", "add", torch)
        self.assertIn("Tensor", [o["name"] for o in d["overloads"]])


if __name__ == "__main__":
    unittest.main()
