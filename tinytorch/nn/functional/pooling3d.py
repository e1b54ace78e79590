"""3-D pooling with indices and its inverses: max_pool3d_with_indices,
adaptive_max_pool3d_with_indices, max_unpool3d, lp_pool3d.

max_pool3d_with_indices pools each depth plane with ``max_pool2d_with_indices`` (values and the
flat h * W + w position of each plane's maximum), then takes the maximum over the kD planes each
output depth reads (first one on ties, so the first maximum in (d, h, w) scan order, as
PyTorch's); the flat 3-D index is ``d * H * W + (h * W + w)``. Gradients flow through the 2-D
pooling and the gather of the winning plane. The adaptive version does the same with the
adaptive windows (a shorter depth window repeats its last plane, which changes no maximum)."""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

from tinytorch._creation import arange, full, tensor as _tensor
from tinytorch._ops import elementwise as _E
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch.nn.functional.pooling import (
    _adaptive_sizes, _triple, _unpool, _unpool_size, adaptive_max_pool2d, avg_pool3d, max_pool2d_with_indices,
)
from tinytorch.tensor import Tensor

__all__ = ["max_pool3d_with_indices", "adaptive_max_pool3d_with_indices", "max_unpool3d", "lp_pool3d"]


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output length (a last window must start inside the input or left padding)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Tuple[Tensor, Tensor]:
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W), with the flat (D, H, W) position of
    each maximum (int64, for ``max_unpool3d``)."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"max_pool3d: expected a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input, got "
                           f"{list(input.shape)}")
    k, p, dl = _triple(kernel_size, "kernel_size"), _triple(padding, "padding"), _triple(dilation, "dilation")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _triple(stride, "stride")
    if any(2 * pad > kk for pad, kk in zip(p, k)):
        raise RuntimeError(f"max_pool3d: pad should be at most half of effective kernel size, but got pad={list(p)} "
                           f"and kernel_size={list(k)}")
    lead, (d, h, w) = list(input.shape[:-3]), input.shape[-3:]
    planes, flat_hw = max_pool2d_with_indices(input.reshape(-1, d, h, w), k[1:], s[1:], p[1:], dl[1:], ceil_mode,
                                              True)                       # (B, D, Ho, Wo) each
    b, _, ho, wo = planes.shape
    d_out = _pool_out(d, k[0], s[0], p[0], dl[0], ceil_mode)
    if d_out <= 0 or ho <= 0 or wo <= 0:
        raise RuntimeError(f"max_pool3d: the output size ({d_out}, {ho}, {wo}) is too small for input "
                           f"{list(input.shape)}")
    # pad the depth with -inf planes so every window reads kD existing planes
    need = (d_out - 1) * s[0] + dl[0] * (k[0] - 1) + 1
    right = max(need - p[0] - d, 0)
    if p[0] or right:
        neg = full((b, p[0], ho, wo), -math.inf, dtype=planes.dtype, device=planes.device)
        tail = full((b, right, ho, wo), -math.inf, dtype=planes.dtype, device=planes.device)
        planes = cat([neg, planes, tail], 1)
        zero_l = flat_hw.new_zeros((b, p[0], ho, wo))
        zero_r = flat_hw.new_zeros((b, right, ho, wo))
        flat_hw = cat([zero_l, flat_hw, zero_r], 1)
    depth = (arange(planes.shape[1], device=planes.device) - p[0]).reshape(1, -1, 1, 1)
    flat = flat_hw + depth * (h * w)                                        # flat (D, H, W) positions
    taps = [slice(j * dl[0], j * dl[0] + (d_out - 1) * s[0] + 1, s[0]) for j in range(k[0])]
    vals = stack([planes[:, t] for t in taps], 1)                           # (B, kD, Do, Ho, Wo)
    where = stack([flat[:, t] for t in taps], 1)
    best = _first_argmax(vals)                                              # (B, 1, Do, Ho, Wo)
    out = vals.gather(1, best).reshape(*lead, d_out, ho, wo)
    return out, where.gather(1, best).reshape(*lead, d_out, ho, wo)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> Tuple[Tensor, Tensor]:
    """3-D adaptive max pooling over (N, C, D, H, W) or (C, D, H, W): windows
    [floor(i * D / Do), ceil((i + 1) * D / Do)) per dim, with the flat (D, H, W) position of each
    maximum."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d: expected a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input, got "
                           f"{list(input.shape)}")
    do, ho, wo = _adaptive_sizes(input, output_size)
    lead, (d, h, w) = list(input.shape[:-3]), input.shape[-3:]
    planes, flat_hw = adaptive_max_pool2d(input.reshape(-1, d, h, w), (ho, wo), True)   # (B, D, Ho, Wo) each
    flat = flat_hw + (arange(d, device=input.device) * (h * w)).reshape(1, -1, 1, 1)
    starts = [(i * d) // do for i in range(do)]
    ends = [-((-(i + 1) * d) // do) for i in range(do)]
    longest = max(e - s_ for s_, e in zip(starts, ends))
    taps = [_tensor([min(s_ + j, e - 1) for s_, e in zip(starts, ends)], device=input.device)
            for j in range(longest)]                                        # the plane each output reads
    vals = stack([planes.index_select(1, t) for t in taps], 1)              # (B, L, Do, Ho, Wo)
    where = stack([flat.index_select(1, t) for t in taps], 1)
    best = _first_argmax(vals)
    out = vals.gather(1, best).reshape(*lead, do, ho, wo)
    return out, where.gather(1, best).reshape(*lead, do, ho, wo)


def _first_argmax(vals: Tensor) -> Tensor:
    """Index along dim 1 of the first maximum (NaN counts as the maximum, as PyTorch's pooling)."""
    nan = vals != vals
    top = vals.amax(1, keepdim=True)
    hit = _E.where(nan.any(1, keepdim=True), nan, vals == top)
    taps = arange(vals.shape[1], device=vals.device).reshape(1, -1, 1, 1, 1)
    big = vals.shape[1]
    return _E.where(hit, taps, big).amin(1, keepdim=True)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Optional[Any] = None) -> Tensor:
    """Computes a partial inverse of :func:`max_pool3d`: the maxima go back to their positions,
    every other output is zero."""
    kernel = _triple(kernel_size, "kernel_size")
    stride = kernel if stride is None else _triple(stride, "stride")
    if input.dim() not in (4, 5):
        raise RuntimeError(f"max_unpool3d: expected a 4-D or 5-D input, got {list(input.shape)}")
    size = _unpool_size(input, kernel, stride, _triple(padding, "padding"), output_size, 3, "max_unpool3d")
    return _unpool(input, indices, input.shape[-3:], size, "max_unpool3d")


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    r"""Applies a 3D power-average pooling over an input signal composed of several input planes:
    :math:`f(X) = \sqrt[p]{\sum_{x \in X} x^{p}}` over each window. If the sum of all inputs to the
    power of `p` is zero, the gradient is set to zero as well."""
    kd, kh, kw = _triple(kernel_size, "kernel_size")
    out = avg_pool3d(input.pow(norm_type), (kd, kh, kw), stride, 0, ceil_mode)
    return (out.sign() * _E.relu(out.abs())).mul(kd * kh * kw).pow(1.0 / norm_type)
