"""``linalg.vander``, ``linalg.tensorinv`` and ``linalg.tensorsolve``: reshapes around ``inv``/``solve``
and powers, so they run (and differentiate) wherever those do."""
from __future__ import annotations

import math
from typing import Optional, Sequence

from tinytorch.linalg._decompositions import inv, solve
from tinytorch._tensor.tensor import Tensor


def vander(x: Tensor, *, N: Optional[int] = None) -> Tensor:
    """Generates a Vandermonde matrix with increasing powers: columns ``x**0, x**1, ..., x**(N-1)``.

    Args:
        x (Tensor): tensor of shape (*, n).
        N (int, optional): number of columns. Default: ``x.shape[-1]``."""
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got N={n}")
    return _cumulative_powers(x, n)   # exact integer powers, differentiable at x = 0


def _cumulative_powers(x: Tensor, n: int) -> Tensor:
    from tinytorch._ops.index import cat
    columns = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,))
    ones = x.unsqueeze(-1) * 0 + 1   # [1, x, x, ...] along the last dim, then a cumulative product
    return cat([ones, columns], -1).cumprod(-1)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The multiplicative inverse of ``A`` for :func:`tensordot`: ``prod(A.shape[:ind]) == prod(A.shape[ind:])``,
    result shape ``A.shape[ind:] + A.shape[:ind]``.

    Args:
        A (Tensor): tensor to invert.
        ind (int): index at which to compute the inverse of tensordot. Default: ``2``."""
    if ind <= 0:
        raise ValueError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"linalg.tensorinv: Expected self to satisfy the requirement "
                           f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def tensorsolve(A: Tensor, B: Tensor, dims: Optional[Sequence[int]] = None) -> Tensor:
    """The solution ``X`` of ``tensordot(A, X, X.dim()) = B``; ``dims`` moves those dimensions of ``A`` to the end first.

    Args:
        A (Tensor): tensor of shape ``B.shape + X.shape``, after ``dims`` are moved.
        B (Tensor): right-hand side.
        dims (tuple of int, optional): dimensions of ``A`` to move to the end before solving."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        keep = [d for d in range(A.dim()) if d not in dims]
        A = A.permute(keep + list(dims))
    result_shape = tuple(A.shape[B.dim():])
    rows, cols = B.numel(), math.prod(result_shape)
    if tuple(A.shape[:B.dim()]) != tuple(B.shape) or rows != cols:
        raise RuntimeError(f"linalg.tensorsolve: Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got A {list(A.shape)} and B {list(B.shape)}")
    return solve(A.reshape(rows, cols), B.reshape(rows, 1)).reshape(result_shape)
