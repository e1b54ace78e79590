"""``Adadelta`` (fused C++ step)."""
from __future__ import annotations

from tinytorch import _C
from tinytorch.optim.optimizer import (
    Optimizer, _as_float, _check_eps, _check_lr, _check_not_differentiable, _check_weight_decay,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm, as ``torch.optim.Adadelta``:

    v = rho * v + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(v + eps) * g; u = rho * u + (1 - rho) d^2;
    p -= lr * d. State: ``step``, ``square_avg`` (v), ``acc_delta`` (u).
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable: bool = False, maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_eps(eps)
        _check_weight_decay(weight_decay)
        _check_not_differentiable(differentiable, "Adadelta")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads, square_avgs, acc_deltas, steps = self._collect(group, ("square_avg", "acc_delta"))
            if params:
                _C.adadelta_step_multi_(params, grads, square_avgs, acc_deltas, steps, _as_float(group["lr"]),
                                        float(group["rho"]), float(group["eps"]), float(group["weight_decay"]),
                                        bool(group["maximize"]))
        return loss
