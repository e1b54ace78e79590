"""Distances and similarities of ``nn.functional``: normalize, cosine_similarity,
pairwise_distance (composed from norms, so every device and dtype differentiates them)."""
from __future__ import annotations

from tinytorch._ops import reduce as _R
from tinytorch._composites.reshaping import triu_indices
from tinytorch._tensor.tensor import Tensor


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """Perform :math:`L_p` normalization of inputs over specified dimension.

    Args:
        input (Tensor): the input tensor.
        p (float): the norm degree. Default: ``2.0``
        dim (int or tuple): the dimension to reduce. Default: ``1``
        eps (float): a value added for numerical stability. Default: ``1e-12``"""
    return input / _R.norm(input, p, dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Returns cosine similarity between ``x1`` and ``x2``, computed along dim.

    Args:
        x1 (Tensor): first input.
        x2 (Tensor): second input.
        dim (int): dimension where cosine similarity is computed. Default: ``1``
        eps (float): a value added for numerical stability. Default: ``1e-08``"""
    n1 = _R.norm(x1, 2, dim).clamp(min=eps)
    n2 = _R.norm(x2, 2, dim).clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    r"""Computes the pairwise distance between input vectors, or between columns of input matrices:
    :math:`\|x_1 - x_2 + \epsilon\|_p` over the last dimension.

    ||x1 - x2 + eps||_p over the last dim.

    Args:
        x1 (Tensor): first input.
        x2 (Tensor): second input.
        p (float): the norm degree. Default: ``2.0``
        eps (float): small value to avoid division by zero. Default: ``1e-06``
        keepdim (bool, optional): determines whether or not to keep the vector dimension. Default:
            ``False``"""
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """Computes the p-norm distance between every pair of row vectors in the input: the upper
    triangle of ``cdist(input, input)`` without the diagonal, row by row.

    Args:
        input (Tensor): input tensor of shape :math:`N \\times M`.
        p (float): p value for the p-norm distance to calculate between each vector pair
            :math:`\\in [0, \\infty]`. Default: 2

    Returns:
        a tensor of shape :math:`N (N - 1) / 2`.
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1, device=input.device)
    return (input[i] - input[j]).norm(p, -1)
