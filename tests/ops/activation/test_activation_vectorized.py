"""GELU (exact, erf) and SiLU forward and backward on the CPU's vectorized float32 paths
(cpp/src/cpu/fast_gelu.h, fast_silu.h) against float64 references, including the far tails and
non-finite inputs."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import TOL, assert_close, make

_erfc = np.vectorize(math.erfc)  # 0.5 * erfc(-x / sqrt(2)): no cancellation in the tail


def gelu_ref(x):
    return x * 0.5 * _erfc(-x / math.sqrt(2.0))


def gelu_grad_ref(x):
    cdf = 0.5 * _erfc(-x / math.sqrt(2.0))
    return cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def silu_ref(x):
    return x / (1.0 + np.exp(-x))


def silu_grad_ref(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return s * (1.0 + x * (1.0 - s))


# name: (function, forward reference, derivative reference)
ACTIVATIONS = {"gelu": (F.gelu, gelu_ref, gelu_grad_ref), "silu": (F.silu, silu_ref, silu_grad_ref)}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded"])
@pytest.mark.parametrize("low,high", [(-3.0, 3.0), (-12.0, 12.0), (-100.0, 100.0)])
def test_forward_backward(name, dtype, layout, low, high):
    fn, ref, grad_ref = ACTIVATIONS[name]
    x, xr = make((33, 70), dtype, layout, low=low, high=high, seed=3, requires_grad=True)
    y = fn(x)
    with np.errstate(over="ignore"):
        assert_close(y, ref(xr), dtype, what=f"{name} forward")
        g, gr = make((33, 70), dtype, seed=4)
        y.backward(g)
        assert_close(x.grad, gr * grad_ref(xr), dtype, what=f"{name} backward")


def test_silu_relative_accuracy():
    xr = np.concatenate([np.linspace(-80.0, -1.0, 300), np.linspace(-1.0, 80.0, 300)])
    y = F.silu(tt.tensor(xr.astype(np.float32)))
    ref = silu_ref(xr.astype(np.float32).astype(np.float64))
    np.testing.assert_allclose(y.numpy().astype(np.float64), ref, rtol=TOL["float32"][0] * 10, atol=0)


def test_silu_non_finite():
    # as torch's x / (1 + exp(-x)): silu(-inf) = -inf / inf = NaN
    x = tt.tensor([math.inf, -math.inf, math.nan, 0.0, -200.0], requires_grad=True)
    out = F.silu(x).detach().numpy()
    assert out[0] == math.inf and math.isnan(out[1]) and math.isnan(out[2]) and out[3] == 0.0
    assert out[4] == 0.0


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
