# Unit tests of worker/numeric_adapter.py: what apiparity adapts in a
# backend's runner (see tests/worker/workertest.py). The runner's side (the
# adapter asked for, applied in the runner only) is test_numeric_run's
# Resident; here, the driver's lock itself, on a stand-in for
# pytorch_openreg's Driver: what the lock does to it is the point.

import threading
import types
import unittest

from workertest import W


class Driver:
    """An exchange with a daemon that the first of two threads to enter
    holds until the second enters or a second passes."""
    busy, overlapped, peer = 0, False, None

    def run_on_executor(self, device, cmd):
        if cmd == "nest":
            return self.run_on_executor(device, "inner")
        if cmd == "inner":
            return "nested"
        cls = type(self)
        cls.busy += 1
        if cls.busy > 1:
            cls.overlapped = True
            cls.peer.set()
        else:
            cls.peer.wait(1)
        cls.busy -= 1
        return cmd


def two_threads(driver):
    """Whether two threads' exchanges overlapped."""
    driver.peer = threading.Event()
    d = driver()
    both = [threading.Thread(target=d.run_on_executor, args=(0, "x")) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    return driver.overlapped


def within(fn, limit=10):
    """fn's answer, from a thread given limit seconds: a lock that is not
    re-entrant deadlocks a nested call, and a test must fail, not hang."""
    got = []
    t = threading.Thread(target=lambda: got.append(fn()), daemon=True)
    t.start()
    t.join(limit)
    return got[0] if got else "still waiting after %d s" % limit


class SerializeDriver(unittest.TestCase):
    def tearDown(self):
        W._driver_serialized[0] = False

    def test_upstreams_driver_lets_two_threads_in_at_once(self):
        class Upstream(Driver):
            pass
        self.assertTrue(two_threads(Upstream))

    def test_the_serialized_driver_takes_one_exchange_at_a_time(self):
        class Adapted(Driver):
            pass
        W._serialize_driver(types.SimpleNamespace(Driver=Adapted))
        self.assertFalse(two_threads(Adapted))
        self.assertEqual(within(lambda: Adapted().run_on_executor(0, "nest")), "nested")  # re-entrant
        self.assertEqual(Adapted().run_on_executor(0, "y"), "y")  # the answer passed on
        self.assertTrue(W._driver_serialized[0])

    def test_a_module_without_the_driver_is_left_as_it_is(self):
        W._serialize_driver(types.SimpleNamespace())
        self.assertFalse(W._driver_serialized[0])


if __name__ == "__main__":
    unittest.main()
