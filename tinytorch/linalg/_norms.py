"""Vector and matrix norms, as ``torch.linalg``'s, composed from reductions (so every device and
dtype, and differentiable where PyTorch's are); the spectral and nuclear matrix norms (``2``,
``-2``, ``'nuc'``) from the singular values."""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

from tinytorch.linalg._decompositions import svdvals
from tinytorch._tensor.tensor import Tensor

_Dims = Union[int, Sequence[int], None]

__all__ = ["vector_norm", "matrix_norm", "norm"]


def vector_norm(x: Tensor, ord: float = 2, dim: _Dims = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Computes a vector norm: ``sum(abs(x)**ord)**(1/ord)`` over ``dim`` (all elements if None);
    ``ord=inf``/``-inf`` give the largest/smallest absolute value, ``ord=0`` the number of non-zeros."""
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point tensor as input, got {x.dtype}")
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if ord == math.inf:
        return x.abs().amax(dims if dims is not None else list(range(x.dim())), keepdim=keepdim)
    if ord == -math.inf:
        return x.abs().amin(dims if dims is not None else list(range(x.dim())), keepdim=keepdim)
    if ord == 0:
        return (x != 0).to(x.dtype).sum(dims, keepdim=keepdim)
    return x.norm(float(ord), dims, keepdim)


def _check_matrix_dims(name: str, x: Tensor, dim) -> tuple:
    if len(dim) != 2:
        raise RuntimeError(f"linalg.{name}: dim must be a 2-tuple, got {tuple(dim)}")
    if x.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions, got {x.dim()}")
    d0, d1 = (d % x.dim() for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.{name}: dims must be different, got {tuple(dim)}")
    return d0, d1


def matrix_norm(x: Tensor, ord: Union[str, float] = "fro", dim: Sequence[int] = (-2, -1), keepdim: bool = False,
                *, dtype=None) -> Tensor:
    """Computes a matrix norm over the two dims ``dim``: ``'fro'`` (Frobenius), ``1``/``-1`` (max/min
    column sum of absolute values), ``inf``/``-inf`` (max/min row sum)."""
    if dtype is not None:
        x = x.to(dtype)
    d0, d1 = _check_matrix_dims("matrix_norm", x, dim)
    if ord == "fro":
        return x.norm(2.0, [d0, d1], keepdim)
    if ord in ("nuc", 2, -2):
        perm = [d for d in range(x.dim()) if d not in (d0, d1)] + [d0, d1]
        s = svdvals(x.permute(perm))
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            out = out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return out
    sums = {1: (d0, d1, "amax"), -1: (d0, d1, "amin"), math.inf: (d1, d0, "amax"), -math.inf: (d1, d0, "amin")}
    if ord not in sums:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    summed, reduced, pick = sums[ord]
    out = getattr(x.abs().sum(summed, keepdim=True), pick)(reduced, keepdim=True)
    return out if keepdim else out.squeeze(max(d0, d1)).squeeze(min(d0, d1))


def norm(x: Tensor, ord: Optional[Union[str, float]] = None, dim: _Dims = None, keepdim: bool = False,
         *, dtype=None) -> Tensor:
    """Computes a vector or matrix norm, as ``torch.linalg.norm``: a vector norm when ``dim`` is an
    int, or when both ``ord`` and ``dim`` are None (over all elements); a matrix norm when ``dim``
    is a 2-tuple, or ``dim`` is None and the input is 2-D."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2:
        return matrix_norm(x, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if x.dim() == 2:
            return matrix_norm(x, ord, (-2, -1), keepdim, dtype=dtype)
        if x.dim() != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {x.dim()}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: ord={ord!r} is a matrix norm: give a 2-tuple dim or a 2-D input")
    return vector_norm(x, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
