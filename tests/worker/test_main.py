# Unit tests of worker/main.py: importing the program runs no loop, the
# table of operations, and what a spawned interpreter would re-run (see
# tests/worker/workertest.py for how the worker is loaded).

import importlib.util
import sys
import types
import unittest

from workertest import W


class Import(unittest.TestCase):
    def test_importing_does_not_run_the_main_loop(self):
        self.assertNotEqual(W.__name__, "__main__")
        self.assertTrue(callable(W.main))
        self.assertIn("probe", W.OPS)


class Operations(unittest.TestCase):
    """OPS, the table of what a request's "op" runs (tests/worker/list-ops
    prints its names from worker/main.py)."""

    def test_each_op_runs_the_function_named_after_it(self):
        for name, fn in W.OPS.items():
            self.assertEqual(fn.__name__, "op_" + name)

    def test_every_op_function_of_the_worker_is_in_the_table(self):
        defined = set(n[len("op_"):] for n, v in vars(W).items()
                      if n.startswith("op_") and callable(v))
        self.assertEqual(set(W.OPS), defined)


class SpawnMain(unittest.TestCase):
    """What multiprocessing's spawn method would re-run in a new interpreter
    (a backend's device daemon) once the worker has started."""

    def _preparation(self, main):
        from multiprocessing import spawn
        saved = sys.modules["__main__"]
        sys.modules["__main__"] = main
        try:
            W._no_main_to_rerun()
            return spawn.get_preparation_data("daemon")
        finally:
            sys.modules["__main__"] = saved

    def test_a_main_read_from_stdin_is_not_rerun(self):
        main = types.ModuleType("__main__")
        main.__file__ = "<stdin>"
        data = self._preparation(main)
        self.assertNotIn("init_main_from_path", data)
        self.assertNotIn("init_main_from_name", data)

    def test_a_main_with_a_module_spec_is_not_rerun(self):
        main = types.ModuleType("__main__")
        main.__spec__ = importlib.util.spec_from_loader("apiparity_worker", loader=None)
        data = self._preparation(main)
        self.assertNotIn("init_main_from_name", data)


if __name__ == "__main__":
    unittest.main()
