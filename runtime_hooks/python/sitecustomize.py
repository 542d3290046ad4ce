# dtype-lint's entry into a Python process run under the runtime hooks: the
# preload library put this directory first on PYTHONPATH. It installs
# dtype_lint_torch, gives the script back its own sys.path and PYTHONPATH, and
# runs the sitecustomize this one hides, if there is one.
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
try:
    import dtype_lint_torch  # noqa: F401
except Exception as error:  # never break the user's interpreter
    sys.stderr.write("dtype-lint: error: the Python hooks could not be installed: %s\n" % error)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_original = os.environ.pop("DTYPE_LINT_PYTHONPATH", None)
if _original:
    os.environ["PYTHONPATH"] = _original
elif _original is not None:
    os.environ.pop("PYTHONPATH", None)
# The environment's own sitecustomize, run as `import sitecustomize` would have
# (this module stays the one in sys.modules: importlib expects it there).
_hidden = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
if _hidden is not None and _hidden.loader is not None:
    _hidden.loader.exec_module(importlib.util.module_from_spec(_hidden))
