"""`import tinytorch` loads the kernels and the tensor layer only: the composites, linalg, checkpoint I/O
and the public packages load on first use, and every name they provide is there when looked up
(functions, Tensor methods, dir(), __torch_function__ dispatch)."""
import subprocess
import sys
import tempfile

import numpy as np

import tinytorch as tt



def _loaded_after(code: str) -> set:
    out = subprocess.run([sys.executable, "-c", f"import sys, tinytorch\n{code}\n"
                          "print(' '.join(m for m in sys.modules if m.startswith('tinytorch')))"],
                         capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()).stdout
    return set(out.split())


def test_import_leaves_the_deferred_layers_unloaded():
    loaded = _loaded_after("")
    deferred = {m for m in loaded if m.startswith("tinytorch._composites.") and m != "tinytorch._composites.forms"}
    assert not deferred, deferred
    for package in ("tinytorch.linalg", "tinytorch.serialization", "tinytorch.nn", "tinytorch.models",
                    "tinytorch.distributed", "tinytorch.optim"):
        assert package not in loaded, package


def test_first_lookup_loads_them():
    assert "tinytorch._composites.numerics" in _loaded_after("tinytorch.renorm")
    assert "tinytorch._composites.scatter" in _loaded_after("tinytorch.ones(3).put_")
    assert "tinytorch.serialization" in _loaded_after("tinytorch.save")


def test_deferred_function_and_method_compute():
    x = tt.tensor([[3.0, 4.0], [0.6, 0.8]])
    np.testing.assert_allclose(tt.renorm(x, 2, 0, 1.0).numpy(), [[0.6, 0.8], [0.6, 0.8]], rtol=1e-5)
    np.testing.assert_allclose(x.renorm(2, 0, 1.0).numpy(), [[0.6, 0.8], [0.6, 0.8]], rtol=1e-5)
    y = tt.zeros(4)
    assert y.put_(tt.tensor([1, 3]), tt.tensor([5.0, 7.0])) is y
    np.testing.assert_array_equal(y.numpy(), [0, 5, 0, 7])


def test_dir_lists_deferred_and_lazy_names():
    names = dir(tt)
    for name in ("renorm", "cholesky_solve", "linalg", "load", "save", "autocast", "nn"):
        assert name in names, name
    assert "put_" in dir(tt.Tensor)


def test_deferred_functions_dispatch_to_torch_function():
    calls = []

    class Logged(tt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    x = tt.tensor([[3.0, 4.0]]).as_subclass(Logged)
    tt.renorm(x, 2, 0, 1.0)
    assert "renorm" in calls
