"""A few optimizer steps on a mean squared error, for the tests that check a layer trains."""
from __future__ import annotations


def fit_mse(model, opt, x, target, steps: int) -> tuple[float, float]:
    """``steps`` steps of ``opt`` on mean((model(x) - target) ** 2); returns the first and the last
    step's loss (each measured before its update)."""
    first = None
    for _ in range(steps):
        loss = ((model(x) - target) ** 2).mean()
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return first, loss.item()
