"""l1_loss(weight=) and mse_loss(weight=) as PyTorch 2.13's: the loss times the weight, whose mean
divides by the summed weights; float64 numpy references for the values and the input gradient."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F

rng = np.random.default_rng(5)
X, Y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
W = rng.uniform(0.1, 2.0, (4, 3))

LOSSES = {"l1_loss": (F.l1_loss, lambda d: np.abs(d), lambda d: np.sign(d)),
          "mse_loss": (F.mse_loss, lambda d: d * d, lambda d: 2 * d)}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_loss_and_gradient(name, reduction):
    fn, elementwise, derivative = LOSSES[name]
    d = X - Y
    weighted = W * elementwise(d)
    total = {"mean": weighted.sum() / W.sum(), "sum": weighted.sum(), "none": weighted}[reduction]
    x = tt.tensor(X, requires_grad=True)
    out = fn(x, tt.tensor(Y), reduction=reduction, weight=tt.tensor(W))
    np.testing.assert_allclose(out.detach().numpy(), total, rtol=1e-12, atol=0)
    out.sum().backward()
    grad = W * derivative(d) / (W.sum() if reduction == "mean" else 1.0)
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-12, atol=0)


def test_weighted_l1_mean_is_not_the_plain_mean():
    x, y = tt.tensor([1.0, 2.0]), tt.tensor([0.0, 0.0])
    assert F.l1_loss(x, y, weight=tt.tensor([1.0, 3.0])).item() == pytest.approx(7.0 / 4.0)
    assert F.l1_loss(x, y, weight=tt.tensor([1.0, 1.0])).item() == pytest.approx(F.l1_loss(x, y).item())
    assert F.l1_loss(x, y, None, None, "sum", tt.tensor([1.0, 3.0])).item() == pytest.approx(7.0)   # positional


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_weight_of_another_shape_raises(name):
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        LOSSES[name][0](tt.tensor(X), tt.tensor(Y), weight=tt.ones(3))
