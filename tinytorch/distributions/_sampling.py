"""Draws of standard variates in a parameter's dtype and device (the global Philox generator,
so ``tinytorch.manual_seed`` makes every distribution's samples reproducible)."""
from __future__ import annotations

from tinytorch.random import rand, randn
from tinytorch._tensor.tensor import Tensor


def standard_uniform(shape, like: Tensor) -> Tensor:
    """U[0, 1) of ``shape``, with ``like``'s dtype and device."""
    return rand(tuple(shape), dtype=like.dtype, device=like.device)


def standard_normal(shape, like: Tensor) -> Tensor:
    return randn(tuple(shape), dtype=like.dtype, device=like.device)


def standard_exponential(shape, like: Tensor) -> Tensor:
    """Exp(1) by inversion: -log(1 - U), U in [0, 1), so never infinite."""
    return -(-standard_uniform(shape, like)).log1p()
