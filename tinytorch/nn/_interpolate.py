"""``F.interpolate``: resizing along the trailing (spatial) dims, as PyTorch's, composed from
index_select and a lerp per dim (separable), so every device and dtype differentiates it.
Modes: nearest, nearest-exact, linear / bilinear (align_corners), area."""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

import numpy as np

import tinytorch
from tinytorch.tensor import Tensor

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
        return x.index_select(d, tinytorch.tensor(idx, device=x.device))
    src = i * s if align_corners else np.maximum((i + 0.5) * s - 0.5, 0.0)
    lo = np.minimum(np.floor(src), n_in - 1).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    shape = [1] * x.dim()
    shape[d] = n_out
    lam = tinytorch.tensor((src - lo).reshape(shape), dtype=x.dtype, device=x.device)
    a = x.index_select(d, tinytorch.tensor(lo, device=x.device))
    b = x.index_select(d, tinytorch.tensor(hi, device=x.device))
    return a + (b - a) * lam


def interpolate(input: Tensor, size: Union[int, Sequence[int], None] = None,
                scale_factor: Union[float, Sequence[float], None] = None, mode: str = "nearest",
                align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None,
                antialias: bool = False) -> Tensor:
    """Down/up samples the input to either the given size or the given scale_factor.

    The input is (N, C, *spatial) with 1 to 3 spatial dims (1 for ``linear``, 2 for ``bilinear``,
    1 or 2 for ``area``). ``align_corners`` (linear modes only) aligns the centers of the corner
    pixels instead of their outer edges. ``bicubic``, ``trilinear`` and ``antialias`` are not
    implemented."""
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
        pool = tinytorch.nn.functional.adaptive_avg_pool2d
        return pool(input, sizes) if k == 2 else pool(input.unsqueeze(-2), (1, sizes[0])).squeeze(-2)
    out = input
    for j in range(k):
        out = _resize_dim(out, input.dim() - k + j, sizes[j], scales[j], mode, bool(align_corners))
    return out
