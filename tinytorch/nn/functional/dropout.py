"""Dropout of ``nn.functional``: element-wise dropout (the kernel of ``tinytorch._ops.dropout``) and
channel dropout (dropout1d / dropout2d: one Bernoulli draw per channel)."""
from __future__ import annotations

from tinytorch._creation import ones
from tinytorch._ops.dropout import dropout  # noqa: F401
from tinytorch.tensor import Tensor


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, spatial: int, name: str) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: expected a {spatial + 1}-D or {spatial + 2}-D input, got {list(input.shape)}")
    if not training or p == 0.0:
        return input
    # one Bernoulli draw per channel, broadcast over the spatial dims
    keep_shape = list(input.shape[:-spatial]) + [1] * spatial
    keep = dropout(ones(keep_shape, dtype=input.dtype, device=input.device), p, True)
    return input.mul_(keep) if inplace else input * keep


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability p, scaling the rest by 1/(1-p)."""
    return _channel_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) input with probability p, scaling the rest by 1/(1-p)."""
    return _channel_dropout(input, p, training, inplace, 2, "dropout2d")
