"""``Adam`` (fused C++ step; ``decoupled_weight_decay=True`` is AdamW)."""
from __future__ import annotations

from tinytorch import _C
from tinytorch._tensor.tensor import Tensor
from tinytorch.optim._hyperparameters import _check_hyperparameters
from tinytorch.optim.optimizer import ParamsT, _FusedOptimizer

__all__ = ["Adam"]


class Adam(_FusedOptimizer):
    r"""Implements the Adam algorithm, as ``torch.optim.Adam``.

    State per parameter: ``step`` (a one-element float32 tensor), ``exp_avg``, ``exp_avg_sq`` and,
    with amsgrad, ``max_exp_avg_sq`` (all with the parameter's dtype).

    ``capturable=True`` keeps ``step`` on the parameter's device and computes the bias corrections
    there (``lr`` may be a one-element device tensor), so the step can be captured in a CUDA graph
    and replayed; without it a capture raises, as PyTorch's does.
    """

    _kernel = "adam_step_multi_"
    _args = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "decoupled_weight_decay")

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _check_hyperparameters(type(self).__name__, differentiable, lr=lr, eps=eps, betas=betas,
                               weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _state_lists(self, group):
        return self._collect(group, ("exp_avg", "exp_avg_sq"), optional={"max_exp_avg_sq": bool(group["amsgrad"])})

    def _capturable_step(self, group) -> None:
        # PyTorch's capturable Adam: every quantity that changes per step is a device tensor (step,
        # and lr when given as one), incremented and read by the fused kernel on the device, so
        # nothing is read on the host and a CUDA graph replays the current values.
        params, grads, exp_avgs, exp_avg_sqs, max_sqs, _ = self._state_lists(group)
        if not params:
            return
        steps = [s._impl for s in self._device_steps(group)]
        lr = group["lr"]
        lr_tensor = lr._impl if isinstance(lr, Tensor) else None
        beta1, beta2 = (float(b) for b in group["betas"])
        _C.adam_step_capturable_multi_(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, lr_tensor,
                                       0.0 if lr_tensor is not None else float(lr), beta1, beta2,
                                       float(group["eps"]), float(group["weight_decay"]), bool(group["amsgrad"]),
                                       bool(group["maximize"]), bool(group["decoupled_weight_decay"]))
