"""clamp with tensor bounds holding NaN (NaN out, no gradient there) and min > max, div with a
rounding_mode (the result requires grad, its gradient is zero), and casts of bool storage holding
bytes other than 0 and 1 (read as byte != 0), as PyTorch 2.x."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import _C
from tinytorch._core.tensor_base import _wrap
from support.numeric import FLOAT_DTYPES, assert_close, to_numpy

NAN = math.nan


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_clamp_propagates_nan_from_tensor_bounds(dtype):
    d = getattr(tt, dtype)
    x = tt.tensor([1.0, 2.0, 3.0, NAN], dtype=d)
    lo = tt.tensor([0.0, NAN, 0.0, 0.0], dtype=d)
    hi = tt.tensor([5.0, 5.0, NAN, 5.0], dtype=d)
    np.testing.assert_array_equal(to_numpy(tt.clamp(x, min=lo)), [1.0, NAN, 3.0, NAN])
    np.testing.assert_array_equal(to_numpy(tt.clamp(x, max=hi)), [1.0, 2.0, NAN, NAN])
    np.testing.assert_array_equal(to_numpy(tt.clamp(x, lo, hi)), [1.0, NAN, NAN, NAN])
    np.testing.assert_array_equal(to_numpy(x.clamp(min=lo, max=4.0)), [1.0, NAN, 3.0, NAN])


def test_clamp_tensor_bounds_backward():
    # PyTorch's clamp_backward_min_max: no gradient at a NaN (input or bound); min > max gives max
    x = tt.tensor([1.0, 2.0, 3.0, NAN, 6.0, -1.0], dtype=tt.float64, requires_grad=True)
    lo = tt.tensor([0.0, NAN, 4.0, 0.0, 0.0, 0.0], dtype=tt.float64, requires_grad=True)
    hi = tt.tensor([5.0, 5.0, 2.0, 5.0, 5.0, 5.0], dtype=tt.float64, requires_grad=True)
    y = tt.clamp(x, lo, hi)
    np.testing.assert_array_equal(to_numpy(y), [1.0, NAN, 2.0, NAN, 5.0, 0.0])
    y.backward(tt.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=tt.float64))
    np.testing.assert_array_equal(to_numpy(x.grad), [1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(to_numpy(lo.grad), [0.0, 0.0, 0.0, 0.0, 0.0, 6.0])
    np.testing.assert_array_equal(to_numpy(hi.grad), [0.0, 0.0, 3.0, 0.0, 5.0, 0.0])
    a = tt.tensor([1.0, NAN, -2.0], dtype=tt.float64, requires_grad=True)
    m = tt.tensor([0.0, 0.0, NAN], dtype=tt.float64, requires_grad=True)
    tt.clamp(a, min=m).sum().backward()
    np.testing.assert_array_equal(to_numpy(a.grad), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(to_numpy(m.grad), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("mode", ["floor", "trunc"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_div_with_rounding_mode_has_zero_gradient(mode, dtype):
    d = getattr(tt, dtype)
    a = tt.tensor([7.0, -7.0, 5.0], dtype=d, requires_grad=True)
    b = tt.tensor([2.0, 2.0, 0.0], dtype=d, requires_grad=True)
    y = tt.div(a, b, rounding_mode=mode)
    ref = {"floor": np.floor, "trunc": np.trunc}[mode](np.array([3.5, -3.5, np.inf]))
    assert_close(y, ref, dtype)
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(a.grad), [0.0, 0.0, 0.0])   # zero, also where b == 0
    np.testing.assert_array_equal(to_numpy(b.grad), [0.0, 0.0, 0.0])
    s = tt.tensor([3.0, -5.0], dtype=d, requires_grad=True)
    z = s.div(2, rounding_mode=mode)
    z.sum().backward()
    assert_close(z, {"floor": [1.0, -3.0], "trunc": [1.0, -2.0]}[mode], dtype)
    np.testing.assert_array_equal(to_numpy(s.grad), [0.0, 0.0])


def test_div_rounding_mode_integers_and_errors():
    assert tt.div(tt.tensor([7, -7]), tt.tensor([2, 2]), rounding_mode="trunc").tolist() == [3, -3]
    assert tt.div(tt.tensor([7, -7]), 2, rounding_mode="floor").tolist() == [3, -4]
    with pytest.raises(ValueError, match="rounding_mode"):
        tt.div(tt.tensor([1.0]), 2, rounding_mode="round")


def _raw_bool(byte_values):
    """A bool tensor over bytes as given (no normalization on the way in: _C directly)."""
    return _wrap(_C.from_numpy(np.array(byte_values, dtype=np.uint8).view(np.bool_)))


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"])
def test_casts_of_bool_storage_read_nonzero_bytes_as_true(dtype):
    x = _raw_bool([0, 2, 255, 1, 128])
    out = x.to(getattr(tt, dtype))
    np.testing.assert_array_equal(to_numpy(out), [0, 1, 1, 1, 1])
    strided = _raw_bool([[0, 7], [3, 0]]).t()                # the strided copy loop
    np.testing.assert_array_equal(to_numpy(strided.to(getattr(tt, dtype))), [[0, 1], [1, 0]])
