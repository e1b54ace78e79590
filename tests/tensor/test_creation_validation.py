"""Argument checks of the factories, as PyTorch 2.x: sizes must be integers (TypeError for floats,
strings, bools), eye's n and m non-negative and normal's std >= 0 (RuntimeError)."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt


@pytest.mark.parametrize("call", [
    lambda: tt.ones(2.5),
    lambda: tt.zeros(("3",)),
    lambda: tt.zeros((2, 3.0)),
    lambda: tt.empty(2, 3.0),
    lambda: tt.zeros(True),
    lambda: tt.full((2, 3.0), 1.0),
    lambda: tt.ones([2, tt.tensor(1.0)]),
])
def test_sizes_must_be_integers(call):
    with pytest.raises(TypeError, match="must be tuple of ints"):
        call()


def test_integer_like_sizes_are_accepted():
    assert tuple(tt.zeros(np.int64(2), 3).shape) == (2, 3)
    assert tuple(tt.ones(tt.tensor(2), 3).shape) == (2, 3)
    assert tuple(tt.empty(tt.zeros(4, 1).shape).shape) == (4, 1)
    assert tuple(tt.full([2, np.int32(2)], 7).shape) == (2, 2)
    assert tuple(tt.zeros([]).shape) == ()


def test_eye_rejects_negative_sizes():
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -2"):
        tt.eye(3, -2)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        tt.eye(-1)
    assert tuple(tt.eye(3, 0).shape) == (3, 0) and tt.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]


@pytest.mark.parametrize("std", [-1.0, float("nan")])
def test_normal_rejects_negative_std(std):
    with pytest.raises(RuntimeError, match="std >= 0"):
        tt.normal(0.0, std, (3,))
    assert tuple(tt.normal(0.0, 0.0, (3,)).shape) == (3,)
