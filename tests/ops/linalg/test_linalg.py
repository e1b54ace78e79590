"""tinytorch.linalg norms against numpy.linalg.norm: every ord, dims, keepdim, float dtype and
layout; gradients by gradcheck."""
import math

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make

LAYOUTS = ["contiguous", "transposed", "sliced"]


def _tol(dtype, scale=4):
    rtol, atol = TOL[dtype]
    return rtol * scale, atol * scale * 10


def vector_norm_ref(a, ord, axis=None, keepdims=False):
    a = np.abs(a)
    if ord == math.inf:
        return a.max(axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return a.min(axis=axis, keepdims=keepdims)
    if ord == 0:
        return (a != 0).sum(axis=axis, keepdims=keepdims).astype(np.float64)
    return (a ** ord).sum(axis=axis, keepdims=keepdims) ** (1.0 / ord)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("ord", [2, 1, 3.5, math.inf, -math.inf, 0])
def test_vector_norm(ord, dtype, layout):
    x, xr = make((3, 4, 5), dtype, layout, seed=int(abs(ord)) if math.isfinite(ord) else 9)
    assert_close(tt.linalg.vector_norm(x, ord), vector_norm_ref(xr, ord), dtype, _tol(dtype))
    for dim, keep in [(-1, False), ((0, 2), True), (1, True)]:
        assert_close(tt.linalg.vector_norm(x, ord, dim, keep), vector_norm_ref(xr, ord, dim, keep), dtype, _tol(dtype))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm(ord, dtype, layout):
    x, xr = make((2, 4, 5), dtype, layout, seed=3)
    ref = np.stack([np.linalg.norm(m, ord) for m in xr])
    assert_close(tt.linalg.matrix_norm(x, ord), ref, dtype, _tol(dtype))
    assert_close(tt.linalg.matrix_norm(x, ord, keepdim=True), ref.reshape(2, 1, 1), dtype, _tol(dtype))
    ref_t = np.stack([np.linalg.norm(xr[:, :, j], ord) for j in range(5)])   # dims (0, 1): (2, 4) matrices
    assert_close(tt.linalg.matrix_norm(x, ord, dim=(0, 1)), ref_t, dtype, _tol(dtype))
    assert_close(tt.linalg.norm(x[0], ord), np.linalg.norm(xr[0], ord), dtype, _tol(dtype))


def test_norm_dispatch_and_errors():
    x, xr = make((3, 4), "float64")
    assert_close(tt.linalg.norm(x), np.linalg.norm(xr.reshape(-1)))          # no ord, no dim: all elements
    assert_close(tt.linalg.norm(x, dim=1), np.linalg.norm(xr, axis=1))
    assert_close(tt.linalg.norm(x, 1, dim=(1, 0)), np.linalg.norm(xr.T, 1))
    # the singular-value norms (values and gradients: tests/ops/linalg/test_linalg_solvers.py)
    assert_close(tt.linalg.matrix_norm(x, "nuc"), np.linalg.norm(xr, "nuc"))
    assert_close(tt.linalg.norm(x, 2), np.linalg.norm(xr, 2))
    assert_close(tt.linalg.matrix_norm(x, -2, dim=(1, 0), keepdim=True), np.linalg.norm(xr.T, -2).reshape(1, 1))
    with pytest.raises(RuntimeError, match="must be 1D or 2D"):
        tt.linalg.norm(tt.zeros(2, 2, 2), 1)
    with pytest.raises(RuntimeError, match="floating point"):
        tt.linalg.vector_norm(tt.tensor([1, 2]))


@pytest.mark.parametrize("ord", [2, 1, 3.0, math.inf])
def test_vector_norm_gradients(ord):
    x, _ = make((3, 4), "float64", requires_grad=True)
    assert gradcheck(lambda t: tt.linalg.vector_norm(t, ord, dim=1), (x,))


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm_gradients(ord):
    x, _ = make((2, 3, 4), "float64", requires_grad=True)
    assert gradcheck(lambda t: tt.linalg.matrix_norm(t, ord), (x,))
