"""Margin, ranking, triplet, Poisson, Gaussian and multi-label losses against numpy formulas
(PyTorch's documented definitions) for every reduction; gradients by gradcheck."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.autograd import gradcheck
from support.numeric import assert_close

rng = np.random.default_rng(0)
A, B, C = rng.standard_normal((3, 5, 4))
SIGN = np.where(rng.random(5) > 0.5, 1.0, -1.0)
SIGN4 = np.where(rng.random((5, 4)) > 0.5, 1.0, -1.0)
COUNTS = rng.poisson(2.0, (5, 4)).astype(float)
LABELS = (rng.random((5, 4)) > 0.5).astype(float)
CLASSES = rng.integers(0, 4, 5)
W4 = rng.uniform(0.5, 2, 4)
VAR = rng.uniform(0.1, 2, (5, 4))


def softplus(v):
    return np.log1p(np.exp(v))


def _stirling(t):
    return np.where(t > 1, t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * math.pi * np.maximum(t, 1)), 0.0)


def _multi_margin(x, y, p, margin, w):
    h = np.maximum(0, margin - x[np.arange(5), y][:, None] + x) ** p * w[y][:, None]
    h[np.arange(5), y] = 0
    return h.sum(1) / 4


T = tt.tensor
CASES = {  # name: (module, args after x, numpy per-element or per-sample loss of x)
    "margin_ranking": (nn.MarginRankingLoss(0.3), lambda x: (x[:, 0], x[:, 1], T(SIGN)),
                       lambda x: np.maximum(0, -SIGN * (x[:, 0] - x[:, 1]) + 0.3)),
    "hinge": (nn.HingeEmbeddingLoss(0.5), lambda x: (x, T(SIGN4)),
              lambda x: np.where(SIGN4 == 1, x, np.maximum(0, 0.5 - x))),
    "soft_margin": (nn.SoftMarginLoss(), lambda x: (x, T(SIGN4)), lambda x: softplus(-SIGN4 * x)),
    "triplet": (nn.TripletMarginLoss(0.5, p=3.0), lambda x: (x, T(B), T(C)),
                lambda x: np.maximum((np.abs(x - B + 1e-6) ** 3).sum(1) ** (1 / 3)
                                     - (np.abs(x - C + 1e-6) ** 3).sum(1) ** (1 / 3) + 0.5, 0)),
    "poisson": (nn.PoissonNLLLoss(), lambda x: (x, T(COUNTS)), lambda x: np.exp(x) - COUNTS * x),
    "poisson_full": (nn.PoissonNLLLoss(log_input=False, full=True), lambda x: (x.exp(), T(COUNTS)),
                     lambda x: np.exp(x) - COUNTS * np.log(np.exp(x) + 1e-8) + _stirling(COUNTS)),
    "gaussian": (nn.GaussianNLLLoss(full=True), lambda x: (x, T(B), T(VAR)),
                 lambda x: 0.5 * (np.log(VAR) + (x - B) ** 2 / VAR) + 0.5 * math.log(2 * math.pi)),
    "multilabel": (nn.MultiLabelSoftMarginLoss(T(W4)), lambda x: (x, T(LABELS)),
                   lambda x: (-(LABELS * -softplus(-x) + (1 - LABELS) * -softplus(x)) * W4).mean(1)),
    "multi_margin": (nn.MultiMarginLoss(p=2, margin=0.7, weight=T(W4)), lambda x: (x, T(CLASSES)),
                     lambda x: _multi_margin(x, CLASSES, 2, 0.7, W4)),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_losses_match_formulas(name, reduction):
    module, args, ref = CASES[name]
    module.reduction = reduction
    x = tt.tensor(A, requires_grad=True)
    r = ref(A)
    assert_close(module(*args(x)), {"none": r, "mean": r.mean(), "sum": r.sum()}[reduction])
    assert gradcheck(lambda t: module(*args(t)), (x,))


def test_loss_errors():
    with pytest.raises(ValueError, match="negative"):
        nn.GaussianNLLLoss()(T(A), T(B), T(-VAR))
    with pytest.raises(ValueError, match="p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)(T(A), T(CLASSES))
