"""InstanceNorm1d/2d (running statistics too) and local_response_norm against numpy formulas;
gradients by gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close, make, to_numpy


def test_instance_norm():
    x, xr = make((3, 4, 5, 6), "float64", seed=2)
    mu, var = xr.mean((2, 3), keepdims=True), xr.var((2, 3), keepdims=True)
    assert_close(nn.InstanceNorm2d(4)(x), (xr - mu) / np.sqrt(var + 1e-5))
    m = nn.InstanceNorm2d(4, affine=True, track_running_stats=True, momentum=0.3).double()
    with tt.no_grad():
        m.weight.copy_(tt.tensor([1.0, 2.0, 3.0, 4.0], dtype=tt.float64))
    y = m(x)
    assert_close(y, (xr - mu) / np.sqrt(var + 1e-5) * np.array([1, 2, 3, 4.0])[None, :, None, None])
    n_unbiased = 30 / 29
    assert_close(m.running_mean, 0.3 * mu.mean((0, 2, 3)))
    assert_close(m.running_var, 0.7 + 0.3 * (var * n_unbiased).mean((0, 2, 3)))
    m.eval()
    rm, rv = to_numpy(m.running_mean), to_numpy(m.running_var)
    ref = (xr - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5) * np.array([1, 2, 3, 4.0])[
        None, :, None, None]
    assert_close(m(x), ref)
    x1, x1r = make((4, 7), "float64", seed=3)                  # InstanceNorm1d on unbatched (C, L)
    assert_close(nn.InstanceNorm1d(4)(x1), (x1r - x1r.mean(1, keepdims=True)) / np.sqrt(x1r.var(1, keepdims=True) + 1e-5))


rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


def _np_lrn(x, size, alpha, beta, k):
    c = x.shape[1]
    sq = x ** 2
    div = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c, ch + (size - 1) // 2 + 1)
        div[:, ch] = sq[:, lo:hi].sum(1)
    return x / (k + alpha / size * div) ** beta


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 2)])
def test_local_response_norm(dtype, shape):
    x, xr = make(shape, dtype, "sliced", seed=9)
    for size in (2, 3):
        assert_close(nn.LocalResponseNorm(size, 0.3, 0.8, 1.5)(x), _np_lrn(xr, size, 0.3, 0.8, 1.5), dtype)
    assert gradcheck(lambda a: F.local_response_norm(a, 3, 0.5, 0.75, 1.0), (_t64(rng.standard_normal(shape), True),))
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(tt.zeros(2, 3), 2)
