"""Fractional max pooling (Graham, 2014), 2-D and 3-D: each (sample, channel) plane gets its own
pseudo-random window starts from ``_random_samples`` (N, C, n) in [0, 1), as PyTorch's kernel:
with alpha = (in - k) / (out - 1), start[i] = int((i + u) * alpha) - int(u * alpha) and the last
start in - k (computed in the input's floating type, as PyTorch's). The window positions are
worked out on the host, then the maxima are gathered from the input (so gradients flow to the
maxima); ties go to the first in scan order, as PyTorch's."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from tinytorch._tensor.creation import tensor as _tensor
from tinytorch.random import rand
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.functional.pooling import with_indices
from tinytorch.nn.modules._doc_notes import fill_doc, pooling_notes

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

_NP_FLOAT = {"float64": np.float64, "float32": np.float32, "float16": np.float16}


def _ntuple(v: Any, n: int) -> tuple:
    return (v,) * n if isinstance(v, (int, float)) else tuple(v)


def _starts(u: np.ndarray, size: int, out: int, k: int, dtype) -> np.ndarray:
    """(P, out) window starts for the P planes' samples u (P,)."""
    seq = np.empty((u.shape[0], out), dtype=np.int64)
    if out > 1:
        alpha = dtype(size - k) / dtype(out - 1)
        i = np.arange(out - 1, dtype=dtype)[None, :]
        seq[:, :-1] = ((i + u[:, None]) * alpha).astype(np.int64) - (u[:, None] * alpha).astype(np.int64)
    seq[:, -1] = size - k
    return seq


def _fractional(input: Tensor, n: int, kernel_size: Any, output_size: Any, output_ratio: Any,
                samples: Optional[Tensor], name: str) -> Tuple[Tensor, Tensor]:
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    unbatched = input.dim() == n + 1
    x = input.unsqueeze(0) if unbatched else input                     # (N, C, *spatial)
    batch, planes = x.shape[0], x.shape[1]
    spatial = list(x.shape[2:])
    k = _ntuple(kernel_size, n)
    if output_size is None:
        ratio = _ntuple(output_ratio, n)
        output_size = [int(spatial[d] * ratio[d]) for d in range(n)]
    out = [int(o) for o in _ntuple(output_size, n)]
    dims = ("time", "height", "width")[-n:]
    for d in range(n):
        if out[d] + k[d] - 1 > spatial[d]:
            raise RuntimeError(f"{name}(): pool {dims[d]} {k[d]} too large relative to input {dims[d]} "
                               f"{spatial[d]}")
    if samples is None:
        samples = rand(batch, planes, n, dtype=x.dtype, device=x.device)
    if samples.dim() != 3 or samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got {samples.shape[-1]}.")
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != planes:
        raise RuntimeError(f"Expect _random_samples.size(1) equals to input channel size {planes}; got "
                           f"{samples.shape[1]}.")
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    ftype = _NP_FLOAT.get(x.dtype.name, np.float32)
    u = samples.detach()[:batch].cpu().float().numpy().astype(ftype).reshape(batch * planes, n)
    # PyTorch's samples: 2-D (width, height), 3-D (time, height, width)
    order = [1, 0] if n == 2 else [0, 1, 2]
    starts = [_starts(u[:, order[d]], spatial[d], out[d], k[d], ftype) for d in range(n)]   # n x (P, out_d)
    # flat input position of every (output cell, window tap): (P, prod(out), prod(k))
    strides = [int(np.prod(spatial[d + 1:])) for d in range(n)]
    flat = np.zeros((batch * planes,) + tuple(out) + tuple(k), dtype=np.int64)
    for d in range(n):
        shape = [batch * planes] + [1] * (2 * n)
        shape[1 + d] = out[d]
        tap = [1] * (2 * n + 1)
        tap[1 + n + d] = k[d]
        flat = flat + (starts[d].reshape(shape) + np.arange(k[d]).reshape(tap)) * strides[d]
    cells, taps = int(np.prod(out)), int(np.prod(k))
    where = _tensor(flat.reshape(batch, planes, cells * taps), device=x.device)
    vals = x.reshape(batch, planes, -1).gather(-1, where).reshape(batch, planes, cells, taps)
    best = vals.max(-1)
    idx = where.reshape(batch, planes, cells, taps).gather(-1, best.indices.unsqueeze(-1)).squeeze(-1)
    values, indices = best.values.reshape(batch, planes, *out), idx.reshape(batch, planes, *out)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


@fill_doc(pooling_notes)
def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> Any:
    """Applies 2D fractional max pooling over an input signal composed of several input planes.

    2-D fractional max pooling over (N, C, H, W) or (C, H, W); the indices are flat H * W positions.

    Args:
        input (Tensor): the input tensor.
        {fractional_args}"""
    out = _fractional(input, 2, kernel_size, output_size, output_ratio, _random_samples, "fractional_max_pool2d")
    return out if return_indices else out[0]


@fill_doc(pooling_notes)
def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> Any:
    """Applies 3D fractional max pooling over an input signal composed of several input planes.

    3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W); the indices are flat T * H * W positions.

    Args:
        input (Tensor): the input tensor.
        {fractional_args}"""
    out = _fractional(input, 3, kernel_size, output_size, output_ratio, _random_samples, "fractional_max_pool3d")
    return out if return_indices else out[0]


fractional_max_pool2d_with_indices = with_indices(fractional_max_pool2d, "fractional_args", __name__)
fractional_max_pool3d_with_indices = with_indices(fractional_max_pool3d, "fractional_args", __name__)
