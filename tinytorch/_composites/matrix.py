"""Matrix functions PyTorch keeps at the top level, outside ``torch.linalg``, composed from it:
cholesky_solve, cholesky_inverse and the deprecated frobenius_norm, nuclear_norm."""
from __future__ import annotations

from typing import Sequence, Union

from tinytorch import linalg as _linalg
from tinytorch._tensor.creation import eye as _eye
from tinytorch._tensor.tensor import Tensor

__all__ = ["frobenius_norm", "nuclear_norm", "cholesky_solve", "cholesky_inverse"]


def frobenius_norm(input: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    """The Frobenius norm of ``input`` over ``dim`` (all dimensions when empty); deprecated in PyTorch for
    :func:`tinytorch.linalg.vector_norm`.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of int): the dimensions to reduce.
        keepdim (bool): whether the output keeps ``dim``. Default: ``False``."""
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    return _linalg.vector_norm(input, 2, dim=dim or None, keepdim=keepdim)


def nuclear_norm(input: Tensor, dim: Union[Sequence[int], bool, None] = None, keepdim: bool = False) -> Tensor:
    """The nuclear norm (sum of singular values) of the matrices in ``input`` over ``dim`` (default the 2-D input).

    Args:
        input (Tensor): the input tensor.
        dim (tuple of int, optional): the two matrix dimensions. Default: the input's two dimensions.
        keepdim (bool): whether the output keeps ``dim``. Default: ``False``."""
    if isinstance(dim, bool):   # torch.nuclear_norm(input, keepdim) form
        dim, keepdim = None, dim
    if dim is None and input.dim() != 2:
        raise RuntimeError(f"nuclear_norm: expected a 2-D tensor without dim, got {input.dim()}-D")
    return _linalg.matrix_norm(input, "nuc", dim=tuple(dim) if dim is not None else (-2, -1), keepdim=keepdim)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """Solves ``A X = B`` for ``A = L L^T`` (``U^T U`` when ``upper``) given its Cholesky factor.

    Args:
        B (Tensor): right-hand side of shape (*, n, k).
        L (Tensor): lower (or upper) triangular Cholesky factor of shape (*, n, n).
        upper (bool, optional): whether ``L`` is upper triangular. Default: ``False``."""
    if L.dim() < 2 or L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"cholesky_solve: expected a batch of square factors, got shape {list(L.shape)}")
    if B.dim() < 2 or B.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"cholesky_solve: incompatible shapes: B {list(B.shape)} and L {list(L.shape)}")
    lower = L.mT if upper else L
    y = _linalg.solve_triangular(lower, B, upper=False)
    return _linalg.solve_triangular(lower.mT, y, upper=True)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``A = L L^T`` (``U^T U`` when ``upper``) from its Cholesky factor.

    Args:
        L (Tensor): lower (or upper) triangular Cholesky factor of shape (*, n, n).
        upper (bool, optional): whether ``L`` is upper triangular. Default: ``False``."""
    n = L.shape[-1]
    eye = _eye(n, dtype=L.dtype, device=L.device).expand(tuple(L.shape))
    return cholesky_solve(eye, L, upper)
