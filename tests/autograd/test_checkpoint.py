"""tinytorch.utils.checkpoint: the same values and gradients as running the function directly
(dropout included, through the saved RNG state), for Modules, closures and sequential segments;
the unsupported uses raise."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.utils.checkpoint import checkpoint, checkpoint_sequential
from support.numeric import to_numpy


def _net():
    tt.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 2)).double()


def _grads(net, x):
    return [to_numpy(p.grad) for p in net.parameters()] + ([to_numpy(x.grad)] if x.grad is not None else [])


@pytest.mark.parametrize("x_requires_grad", [False, True])
def test_checkpoint_module_matches_plain_run(x_requires_grad):
    net = _net()
    x = tt.randn(5, 4, dtype=tt.float64).requires_grad_(x_requires_grad)
    tt.manual_seed(7)
    (net(x) ** 2).sum().backward()
    plain = _grads(net, x)
    net.zero_grad()
    x.grad = None
    tt.manual_seed(7)
    (checkpoint(net, x) ** 2).sum().backward()
    for a, b in zip(plain, _grads(net, x)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def test_checkpoint_closure_and_sequential():
    net = _net()
    x = tt.randn(5, 4, dtype=tt.float64, requires_grad=True)
    tt.manual_seed(3)
    (net(x).sin()).sum().backward()
    plain = _grads(net, x)
    for run in (lambda: checkpoint(lambda t: net(t), x), lambda: checkpoint_sequential(net, 3, x)):
        net.zero_grad()
        x.grad = None
        tt.manual_seed(3)
        run().sin().sum().backward()
        for a, b in zip(plain, _grads(net, x)):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def test_checkpoint_unsupported_uses_raise():
    net = _net()
    x = tt.randn(2, 4, dtype=tt.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="not compatible with autograd.grad"):
        tt.autograd.grad(checkpoint(net, x).sum(), x)
    with pytest.raises(NotImplementedError, match="use_reentrant=False"):
        checkpoint(net, x, use_reentrant=False)
    with pytest.warns(UserWarning, match="none of the inputs have requires_grad"):
        checkpoint(lambda t: t * 2, tt.ones(2))
