"""Gradient clipping: clip_grad_norm_, clip_grad_value_ (PyTorch's formulas and signatures)."""
from __future__ import annotations

import math
import warnings

from tinytorch import _C
from tinytorch._tensor.creation import tensor
from tinytorch._core.dtype import float32
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch._core.tensor_base import _wrap
from tinytorch.autograd.grad_mode import no_grad
from tinytorch._tensor.tensor import Tensor


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Scales the gradients of ``parameters`` in place so that their total norm (the norm of all
    gradients concatenated) is at most ``max_norm``; returns the total norm before clipping (a 0-dim
    float32 tensor, or the gradients' dtype when they share a wider one)."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return tensor(0.0)
    # As PyTorch's: the total norm and the coefficient stay on the gradients' device, so nothing is
    # read on the host (no synchronization, and the whole clip can be captured in a CUDA graph).
    out_dtype = grads[0].dtype if all(g.dtype == grads[0].dtype for g in grads) else float32
    groups = _by_dtype(grads) if _fused(grads, norm_type) else None  # the multi-tensor kernels' lists
    with no_grad():
        if math.isinf(norm_type):
            pick = "amax" if norm_type > 0 else "amin"
            norms = [getattr(g.detach().abs(), pick)().to(out_dtype) for g in grads]
            total = getattr(stack(norms), pick)()
        elif groups is not None:
            total = cat([_wrap(_C.multi_sum_squares([g._impl for g in gs])).sqrt().to(out_dtype)
                         for gs in groups]).norm(norm_type)
        else:
            norms = [g.detach().norm(norm_type).to(out_dtype) for g in grads]
            total = stack(norms).norm(norm_type)
        if error_if_nonfinite and not math.isfinite(float(total.item())):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        # PyTorch multiplies by min(coef, 1) unconditionally (a non-finite norm makes the grads NaN)
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        if groups is not None:
            for gs in groups:  # coef rounded to each gradient's dtype first, as the loop below
                _C.multi_scale_([g._impl for g in gs], coef.to(gs[0].dtype)._impl)
        else:
            for g in grads:
                g.mul_(coef if g.dtype == coef.dtype else coef.to(g.dtype))
    return total


def _fused(grads: list, norm_type: float) -> bool:
    """Whether the multi-tensor kernels apply: the 2-norm of contiguous gradients on one device
    (one or two launches for the whole list instead of four per gradient)."""
    return (norm_type == 2.0 and all(g.device == grads[0].device and g.is_contiguous() for g in grads)
            and all(g.dtype.is_floating_point for g in grads))


def _by_dtype(grads: list) -> list:
    groups: dict = {}
    for g in grads:
        groups.setdefault(g.dtype, []).append(g)
    return list(groups.values())


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn("`nn.utils.clip_grad_norm` is now deprecated in favor of `nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamps every gradient element of ``parameters`` to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
