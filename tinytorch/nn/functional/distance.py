"""Distances and similarities of ``nn.functional``: normalize, cosine_similarity,
pairwise_distance (composed from norms, so every device and dtype differentiates them)."""
from __future__ import annotations

from tinytorch._ops import reduce as _R
from tinytorch.tensor import Tensor


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    return input / _R.norm(input, p, dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    n1 = _R.norm(x1, 2, dim).clamp(min=eps)
    n2 = _R.norm(x2, 2, dim).clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim)
