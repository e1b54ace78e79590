"""Convolutions over empty inputs as PyTorch 2.x: an empty batch runs (empty output), an input
with an empty spatial dim (batch and channels non-empty) raises RuntimeError even where padding
makes the kernel fit."""
from __future__ import annotations

import pytest

import tinytorch as tt
import tinytorch.nn.functional as F

_MSG = "Only zero batch or zero channel inputs are supported"


@pytest.mark.parametrize("shape", [(1, 1, 0, 4), (2, 1, 4, 0), (1, 0, 4)])
def test_conv2d_rejects_empty_spatial_dims(shape):
    with pytest.raises(RuntimeError, match=_MSG):
        F.conv2d(tt.zeros(*shape), tt.zeros(1, 1, 3, 3), padding=2)


def test_other_convolutions_reject_empty_spatial_dims():
    with pytest.raises(RuntimeError, match=_MSG):
        F.conv1d(tt.zeros(1, 1, 0), tt.zeros(1, 1, 3), padding=2)
    with pytest.raises(RuntimeError, match=_MSG):
        F.conv3d(tt.zeros(1, 1, 0, 4, 4), tt.zeros(1, 1, 3, 3, 3), padding=2)
    with pytest.raises(RuntimeError, match=_MSG):
        F.conv_transpose2d(tt.zeros(1, 1, 0, 4), tt.zeros(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match=_MSG):
        F.conv_transpose3d(tt.zeros(1, 1, 4, 0, 4), tt.zeros(1, 1, 3, 3, 3))


def test_empty_batch_still_runs():
    x = tt.zeros(0, 1, 4, 4, requires_grad=True)
    w = tt.ones(2, 1, 3, 3, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    assert tuple(y.shape) == (0, 2, 4, 4)
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, 1, 4, 4)
    assert w.grad.abs().max().item() == 0.0
    assert tuple(F.conv1d(tt.zeros(0, 1, 5), tt.zeros(1, 1, 3)).shape) == (0, 1, 3)
