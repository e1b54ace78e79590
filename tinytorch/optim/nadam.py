"""``NAdam`` (fused C++ step)."""
from __future__ import annotations

from tinytorch.optim._hyperparameters import _check_hyperparameters
from tinytorch.optim.optimizer import ParamsT, _FusedOptimizer

__all__ = ["NAdam"]


class NAdam(_FusedOptimizer):
    r"""Implements the NAdam algorithm (Adam with Nesterov momentum), as ``torch.optim.NAdam``.

    mu_t = beta1 (1 - 0.5 * 0.96^(t * momentum_decay)); state: ``step``, ``mu_product`` (the running
    product of mu_t, a one-element float32 tensor), ``exp_avg``, ``exp_avg_sq``.
    ``decoupled_weight_decay=True`` gives NAdamW.
    """

    _kernel = "nadam_step_multi_"
    _args = ("lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize")

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_hyperparameters("NAdam", differentiable, lr=lr, eps=eps, betas=betas, weight_decay=weight_decay,
                               momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _state_lists(self, group):
        return self._collect(group, ("exp_avg", "exp_avg_sq"), scalars={"mu_product": 1.0})
