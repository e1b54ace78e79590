"""``RAdam`` (fused C++ step)."""
from __future__ import annotations

from tinytorch.optim._hyperparameters import _check_hyperparameters
from tinytorch.optim.optimizer import ParamsT, _FusedOptimizer

__all__ = ["RAdam"]


class RAdam(_FusedOptimizer):
    r"""Implements the RAdam algorithm (rectified Adam), as ``torch.optim.RAdam``: while the
    variance rectification term rho_t <= 5 the step is SGD with momentum (p -= lr * m_hat), else
    the adaptive step scaled by the rectification factor. State: ``step``, ``exp_avg``, ``exp_avg_sq``.
    ``decoupled_weight_decay=True`` gives RAdamW.
    """

    _kernel = "radam_step_multi_"
    _buffers = ("exp_avg", "exp_avg_sq")
    _args = ("lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "maximize")

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyperparameters("RAdam", differentiable, lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)
