"""The few dense linear-algebra pieces MultivariateNormal needs, composed from existing ops so
autograd differentiates them and they run on every device: a batched Cholesky factorization
and a lower-triangular solve (both O(n) steps of batched tensor ops, fine for the small event
sizes of distributions; tinytorch.linalg will carry LAPACK/cuSOLVER versions)."""
from __future__ import annotations

from tinytorch._tensor.creation import arange, eye
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch._tensor.tensor import Tensor


def cholesky(a: Tensor) -> Tensor:
    """L lower-triangular with L @ L.mT == a, for symmetric positive-definite a (..., n, n);
    the Cholesky-Crout recurrence one column at a time. A non-positive-definite a gives NaN
    on the diagonal (callers validate)."""
    n = a.shape[-1]
    rows = arange(n, device=a.device)
    cols = []
    for j in range(n):
        c = a[..., :, j]                                        # (..., n)
        if j:
            prev = stack(cols, -1)                              # (..., n, j)
            c = c - (prev * prev[..., j:j + 1, :]).sum(-1)
        d = c[..., j:j + 1].sqrt()
        cols.append((c / d) * (rows >= j).to(a.dtype))
    return stack(cols, -1)


def solve_lower(l: Tensor, b: Tensor) -> Tensor:
    """x with l @ x == b for lower-triangular l (..., n, n) and b (..., n, k), batch dims
    broadcast; forward substitution one row at a time."""
    n = l.shape[-1]
    xs = []
    for i in range(n):
        r = b[..., i:i + 1, :]                                  # (..., 1, k)
        if i:
            r = r - l[..., i:i + 1, :i] @ cat(xs, -2)
        xs.append(r / l[..., i:i + 1, i:i + 1])
    return cat(xs, -2)


def inverse_lower(l: Tensor) -> Tensor:
    """l^-1 for lower-triangular l (..., n, n)."""
    return solve_lower(l, eye(l.shape[-1], dtype=l.dtype, device=l.device).expand(l.shape))
