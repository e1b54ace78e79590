"""``Adam`` (fused C++ step; ``decoupled_weight_decay=True`` is AdamW)."""
from __future__ import annotations

from tinytorch import _C
from tinytorch.optim.optimizer import (
    Optimizer, _as_float, _check_betas, _check_eps, _check_lr, _check_not_differentiable, _check_weight_decay,
)

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Implements the Adam algorithm, as ``torch.optim.Adam``.

    State per parameter: ``step`` (a one-element float32 tensor), ``exp_avg``, ``exp_avg_sq`` and,
    with amsgrad, ``max_exp_avg_sq`` (all with the parameter's dtype).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused=None, decoupled_weight_decay: bool = False) -> None:
        _check_lr(lr)
        _check_eps(eps)
        _check_betas(betas)
        _check_weight_decay(weight_decay)
        _check_not_differentiable(differentiable, type(self).__name__)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            amsgrad = bool(group["amsgrad"])
            params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps = self._collect(
                group, ("exp_avg", "exp_avg_sq"), optional={"max_exp_avg_sq": amsgrad})
            if params:
                beta1, beta2 = group["betas"]
                _C.adam_step_multi_(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, _as_float(group["lr"]),
                                    _as_float(beta1), _as_float(beta2), float(group["eps"]),
                                    float(group["weight_decay"]), amsgrad, bool(group["maximize"]),
                                    bool(group.get("decoupled_weight_decay", False)))
        return loss
