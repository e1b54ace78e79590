"""Helpers shared by the tests that call tinytorch._C directly (dtypes cross as int codes)."""
import numpy as np

from tinytorch import _C

BOOL, U8, I32, I64, F16, BF16, F32, F64 = range(8)
FLOATS = [F32, F16, BF16, F64]
NP = {BOOL: np.bool_, U8: np.uint8, I32: np.int32, I64: np.int64, F16: np.float16, F32: np.float32, F64: np.float64}


def make(shape, code, seed, transform=None):
    """A random tensor of dtype `code` and the float64 numpy copy of its (rounded) values."""
    a = np.random.default_rng(seed).uniform(-1, 1, shape)
    t = _C.from_numpy(a).to_dtype(code)
    if transform:
        t = transform(t)
    return t, t.to_dtype(F64, True).numpy()


def from_array(arr, code):
    """numpy array -> TensorImpl of dtype ``code`` (bfloat16 through float32); also returns its values
    as numpy (see ``to_np``)."""
    if code == BF16:
        t = _C.from_numpy(np.ascontiguousarray(arr, dtype=np.float32)).to_dtype(BF16)
    else:
        t = _C.from_numpy(np.ascontiguousarray(arr.astype(NP[code])))
    return t, to_np(t)


def to_np(t):
    """A TensorImpl's values as a numpy copy (bfloat16 as float32)."""
    if t.dtype_code == BF16:
        return t.to_dtype(F32).numpy().copy()
    return t.numpy().copy()


def random_array(rng, shape, code):
    """Random values for dtype ``code`` through ``from_array``: standard normal for floating types,
    0/1 for bool, integers in [0, 100) otherwise."""
    if code in FLOATS:
        return from_array(rng.standard_normal(shape), code)
    if code == BOOL:
        return from_array(rng.integers(0, 2, shape), code)
    return from_array(rng.integers(0, 100, shape), code)
