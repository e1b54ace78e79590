"""max / min with a dim over a 0-dim tensor (dim 0 or -1 is the scalar itself), forward and
backward, as PyTorch 2.x."""
from __future__ import annotations

import pytest

import tinytorch as tt
from support.numeric import assert_close


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("which", ["max", "min"])
def test_max_min_of_0dim_tensor_with_dim(which, dim, keepdim):
    x = tt.tensor(-1.5, dtype=tt.float64, requires_grad=True)
    values, indices = getattr(tt, which)(x, dim=dim, keepdim=keepdim)
    assert tuple(values.shape) == () and tuple(indices.shape) == ()
    assert values.item() == -1.5 and indices.item() == 0
    (values * 4.0).backward()
    assert tuple(x.grad.shape) == ()
    assert_close(x.grad, 4.0, "float64")
    v, i = getattr(x, which)(dim)                    # the method form
    assert v.item() == -1.5 and i.item() == 0
