"""cummax / cummin (values and indices) and logcumsumexp against numpy on every float dtype,
with gradients."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, assert_close, f64_leaves, make, scaled_tol


gradcheck = tt.autograd.gradcheck


def test_cummax_cummin():
    x = tt.tensor([1.0, 3.0, 2.0, 3.0, math.nan, 0.0])
    v, i = tt.cummax(x, 0)
    assert v[:4].tolist() == [1.0, 3.0, 3.0, 3.0] and i.tolist() == [0, 1, 1, 3, 4, 4]
    assert math.isnan(v[5].item())
    v, i = x[:4].cummin(0)
    assert v.tolist() == [1.0, 1.0, 1.0, 1.0] and i.tolist() == [0, 0, 0, 0]
    m, mr = make((3, 5), "float64", "transposed", seed=5)
    np.testing.assert_array_equal(tt.cummax(m, 1).values.numpy(), np.maximum.accumulate(mr, 1))
    np.testing.assert_array_equal(tt.cummin(m, 0).values.numpy(), np.minimum.accumulate(mr, 0))
    a, = f64_leaves((3, 4))
    assert gradcheck(lambda t: tt.cummax(t, 1).values, (a,))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_logcumsumexp(dtype):
    x, xr = make((4, 5), dtype, "transposed", seed=6, low=-30, high=30)
    expected = np.logaddexp.accumulate(xr, axis=1)
    assert_close(tt.logcumsumexp(x, 1), expected, dtype, tol=scaled_tol(dtype, expected))
    big = tt.tensor([1000.0, 1000.0])
    assert tt.logcumsumexp(big, 0).tolist() == pytest.approx([1000.0, 1000.0 + math.log(2)])
    wide = tt.tensor([-200.0, 0.0, 200.0], dtype=tt.float64)             # a range exp() can't span
    np.testing.assert_allclose(tt.logcumsumexp(wide, 0).numpy(), np.logaddexp.accumulate(wide.numpy()))
    assert tt.logcumsumexp(tt.tensor([-math.inf, 1.0]), 0).tolist() == [-math.inf, 1.0]
    a, = f64_leaves((3, 4))
    assert gradcheck(lambda t: t.logcumsumexp(0), (a,))
