"""optim.LBFGS (fixed step and strong Wolfe line search) on a quadratic with a known minimum and
on Rosenbrock's function, and its argument errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.optim as optim
from test_optim import np64


def _rosenbrock(xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_quadratic(line_search_fn):
    rng = np.random.default_rng(0)
    m = rng.normal(size=(6, 6))
    a_np = m @ m.T + 6 * np.eye(6)
    b_np = rng.normal(size=6)
    a = tt.tensor(a_np, dtype=tt.float64)
    b = tt.tensor(b_np, dtype=tt.float64)
    x = tt.zeros(6, dtype=tt.float64, requires_grad=True)
    opt = optim.LBFGS([x], lr=1, max_iter=100, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x * (a @ x)).sum() - (b * x).sum()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(np64(x), np.linalg.solve(a_np, b_np), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_rosenbrock(line_search_fn):
    xy = tt.tensor([-1.5, 2.0], dtype=tt.float64, requires_grad=True)
    opt = optim.LBFGS([xy], lr=1 if line_search_fn else 0.1, max_iter=200, history_size=10,
                      line_search_fn=line_search_fn, tolerance_grad=1e-10, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(xy)
        loss.backward()
        return loss

    for _ in range(10):
        opt.step(closure)
    np.testing.assert_allclose(np64(xy), [1.0, 1.0], atol=1e-3)
    assert opt.state[xy]["func_evals"] > 0 and opt.state[xy]["n_iter"] > 0


def test_lbfgs_errors():
    w = tt.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="strong_wolfe"):
        optim.LBFGS([w], line_search_fn="backtracking")
    with pytest.raises(TypeError, match="closure"):  # as PyTorch: step(closure) is required
        optim.LBFGS([w]).step()
    assert optim.LBFGS([w], max_iter=8).defaults["max_eval"] == 10
