"""``Adamax`` (fused C++ step)."""
from __future__ import annotations

from tinytorch import _C
from tinytorch.optim.optimizer import (
    Optimizer, _as_float, _check_betas, _check_eps, _check_lr, _check_not_differentiable, _check_weight_decay,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Implements the Adamax algorithm (Adam with the infinity norm), as ``torch.optim.Adamax``:

    m = lerp(m, g, 1 - beta1); u = max(beta2 * u, |g| + eps); p -= lr / (1 - beta1^t) * m / u.
    State: ``step``, ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr(lr)
        _check_eps(eps)
        _check_betas(betas)
        _check_weight_decay(weight_decay)
        _check_not_differentiable(differentiable, "Adamax")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_infs, steps = self._collect(group, ("exp_avg", "exp_inf"))
            if params:
                beta1, beta2 = group["betas"]
                _C.adamax_step_multi_(params, grads, exp_avgs, exp_infs, steps, _as_float(group["lr"]),
                                      _as_float(beta1), _as_float(beta2), float(group["eps"]),
                                      float(group["weight_decay"]), bool(group["maximize"]))
        return loss
