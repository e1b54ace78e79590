"""Constructor checks of optimizer hyperparameters, with PyTorch's messages: each by name, in
the order given, so the first invalid one is the one reported."""
from __future__ import annotations

from typing import Any, Callable

from tinytorch._tensor.tensor import Tensor


def _as_float(v) -> float:
    return float(v.item()) if isinstance(v, Tensor) else float(v)


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= _as_float(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_eps(eps) -> None:
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def _check_betas(betas) -> None:
    try:
        b0, b1 = betas
    except (TypeError, ValueError):
        raise ValueError(f"Invalid betas: expected a pair of floats, got {betas!r}") from None
    if isinstance(b0, Tensor) and b0.numel() != 1 or isinstance(b1, Tensor) and b1.numel() != 1:
        raise ValueError("Tensor betas must be 1-element")
    if not 0.0 <= _as_float(b0) < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {b0}")
    if not 0.0 <= _as_float(b1) < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {b1}")


def _check_weight_decay(wd) -> None:
    if not 0.0 <= wd:
        raise ValueError(f"Invalid weight_decay value: {wd}")


def _check_rho(rho) -> None:
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"Invalid rho value: {rho}")


def _check_not_differentiable(differentiable: bool, name: str) -> None:
    if differentiable:
        raise NotImplementedError(f"{name}: differentiable=True is not supported by tinytorch")


# Constructor checks by hyperparameter name; a name not listed here must be >= 0.
_CHECKS: dict[str, Callable[[Any], None]] = {
    "lr": _check_lr, "eps": _check_eps, "betas": _check_betas, "weight_decay": _check_weight_decay,
    "rho": _check_rho,
}


def _check_hyperparameters(name: str, differentiable: bool, **values) -> None:
    """Validates constructor hyperparameters in the order given (so the first invalid one is the
    one reported), then rejects ``differentiable=True``."""
    for key, value in values.items():
        check = _CHECKS.get(key)
        if check is not None:
            check(value)
        elif not 0.0 <= value:
            raise ValueError(f"Invalid {key} value: {value}")
    _check_not_differentiable(differentiable, name)
