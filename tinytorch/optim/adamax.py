"""``Adamax`` (fused C++ step)."""
from __future__ import annotations

from tinytorch.optim._hyperparameters import _check_hyperparameters
from tinytorch.optim.optimizer import ParamsT, _FusedOptimizer

__all__ = ["Adamax"]


class Adamax(_FusedOptimizer):
    r"""Implements the Adamax algorithm (Adam with the infinity norm), as ``torch.optim.Adamax``:

    m = lerp(m, g, 1 - beta1); u = max(beta2 * u, |g| + eps); p -= lr / (1 - beta1^t) * m / u.
    State: ``step``, ``exp_avg``, ``exp_inf``.
    """

    _kernel = "adamax_step_multi_"
    _buffers = ("exp_avg", "exp_inf")
    _args = ("lr", "betas", "eps", "weight_decay", "maximize")

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_hyperparameters("Adamax", differentiable, lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)
