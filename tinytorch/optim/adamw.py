"""``AdamW``: Adam with decoupled weight decay (the fused Adam step with decoupled_weight_decay=True)."""
from __future__ import annotations

from tinytorch.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Implements the AdamW algorithm, as ``torch.optim.AdamW``: ``p *= 1 - lr * weight_decay`` before
    the Adam update, instead of adding ``weight_decay * p`` to the gradient."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize: bool = False, foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
