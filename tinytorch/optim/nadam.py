"""``NAdam`` (fused C++ step)."""
from __future__ import annotations

from tinytorch import _C
from tinytorch.optim.optimizer import (
    Optimizer, _as_float, _check_betas, _check_eps, _check_lr, _check_not_differentiable, _check_weight_decay,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""Implements the NAdam algorithm (Adam with Nesterov momentum), as ``torch.optim.NAdam``.

    mu_t = beta1 (1 - 0.5 * 0.96^(t * momentum_decay)); state: ``step``, ``mu_product`` (the running
    product of mu_t, a one-element float32 tensor), ``exp_avg``, ``exp_avg_sq``.
    ``decoupled_weight_decay=True`` gives NAdamW.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_eps(eps)
        _check_betas(betas)
        _check_weight_decay(weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _check_not_differentiable(differentiable, "NAdam")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, mu_products, steps = self._collect(
                group, ("exp_avg", "exp_avg_sq"), scalars={"mu_product": 1.0})
            if params:
                beta1, beta2 = group["betas"]
                _C.nadam_step_multi_(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps,
                                     _as_float(group["lr"]), _as_float(beta1), _as_float(beta2), float(group["eps"]),
                                     float(group["weight_decay"]), float(group["momentum_decay"]),
                                     bool(group["decoupled_weight_decay"]), bool(group["maximize"]))
        return loss
