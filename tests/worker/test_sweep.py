# Unit tests of worker/sweep.py: the pure parts of a sweep's walk (see
# tests/worker/workertest.py).

import os
import sys
import types
import unittest

from workertest import W

# The rules apiparity sends today (src/check/surface.c); the worker applies
# whatever it is sent.
RULES = {"private": ["_"], "own": ["torch"], "skip_metatypes": ["tensortype"],
         "skip_bases": ["torch.Tensor"],
         "foreign_types": ["typing", "typing_extensions", "__future__"]}


class Sweep(unittest.TestCase):
    """The pure parts of a sweep's walk: names, keys, members, lines."""

    def test_public_names_sorted_without_underscores(self):
        self.assertEqual(W._sweep_public(["b", "_x", "a", "__init__", 3], RULES), ["a", "b"])

    def test_the_rules_sent_are_the_rules_applied(self):
        rules = dict(RULES, private=["x"])
        self.assertEqual(W._sweep_public(["b", "_x", "xa", "a"], rules), ["_x", "a", "b"])
        self.assertTrue(W._sweep_foreign(os.path.join, RULES))
        self.assertFalse(W._sweep_foreign(os.path.join, dict(RULES, own=["torch", "posixpath"])))

        class Meta(type):
            pass
        K = Meta("K", (), {})
        self.assertFalse(W._sweep_unwalked(K, RULES))
        self.assertTrue(W._sweep_unwalked(K, dict(RULES, skip_metatypes=["Meta"])))
        self.assertTrue(W._sweep_unwalked(K, dict(RULES, skip_bases=["builtins.object"])))

    def test_a_member_is_keyed_by_its_class_name(self):
        self.assertEqual(W._sweep_key("torch.autograd.grad_mode.set_multithreading_enabled", "clone"),
                         "set_multithreading_enabled.clone")
        self.assertEqual(W._sweep_key("torch.Tensor", "abs"), "Tensor.abs")

    def test_own_members_include_private_bases_not_public_ones(self):
        class _Base:
            def hidden_base(self):
                pass

        class Public:
            def public_base(self):
                pass

        class C(_Base, Public):
            def own(self):
                pass
        names = W._sweep_public(W._sweep_own(C, RULES), RULES)
        self.assertEqual(names, ["hidden_base", "own"])

    def test_class_lines_come_from_one_parse_of_the_file(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write("x = 1\n\nclass A:\n    class B:\n        pass\n")
        try:
            self.assertEqual(W._class_line(f.name, "A"), 3)
            self.assertEqual(W._class_line(f.name, "A.B"), 4)
            self.assertIsNone(W._class_line(f.name, "C"))
        finally:
            os.unlink(f.name)

    def test_a_module_walk_leaves_out_foreign_imports_and_walks_its_classes(self):
        mod = types.ModuleType("torch.fake_sweep")
        exec("import os\nfrom typing import Any\nclass K:\n    def m(self): pass\n"
             "def f(a, b=1): pass\nK.__module__ = 'torch.fake_sweep'\n"
             "f.__module__ = 'torch.fake_sweep'\n", mod.__dict__)
        sys.modules["torch.fake_sweep"] = mod
        try:
            got = [(api, key, owner) for api, key, owner, _, _, _ in
                   W._sweep_members("torch.fake_sweep", "module", set(), RULES)]
        finally:
            del sys.modules["torch.fake_sweep"]
        self.assertEqual(got, [("torch.fake_sweep.K", "torch.fake_sweep.K", None),
                               ("torch.fake_sweep.f", "torch.fake_sweep.f", None),
                               ("torch.fake_sweep.K.m", "K.m", "torch.fake_sweep.K")])

    def test_each_api_once_however_many_entries_reach_it(self):
        # A package that re-exports a class of its submodule (as torch.autograd
        # does torch.autograd.function.Function), and a class with an entry of
        # its own (as torch.nn.Module): each is walked once, where it lives.
        pkg = types.ModuleType("torch.fake_dup")
        sub = types.ModuleType("torch.fake_dup.sub")
        exec("class Fn:\n    def go(self): pass\nFn.__module__ = 'torch.fake_dup.sub'\n",
             sub.__dict__)
        exec("class Cls:\n    def run(self): pass\nCls.__module__ = 'torch.fake_dup'\n",
             pkg.__dict__)
        pkg.sub, pkg.Fn = sub, sub.Fn
        catalog = {"torch.fake_dup": "module", "torch.fake_dup.sub": "module",
                   "torch.fake_dup.Cls": "class"}
        sys.modules.update({"torch.fake_dup": pkg, "torch.fake_dup.sub": sub})
        got = []
        try:
            for entry, walk in sorted(catalog.items()):
                exclude = set(n for n in catalog if n.startswith(entry + "."))
                got += [(api, key, entry) for api, key, _, _, _, _ in
                        W._sweep_members(entry, walk, exclude, RULES)]
        finally:
            del sys.modules["torch.fake_dup"], sys.modules["torch.fake_dup.sub"]
        self.assertEqual(sorted(got), [
            ("torch.fake_dup.Cls", "torch.fake_dup.Cls", "torch.fake_dup.Cls"),
            ("torch.fake_dup.Cls.run", "Cls.run", "torch.fake_dup.Cls"),
            ("torch.fake_dup.Fn", "torch.fake_dup.Fn", "torch.fake_dup"),
            ("torch.fake_dup.sub.Fn", "torch.fake_dup.sub.Fn", "torch.fake_dup.sub"),
            ("torch.fake_dup.sub.Fn.go", "Fn.go", "torch.fake_dup.sub")])
        # with each module entry's own line (apiparity adds it), no api twice
        apis = [g[0] for g in got] + [e for e, w in catalog.items() if w == "module"]
        self.assertEqual(len(apis), len(set(apis)), apis)


class Reaches(unittest.TestCase):
    """What getattr reaches that the walk lists no line for, and the names
    the walk itself sees: __all__, a PropModule's, typing aliases left out."""

    def _module(self, name, code):
        mod = types.ModuleType(name)
        exec(code, mod.__dict__)
        sys.modules[name] = mod
        self.addCleanup(sys.modules.pop, name, None)
        return mod

    def test_a_propmodules_descriptors_and_wrapped_names_are_walked(self):
        real = self._module("torch.fake_prop", "def is_available(): return True\n"
                            "is_available.__module__ = 'torch.fake_prop'\n")

        class Prop:
            def __get__(self, obj, objtype=None):
                return True

        class PropModule(types.ModuleType):
            def __init__(self, m, name):
                super().__init__(name)
                self.m = m

            def __getattr__(self, attr):
                return getattr(self.m, attr)

        class FakeModule(PropModule):
            allow_tf32 = Prop()
        sys.modules["torch.fake_prop"] = FakeModule(real, "torch.fake_prop")
        got = [api for api, *_ in W._sweep_members("torch.fake_prop", "module", set(), RULES)]
        self.assertIn("torch.fake_prop.allow_tf32", got)
        self.assertIn("torch.fake_prop.is_available", got)

    def test_all_serves_lazy_names_and_names_it_lacks_are_skipped(self):
        self._module("torch.fake_lazy", "__all__ = ['lazy', 'missing']\n"
                     "def __getattr__(n):\n    if n == 'lazy': return 3\n"
                     "    raise AttributeError(n)\n")
        walked = {}
        got = [api for api, *_ in W._sweep_members("torch.fake_lazy", "module", set(), RULES,
                                                   walked)]
        self.assertEqual(got, ["torch.fake_lazy.lazy"])
        mod, listed = walked["torch.fake_lazy"]
        # 'missing' is reached nowhere; the module serves names no listing shows
        self.assertEqual(W._sweep_reaches(mod, listed, RULES), ["__getattr__"])

    def test_typing_aliases_typevars_and_future_features_are_no_api(self):
        self._module("torch.fake_typing", "from __future__ import annotations\n"
                     "from typing import Optional, TypeVar\nT = TypeVar('T')\nN = 3\n")
        got = [api for api, *_ in W._sweep_members("torch.fake_typing", "module", set(), RULES)]
        self.assertEqual(got, ["torch.fake_typing.N"])

    def test_reaches_holds_inherited_private_and_own_dunders_not_bookkeeping(self):
        mod = self._module("torch.fake_reach", "import os\n_hidden = 1\nN = 2\n")

        class Base:
            def zero_grad(self):
                pass

        class C(Base):
            def __init__(self):
                self.data = 1

            def step(self):
                pass

            def _private(self):
                pass
        self.assertEqual(W._sweep_reaches(C, {"step"}, RULES), ["__init__", "zero_grad"])
        self.assertEqual(W._sweep_reaches(mod, {"N"}, RULES), ["_hidden", "os"])

    def test_on_self_is_what_the_source_assigns_and_the_class_does_not_reach(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write("class A:\n    kept = 1\n    def __init__(self):\n"
                    "        self.data = 1\n        self.kept = 2\n        self.n: int = 0\n"
                    "        self.n += 1\n        other.x = 3\n        if self.flag == 1:\n"
                    "            pass\n")
        self.addCleanup(os.unlink, f.name)
        with open(f.name) as src:
            mod = self._module("torch.fake_self", src.read())
        mod.__file__ = f.name
        mod.A.__module__ = "torch.fake_self"
        self.assertEqual(W._sweep_on_self(mod.A, set(dir(mod.A)), RULES), ["data", "n"])

    def test_a_missing_module_or_class_is_absent_a_missing_package_is_not(self):
        def err(name):
            e = ModuleNotFoundError("No module named %r" % name)
            e.name = name
            return e
        self.assertTrue(W._sweep_absent("torch.export", err("torch.export")))
        self.assertTrue(W._sweep_absent("torch.distributed.tensor.parallel",
                                        err("torch.distributed.tensor")))
        self.assertFalse(W._sweep_absent("torch.utils.tensorboard", err("tensorboard")))
        self.assertFalse(W._sweep_absent("torch.export", ImportError("cannot import name x")))
        self.assertTrue(W._sweep_absent("torch.Gone", W._SweepMissing("torch has no Gone")))

    def test_a_class_from_a_private_module_is_walked_with_its_private_module_bases(self):
        priv = self._module("torch._C._fake", "class StoreBase:\n    def get(self): pass\n"
                            "class Bucket(StoreBase):\n    def index(self): pass\n"
                            "StoreBase.__module__ = Bucket.__module__ = 'torch._C._fake'\n")
        self._module("torch.fake_dist", "")
        sys.modules["torch.fake_dist"].Bucket = priv.Bucket
        got = [api for api, *_ in W._sweep_members("torch.fake_dist", "module", set(), RULES)]
        self.assertEqual(got, ["torch.fake_dist.Bucket", "torch.fake_dist.Bucket.get",
                               "torch.fake_dist.Bucket.index"])


if __name__ == "__main__":
    unittest.main()
