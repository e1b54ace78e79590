"""dropout multiplies by its mask, as PyTorch 2.x's input * mask / (1 - p): a NaN or infinite input
gives NaN where it is dropped (p = 1 included: input * 0), forward and backward."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import FLOAT_DTYPES, to_numpy

NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_dropout_p1_is_input_times_zero(dtype):
    x = tt.tensor([NAN, 1.0, INF, -2.0, 0.0], dtype=getattr(tt, dtype), requires_grad=True)
    y = F.dropout(x, 1.0)
    np.testing.assert_array_equal(to_numpy(y), [NAN, 0.0, NAN, 0.0, 0.0])
    y.backward(tt.tensor([1.0, NAN, 1.0, 1.0, 1.0], dtype=getattr(tt, dtype)))
    np.testing.assert_array_equal(to_numpy(x.grad), [0.0, NAN, 0.0, 0.0, 0.0])   # grad * 0
    z = x.detach().clone()
    F.dropout(z, 1.0, inplace=True)
    np.testing.assert_array_equal(to_numpy(z), [NAN, 0.0, NAN, 0.0, 0.0])


def test_dropout_keeps_nan_at_dropped_positions():
    tt.manual_seed(0)
    x = tt.full((4096,), NAN)
    y = F.dropout(x, 0.5)
    assert bool(y.isnan().all())
    finite = tt.ones(4096)
    tt.manual_seed(0)
    kept = F.dropout(finite, 0.5)           # the same mask: kept values are 1 / (1 - p)
    vals = set(kept.unique().tolist())
    assert vals == {0.0, 2.0}
