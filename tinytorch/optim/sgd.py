"""``SGD``: stochastic gradient descent with momentum/dampening/Nesterov/weight decay (fused C++ step)."""
from __future__ import annotations

from typing import Any, Callable

from tinytorch import _C
from tinytorch.optim._hyperparameters import _as_float, _check_lr, _check_not_differentiable, _check_weight_decay
from tinytorch.optim.optimizer import ParamsT, Optimizer, _zeros_like

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``:

    g = grad (negated when maximize) + weight_decay * p; with momentum,
    b = g on the first step else momentum * b + (1 - dampening) * g, and g = g + momentum * b
    (nesterov) or g = b; then p -= lr * g.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        _check_weight_decay(weight_decay)
        _check_not_differentiable(differentiable, "SGD")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        state = self.state
        for group in self.param_groups:
            momentum = group["momentum"]
            params, grads, bufs = [], [], []
            new_params, new_grads, new_bufs = [], [], []
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if momentum != 0:
                    st = state[p]
                    buf = st.get("momentum_buffer")
                    if buf is None:
                        buf = st["momentum_buffer"] = _zeros_like(p)
                        new_params.append(p._impl)
                        new_grads.append(g._impl)
                        new_bufs.append(buf._impl)
                        continue
                    bufs.append(buf._impl)
                params.append(p._impl)
                grads.append(g._impl)
            args = (_as_float(group["lr"]), float(momentum), float(group["dampening"]),
                    float(group["weight_decay"]), bool(group["nesterov"]), bool(group["maximize"]))
            if params:
                _C.sgd_step_multi_(params, grads, bufs, *args, False)
            if new_params:
                _C.sgd_step_multi_(new_params, new_grads, new_bufs, *args, True)
        return loss
