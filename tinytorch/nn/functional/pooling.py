"""Pooling of ``nn.functional``: the 2-D kernels of ``tinytorch._ops.pool`` (max_pool2d,
avg_pool2d, adaptive_avg_pool2d), their 1-D forms over a height of 1, adaptive max pooling,
power-average pooling, max_unpool and the 3-D poolings built from the 2-D and 1-D ones."""
from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Optional, Tuple

from tinytorch._tensor.creation import arange, full, tensor as _tensor, zeros
from tinytorch._ops.index import stack
from tinytorch._ops import elementwise as _E
from tinytorch._ops.shape import cat
from tinytorch._ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d  # noqa: F401
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.modules._doc_notes import fill_doc, pooling_notes, window_notes


def _one(v) -> int:
    return v if isinstance(v, int) else v[0]


@fill_doc(window_notes, pooling_notes)
def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Applies a 1D max pooling over an input signal composed of several input planes.

    1-D max pooling over (N, C, L) or (C, L), as a 2-D pooling over a height of 1.

    Args:
        input (Tensor): the input tensor.
        {max_pool_fn_args}"""
    s = None if stride is None else (1, _one(stride))
    r = max_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), s, (0, _one(padding)), (1, _one(dilation)),
                   ceil_mode, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


@fill_doc(window_notes, pooling_notes)
def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Applies a 1D average pooling over an input signal composed of several input planes.

    Args:
        input (Tensor): the input tensor.
        {avg_pool_args}"""
    s = None if stride is None else (1, _one(stride))
    return avg_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), s, (0, _one(padding)), ceil_mode,
                      count_include_pad).squeeze(-2)


@fill_doc(window_notes, pooling_notes)
def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Applies a 1D adaptive average pooling over an input signal composed of several input planes.

    Args:
        input (Tensor): the input tensor.
        {adaptive_output_size}"""
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size))).squeeze(-2)


@fill_doc(window_notes, pooling_notes)
def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Applies a 2D adaptive max pooling over an input signal composed of several input planes.

    Max over the adaptive windows [floor(i * H / Ho), ceil((i + 1) * H / Ho)) of (N, C, H, W) or
    (C, H, W) input; with return_indices, the flat H * W position of each maximum.

    Args:
        input (Tensor): the input tensor.
        {adaptive_max_args}"""
    h, w = input.shape[-2:]
    size = [output_size] * 2 if isinstance(output_size, int) else list(output_size)
    ho, wo = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    if h % ho == 0 and w % wo == 0:          # equal windows: one max_pool2d
        return max_pool2d(input, (h // ho, w // wo), return_indices=return_indices)
    lead = list(input.shape[:-2])
    vals, idxs = [], []
    for i in range(ho):
        h0, h1 = (i * h) // ho, -((-(i + 1) * h) // ho)
        for j in range(wo):
            w0, w1 = (j * w) // wo, -((-(j + 1) * w) // wo)
            best = input[..., h0:h1, w0:w1].reshape(*lead, -1).max(-1)
            vals.append(best.values)
            k = best.indices
            idxs.append((k // (w1 - w0) + h0) * w + k % (w1 - w0) + w0)
    out = stack(vals, -1).reshape(*lead, ho, wo)
    if return_indices:
        return out, stack(idxs, -1).reshape(*lead, ho, wo)
    return out


@fill_doc(window_notes, pooling_notes)
def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Applies a 1D adaptive max pooling over an input signal composed of several input planes.

    adaptive_max_pool2d over a height of 1, for (N, C, L) or (C, L) input.

    Args:
        input (Tensor): the input tensor.
        {adaptive_max_args}"""
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1, _one(output_size)), return_indices)
    return (r[0].squeeze(-2), r[1].squeeze(-2)) if return_indices else r.squeeze(-2)


# ----------------------------------------------------------------------------- *_with_indices
def with_indices(pool: Callable, args_note: str, module: str = __name__) -> Callable:
    """PyTorch's ``<pool>_with_indices``, a function of ``module``: ``pool``'s signature, always returning
    ``(output, indices)`` (``return_indices`` is accepted and ignored); its Args are ``pooling_notes[args_note]``."""
    signature = inspect.signature(pool).replace(return_annotation="Tuple[Tensor, Tensor]")

    def pool_with_indices(*args: Any, **kwargs: Any) -> Tuple[Tensor, Tensor]:
        bound = signature.bind(*args, **kwargs)
        bound.arguments["return_indices"] = True
        return pool(*bound.args, **bound.kwargs)

    pool_with_indices.__name__ = pool_with_indices.__qualname__ = f"{pool.__name__}_with_indices"
    pool_with_indices.__module__ = module
    pool_with_indices.__signature__ = signature
    pool_with_indices.__doc__ = (f""":func:`{pool.__name__}` returning ``(output, indices)`` whatever ``return_indices`` says.

    Args:
        input (Tensor): the input tensor.
        {pooling_notes[args_note]}""")
    return pool_with_indices


max_pool1d_with_indices = with_indices(max_pool1d, "max_pool_fn_args")
max_pool2d_with_indices = with_indices(max_pool2d, "max_pool_fn_args")
adaptive_max_pool1d_with_indices = with_indices(adaptive_max_pool1d, "adaptive_max_args")
adaptive_max_pool2d_with_indices = with_indices(adaptive_max_pool2d, "adaptive_max_args")


# ----------------------------------------------------------------------------- power-average pooling
def _pair(v) -> tuple:
    return (v, v) if isinstance(v, int) else tuple(v)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    r"""Applies a 1D power-average pooling over an input signal composed of several input planes.

    :math:`f(X) = \sqrt[p]{\sum_{x \in X} x^{p}}` over each window. If the sum of all inputs to
    the power of ``p`` is zero, the gradient is set to zero as well (PyTorch's definition).

    Args:
        input (Tensor): input of shape :math:`(N, C, L)` or :math:`(C, L)`.
        norm_type (float): the power ``p``.
        kernel_size (int): a single int, the size of the window.
        stride (int): a single int, the stride of the window. Default value is ``kernel_size``
        ceil_mode (bool): when True, will use `ceil` instead of `floor` to compute the output shape
    """
    k = _one(kernel_size)
    out = avg_pool1d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (out.sign() * _E.relu(out.abs())).mul(k).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    r"""Applies a 2D power-average pooling over an input signal composed of several input planes.

    :math:`f(X) = \sqrt[p]{\sum_{x \in X} x^{p}}` over each window.

    Args:
        input (Tensor): input of shape :math:`(N, C, H, W)` or :math:`(C, H, W)`.
        norm_type (float): the power ``p``.
        kernel_size: the size of the window (an int or a ``(kH, kW)`` tuple).
        stride: the stride of the window (an int or a tuple). Default value is ``kernel_size``
        ceil_mode (bool): when True, will use `ceil` instead of `floor` to compute the output shape
    """
    kh, kw = _pair(kernel_size)
    out = avg_pool2d(input.pow(norm_type), (kh, kw), stride, 0, ceil_mode)
    return (out.sign() * _E.relu(out.abs())).mul(kh * kw).pow(1.0 / norm_type)


# ----------------------------------------------------------------------------- max_unpool
def _unpool(input: Tensor, indices: Tensor, spatial_in, out_size, name: str) -> Tensor:
    # input, indices: (N, C, *spatial_in) or (C, *spatial_in); indices are flat positions in out_size
    if list(indices.shape) != list(input.shape):
        raise RuntimeError(f"{name}: expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    lead = list(input.shape[:input.dim() - len(spatial_in)])
    n_out = 1
    for s in out_size:
        n_out *= s
    flat_idx = indices.reshape(*lead, -1)
    if flat_idx.numel() and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= n_out):
        raise RuntimeError(f"{name}: found an invalid max index {int(flat_idx.max())} (output volumes are of size "
                           f"{'x'.join(str(s) for s in out_size)})")
    out = zeros(lead + [n_out], dtype=input.dtype, device=input.device)
    return out.scatter(-1, flat_idx, input.reshape(*lead, -1)).reshape(*lead, *out_size)


def _unpool_size(input: Tensor, kernel, stride, padding, output_size, k: int, name: str) -> list:
    spatial = list(input.shape[-k:])
    default = [(spatial[d] - 1) * stride[d] - 2 * padding[d] + kernel[d] for d in range(k)]
    if output_size is None:
        return default
    size = list(output_size)[-k:]
    for d in range(k):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < size[d] < hi:
            raise ValueError(f"{name}: invalid output_size {list(output_size)} (dim {d} must be between {lo + 1} "
                             f"and {hi - 1})")
    return size


def _max_unpool(input: Tensor, indices: Tensor, kernel, stride, padding, output_size) -> Tensor:
    """max_unpool1d/2d/3d over the per-dim kernel, stride and padding (their length is the number of dims)."""
    n = len(kernel)
    name = f"max_unpool{n}d"
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: expected a {n + 1}-D or {n + 2}-D input, got {list(input.shape)}")
    size = _unpool_size(input, kernel, stride, padding, output_size, n, name)
    return _unpool(input, indices, input.shape[-n:], size, name)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Computes a partial inverse of :func:`max_pool1d`: the maxima go back to their positions,
    every other output is zero.

    Args:
        input (Tensor): the pooled values, :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        indices (Tensor): the indices given out by ``max_pool1d(..., return_indices=True)``.
        kernel_size (int or tuple): Size of the max pooling window.
        stride (int or tuple): Stride of the max pooling window. It is set to ``kernel_size`` by default.
        padding (int or tuple): Padding that was added to the input.
        output_size (optional): the targeted output size.
    """
    kernel = [_one(kernel_size)]
    return _max_unpool(input, indices, kernel, kernel if stride is None else [_one(stride)], [_one(padding)],
                       output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Computes a partial inverse of :func:`max_pool2d`: the maxima go back to their positions,
    every other output is zero.

    Args:
        input (Tensor): the pooled values, :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        indices (Tensor): the indices given out by ``max_pool2d(..., return_indices=True)``.
        kernel_size (int or tuple): Size of the max pooling window.
        stride (int or tuple): Stride of the max pooling window. It is set to ``kernel_size`` by default.
        padding (int or tuple): Padding that was added to the input.
        output_size (optional): the targeted output size.
    """
    kernel = _pair(kernel_size)
    return _max_unpool(input, indices, kernel, kernel if stride is None else _pair(stride), _pair(padding),
                       output_size)


# ----------------------------------------------------------------------------- 3-D pooling
# A box window is a product of intervals, so max and average pooling over (D, H, W) factor into a
# 2-D pooling over (H, W) and a 1-D pooling over D (the average's divisor, with or without the
# padding, is the product of the per-dim counts). Indices of 3-D maxima are not produced.
def _triple(v, name: str) -> tuple:
    t = (v, v, v) if isinstance(v, int) else tuple(v)
    if len(t) != 3:
        raise RuntimeError(f"{name} must be an int or a tuple of three ints, got {v}")
    return t


def _check_3d_input(input: Tensor, name: str) -> None:
    if input.dim() not in (4, 5):
        raise RuntimeError(f"{name}: expected a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input, got "
                           f"{list(input.shape)}")


def _pool3d(input: Tensor, name: str, pool_hw, pool_d) -> Tensor:
    _check_3d_input(input, name)
    lead, (d, h, w) = list(input.shape[:-3]), input.shape[-3:]
    x = pool_hw(input.reshape(-1, d, h, w))                        # (B, D, Ho, Wo)
    b, _, ho, wo = x.shape
    y = pool_d(x.reshape(b, d, ho * wo).transpose(1, 2))           # (B, Ho * Wo, Do)
    return y.transpose(1, 2).reshape(*lead, y.shape[-1], ho, wo)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """Applies a 3D max pooling over an input signal composed of several input planes.

    Args:
        input (Tensor): :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
        kernel_size: size of the pooling region (an int or a ``(kD, kH, kW)`` tuple).
        stride: stride of the pooling operation. Default: ``kernel_size``
        padding: implicit negative infinity padding to be added on both sides. Default: 0
        dilation: the stride between elements within a sliding window. Default: 1
        ceil_mode: when True, will use `ceil` instead of `floor` to compute the output shape.
        return_indices: if ``True``, will return the argmax along with the max values (flat (D, H, W)
            positions, from :func:`max_pool3d_with_indices`).
    """
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    k, p, dl = _triple(kernel_size, "kernel_size"), _triple(padding, "padding"), _triple(dilation, "dilation")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _triple(stride, "stride")
    return _pool3d(input, "max_pool3d",
                   lambda x: max_pool2d(x, k[1:], s[1:], p[1:], dl[1:], ceil_mode),
                   lambda x: max_pool1d(x, k[0], s[0], p[0], dl[0], ceil_mode))


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """Applies 3D average-pooling operation in :math:`kT \\times kH \\times kW` regions by step size
    :math:`sT \\times sH \\times sW` steps.

    Args:
        input (Tensor): :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
        kernel_size: size of the pooling region (an int or a ``(kD, kH, kW)`` tuple).
        stride: stride of the pooling operation. Default: ``kernel_size``
        padding: implicit zero paddings on both sides of the input. Default: 0
        ceil_mode: when True, will use `ceil` instead of `floor` in the formula to compute the output shape
        count_include_pad: when True, will include the zero-padding in the averaging calculation
        divisor_override: not supported for 3-D pooling (raises NotImplementedError).
    """
    if divisor_override is not None:
        raise NotImplementedError("avg_pool3d: divisor_override is not implemented")
    k, p = _triple(kernel_size, "kernel_size"), _triple(padding, "padding")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _triple(stride, "stride")
    return _pool3d(input, "avg_pool3d",
                   lambda x: avg_pool2d(x, k[1:], s[1:], p[1:], ceil_mode, count_include_pad),
                   lambda x: avg_pool1d(x, k[0], s[0], p[0], ceil_mode, count_include_pad))


def _adaptive_sizes(input: Tensor, output_size) -> tuple:
    size = _triple(output_size, "output_size") if not isinstance(output_size, int) else (output_size,) * 3
    return tuple(input.shape[-3 + i] if size[i] is None else size[i] for i in range(3))


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Applies a 3D adaptive average pooling over an input signal composed of several input planes.

    Args:
        input (Tensor): :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
        output_size: the target output size (single integer or triple-integer tuple; ``None``
            keeps that dimension's size)
    """
    o = _adaptive_sizes(input, output_size)
    return _pool3d(input, "adaptive_avg_pool3d", lambda x: adaptive_avg_pool2d(x, o[1:]),
                   lambda x: adaptive_avg_pool1d(x, o[0]))


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """Applies a 3D adaptive max pooling over an input signal composed of several input planes.

    Args:
        input (Tensor): :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
        output_size: the target output size (single integer or triple-integer tuple)
        return_indices: if ``True``, will return the indices along with the outputs (flat (D, H, W)
            positions, from :func:`adaptive_max_pool3d_with_indices`).
    """
    if return_indices:
        return adaptive_max_pool3d_with_indices(input, output_size)
    o = _adaptive_sizes(input, output_size)
    return _pool3d(input, "adaptive_max_pool3d", lambda x: adaptive_max_pool2d(x, o[1:]),
                   lambda x: adaptive_max_pool1d(x, o[0]))


# ----------------------------------------------------------------------------- 3-D pooling with indices
# max_pool3d_with_indices pools each depth plane with ``max_pool2d_with_indices`` (values and the
# flat h * W + w position of each plane's maximum), then takes the maximum over the kD planes each
# output depth reads (first one on ties, so the first maximum in (d, h, w) scan order, as
# PyTorch's); the flat 3-D index is ``d * H * W + (h * W + w)``. Gradients flow through the 2-D
# pooling and the gather of the winning plane. The adaptive version does the same with the
# adaptive windows (a shorter depth window repeats its last plane, which changes no maximum).
def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output length (a last window must start inside the input or left padding)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


@fill_doc(window_notes, pooling_notes)
def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Tuple[Tensor, Tensor]:
    """Applies a 3D max pooling over an input signal composed of several input planes, returning the
    indices of the maxima too.

    3-D max pooling over (N, C, D, H, W) or (C, D, H, W), with the flat (D, H, W) position of
    each maximum (int64, for ``max_unpool3d``).

    Args:
        input (Tensor): the input tensor.
        {max_pool_window}
        {ceil_mode}
        return_indices (bool): if ``True``, will return the max indices along with the outputs. Default:
            ``True``"""
    _check_3d_input(input, "max_pool3d")
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
    return _first_max(vals, where, (*lead, d_out, ho, wo))


@fill_doc(window_notes, pooling_notes)
def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> Tuple[Tensor, Tensor]:
    """Applies a 3D adaptive max pooling over an input signal composed of several input planes, returning
    the indices of the maxima too.

    3-D adaptive max pooling over (N, C, D, H, W) or (C, D, H, W): windows
    [floor(i * D / Do), ceil((i + 1) * D / Do)) per dim, with the flat (D, H, W) position of each
    maximum.

    Args:
        input (Tensor): the input tensor.
        {adaptive_output_size}
        return_indices (bool): if ``True``, will return the max indices along with the outputs. Default:
            ``True``"""
    _check_3d_input(input, "adaptive_max_pool3d")
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
    return _first_max(vals, where, (*lead, do, ho, wo))


def _first_max(vals: Tensor, where: Tensor, shape: tuple) -> Tuple[Tensor, Tensor]:
    """The first maximum along dim 1 of vals (B, taps, Do, Ho, Wo) and its flat position from where,
    both reshaped to ``shape``."""
    best = _first_argmax(vals)                                              # (B, 1, Do, Ho, Wo)
    return vals.gather(1, best).reshape(shape), where.gather(1, best).reshape(shape)


def _first_argmax(vals: Tensor) -> Tensor:
    """Index along dim 1 of the first maximum (NaN counts as the maximum, as PyTorch's pooling)."""
    nan = vals != vals
    top = vals.amax(1, keepdim=True)
    hit = _E.where(nan.any(1, keepdim=True), nan, vals == top)
    taps = arange(vals.shape[1], device=vals.device).reshape(1, -1, 1, 1, 1)
    big = vals.shape[1]
    return _E.where(hit, taps, big).amin(1, keepdim=True)


@fill_doc(window_notes, pooling_notes)
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Optional[Any] = None) -> Tensor:
    """Compute a partial inverse of :class:`MaxPool3d`.

    Computes a partial inverse of :func:`max_pool3d`: the maxima go back to their positions,
    every other output is zero.

    Args:
        input (Tensor): the input tensor.
        indices (Tensor): the indices given out by the max pooling with ``return_indices=True``.
        {kernel_size}
        {pool_stride}
        {padding}
        output_size (int or tuple): the target output size. Default: ``None``"""
    kernel = _triple(kernel_size, "kernel_size")
    return _max_unpool(input, indices, kernel, kernel if stride is None else _triple(stride, "stride"),
                       _triple(padding, "padding"), output_size)


@fill_doc(window_notes, pooling_notes)
def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    r"""Apply a 3D power-average pooling over an input signal composed of several input planes.

    Applies a 3D power-average pooling over an input signal composed of several input planes:
    :math:`f(X) = \sqrt[p]{{\sum_{{x \in X}} x^{{p}}}}` over each window. If the sum of all inputs to the
    power of `p` is zero, the gradient is set to zero as well.

    Args:
        input (Tensor): the input tensor.
        norm_type (float, optional): The p of the p-norm to compute for the :attr:`max_norm` option.
        {kernel_size}
        {pool_stride}
        {ceil_mode}"""
    kd, kh, kw = _triple(kernel_size, "kernel_size")
    out = avg_pool3d(input.pow(norm_type), (kd, kh, kw), stride, 0, ceil_mode)
    return (out.sign() * _E.relu(out.abs())).mul(kd * kh * kw).pow(1.0 / norm_type)
