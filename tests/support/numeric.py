"""Checks against float64 references, shared by the tests: tolerances per dtype (in one place),
comparisons, and random inputs in a chosen memory layout."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt

# Forward-value tolerances against float64 numpy references: (rtol, atol).
TOL = {
    "float64": (1e-10, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "complex128": (1e-10, 1e-12),
    "complex64": (1e-5, 1e-6),
}
# Gradient tolerances (low-precision gradients vs the float64 gradient): (rtol, atol).
GRAD_TOL = {
    "float64": (1e-8, 1e-10),
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "complex128": (1e-8, 1e-10),
    "complex64": (1e-4, 1e-5),
}
FLOAT_DTYPES = ["float32", "float16", "bfloat16", "float64"]
# the devices an op test runs on: parametrize over DEVICES (the cuda one skips without a GPU)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def to_numpy(t: tt.Tensor) -> np.ndarray:
    """float64 numpy copy of any tensor (bfloat16 included)."""
    if t.dtype.is_floating_point:
        return t.detach().cpu().double().numpy().copy()
    return t.detach().cpu().numpy().copy()


def assert_close(actual, expected, dtype: str | None = None, tol=None, what: str = "") -> None:
    if isinstance(actual, tt.Tensor):
        dtype = dtype or actual.dtype.name
        actual = to_numpy(actual)
    if isinstance(expected, tt.Tensor):
        expected = to_numpy(expected)
    rtol, atol = tol or TOL.get(dtype or "float64", (0, 0))
    as_type = np.complex128 if np.iscomplexobj(actual) or np.iscomplexobj(expected) else np.float64
    np.testing.assert_allclose(np.asarray(actual, dtype=as_type), np.asarray(expected, dtype=as_type),
                               rtol=rtol, atol=atol, err_msg=what)


def make(shape, dtype="float32", layout="contiguous", low=-2.0, high=2.0, seed=0, requires_grad=False,
         device="cpu"):
    """Random tensor on ``device`` with the given logical shape and memory layout:
    'contiguous', 'transposed' (a .mT of a contiguous tensor), 'sliced' (every other element of
    the last dim), 'expanded' (a broadcast view along dim 0). Returns (tensor, float64 reference)."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)

    def tensor(values):
        return tt.tensor(values, dtype=getattr(tt, dtype), device=device)

    if layout == "transposed" and len(shape) >= 2:
        base = rng.uniform(low, high, shape[:-2] + (shape[-1], shape[-2]))
        ref = np.swapaxes(base, -1, -2)
        t = tensor(base).transpose(-1, -2)
    elif layout == "sliced" and len(shape) >= 1:
        base = rng.uniform(low, high, shape[:-1] + (shape[-1] * 2,))
        ref = base[..., ::2]
        t = tensor(base).narrow(-1, 0, shape[-1] * 2)
        t = tt._ops.shape.slice(t, -1, 0, None, 2)
    elif layout == "expanded" and len(shape) >= 1:
        base = rng.uniform(low, high, (1,) + shape[1:])
        ref = np.broadcast_to(base, shape)
        t = tensor(base).expand(*shape)
    else:
        ref = rng.uniform(low, high, shape)
        t = tensor(ref)
    ref = to_numpy(t)  # the values the tensor really holds after rounding to dtype
    if requires_grad:
        t.requires_grad_(True)  # a view of a tensor that doesn't require grad is itself a leaf
    return t, ref


def f64_leaves(*shapes, seed=0, low=-2.0, high=2.0, layout="transposed") -> list:
    """float64 leaf tensors that require grad, one per shape (seeds ``seed``, ``seed + 1``, ...), for
    gradcheck: the 2-D ones in ``layout``, the others contiguous."""
    return [make(s, "float64", layout if len(s) == 2 else "contiguous", low, high, seed=seed + i,
                 requires_grad=True)[0] for i, s in enumerate(shapes)]


def scaled_tol(dtype: str, expected) -> tuple:
    """TOL[dtype] with its atol scaled by max |expected| (when that is above 1)."""
    rtol, atol = TOL[dtype]
    return rtol, atol * max(1.0, float(np.abs(expected).max()) if np.size(expected) else 1.0)


# Dot products over K terms (quantized matvec/GEMM, tests/*/test_*quant.py): summed in float32
# in another order than the reference, their rounding error scales with sum_k |x_k w_k|, not with
# the result (which may cancel to ~0), so errors are measured in units of that sum:
# |y - ref| / (|x| @ |W|^T) within TOL[dtype] (rtol also covers rounding y to a 16-bit dtype).
def assert_close_dot(actual, expected, abs_scale, dtype: str, what: str = "") -> None:
    if isinstance(actual, tt.Tensor):
        actual = to_numpy(actual)
    s = np.maximum(np.asarray(abs_scale, dtype=np.float64), np.finfo(np.float64).tiny)
    assert_close(np.asarray(actual, dtype=np.float64) / s, np.asarray(expected, dtype=np.float64) / s, dtype,
                 what=what)
