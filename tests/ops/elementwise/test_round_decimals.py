"""round(decimals=) as PyTorch's round.decimals: ``rint(x * 10**d) / 10**d`` (``rint(x / 10**-d) * 10**-d``
for negative d), halves to even, in the dtype's compute type; numpy's np.round is the same formula, so
float64 and float32 results are compared for equality. Its gradient is zero."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt

rng = np.random.default_rng(11)


@pytest.mark.parametrize("decimals", [-3, -2, -1, 1, 2, 3, 5])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_round_decimals_equals_numpy(decimals, dtype):
    x = (rng.standard_normal(257) * 10.0 ** rng.integers(-2, 5, 257)).astype(dtype)
    expected = np.round(x, decimals)
    t = tt.tensor(x)
    np.testing.assert_array_equal(tt.round(t, decimals=decimals).numpy(), expected)
    np.testing.assert_array_equal(t.round(decimals=decimals).numpy(), expected)
    out = t.clone()
    assert out.round_(decimals=decimals) is out
    np.testing.assert_array_equal(out.numpy(), expected)
    out = t.clone()
    np.testing.assert_array_equal(tt.round_(out, decimals=decimals).numpy(), expected)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_halves_round_to_even():
    # exactly representable halves after scaling: 12.5 -> 12, 37.5 -> 38, 12.5 * 100 -> 1200, 13.5 * 100 -> 1400
    x = tt.tensor([0.125, 0.375, -0.125, -0.375, 2.5], dtype=tt.float64)
    assert tt.round(x, decimals=2).tolist() == [0.12, 0.38, -0.12, -0.38, 2.5]
    x = tt.tensor([1250.0, 1350.0, -1250.0, -1350.0, 49.0], dtype=tt.float64)
    assert tt.round(x, decimals=-2).tolist() == [1200.0, 1400.0, -1200.0, -1400.0, 0.0]
    assert tt.round(tt.tensor([25.0, 35.0, -25.0]), decimals=-1).tolist() == [20.0, 40.0, -20.0]
    assert tt.round(tt.tensor([0.5, 1.5, 2.5, -0.5, -2.5])).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]


@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16])
def test_half_types_round_in_float32(dtype):
    x = tt.tensor([0.1234, 1.9876, -3.25, 100.6], dtype=dtype)
    expected = np.round(x.float().numpy(), 2).astype(np.float32)
    out = tt.round(x, decimals=2)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.float().numpy(), tt.tensor(expected).to(dtype).float().numpy())


def test_integer_input():
    x = tt.tensor([1, -7, 25])
    assert tt.round(x).tolist() == [1, -7, 25] and tt.round(x).dtype == tt.int64
    with pytest.raises(NotImplementedError, match="round"):
        tt.round(x, decimals=1)   # PyTorch's round.decimals kernel is floating-point only


def test_gradient_is_zero():
    x = tt.tensor([0.126, -3.14159, 12.5], dtype=tt.float64, requires_grad=True)
    (tt.round(x, decimals=2) * tt.tensor([1.0, 2.0, 3.0], dtype=tt.float64)).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    x.grad = None
    x.round(decimals=-1).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_in_place_on_a_leaf_requiring_grad_raises():
    x = tt.tensor([0.126], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.round_(decimals=2)
