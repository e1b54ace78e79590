"""Helpers shared by the tests that call tinytorch._C directly (dtypes cross as int codes)."""
import numpy as np

from tinytorch import _C

F16, BF16, F32, F64 = 4, 5, 6, 7


def make(shape, code, seed, transform=None):
    """A random tensor of dtype `code` and the float64 numpy copy of its (rounded) values."""
    a = np.random.default_rng(seed).uniform(-1, 1, shape)
    t = _C.from_numpy(a).to_dtype(code)
    if transform:
        t = transform(t)
    return t, t.to_dtype(F64, True).numpy()
