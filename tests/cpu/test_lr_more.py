"""MultiplicativeLR, ConstantLR, PolynomialLR, CyclicLR and ChainedScheduler against their
documented formulas, step by step."""
import math

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.optim import lr_scheduler as S


def _opt(kind="sgd"):
    p = tt.nn.Parameter(tt.zeros(2))
    return tt.optim.SGD([p], lr=0.1, momentum=0.9) if kind == "sgd" else tt.optim.Adam([p], lr=0.1)


def _trace(opt, sched, steps=20):
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        g = opt.param_groups[0]
        out.append((g["lr"], g["momentum"] if "momentum" in g else g["betas"][0]))
    return np.array(out)


def test_multiplicative_constant_polynomial_chained():
    o = _opt()
    lrs = _trace(o, S.MultiplicativeLR(o, lambda e: 0.95))[:, 0]
    np.testing.assert_allclose(lrs, 0.1 * 0.95 ** np.arange(1, 21))
    o = _opt()
    lrs = _trace(o, S.ConstantLR(o, factor=0.5, total_iters=4))[:, 0]
    np.testing.assert_allclose(lrs, [0.05] * 3 + [0.1] * 17)
    o = _opt()
    lrs = _trace(o, S.PolynomialLR(o, total_iters=10, power=2.0))[:, 0]
    e = np.minimum(np.arange(1, 21), 10)
    np.testing.assert_allclose(lrs, 0.1 * (1 - e / 10) ** 2, atol=1e-15)
    o = _opt()
    lrs = _trace(o, S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=3), S.ExponentialLR(o, 0.9)]))[:, 0]
    n = np.arange(1, 21)
    np.testing.assert_allclose(lrs, 0.1 * 0.9 ** n * np.where(n < 3, 0.5, 1.0))


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_cyclic(mode, kind):
    o = _opt(kind)
    got = _trace(o, S.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=5, mode=mode, gamma=0.97), 30)
    ref = []
    for it in range(1, 31):
        cycle = math.floor(1 + it / 8)
        x = 1 + it / 8 - cycle
        scale = x / (3 / 8) if x <= 3 / 8 else (x - 1) / (3 / 8 - 1)
        f = {"triangular": 1.0, "triangular2": 1 / 2 ** (cycle - 1), "exp_range": 0.97 ** it}[mode]
        ref.append((0.01 + 0.09 * scale * f, 0.9 - 0.1 * scale * f))
    np.testing.assert_allclose(got, np.array(ref), atol=1e-12)
    with pytest.raises(ValueError, match="momentum or beta1"):
        S.CyclicLR(tt.optim.Adagrad([tt.nn.Parameter(tt.zeros(1))]), 0.01, 0.1)
