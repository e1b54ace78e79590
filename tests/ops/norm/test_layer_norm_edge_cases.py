"""layer_norm of constant rows (variance exactly 0: eps=0 gives 0/0 = NaN, eps > 0 gives 0) and
over an empty normalized shape, as PyTorch 2.x."""
from __future__ import annotations

import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import FLOAT_DTYPES


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("d", [3, 7, 64, 1000])
def test_constant_rows(dtype, d):
    for value in (0.1, 1.7, -7.3, 123.456):     # values whose sum / D is not exact
        x = tt.full((2, d), value, dtype=getattr(tt, dtype))
        assert bool(F.layer_norm(x, (d,), eps=0.0).isnan().all()), (value, d)
        assert F.layer_norm(x, (d,)).abs().max().item() == 0.0, (value, d)


@pytest.mark.parametrize("affine", [False, True])
def test_empty_normalized_shape(affine):
    x = tt.zeros(3, 0, requires_grad=True)
    w = tt.ones(0, requires_grad=True) if affine else None
    b = tt.zeros(0, requires_grad=True) if affine else None
    y = F.layer_norm(x, (0,), w, b)
    assert tuple(y.shape) == (3, 0)
    y.sum().backward()
    assert tuple(x.grad.shape) == (3, 0)
    if affine:
        assert tuple(w.grad.shape) == (0,) and tuple(b.grad.shape) == (0,)
    assert tuple(F.layer_norm(tt.zeros(2, 4, 0), (4, 0)).shape) == (2, 4, 0)
    assert tuple(F.rms_norm(tt.zeros(2, 0), (0,)).shape) == (2, 0)
