# Unit tests of worker/fingerprint.py: what torch and its devices are made
# of, learned from a stand-in torch (no torch needed; see
# tests/worker/workertest.py).

import types
import unittest

from workertest import W

NS = types.SimpleNamespace


def fake_torch(**attrs):
    """A torch as fingerprint.py reads it: a version, a _C, and attrs."""
    t = NS(version=NS(git_version="abc123", debug=False, cuda=None, hip=None),
           _C=NS(_GLIBCXX_USE_CXX11_ABI=1))
    t.__version__ = "2.6.0+debian"
    t.__file__ = "torch/__init__.py"
    for k, v in attrs.items():
        setattr(t, k, v)
    return t


def cuda(available=True, count=2, built=True):
    return NS(is_available=lambda: available, device_count=lambda: count,
              get_device_name=lambda i: "GPU %d" % i), NS(cuda=NS(is_built=lambda: built))


class TorchInfo(unittest.TestCase):
    def test_torch_s_version_is_kept_exactly_with_its_local_part(self):
        info = W._torch_info(fake_torch())
        self.assertEqual(info["version"], "2.6.0+debian")
        self.assertEqual((info["git_version"], info["debug"], info["cuda"]), ("abc123", False, None))
        self.assertIs(info["cxx11_abi"], True)

    def test_a_torch_that_does_not_say_its_abi_has_none(self):
        t = fake_torch()
        t._C = NS()
        self.assertNotIn("cxx11_abi", W._torch_info(t))


class Devices(unittest.TestCase):
    def test_a_backend_torch_has_no_module_for_is_not_available(self):
        d = W._device_info(fake_torch(), "cuda")
        self.assertEqual((d["available"], d["count"], d["reason"]),
                         (False, 0, "no torch.cuda module"))

    def test_a_backend_torch_was_built_without_is_not_available(self):
        mod, backends = cuda(built=False)
        d = W._device_info(fake_torch(cuda=mod, backends=backends), "cuda")
        self.assertEqual((d["available"], d["reason"]), (False, "torch built without cuda"))

    def test_an_available_backend_has_its_count_and_names(self):
        mod, backends = cuda()
        d = W._device_info(fake_torch(cuda=mod, backends=backends), "cuda")
        self.assertEqual(d, {"type": "cuda", "count": 2, "names": ["GPU 0", "GPU 1"],
                             "available": True})

    def test_an_unavailable_backend_says_so(self):
        mod, backends = cuda(available=False, count=0)
        d = W._device_info(fake_torch(cuda=mod, backends=backends), "cuda")
        self.assertEqual((d["available"], d["reason"]),
                         (False, "torch.cuda.is_available() is False"))

    def test_a_privateuse1_backend_without_the_usual_api_is_counted_by_allocating(self):
        def empty(n, device):
            if int(device.split(":")[1]) >= 2:
                raise RuntimeError("no device %s" % device)
        t = fake_torch(openreg=NS(), empty=empty)
        t._C._get_privateuse1_backend_name = lambda: "openreg"
        d = W._device_info(t, "openreg")
        self.assertEqual((d["available"], d["count"], d["names"]), (True, 2, ["unknown", "unknown"]))
        self.assertEqual(d["notes"], [
            "torch.openreg has no is_available, device_count, get_device_name",
            "this torch has no torch.accelerator",
            "count from tensors allocated on openreg:0 to openreg:1", "model: unknown"])

    def test_only_a_backend_torch_was_built_for_is_asked_away(self):
        t = fake_torch()
        self.assertFalse(W._may_init_driver(t, "cuda"))
        mod, backends = cuda(built=False)
        self.assertFalse(W._may_init_driver(fake_torch(cuda=mod, backends=backends), "cuda"))
        mod, backends = cuda()
        self.assertTrue(W._may_init_driver(fake_torch(cuda=mod, backends=backends), "cuda"))
        t = fake_torch(openreg=NS())
        t._C._get_privateuse1_backend_name = lambda: "openreg"
        self.assertTrue(W._may_init_driver(t, "openreg"))


if __name__ == "__main__":
    unittest.main()
