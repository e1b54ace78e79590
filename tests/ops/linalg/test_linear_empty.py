"""linear with a weight of 0 rows (an output width of 0): an empty result, and gradients that are
zeros (input) and empty (weight, bias) of the right shapes, for any input rank, with and without
create_graph, as PyTorch 2.x."""
from __future__ import annotations

import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import make


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("in_shape", [(3,), (2, 3), (2, 4, 3), (0, 3)])
def test_linear_with_zero_output_features(in_shape, create_graph):
    x, _ = make(in_shape, "float64", seed=1, requires_grad=True)
    w = tt.zeros(0, 3, dtype=tt.float64, requires_grad=True)
    b = tt.zeros(0, dtype=tt.float64, requires_grad=True)
    y = F.linear(x, w, b)
    assert tuple(y.shape) == in_shape[:-1] + (0,)
    gx, gw, gb = tt.autograd.grad(y.sum(), (x, w, b), create_graph=create_graph)
    assert tuple(gx.shape) == in_shape and (gx.numel() == 0 or gx.abs().max().item() == 0.0)
    assert tuple(gw.shape) == (0, 3) and tuple(gb.shape) == (0,)
