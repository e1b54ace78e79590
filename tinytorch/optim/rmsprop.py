"""``RMSprop`` (fused C++ step; centered and momentum variants)."""
from __future__ import annotations

from tinytorch.optim._hyperparameters import _check_hyperparameters
from tinytorch.optim.optimizer import ParamsT, _FusedOptimizer

__all__ = ["RMSprop"]


class RMSprop(_FusedOptimizer):
    r"""Implements the RMSprop algorithm, as ``torch.optim.RMSprop``:

    v = alpha * v + (1 - alpha) g^2; centered: ga = lerp(ga, g, 1 - alpha), avg = sqrt(v - ga^2) + eps,
    else avg = sqrt(v) + eps; momentum: b = momentum * b + g / avg, p -= lr * b; else p -= lr * g / avg.
    State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).
    """

    _kernel = "rmsprop_step_multi_"
    _step_dependent = False
    _args = ("lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize")

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_hyperparameters("RMSprop", differentiable, lr=lr, eps=eps, momentum=momentum,
                               weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _state_lists(self, group):
        optional = {"momentum_buffer": float(group["momentum"]) > 0, "grad_avg": bool(group["centered"])}
        return self._collect(group, ("square_avg",), optional=optional)
