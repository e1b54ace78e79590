"""``RMSprop`` (fused C++ step; centered and momentum variants)."""
from __future__ import annotations

from tinytorch import _C
from tinytorch.optim.optimizer import (
    Optimizer, _as_float, _check_eps, _check_lr, _check_not_differentiable, _check_weight_decay,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""Implements the RMSprop algorithm, as ``torch.optim.RMSprop``:

    v = alpha * v + (1 - alpha) g^2; centered: ga = lerp(ga, g, 1 - alpha), avg = sqrt(v - ga^2) + eps,
    else avg = sqrt(v) + eps; momentum: b = momentum * b + g / avg, p -= lr * b; else p -= lr * g / avg.
    State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_eps(eps)
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        _check_weight_decay(weight_decay)
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _check_not_differentiable(differentiable, "RMSprop")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            momentum = float(group["momentum"])
            centered = bool(group["centered"])
            params, grads, square_avgs, bufs, grad_avgs, steps = self._collect(
                group, ("square_avg",), optional={"momentum_buffer": momentum > 0, "grad_avg": centered})
            if params:
                _C.rmsprop_step_multi_(params, grads, square_avgs, bufs, grad_avgs, steps, _as_float(group["lr"]),
                                       float(group["alpha"]), float(group["eps"]), float(group["weight_decay"]),
                                       momentum, centered, bool(group["maximize"]))
        return loss
