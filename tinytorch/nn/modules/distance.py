"""CosineSimilarity and PairwiseDistance between two batches of vectors."""
from __future__ import annotations

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Returns cosine similarity between :math:`x_1` and :math:`x_2`, computed along `dim`.

    Args:
        dim (int): dimension where cosine similarity is computed. Default: ``1``
        eps (float): a value added for numerical stability. Default: ``1e-08``"""
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """Computes the pairwise distance between input vectors, or between columns of input matrices.

    Args:
        p (float): the norm degree. Default: ``2.0``
        eps (float): small value to avoid division by zero. Default: ``1e-06``
        keepdim (bool, optional): determines whether or not to keep the vector dimension. Default:
            ``False``"""
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
