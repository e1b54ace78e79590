"""cat of a legacy empty (0,) tensor with an N-D one (backward included) and views at indices
past 2**31 (select, narrow, slice starts and steps), as PyTorch 2.x."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import assert_close, make

BIG = 2 ** 31


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_skips_legacy_empty_1d_tensor_with_gradient(dim):
    a, ra = make((2, 3), "float64", seed=1, requires_grad=True)
    b, rb = make((2, 3), "float64", seed=2, requires_grad=True)
    empty = tt.zeros(0, dtype=tt.float64, requires_grad=True)
    y = tt.cat([a, empty, b], dim)
    ref = np.concatenate([ra, rb], dim)
    assert_close(y, ref, "float64")
    w = np.random.default_rng(3).uniform(-1, 1, ref.shape)
    (y * tt.tensor(w)).sum().backward()
    ga, gb = np.split(w, 2, axis=dim)
    assert_close(a.grad, ga, "float64")
    assert_close(b.grad, gb, "float64")
    assert tuple(empty.grad.shape) == (0,)


def _rows():
    """(4, 2**32) view of 4 values (row i holds i): a big shape over a small storage."""
    return tt.arange(4.0).reshape(4, 1).expand(4, 2 ** 32)


def test_integer_index_past_2_31():
    x = _rows()
    assert x[3, BIG + 15].item() == 3.0
    assert x[2, -(BIG + 15)].item() == 2.0
    assert x.select(1, BIG + 1).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_narrow_and_slice_past_2_31():
    x = _rows()
    n = x.narrow(1, BIG + 1, 3)
    assert tuple(n.shape) == (4, 3) and n[1].tolist() == [1.0, 1.0, 1.0]
    assert tuple(x.narrow(1, -(BIG + 1), 2).shape) == (4, 2)
    assert tuple(x[:, BIG + 5: BIG + 9].shape) == (4, 4)
    s = x[:, ::BIG + 1]                      # positions 0 and 2**31 + 1
    assert tuple(s.shape) == (4, 2) and s[3].tolist() == [3.0, 3.0]
    assert tuple(tt.zeros(5)[::BIG].shape) == (1,)
