"""``Adagrad`` (fused C++ step)."""
from __future__ import annotations

from tinytorch import _C
from tinytorch.optim.optimizer import (
    Optimizer, _as_float, _check_eps, _check_lr, _check_not_differentiable, _check_weight_decay, _full_like,
    scalar_state,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm, as ``torch.optim.Adagrad``:

    clr = lr / (1 + (step - 1) * lr_decay); sum += g^2; p -= clr * g / (sqrt(sum) + eps).
    State (created in the constructor, as PyTorch does): ``step``, ``sum``.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        _check_weight_decay(weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check_eps(eps)
        _check_not_differentiable(differentiable, "Adagrad")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = scalar_state(0.0)
                st["sum"] = _full_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            # state is normally created in the constructor; this covers a group added after it
            params, grads, sums, steps = self._collect(group, ("sum",), fill=group["initial_accumulator_value"])
            if params:
                _C.adagrad_step_multi_(params, grads, sums, steps, _as_float(group["lr"]), float(group["lr_decay"]),
                                       float(group["weight_decay"]), float(group["eps"]), bool(group["maximize"]))
        return loss
