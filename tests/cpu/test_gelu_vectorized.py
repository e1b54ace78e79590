"""GELU (exact, erf) forward and backward on the CPU's vectorized float32 path (cpp/src/cpu/
fast_gelu.h) against float64 references, including the far tails and non-finite inputs."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from conftest import TOL, assert_close, make

_erfc = np.vectorize(math.erfc)  # 0.5 * erfc(-x / sqrt(2)): no cancellation in the tail


def gelu_ref(x):
    return x * 0.5 * _erfc(-x / math.sqrt(2.0))


def gelu_grad_ref(x):
    cdf = 0.5 * _erfc(-x / math.sqrt(2.0))
    return cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded"])
@pytest.mark.parametrize("low,high", [(-3.0, 3.0), (-12.0, 12.0)])
def test_gelu_forward_backward(dtype, layout, low, high):
    x, xr = make((33, 70), dtype, layout, low=low, high=high, seed=3, requires_grad=True)
    y = F.gelu(x)
    assert_close(y, gelu_ref(xr), dtype, what="gelu forward")
    g, gr = make((33, 70), dtype, seed=4)
    y.backward(g)
    assert_close(x.grad, gr * gelu_grad_ref(xr), dtype, what="gelu backward")


def test_gelu_tail_relative_accuracy():
    # Phi(x) for x << 0 comes from erfc, not 1 + erf: relative accuracy holds where gelu ~ 1e-30.
    xr = np.linspace(-11.0, -1.0, 101)
    y = F.gelu(tt.tensor(xr.astype(np.float32)))
    ref = gelu_ref(xr.astype(np.float32).astype(np.float64))
    np.testing.assert_allclose(y.numpy().astype(np.float64), ref, rtol=TOL["float32"][0] * 10, atol=0)


def test_gelu_non_finite():
    x = tt.tensor([math.inf, -math.inf, math.nan, 0.0, -0.0], requires_grad=True)
    y = F.gelu(x)
    out = y.detach().numpy()
    assert out[0] == math.inf and math.isnan(out[1]) and math.isnan(out[2]) and out[3] == 0.0 and out[4] == 0.0
    y.backward(tt.ones(5))
    grad = x.grad.numpy()
    assert math.isnan(grad[2]) and grad[3] == 0.5 and grad[4] == 0.5
