"""unique with NaNs (each NaN its own entry, the inverse indexing it) and index_select of a 0-dim
tensor, forward and backward, as PyTorch 2.x."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, assert_close, to_numpy

NAN = math.nan


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unique_inverse_reproduces_input_with_nans(dtype):
    x = tt.tensor([[1.0, NAN, 2.0], [NAN, 1.0, -3.0]], dtype=getattr(tt, dtype))
    values, inverse, counts = tt.unique(x, return_inverse=True, return_counts=True)
    # sorted, NaNs last and distinct (NaN != NaN), one count each
    np.testing.assert_array_equal(to_numpy(values), [-3.0, 1.0, 2.0, NAN, NAN])
    np.testing.assert_array_equal(counts.numpy(), [1, 2, 1, 1, 1])
    assert inverse.dtype == tt.int64 and tuple(inverse.shape) == (2, 3)
    np.testing.assert_array_equal(to_numpy(values[inverse]), to_numpy(x))    # NaN-wise equal
    # each NaN of the input indexes its own entry
    nan_slots = inverse.reshape(-1)[x.reshape(-1).isnan()]
    assert sorted(nan_slots.tolist()) == [3, 4]


def test_unique_inverse_without_nans_and_empty():
    x = tt.tensor([3, 1, 3, 2, 1])
    values, inverse = tt.unique(x, return_inverse=True)
    ref_v, ref_i = np.unique(x.numpy(), return_inverse=True)
    np.testing.assert_array_equal(values.numpy(), ref_v)
    np.testing.assert_array_equal(inverse.numpy(), ref_i.reshape(-1))
    values, inverse, counts = tt.unique(tt.zeros(0, 2), return_inverse=True, return_counts=True)
    assert tuple(values.shape) == (0,) and tuple(inverse.shape) == (0, 2) and tuple(counts.shape) == (0,)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_index_select_of_0dim_tensor_forward_and_backward(dtype):
    x = tt.tensor(2.5, dtype=getattr(tt, dtype), requires_grad=True)
    y = x.index_select(0, tt.tensor([0]))
    assert tuple(y.shape) == () and y.item() == 2.5        # PyTorch: a 0-dim result
    (y * 3.0).backward()
    assert tuple(x.grad.shape) == ()
    assert_close(x.grad, 3.0, dtype)
