# tests/integration/worker-tests.sh - sourced by t-worker and
# t-worker-envs: the program that runs the worker's unit tests in a Python,
# and their sources as one JSON document on its stdin ($T/sources.json).

# Loads the worker, the program the binary embeds (its modules joined by the
# build), as the module apiparity_worker, then the tests' helpers
# (workertest), then every test file, and runs them all verbosely; fails when
# no test ran.
boot='import json, sys, types, unittest
src = json.load(sys.stdin)
def load(name, text):
    m = types.ModuleType(name)
    m.__file__ = name + ".py"
    sys.modules[name] = m
    exec(compile(text, name + ".py", "exec"), m.__dict__)
    return m
load("apiparity_worker", src["worker"])
load("workertest", src["workertest"])
suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromModule(load(n, t))
                           for n, t in sorted(src["tests"].items()))
r = unittest.TextTestRunner(verbosity=2).run(suite)
sys.exit(0 if r.wasSuccessful() and r.testsRun else 1)'

/usr/bin/python3 -c 'import json, os, sys
tests = dict((os.path.basename(p)[:-len(".py")], open(p).read()) for p in sys.argv[3:])
print(json.dumps({"worker": open(sys.argv[1]).read(), "workertest": open(sys.argv[2]).read(),
                  "tests": tests}))' \
	"$(dirname "$APIPARITY")/apiparity_worker.py" "$TOP/tests/worker/workertest.py" \
	"$TOP"/tests/worker/test_*.py > "$T/sources.json"
