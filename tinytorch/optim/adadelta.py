"""``Adadelta`` (fused C++ step)."""
from __future__ import annotations

from tinytorch.optim._hyperparameters import _check_hyperparameters
from tinytorch.optim.optimizer import ParamsT, _FusedOptimizer

__all__ = ["Adadelta"]


class Adadelta(_FusedOptimizer):
    r"""Implements the Adadelta algorithm, as ``torch.optim.Adadelta``:

    v = rho * v + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(v + eps) * g; u = rho * u + (1 - rho) d^2;
    p -= lr * d. State: ``step``, ``square_avg`` (v), ``acc_delta`` (u).
    """

    _kernel = "adadelta_step_multi_"
    _step_dependent = False
    _buffers = ("square_avg", "acc_delta")
    _args = ("lr", "rho", "eps", "weight_decay", "maximize")

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_hyperparameters("Adadelta", differentiable, lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)
