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
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if any(getattr(p, "_shard_process_group", None) is not None for p in parameters if p.grad is not None):
        return _clip_sharded(parameters, max_norm, norm_type, error_if_nonfinite)
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


def _clip_sharded(parameters: list, max_norm: float, norm_type: float, error_if_nonfinite: bool) -> Tensor:
    """clip_grad_norm_ over parameters of which some are shards (``fully_shard``'s: each carries the
    process group its rows are split over): the total norm is that of the whole gradients, so each
    group's shards contribute their sum of ``|g|**p`` (their max for the inf-norm), all-reduced
    over the group (every rank of it calls this), and the other parameters (replicated, the same
    on every rank) their own, counted once. Then the usual scaling by ``max_norm / total``."""
    from tinytorch import distributed as dist   # lazily: nn does not load distributed
    if norm_type <= 0 and not math.isinf(norm_type):
        raise ValueError(f"clip_grad_norm_: norm_type {norm_type} over sharded parameters is not supported "
                         "(use a positive p or inf)")
    by_group: dict = {}
    local = []
    for p in parameters:
        if p.grad is None:
            continue
        pg = getattr(p, "_shard_process_group", None)
        (by_group.setdefault(id(pg), (pg, []))[1] if pg is not None else local).append(p.grad)
    grads = [g for _, gs in by_group.values() for g in gs] + local
    out_dtype = grads[0].dtype if all(g.dtype == grads[0].dtype for g in grads) else float32
    inf = math.isinf(norm_type)
    with no_grad():
        pick = "amax" if norm_type > 0 else "amin"
        empty_value = 0.0 if norm_type > 0 else math.inf     # a shard with no rows adds nothing

        def part(gs):   # a list's max |g| (inf-norm) or sum of |g|**p, as a 1-element tensor
            if inf:
                each = [getattr(g.detach().abs(), pick)().to(out_dtype) if g.numel()
                        else tensor(empty_value, dtype=out_dtype, device=g.device) for g in gs]
                return getattr(stack(each), pick)().reshape(1)
            norms = stack([g.detach().norm(norm_type).to(out_dtype) for g in gs])
            return norms.norm(norm_type).pow(norm_type).reshape(1)
        parts = []
        for pg, gs in by_group.values():
            t = part(gs).contiguous()
            op = (dist.ReduceOp.MAX if norm_type > 0 else dist.ReduceOp.MIN) if inf else dist.ReduceOp.SUM
            dist.all_reduce(t, op=op, group=pg)
            parts.append(t)
        if local:
            parts.append(part(local).to(parts[0].device) if parts else part(local))
        both = cat(parts)
        if inf:
            total = both.amax() if norm_type > 0 else both.amin()
        else:
            total = both.sum().pow(1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(float(total.item())):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            same = g.dtype == coef.dtype and g.device == coef.device
            g.mul_(coef if same else coef.to(dtype=g.dtype, device=g.device))
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
