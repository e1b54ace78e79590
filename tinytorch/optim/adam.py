"""``Adam`` (fused C++ step; ``decoupled_weight_decay=True`` is AdamW)."""
from __future__ import annotations

from tinytorch.optim.optimizer import ParamsT, _FusedOptimizer, _check_hyperparameters

__all__ = ["Adam"]


class Adam(_FusedOptimizer):
    r"""Implements the Adam algorithm, as ``torch.optim.Adam``.

    State per parameter: ``step`` (a one-element float32 tensor), ``exp_avg``, ``exp_avg_sq`` and,
    with amsgrad, ``max_exp_avg_sq`` (all with the parameter's dtype).
    """

    _kernel = "adam_step_multi_"
    _args = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "decoupled_weight_decay")

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _check_hyperparameters(type(self).__name__, differentiable, lr=lr, eps=eps, betas=betas,
                               weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _state_lists(self, group):
        return self._collect(group, ("exp_avg", "exp_avg_sq"), optional={"max_exp_avg_sq": bool(group["amsgrad"])})
