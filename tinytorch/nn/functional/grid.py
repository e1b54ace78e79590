"""Spatial transformers of ``nn.functional``: affine_grid (sampling grids from affine matrices) and
grid_sample (bilinear / nearest sampling of (N, C, H, W) input at grid points, padding modes zeros,
border and reflection), composed from gather and arithmetic so autograd reaches both the input
and the grid, on every device and float dtype."""
from __future__ import annotations

import warnings
from typing import List, Optional

from tinytorch._tensor.creation import arange
from tinytorch._ops.elementwise import where
from tinytorch._ops.index import stack
from tinytorch._tensor.tensor import Tensor


def _align(align_corners: Optional[bool], name: str) -> bool:
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      f"{name} for details.", stacklevel=3)
        return False
    return bool(align_corners)


def _base_coords(n: int, align_corners: bool, like: Tensor) -> Tensor:
    # the normalized [-1, 1] coordinates of n pixel centers (align_corners: of the corner centers)
    if n <= 1:
        return arange(1, dtype=like.dtype, device=like.device) * 0.0
    i = arange(n, dtype=like.dtype, device=like.device)
    if align_corners:
        return i * (2.0 / (n - 1)) - 1.0
    return (i * 2.0 + 1.0) / n - 1.0


def affine_grid(theta: Tensor, size: List[int], align_corners: Optional[bool] = None) -> Tensor:
    """Generates a 2D or 3D flow field (sampling grid), given a batch of affine matrices ``theta``.

    Args:
        theta (Tensor): input batch of affine matrices with shape (:math:`N \\times 2 \\times 3`)
            for 2D or (:math:`N \\times 3 \\times 4`) for 3D
        size (torch.Size): the target output image size. (:math:`N \\times C \\times H \\times W`
            for 2D or :math:`N \\times C \\times D \\times H \\times W` for 3D)
            Example: torch.Size((32, 3, 24, 24))
        align_corners (bool, optional): if ``True``, consider ``-1`` and ``1`` to refer to the
            centers of the corner pixels rather than the image corners. Default: ``False``

    Returns:
        output (Tensor): output Tensor of size (:math:`N \\times H \\times W \\times 2`)
    """
    ac = _align(align_corners, "affine_grid")
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    k = len(size) - 2
    if k not in (2, 3):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if theta.dim() != 3 or list(theta.shape[1:]) != [k, k + 1]:
        raise ValueError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for size {size}. "
                         f"Got {list(theta.shape)}.")
    if theta.shape[0] != size[0]:
        raise ValueError(f"affine_grid: theta has a batch of {theta.shape[0]} matrices but size asks for {size[0]}")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    spatial = size[2:]                                # (D,) H, W; the grid's last dim is x, y(, z)
    axes = [_base_coords(s, ac, theta) for s in spatial]
    count = 1
    for s in spatial:
        count *= s
    cols = []
    for j in reversed(range(k)):                      # x varies along W (the last dim), y along H, z along D
        view = [1] * k
        view[j] = spatial[j]
        cols.append(axes[j].reshape(view).expand(*spatial).reshape(count))
    cols.append(arange(count, dtype=theta.dtype, device=theta.device) * 0.0 + 1.0)
    base = stack(cols, -1)                            # (count, k + 1): x, y(, z), 1
    grid = base.matmul(theta.transpose(1, 2))         # (N, count, k)
    return grid.reshape(size[0], *spatial, k)


def _reflect(x: Tensor, twice_low: float, twice_high: float) -> Tensor:
    # reflects x into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates)
    if twice_low == twice_high:
        return x * 0.0
    lo, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    d = (x - lo).abs()
    flips = (d / span).floor()
    extra = d - flips * span
    even = (flips - (flips / 2.0).floor() * 2.0) == 0
    return where(even, extra + lo, span - extra + lo)


def _source_index(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    # normalized [-1, 1] -> pixel coordinates, then the padding mode's folding
    x = (coord + 1.0) * ((size - 1) / 2.0) if align_corners else ((coord + 1.0) * size - 1.0) / 2.0
    if padding_mode == "border":
        x = x.clamp(0.0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0.0, 2.0 * (size - 1)) if align_corners else _reflect(x, -1.0, 2.0 * size - 1)
        x = x.clamp(0.0, size - 1)
    return x


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: Optional[bool] = None) -> Tensor:
    """Compute grid sample: the output at each grid location is the input sampled at the pixel
    position ``grid`` holds, normalized to ``[-1, 1]`` (``x = -1, y = -1`` is the left-top pixel).

    Args:
        input (Tensor): input of shape :math:`(N, C, H_\\text{in}, W_\\text{in})`
        grid (Tensor): flow-field of shape :math:`(N, H_\\text{out}, W_\\text{out}, 2)`
        mode (str): interpolation mode to calculate output values ``'bilinear'`` | ``'nearest'``.
            Default: ``'bilinear'`` (``'bicubic'`` and 5-D input raise NotImplementedError)
        padding_mode (str): padding mode for outside grid values ``'zeros'`` | ``'border'`` |
            ``'reflection'``. Default: ``'zeros'``
        align_corners (bool, optional): if ``True``, the extrema (``-1`` and ``1``) are considered
            as referring to the center points of the input's corner pixels. Default: ``False``

    Returns:
        output (Tensor): output Tensor of shape :math:`(N, C, H_\\text{out}, W_\\text{out})`
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode='bicubic' is not implemented (bilinear and nearest are)")
    if input.dim() == 5:
        raise NotImplementedError("grid_sample: 5-D (volumetric) input is not implemented (4-D input is)")
    if input.dim() != 4 or grid.dim() != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid of shape (N, H_out, W_out, 2) with the same "
                           f"batch size, but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    ac = _align(align_corners, "grid_sample")
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    x = _source_index(grid[..., 0], w, padding_mode, ac)   # (N, Ho, Wo)
    y = _source_index(grid[..., 1], h, padding_mode, ac)
    flat = input.reshape(n, c, h * w)

    def tap(ix: Tensor, iy: Tensor) -> Tensor:
        # input at integer positions (ix, iy), zero outside: (N, C, Ho * Wo)
        inside = (ix >= 0) & (ix <= w - 1) & (iy >= 0) & (iy <= h - 1)
        idx = (iy.clamp(0, h - 1) * w + ix.clamp(0, w - 1)).long().reshape(n, 1, ho * wo).expand(n, c, ho * wo)
        return flat.gather(2, idx) * inside.reshape(n, 1, ho * wo).to(input.dtype)

    if mode == "nearest":
        return tap(x.round().detach(), y.round().detach()).reshape(n, c, ho, wo)
    x0, y0 = x.detach().floor(), y.detach().floor()
    wx1, wy1 = x - x0, y - y0                          # weights of the right / bottom neighbours
    wx0, wy0 = 1.0 - wx1, 1.0 - wy1

    def weight(a: Tensor, b: Tensor) -> Tensor:
        return (a * b).reshape(n, 1, ho * wo)

    out = (tap(x0, y0) * weight(wx0, wy0) + tap(x0 + 1, y0) * weight(wx1, wy0)
           + tap(x0, y0 + 1) * weight(wx0, wy1) + tap(x0 + 1, y0 + 1) * weight(wx1, wy1))
    return out.reshape(n, c, ho, wo)
