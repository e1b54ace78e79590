"""Pooling of ``nn.functional``: the 2-D kernels of ``tinytorch._ops.pool`` (max_pool2d,
avg_pool2d, adaptive_avg_pool2d), their 1-D forms over a height of 1, and adaptive max pooling."""
from __future__ import annotations

from tinytorch._creation import zeros
from tinytorch._functional import stack
from tinytorch._ops import elementwise as _E
from tinytorch._ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d  # noqa: F401
from tinytorch.tensor import Tensor


def _one(v) -> int:
    return v if isinstance(v, int) else v[0]


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """1-D max pooling over (N, C, L) or (C, L), as a 2-D pooling over a height of 1."""
    s = None if stride is None else (1, _one(stride))
    r = max_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), s, (0, _one(padding)), (1, _one(dilation)),
                   ceil_mode, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    s = None if stride is None else (1, _one(stride))
    return avg_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), s, (0, _one(padding)), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size))).squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over the adaptive windows [floor(i * H / Ho), ceil((i + 1) * H / Ho)) of (N, C, H, W) or
    (C, H, W) input; with return_indices, the flat H * W position of each maximum."""
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


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """adaptive_max_pool2d over a height of 1, for (N, C, L) or (C, L) input."""
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1, _one(output_size)), return_indices)
    return (r[0].squeeze(-2), r[1].squeeze(-2)) if return_indices else r.squeeze(-2)


# ----------------------------------------------------------------------------- *_with_indices
def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """:func:`max_pool1d` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """:func:`max_pool2d` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """:func:`adaptive_max_pool1d` returning ``(output, indices)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """:func:`adaptive_max_pool2d` returning ``(output, indices)``."""
    return adaptive_max_pool2d(input, output_size, True)


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
    k = _one(kernel_size)
    s = k if stride is None else _one(stride)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_unpool1d: expected a 2-D or 3-D input, got {list(input.shape)}")
    size = _unpool_size(input, [k], [s], [_one(padding)], output_size, 1, "max_unpool1d")
    return _unpool(input, indices, input.shape[-1:], size, "max_unpool1d")


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
    stride = kernel if stride is None else _pair(stride)
    if input.dim() not in (3, 4):
        raise RuntimeError(f"max_unpool2d: expected a 3-D or 4-D input, got {list(input.shape)}")
    size = _unpool_size(input, kernel, stride, _pair(padding), output_size, 2, "max_unpool2d")
    return _unpool(input, indices, input.shape[-2:], size, "max_unpool2d")


# ----------------------------------------------------------------------------- 3-D pooling
# A box window is a product of intervals, so max and average pooling over (D, H, W) factor into a
# 2-D pooling over (H, W) and a 1-D pooling over D (the average's divisor, with or without the
# padding, is the product of the per-dim counts). Indices of 3-D maxima are not produced.
def _triple(v, name: str) -> tuple:
    t = (v, v, v) if isinstance(v, int) else tuple(v)
    if len(t) != 3:
        raise RuntimeError(f"{name} must be an int or a tuple of three ints, got {v}")
    return t


def _pool3d(input: Tensor, name: str, pool_hw, pool_d) -> Tensor:
    if input.dim() not in (4, 5):
        raise RuntimeError(f"{name}: expected a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input, got "
                           f"{list(input.shape)}")
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
            positions, from ``pooling3d.max_pool3d_with_indices``).
    """
    if return_indices:
        from tinytorch.nn.functional.pooling3d import max_pool3d_with_indices
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
            positions, from ``pooling3d.adaptive_max_pool3d_with_indices``).
    """
    if return_indices:
        from tinytorch.nn.functional.pooling3d import adaptive_max_pool3d_with_indices
        return adaptive_max_pool3d_with_indices(input, output_size)
    o = _adaptive_sizes(input, output_size)
    return _pool3d(input, "adaptive_max_pool3d", lambda x: adaptive_max_pool2d(x, o[1:]),
                   lambda x: adaptive_max_pool1d(x, o[0]))
