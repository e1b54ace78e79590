"""``torch.linalg`` functions composed of others (autograd records their parts): lstsq, pinv,
matrix_rank, matrix_power, matrix_exp, cross, multi_dot, vecdot, matmul, diagonal."""
from __future__ import annotations

from collections import namedtuple
import math
from typing import Optional, Sequence

from tinytorch._core import dtype as _dtype
from tinytorch._tensor.creation import empty, eye, tensor
from tinytorch._composites.numerics import cross as _cross
from tinytorch.linalg._decompositions import eigh, eigvalsh, inv, qr, solve_triangular, svd, svdvals
from tinytorch._tensor.tensor import Tensor

Lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])

_EPS = {_dtype.float32: 1.1920928955078125e-07, _dtype.float64: 2.220446049250313e-16}


def _check_float_double(name: str, A: Tensor) -> None:
    if A.dtype not in _EPS:
        raise RuntimeError(f"{name}: This function doesn't handle types other than float and double")


def _rtol_default(A: Tensor, atol, rtol) -> float:
    """PyTorch's default: eps * max(m, n) when neither tolerance is given; 0 when only a positive
    atol is."""
    if rtol is not None:
        return rtol
    if atol is not None and (not isinstance(atol, (int, float)) or atol > 0):
        return 0.0
    return _EPS[A.dtype] * max(A.shape[-2], A.shape[-1])


def _tolerance(S: Tensor, A: Tensor, atol, rtol) -> Tensor:
    """max(atol, rtol * largest singular value), per matrix, shaped (*, 1) to compare with S."""
    rtol = _rtol_default(A, atol, rtol)
    smax = S.amax(-1, keepdim=True) if S.shape[-1] > 0 else S.sum(-1, keepdim=True)
    tol = smax * rtol
    if atol is not None:
        atol_t = atol if isinstance(atol, Tensor) else tensor(float(atol), dtype=S.dtype, device=S.device)
        atol_t = atol_t.unsqueeze(-1) if atol_t.dim() > 0 else atol_t
        tol = tol.maximum(atol_t)
    return tol


def pinv(input: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """Computes the pseudoinverse (Moore-Penrose inverse) from the SVD (the eigendecomposition
    when ``hermitian``), dropping singular values below ``max(atol, rtol * S_max)``; by default
    ``rtol = eps * max(m, n)``. Differentiable where the kept singular values are distinct."""
    A = input
    if A.dim() < 2 or A.dtype not in _EPS:
        raise RuntimeError(f"linalg.pinv({A.dtype}{list(A.shape)}): expected a tensor with 2 or more dimensions "
                           f"of float, double, cfloat or cdouble types")
    if hermitian:
        w, V = eigh(A)
        tol = _tolerance(w.abs(), A, atol, rtol)
        keep = w.abs() > tol
        w_inv = (1.0 / w.where(keep, w.new_ones(()))).where(keep, w.new_zeros(()))
        return (V * w_inv.unsqueeze(-2)) @ V.mT
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tolerance(S, A, atol, rtol)
    keep = S > tol
    # 1/S only where kept (a zero S would give 0 * inf = nan in the gradient)
    S_inv = (1.0 / S.where(keep, S.new_ones(()))).where(keep, S.new_zeros(()))
    return (Vh.mT * S_inv.unsqueeze(-2)) @ U.mT


def matrix_rank(input: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """Computes the numerical rank: the number of singular values (absolute eigenvalues when
    ``hermitian``) above ``max(atol, rtol * S_max)``; int64."""
    A = input
    _check_float_double("linalg.matrix_rank", A)
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    return (S > _tolerance(S, A, atol, rtol)).sum(-1)


def lstsq(input: Tensor, b: Tensor, rcond: Optional[float] = None, *, driver: Optional[str] = None) -> Lstsq:
    """Computes a solution to the least squares problem ``min ||A X - B||_F`` for A (*, m, n),
    B (*, m, k) (or (*, m)). Drivers as PyTorch's CPU ones: ``'gelsy'`` (default) and
    ``'gelsd'``/``'gelss'`` through the pseudoinverse (rank-revealing, minimum norm, singular
    values below ``rcond * S_max`` dropped), ``'gels'`` through QR (full-rank A). ``residuals``
    (squared, per column) are given when m > n, A has full rank and the driver isn't gelsy;
    ``rank`` for all but gels, ``singular_values`` for gelsd/gelss, as PyTorch."""
    A, B = input, b
    _check_float_double("linalg.lstsq", A)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if B.dtype != A.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A.dtype} and other's dtype {B.dtype}")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.dim() < 2 or Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), got "
                           f"{A.shape[-2]} and {Bm.shape[-2]}")
    m, n = A.shape[-2], A.shape[-1]
    rank = empty(0, dtype=_dtype.int64, device=A.device)
    sv = empty(0, dtype=A.dtype, device=A.device)
    if driver == "gels":
        if m >= n:
            Q, R = qr(A)
            X = solve_triangular(R, Q.mT @ Bm, upper=True)
        else:       # minimum norm: A^T = Q R, X = Q R^-T B
            Q, R = qr(A.mT)
            X = Q @ solve_triangular(R.mT, Bm, upper=False)
        full_rank = True
    else:
        U, S, Vh = svd(A, full_matrices=False)
        tol = _tolerance(S, A, None, _EPS[A.dtype] * max(m, n) if rcond is None or rcond < 0 else rcond)
        keep = S > tol
        S_inv = (1.0 / S.where(keep, S.new_ones(()))).where(keep, S.new_zeros(()))
        X = (Vh.mT * S_inv.unsqueeze(-2)) @ (U.mT @ Bm)
        rank = keep.sum(-1)
        full_rank = bool((rank == min(m, n)).all().item())
        if driver != "gelsy":
            sv = S.detach()
    residuals = empty(0, dtype=A.dtype, device=A.device)
    if driver != "gelsy" and m > n and full_rank:
        residuals = ((A @ X - Bm) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    X = X.squeeze(-1) if vector else X
    return Lstsq(X, residuals, rank, sv)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """Computes the n-th power of square matrices by repeated squaring; n = 0 gives the identity,
    a negative n the power of the inverse."""
    A = input
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else 1} by {A.shape[-1] if A.dim() else 1} matrices")
    if not isinstance(n, int):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    if n == 0:
        return eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(*A.shape).clone()
    base = inv(A) if n < 0 else A
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result



def matrix_exp(A: Tensor) -> Tensor:
    """Computes the matrix exponential of a square matrix or of each square matrix in a batch, by
    scaling and squaring: ``exp(A) = exp(A / 2**s) ** (2**s)`` with ``A / 2**s`` of 1-norm at most
    1/2, where an 18-term Taylor series is exact to float64 rounding. Differentiable (autograd
    records the products); float16/bfloat16 inputs are computed in float32.

    Args:
        A (Tensor): tensor of shape `(*, n, n)` where `*` is zero or more batch dimensions."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        rows, cols = (A.shape[-2] if A.dim() > 1 else 1), (A.shape[-1] if A.dim() else 1)
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are {rows} by "
                           f"{cols} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got {A.dtype}")
    x = A if A.dtype in _EPS else A.to(_dtype.float32)
    norm = float(x.detach().abs().sum(-2).amax().item()) if x.numel() else 0.0   # the largest 1-norm
    squarings = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0.5 else 0
    x = x / (2.0 ** squarings)
    result = term = eye(x.shape[-1], dtype=x.dtype, device=x.device).expand(x.shape)
    for k in range(1, 19):
        term = term.matmul(x) / k
        result = result + term
    for _ in range(squarings):
        result = result.matmul(result)
    return result.to(A.dtype)

def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """Computes the cross product of 3-vectors along ``dim`` (broadcasting the other dims)."""
    if input.dim() != other.dim():
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions, got {input.dim()} "
                           f"and {other.dim()}")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    return _cross(input, other, dim)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """Multiplies a chain of matrices (the first may be a row vector, the last a column vector)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        ok = t.dim() == 2 or (t.dim() == 1 and i in (0, len(tensors) - 1))
        if not ok:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D (1D allowed for the first and last) but got "
                               f"{t.dim()}D")
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """Computes the dot product of vectors along ``dim`` (broadcasting the other dims)."""
    return (x * y).sum(dim)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Alias for ``tinytorch.matmul``."""
    return input @ other


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Alias for ``tinytorch.diagonal`` with matrix defaults for the dims."""
    return A.diagonal(offset, dim1, dim2)


__all__ = ["lstsq", "pinv", "matrix_rank", "matrix_power", "matrix_exp", "cross", "multi_dot", "vecdot", "matmul", "diagonal"]
