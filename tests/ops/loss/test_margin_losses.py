"""multilabel_margin_loss and triplet_margin_with_distance_loss against float64 numpy (every
reduction; swap), and nll_loss2d as nll_loss."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make


rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


def _np_multilabel_margin(x, y):
    c = x.shape[-1]
    tgt = []
    for v in y:
        if v < 0:
            break
        tgt.append(v)
    return sum(max(0.0, 1 - (x[j] - x[i])) for j in tgt for i in range(c) if i not in tgt) / c


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multilabel_margin_loss(reduction, dtype):
    x, xr = make((4, 5), dtype, "transposed", seed=16)
    y = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 0, 1, 2, 3], [2, 2, -1, -1, -1]])
    per = np.array([_np_multilabel_margin(xr[b], y[b]) for b in range(4)])
    want = {"none": per, "mean": per.mean(), "sum": per.sum()}[reduction]
    assert_close(nn.MultiLabelMarginLoss(reduction=reduction)(x, tt.tensor(y)), want, dtype)
    assert_close(F.multilabel_margin_loss(x[0], tt.tensor(y[0])), per[0], dtype)
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, tt.tensor(y)), (_t64(xr * 0.37, True),))


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss(swap):
    a, p, n = (rng.standard_normal((5, 3)) for _ in range(3))

    def l1(u, v):
        return (u - v).abs().sum(-1)

    d = lambda u, v: np.abs(u - v).sum(-1)  # noqa: E731
    dan = np.minimum(d(a, n), d(p, n)) if swap else d(a, n)
    ref = np.maximum(d(a, p) - dan + 0.7, 0)
    loss = nn.TripletMarginWithDistanceLoss(distance_function=l1, margin=0.7, swap=swap, reduction="none")
    assert_close(loss(_t64(a), _t64(p), _t64(n)), ref, "float64")
    # default distance: pairwise_distance (eps 1e-6 added to the difference)
    dp = lambda u, v: np.linalg.norm(u - v + 1e-6, axis=-1)  # noqa: E731
    assert_close(F.triplet_margin_with_distance_loss(_t64(a), _t64(p), _t64(n)),
                 np.maximum(dp(a, p) - dp(a, n) + 1.0, 0).mean(), "float64")
    assert gradcheck(lambda u, v, w: loss(u, v, w), tuple(_t64(z, True) for z in (a, p, n)))
    with pytest.raises(ValueError, match="margin"):
        nn.TripletMarginWithDistanceLoss(margin=0.0)


def test_nll_loss2d_is_nll_loss():
    x = F.log_softmax(make((2, 3, 4, 4), seed=17)[0], 1)
    y = tt.tensor(rng.integers(0, 3, (2, 4, 4)))
    assert_close(nn.NLLLoss2d()(x, y), F.nll_loss(x, y).numpy(), "float32")
