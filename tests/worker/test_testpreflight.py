# Unit tests of worker/testpreflight.py: where the modules a test file
# imports come from, whether it imports here, and aliases of a target (a test
# tree made here, no torch; see tests/worker/workertest.py).

import os
import shutil
import tempfile
import unittest

from workertest import W


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class Preflight(unittest.TestCase):
    def setUp(self):
        self.top = tempfile.mkdtemp()
        test = os.path.join(self.top, "test")
        write(os.path.join(test, "test_a.py"),
              "import os\nimport helper_mod\nfrom common_pkg import x\n"
              "import test_gone\nimport no_such_module_anywhere\n")
        write(os.path.join(test, "helper_mod.py"), "")
        write(os.path.join(test, "common_pkg", "__init__.py"), "x = 1\n")
        write(os.path.join(test, "test_ok.py"), "import os\ndef test_x():\n    pass\n")
        write(os.path.join(test, "test_broken.py"), "import os\nraise ValueError('broken')\n")

    def tearDown(self):
        shutil.rmtree(self.top)

    def preflight(self, file, **req):
        req.update({"op": "tests_preflight", "root": self.top, "file": file})
        return W.op_tests_preflight(req)["data"]

    def test_each_import_is_local_installed_or_missing(self):
        res = self.preflight("test/test_a.py")
        self.assertTrue(res["file_exists"])
        self.assertEqual(res["modules"], [
            {"module": "os", "where": "installed", "present": True},
            {"module": "helper_mod", "where": "local", "present": True},
            {"module": "common_pkg", "where": "local", "present": True},
            {"module": "test_gone", "where": "local", "present": False,
             "path": os.path.join("test", "test_gone.py")},
            {"module": "no_such_module_anywhere", "where": "installed", "present": False}])
        self.assertNotIn("import", res)

    def test_the_test_directory_itself_is_a_root_too(self):
        res = W.op_tests_preflight({"op": "tests_preflight", "file": "test/test_ok.py",
                                    "root": os.path.join(self.top, "test")})["data"]
        self.assertEqual((res["file_exists"], res["modules"]),
                         (True, [{"module": "os", "where": "installed", "present": True}]))

    def test_a_missing_file_has_no_modules(self):
        self.assertEqual(self.preflight("test/test_none.py"),
                         {"file": "test/test_none.py", "file_exists": False, "modules": []})

    def test_an_import_tried_here_says_what_the_file_defines(self):
        res = self.preflight("test/test_ok.py", try_import=True, timeout_s=30,
                             names=[[None, "test_x"]])
        self.assertTrue(res["import"]["ok"], res)
        self.assertEqual(res["import"]["defined"], [{"class": None, "test": "test_x", "classes": []}])

    def test_an_import_that_raises_is_answered_with_the_exception(self):
        res = self.preflight("test/test_broken.py", try_import=True, timeout_s=30)
        self.assertEqual((res["import"]["ok"], res["import"]["error"]),
                         (False, "ValueError: broken"))

    def test_an_import_without_its_limit_is_a_protocol_error(self):
        with self.assertRaises(W.ProtocolError):
            self.preflight("test/test_ok.py", try_import=True)

    def test_the_file_or_package_that_provides_a_module(self):
        test = os.path.join(self.top, "test")
        self.assertEqual(W._local_path(test, "helper_mod"), "helper_mod.py")
        self.assertEqual(W._local_path(test, "common_pkg"), os.path.join("common_pkg", "__init__.py"))
        os.makedirs(os.path.join(test, "ns_dir"))
        self.assertEqual(W._local_path(test, "ns_dir"), "ns_dir" + os.sep)
        self.assertIsNone(W._local_path(test, "test_gone"))


class SameObject(unittest.TestCase):
    def test_another_name_of_the_target_is_told_from_a_namesake(self):
        got = W.op_same_object({"op": "same_object", "target": "os.path.join",
                                "names": ["os.path.join", "posixpath.join", "os.path.split",
                                          "no_such_module_anywhere.join"]})
        self.assertEqual(got, {"ok": True, "data": {"same": [True, True, False, False]}})


if __name__ == "__main__":
    unittest.main()
