"""F.elu_(input, alpha, scale, input_scale) as PyTorch's elu kernel: ``scale * x`` for x > 0, else
``scale * alpha * (exp(x * input_scale) - 1)``, written into the input; float64 numpy reference for the
values and the gradient (through a non-leaf)."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F

X = np.array([-30.0, -2.0, -0.5, 0.0, 0.25, 3.0, 40.0])


def _ref(x, alpha, scale, input_scale):
    return np.where(x > 0, scale * x, scale * alpha * np.expm1(x * input_scale))


def _dref(x, alpha, scale, input_scale):
    return np.where(x > 0, scale, scale * alpha * input_scale * np.exp(x * input_scale))


@pytest.mark.parametrize("alpha, scale, input_scale", [(1.0, 2.0, 0.5), (1.5, 1.0507, 1.0), (0.7, 1.0, 3.0),
                                                       (1.0, -0.5, -2.0)])
def test_elu_in_place_with_scales(alpha, scale, input_scale):
    x = tt.tensor(X)
    out = F.elu_(x, alpha, scale=scale, input_scale=input_scale)
    assert out is x
    np.testing.assert_allclose(x.numpy(), _ref(X, alpha, scale, input_scale), rtol=1e-12, atol=1e-15)

    leaf = tt.tensor(X, requires_grad=True)
    y = leaf * 1.0
    F.elu_(y, alpha, scale, input_scale).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), _dref(X, alpha, scale, input_scale), rtol=1e-12, atol=1e-15)
    assert np.isfinite(leaf.grad.numpy()).all()


def test_default_scales_are_elu():
    x = tt.tensor(X)
    np.testing.assert_allclose(F.elu_(x.clone(), 0.8).numpy(), F.elu(x, 0.8).numpy(), rtol=0, atol=0)
    np.testing.assert_allclose(F.elu_(x.clone(), 0.8, 1.0, 1.0).numpy(), _ref(X, 0.8, 1.0, 1.0), rtol=1e-12)
