"""``AdamW``: Adam with decoupled weight decay (the fused Adam step with decoupled_weight_decay=True)."""
from __future__ import annotations

from tinytorch.optim.optimizer import ParamsT

from tinytorch.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Implements the AdamW algorithm, as ``torch.optim.AdamW``: ``p *= 1 - lr * weight_decay`` before
    the Adam update, instead of adding ``weight_decay * p`` to the gradient."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
