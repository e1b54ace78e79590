"""F.bilinear against a float64 numpy einsum on every float dtype, with gradients."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close_dot, make


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_bilinear_function(dtype):
    a, ar = make((2, 3, 4), dtype, "sliced", seed=12)
    b, br = make((2, 3, 5), dtype, "transposed", seed=13)
    w, wr = make((6, 4, 5), dtype, seed=14)
    bias, biasr = make((6,), dtype, seed=15)
    ref = np.einsum("...i,oij,...j->...o", ar, wr, br) + biasr
    # a sum of in1 * in2 products rounded in the working precision: its error scales with sum |terms|
    scale = np.einsum("...i,oij,...j->...o", np.abs(ar), np.abs(wr), np.abs(br)) + np.abs(biasr)
    assert_close_dot(F.bilinear(a, b, w, bias), ref, scale, dtype)
    args = [_t64(v, True) for v in (ar[0], br[0], wr)]
    assert gradcheck(lambda p, q, r: F.bilinear(p, q, r), tuple(args))
