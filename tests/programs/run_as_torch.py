"""Runs a PyTorch program unmodified with ``import torch`` served by tinytorch: ``torch`` and every
``torch.<sub>`` resolve to ``tinytorch`` and ``tinytorch.<sub>`` (the same module objects, so
``torch.nn.Module is tinytorch.nn.Module``). Usage: ``python run_as_torch.py program.py [args]``, or
``python run_as_torch.py -m pytest ...`` for a program's own tests."""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys


class _TorchAsTinytorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        real = "tinytorch" + fullname[len("torch"):]
        if importlib.util.find_spec(real) is None:
            return None     # torch.<x> that tinytorch lacks: the program sees the ImportError torch would not raise
        return importlib.util.spec_from_loader(fullname, self, origin=real)

    def create_module(self, spec):
        return importlib.import_module(spec.origin)

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _TorchAsTinytorch())

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["-m"]:          # as ``python -m``: the current directory first on sys.path
        sys.argv = args[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:                           # as ``python program.py``: the program's directory first
        sys.argv = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")
