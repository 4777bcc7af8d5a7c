# Unit tests of worker/numeric_adapter.py: what apiparity adapts in a
# backend's runner (see tests/worker/workertest.py). The runner's side (the
# adapter asked for, applied in the runner only) is test_numeric_run's
# Resident; here, the driver's lock itself, on a stand-in for
# pytorch_openreg's Driver: what the lock does to it is the point.

import types
import unittest

from workertest import Driver, W, driver_calls


class SerializeDriver(unittest.TestCase):
    def tearDown(self):
        W._driver_serialized[0] = False

    def test_upstreams_driver_lets_two_threads_in_at_once(self):
        class Upstream(Driver):
            pass
        self.assertTrue(driver_calls(Upstream)["overlapped"])

    def test_the_serialized_driver_takes_one_exchange_at_a_time(self):
        class Adapted(Driver):
            pass
        W._serialize_driver(types.SimpleNamespace(Driver=Adapted))
        self.assertEqual(driver_calls(Adapted), {"overlapped": False, "nested": "nested"})
        self.assertEqual(Adapted().run_on_executor(0, "y"), "y")  # the answer passed on
        self.assertTrue(W._driver_serialized[0])

    def test_a_module_without_the_driver_is_left_as_it_is(self):
        W._serialize_driver(types.SimpleNamespace())
        self.assertFalse(W._driver_serialized[0])


if __name__ == "__main__":
    unittest.main()
