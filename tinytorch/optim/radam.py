"""``RAdam`` (fused C++ step)."""
from __future__ import annotations

from tinytorch import _C
from tinytorch.optim.optimizer import (
    Optimizer, _as_float, _check_betas, _check_eps, _check_lr, _check_not_differentiable, _check_weight_decay,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""Implements the RAdam algorithm (rectified Adam), as ``torch.optim.RAdam``: while the
    variance rectification term rho_t <= 5 the step is SGD with momentum (p -= lr * m_hat), else
    the adaptive step scaled by the rectification factor. State: ``step``, ``exp_avg``, ``exp_avg_sq``.
    ``decoupled_weight_decay=True`` gives RAdamW.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_eps(eps)
        _check_betas(betas)
        _check_weight_decay(weight_decay)
        _check_not_differentiable(differentiable, "RAdam")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, steps = self._collect(group, ("exp_avg", "exp_avg_sq"))
            if params:
                beta1, beta2 = group["betas"]
                _C.radam_step_multi_(params, grads, exp_avgs, exp_avg_sqs, steps, _as_float(group["lr"]),
                                     _as_float(beta1), _as_float(beta2), float(group["eps"]),
                                     float(group["weight_decay"]), bool(group["decoupled_weight_decay"]),
                                     bool(group["maximize"]))
        return loss
