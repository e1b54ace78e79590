"""Activations composed from existing ops against numpy formulas: SELU, CELU, Softsign, Tanhshrink,
Threshold, GLU, Hardshrink, Softshrink, Softmin, Hardsigmoid, PReLU; RReLU (training and eval) and
gumbel_softmax (sampled frequencies); gradients by gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make


ALPHA, SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
ACTIVATIONS = {
    "selu": (nn.SELU(), lambda x: SCALE * np.where(x > 0, x, ALPHA * np.expm1(x))),
    "celu": (nn.CELU(0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x / 0.7))),
    "softsign": (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    "tanhshrink": (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    "threshold": (nn.Threshold(0.1, -2.0), lambda x: np.where(x > 0.1, x, -2.0)),
    "glu": (nn.GLU(1), lambda x: x[:, :2] / (1 + np.exp(-x[:, 2:]))),
    "hardshrink": (nn.Hardshrink(0.6), lambda x: np.where(np.abs(x) > 0.6, x, 0.0)),
    "softshrink": (nn.Softshrink(0.6), lambda x: np.where(x > 0.6, x - 0.6, np.where(x < -0.6, x + 0.6, 0.0))),
    "softmin": (nn.Softmin(1), lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True)),
    "hardsigmoid": (nn.Hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations(name, dtype, layout):
    module, ref = ACTIVATIONS[name]
    x, xr = make((3, 4, 5), dtype, layout, seed=len(name))
    rtol, atol = TOL[dtype]
    assert_close(module(x), ref(xr), dtype, (rtol * 4, atol * 4))
    xg, _ = make((2, 4, 3), "float64", seed=1, requires_grad=True)
    assert gradcheck(module, (xg,))


def test_prelu():
    m = nn.PReLU(3).double()
    with tt.no_grad():
        m.weight.copy_(tt.tensor([0.1, 0.2, 0.3], dtype=tt.float64))
    x, xr = make((2, 3, 4), "float64")
    assert_close(m(x), np.where(xr > 0, xr, xr * np.array([0.1, 0.2, 0.3])[None, :, None]))
    assert_close(nn.PReLU()(x.float()), np.where(xr > 0, xr, 0.25 * xr), "float32")
    x.requires_grad_()
    assert gradcheck(lambda a, w: F.prelu(a, w), (x, m.weight))


rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


def test_rrelu():
    x, xr = make((1000,), "float64", seed=19)
    lo, hi = 0.1, 0.4
    assert_close(F.rrelu(x, lo, hi, training=False), np.where(xr >= 0, xr, xr * (lo + hi) / 2), "float64")
    m = nn.RReLU(lo, hi)
    y = m(x).numpy()
    neg = xr < 0
    np.testing.assert_array_equal(y[~neg], xr[~neg])
    ratio = y[neg] / xr[neg]
    assert ratio.min() >= lo and ratio.max() <= hi and ratio.std() > 0.05
    m.eval()
    assert_close(m(x), np.where(xr >= 0, xr, xr * (lo + hi) / 2), "float64")


def test_gumbel_softmax():
    logits = _t64(rng.standard_normal((6, 5)), True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert_close(soft.sum(-1), np.ones(6), "float64")
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert np.all(h.sum(-1) == 1) and set(np.unique(h)) <= {0.0, 1.0}
    hard.sum().backward()  # straight-through: the soft sample's gradient (of a constant sum: zero)
    assert_close(logits.grad, np.zeros((6, 5)), "float64")
    # sampling frequencies follow softmax(logits)
    tt.manual_seed(0)
    base = tt.tensor([[1.0, 0.0, -1.0]]).expand(20000, 3)
    freq = F.gumbel_softmax(base, hard=True).numpy().mean(0)
    e = np.exp([1.0, 0.0, -1.0])
    assert np.allclose(freq, e / e.sum(), atol=0.02)
