"""tests/truth/resolve.py - an independent judge of what a name reaches.

Run by an environment's own Python (python3 -I -c "$(cat resolve.py)"
[PRELUDE]), with dotted names on stdin, one a line; PRELUDE, Python code,
runs first (a plugin's registration calls). For each it prints one JSON line:
  {"name": ..., "reach": true | false,
   "at": the first part getattr could not reach (or null),
   "parent_is_class": the part before it is a class,
   "on_self": a class of that parent's MRO assigns the missing part on self
              in its source (self.X = ..., self.X: T = ...),
   "import": null | "missing-module" (the name's own module is not in this
             torch) | "missing-dependency" (importing it needs a package
             that is not installed) | "failed" (it raised something else),
   "import_error": the text of that error, or null,
   "defined": a reached class's module.qualname (absent otherwise)}

This is deliberately not the worker's code: it imports the longest prefix
that is a module, then getattrs the rest, as a user would type it. It never
lists members, so it cannot share the walk's blind spots.
"""
import ast
import importlib
import inspect
import json
import os
import sys
import textwrap
import warnings


def assigned_on_self(cls, attr):
    for klass in getattr(cls, "__mro__", ()):
        try:
            src = textwrap.dedent(inspect.getsource(klass))
            tree = ast.parse(src)
        except Exception:
            continue
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and t.attr == attr and \
                        isinstance(t.value, ast.Name) and t.value.id == "self":
                    return True
    return False


def import_kind(modname, err):
    """What a failed import of modname says: its own module is missing from
    this torch, a package it needs is missing, or something else broke."""
    if isinstance(err, ModuleNotFoundError) and err.name:
        if modname == err.name or modname.startswith(err.name + "."):
            return "missing-module"
        if not (err.name == "torch" or err.name.startswith("torch.")):
            return "missing-dependency"
    return "failed"


def resolve(name):
    parts = name.split(".")
    out = {"name": name, "reach": False, "at": None, "parent_is_class": False,
           "on_self": False, "import": None, "import_error": None}
    obj, i, first_err = None, len(parts), None
    while i > 0:
        modname = ".".join(parts[:i])
        try:
            obj = importlib.import_module(modname)
            break
        except BaseException as e:
            if first_err is None and not (isinstance(e, ModuleNotFoundError) and
                                          _is_attr_of(e.name)):
                first_err = (modname, e)
            i -= 1
    if obj is None:
        out["at"] = parts[0]
        return out
    for k in range(i, len(parts)):
        parent = obj
        try:
            obj = getattr(obj, parts[k])
        except BaseException:
            out["at"] = ".".join(parts[:k + 1])
            out["parent_is_class"] = inspect.isclass(parent)
            if out["parent_is_class"]:
                out["on_self"] = assigned_on_self(parent, parts[k])
            if first_err is not None:
                out["import"] = import_kind(*first_err)
                out["import_error"] = "%s: %s" % (type(first_err[1]).__name__, first_err[1])
            return out
    out["reach"] = True
    out["defined"] = defined(obj)
    return out


def defined(obj):
    """A class's identity, as where it is defined (module.qualname)."""
    if not inspect.isclass(obj):
        return None
    return "%s.%s" % (getattr(obj, "__module__", "?"), getattr(obj, "__qualname__", "?"))


def _is_attr_of(modname):
    """Whether modname (the module an import found missing) is an attribute
    of its parent module (a class, a function) rather than a module: then
    the failed import is only the resolver trying the longer name first."""
    parts = (modname or "").split(".")
    if len(parts) < 2:
        return False
    try:
        parent = importlib.import_module(".".join(parts[:-1]))
    except BaseException:
        return False
    return hasattr(parent, parts[-1])


def main():
    warnings.simplefilter("ignore")
    # What an import prints (a plugin's banner) is not an answer: answers go
    # to the real stdout, everything else to stderr.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if len(sys.argv) > 1:
        exec(sys.argv[1], {})
    for raw in sys.stdin:
        name = raw.strip()
        if name:
            print(json.dumps(resolve(name)), file=answers, flush=True)


main()
