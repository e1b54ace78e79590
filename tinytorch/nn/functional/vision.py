"""Vision functions of ``nn.functional``: interpolate (resizing along the trailing spatial dims,
as PyTorch's, composed from index_select and a lerp per dim, so every device and dtype
differentiates it; modes nearest, nearest-exact, linear / bilinear (align_corners), area),
pixel_shuffle / pixel_unshuffle, and unfold / fold (im2col and its adjoint)."""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

import numpy as np

from tinytorch._tensor.creation import arange, tensor, zeros
from tinytorch._ops.pool import adaptive_avg_pool2d
from tinytorch.nn.functional.padding import pad
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.modules._doc_notes import fill_doc, fold_notes, interpolate_notes

# ------------------------------------------------------------------ interpolate

_SPATIAL = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "linear": (1,), "bilinear": (2,), "area": (1, 2)}


def _sizes(x: Tensor, k: int, size, scale_factor) -> tuple[list[int], list[Optional[float]]]:
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: either size or scale_factor should be defined, not both")
    spatial = list(x.shape[-k:])
    if size is not None:
        size = [size] * k if isinstance(size, int) else list(size)
        if len(size) != k:
            raise ValueError(f"interpolate: size {size} must have {k} elements for a {x.dim()}-D input")
        return [int(s) for s in size], [None] * k
    scales = [float(scale_factor)] * k if isinstance(scale_factor, (int, float)) else [float(s) for s in scale_factor]
    if len(scales) != k:
        raise ValueError(f"interpolate: scale_factor {scale_factor} must have {k} elements for a {x.dim()}-D input")
    return [int(math.floor(n * s)) for n, s in zip(spatial, scales)], scales


def _source_scale(n_in: int, n_out: int, scale: Optional[float], align_corners: bool) -> float:
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None else n_in / n_out


def _resize_dim(x: Tensor, d: int, n_out: int, scale: Optional[float], mode: str, align_corners: bool) -> Tensor:
    n_in = x.shape[d]
    i = np.arange(n_out, dtype=np.float64)
    s = _source_scale(n_in, n_out, scale, align_corners)
    if mode in ("nearest", "nearest-exact"):
        src = np.floor(i * s) if mode == "nearest" else np.floor((i + 0.5) * s)
        idx = np.minimum(src, n_in - 1).astype(np.int64)
        return x.index_select(d, tensor(idx, device=x.device))
    src = i * s if align_corners else np.maximum((i + 0.5) * s - 0.5, 0.0)
    lo = np.minimum(np.floor(src), n_in - 1).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    shape = [1] * x.dim()
    shape[d] = n_out
    lam = tensor((src - lo).reshape(shape), dtype=x.dtype, device=x.device)
    a = x.index_select(d, tensor(lo, device=x.device))
    b = x.index_select(d, tensor(hi, device=x.device))
    return a + (b - a) * lam


@fill_doc(interpolate_notes)
def interpolate(input: Tensor, size: Union[int, Sequence[int], None] = None,
                scale_factor: Union[float, Sequence[float], None] = None, mode: str = "nearest",
                align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None,
                antialias: bool = False) -> Tensor:
    """Down/up samples the input to either the given size or the given scale_factor.

    The input is (N, C, *spatial) with 1 to 3 spatial dims (1 for ``linear``, 2 for ``bilinear``,
    1 or 2 for ``area``). ``align_corners`` (linear modes only) aligns the centers of the corner
    pixels instead of their outer edges. ``bicubic``, ``trilinear`` and ``antialias`` are not
    implemented.

    Args:
        input (Tensor): the input tensor.
        {interpolate_args}
        antialias (bool, optional): flag to apply anti-aliasing (not supported: raises
            NotImplementedError). Default: ``False``"""
    if mode not in _SPATIAL:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented "
                                  f"(nearest, nearest-exact, linear, bilinear, area)")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not implemented")
    k = input.dim() - 2
    if k not in _SPATIAL[mode]:
        raise ValueError(f"interpolate: mode {mode!r} expects an input with {[d + 2 for d in _SPATIAL[mode]]} "
                         f"dimensions, got {input.dim()}-D {list(input.shape)}")
    linear = mode in ("linear", "bilinear")
    if align_corners is not None and not linear:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear")
    sizes, scales = _sizes(input, k, size, scale_factor)
    if recompute_scale_factor:
        scales = [None] * k
    if any(s <= 0 for s in sizes):
        raise ValueError(f"interpolate: output size {sizes} must be positive (input {list(input.shape)})")
    if mode == "area":
        if k == 2:
            return adaptive_avg_pool2d(input, sizes)
        return adaptive_avg_pool2d(input.unsqueeze(-2), (1, sizes[0])).squeeze(-2)
    out = input
    for j in range(k):
        out = _resize_dim(out, input.dim() - k + j, sizes[j], scales[j], mode, bool(align_corners))
    return out


# ------------------------------------------------------------------ pixel shuffle

def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    r"""Rearranges elements in a tensor of shape :math:`(*, C \times r^2, H, W)` to a tensor of shape
    :math:`(*, C, H \times r, W \times r)`, where r is the :attr:`upscale_factor`.

    (*, C * r^2, H, W) -> (*, C, H * r, W * r).

    Args:
        input (Tensor): the input tensor.
        upscale_factor (int): factor to increase spatial resolution by."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    r"""Reverses the :class:`~nn.PixelShuffle` operation by rearranging elements in a tensor of shape
    :math:`(*, C, H \times r, W \times r)` to a tensor of shape :math:`(*, C \times r^2, H, W)`, where r
    is the :attr:`downscale_factor`.

    (*, C, H * r, W * r) -> (*, C * r^2, H, W).

    Args:
        input (Tensor): the input tensor.
        downscale_factor (int): factor to decrease spatial resolution by."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height ({h}) and width ({w}) divisible by downscale_factor {r}")
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# ------------------------------------------------------------------ unfold / fold

def _pair4(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _patch_positions(h: int, w: int, kernel_size, dilation, padding, stride, device) -> Tensor:
    """(kh * kw, L) row-major positions in the padded (h + 2p, w + 2p) image of every patch element."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (_pair4(v) for v in (kernel_size, dilation, padding, stride))
    hp, wp = h + 2 * ph, w + 2 * pw
    pos = arange(hp * wp, device=device).reshape(hp, wp)
    pos = pos.unfold(0, dh * (kh - 1) + 1, sh).unfold(1, dw * (kw - 1) + 1, sw)[:, :, ::dh, ::dw]  # (Ho, Wo, kh, kw)
    ho, wo = pos.shape[0], pos.shape[1]
    return pos.reshape(ho * wo, kh * kw).t().contiguous()


@fill_doc(fold_notes)
def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding local blocks from a batched input tensor.

    Extracts sliding local blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L).

    Args:
        input (Tensor): the input tensor.
        {unfold_window}"""
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    if x.dim() != 4:
        raise ValueError(f"unfold: expected a 3-D or 4-D input, got {list(input.shape)}")
    n, c, h, w = x.shape
    ph, pw = _pair4(padding)
    xp = pad(x, (pw, pw, ph, ph)).reshape(n, c, -1)
    pos = _patch_positions(h, w, kernel_size, dilation, padding, stride, x.device)     # (K, L)
    cols = xp.index_select(2, pos.reshape(-1)).reshape(n, c * pos.shape[0], pos.shape[1])
    return cols if batched else cols.squeeze(0)


@fill_doc(fold_notes)
def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combine an array of sliding local blocks into a large containing tensor.

    Combines sliding local blocks into a tensor, summing overlaps (col2im; unfold's adjoint):
    (N, C * kh * kw, L) -> (N, C, H, W).

    Args:
        input (Tensor): the input tensor.
        {fold_output_size}
        {unfold_window}"""
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    h, w = _pair4(output_size)
    ph, pw = _pair4(padding)
    pos = _patch_positions(h, w, kernel_size, dilation, padding, stride, x.device)     # (K, L)
    k, length = pos.shape
    n = x.shape[0]
    if x.shape[1] % k or x.shape[2] != length:
        raise RuntimeError(f"fold: expected input of shape (N, C * {k}, {length}), got {list(input.shape)}")
    c = x.shape[1] // k
    out = zeros(n, c, (h + 2 * ph) * (w + 2 * pw), dtype=x.dtype, device=x.device)
    idx = pos.reshape(1, 1, -1).expand(n, c, k * length)
    out = out.scatter_add(2, idx, x.reshape(n, c, k * length))
    out = out.reshape(n, c, h + 2 * ph, w + 2 * pw)[:, :, ph:ph + h, pw:pw + w]
    return out if batched else out.squeeze(0)


# ------------------------------------------------------------------ channel shuffle, deprecated upsample names

def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Divides the channels of a tensor of shape :math:`(*, C, H, W)` into ``g`` groups and
    rearranges them as :math:`(*, \\frac{C}{g}, g, H, W)`, keeping the original tensor shape.

    Args:
        input (Tensor): the input tensor, :math:`(N, C, *)`.
        groups (int): number of groups to divide channels in.
    """
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


def _deprecated(old: str, new: str) -> None:
    import warnings
    warnings.warn(f"`nn.functional.{old}` is deprecated. Use `nn.functional.{new}` instead.", stacklevel=3)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: Optional[bool] = None) -> Tensor:
    """Upsamples the input (deprecated: :func:`interpolate` does the same).

    Args:
        input (Tensor): the input tensor
        size (int or Tuple[int]): output spatial size.
        scale_factor (float or Tuple[float]): multiplier for spatial size.
        mode (str): algorithm used for upsampling. Default: ``'nearest'``
        align_corners (bool, optional): as in :func:`interpolate`. Default: ``None``
    """
    _deprecated("upsample", "interpolate")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Upsamples the input, using nearest neighbours' pixel values (deprecated:
    ``interpolate(..., mode='nearest')``).

    Args:
        input (Tensor): input
        size (int or Tuple[int, int]): output spatia size.
        scale_factor (int): multiplier for spatial size. Has to be an integer.
    """
    _deprecated("upsample_nearest", "interpolate")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Upsamples the input, using bilinear upsampling with ``align_corners=True`` (deprecated:
    ``interpolate(..., mode='bilinear', align_corners=True)``).

    Args:
        input (Tensor): input
        size (int or Tuple[int, int]): output spatial size.
        scale_factor (int or Tuple[int, int]): multiplier for spatial size
    """
    _deprecated("upsample_bilinear", "interpolate")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
