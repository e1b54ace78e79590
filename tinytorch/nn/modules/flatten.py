"""Flatten and Unflatten: reshape a range of dims into one, and one dim into several."""
from __future__ import annotations

from typing import Sequence

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens a contiguous range of dims into a tensor.

    Args:
        start_dim (int): first dim to flatten. Default: ``1``
        end_dim (int): last dim to flatten. Default: ``-1``"""
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Unflattens a tensor dim expanding it to a desired shape.

    Args:
        dim (int): dimension to be unflattened.
        unflattened_size (tuple or Size): new shape of the unflattened dimension."""
    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
