"""``torch.linalg``'s factorizations and solvers: solve, inv, det, slogdet, cholesky, qr, eigh,
eigvalsh, svd, svdvals, solve_triangular, lu_factor, lu_solve (and their ``_ex`` forms). The
kernels and derivatives are in ``tinytorch._ops.decomposition``; this module adds PyTorch's
signatures (the parameter names its bindings accept: ``A`` for most, ``input`` for cholesky, eigh,
eigvalsh and solve_triangular), result tuples, vector right-hand sides, ``left=`` and the checks."""
from __future__ import annotations

from collections import namedtuple

from tinytorch._ops import decomposition as _D
from tinytorch._ops.decomposition import LinAlgError
from tinytorch.linalg._lu import lu_factor_ex as _lu_factor_ex
from tinytorch._tensor.tensor import Tensor

# PyTorch's torch.return_types: tuples with named fields
SolveEx = namedtuple("linalg_solve_ex", ["result", "info"])
InvEx = namedtuple("linalg_inv_ex", ["inverse", "info"])
CholeskyEx = namedtuple("linalg_cholesky_ex", ["L", "info"])
Slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
QR = namedtuple("linalg_qr", ["Q", "R"])
Eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SVD = namedtuple("linalg_svd", ["U", "S", "Vh"])
LUFactor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
LUFactorEx = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])


def _batched(A: Tensor) -> bool:
    return A.dim() > 2


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    # PyTorch's rule: B is a vector (batch) when 1-D or of A's batch shape plus n
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> SolveEx:
    """Solves ``A X = B`` (``X A = B`` when ``left=False``) for square ``A`` (*, n, n) and
    returns ``(result, info)``; ``info`` is nonzero where ``A`` is singular (its first zero pivot)."""
    vector = _is_vector_rhs(A, B)
    if left:
        X, info = _D.solve_ex(A, B.unsqueeze(-1) if vector else B)
        X = X.squeeze(-1) if vector else X
    else:       # X A = B  <=>  A^T X^T = B^T; a vector B is a column, which X A = B can't take (as PyTorch)
        if vector:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation XA = B "
                               f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-1]}x1)")
        X, info = _D.solve_ex(A.mT, B.mT)
        X = X.mT
    if check_errors:
        _D.check_info("linalg.solve", "solve", info, _batched(A))
    return SolveEx(X, info)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """Computes the solution of the square system ``A X = B`` (``X A = B`` when ``left=False``),
    through an LU factorization with partial pivoting. Batch dimensions broadcast; ``B`` may be a
    vector (batch). Raises LinAlgError when ``A`` is singular."""
    return solve_ex(A, B, left=left, check_errors=True).result


def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvEx:
    """Computes the inverse of square matrices and returns ``(inverse, info)``."""
    Ainv, info = _D.inv_ex(A)
    if check_errors:
        _D.check_info("linalg.inv", "inv", info, _batched(A))
    return InvEx(Ainv, info)


def inv(A: Tensor) -> Tensor:
    """Computes the inverse of a square matrix (batch); raises LinAlgError when it is singular."""
    return inv_ex(A, check_errors=True).inverse


def det(A: Tensor) -> Tensor:
    """Computes the determinant of square matrices (*, n, n) from their LU factorization. Its
    gradient at a singular matrix is the cofactor matrix, computed from the SVD (as PyTorch)."""
    return _D.det(A)


def slogdet(A: Tensor) -> Slogdet:
    """Computes the sign and the natural log of the absolute value of the determinant; ``sign`` is
    0 and ``logabsdet`` is -inf for a singular matrix. Only ``logabsdet`` is differentiable."""
    return Slogdet(*_D.slogdet(A))


def cholesky_ex(input: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyEx:
    """Computes the Cholesky decomposition of symmetric positive-definite matrices, reading the
    lower triangle, and returns ``(L, info)``; ``info`` > 0 is the order of the leading minor
    that is not positive-definite."""
    L, info = _D.cholesky_ex(input, upper)
    if check_errors:
        _D.check_info("linalg.cholesky", "cholesky", info, _batched(input))
    return CholeskyEx(L, info)


def cholesky(input: Tensor, *, upper: bool = False) -> Tensor:
    """Computes the Cholesky decomposition ``A = L L^T`` (``U^T U`` when ``upper=True``) of
    symmetric positive-definite matrices; raises LinAlgError when one is not positive-definite."""
    return cholesky_ex(input, upper=upper, check_errors=True).L


def qr(A: Tensor, mode: str = "reduced") -> QR:
    """Computes the QR decomposition of matrices (*, m, n). ``mode``: ``'reduced'`` (Q (m, k),
    R (k, n), k = min(m, n)), ``'complete'`` (Q (m, m), R (m, n)) or ``'r'`` (R only, Q empty).
    Differentiable for ``'reduced'`` and for ``'complete'`` when m <= n."""
    return QR(*_D.qr(A, mode))


def eigh(input: Tensor, UPLO: str = "L") -> Eigh:
    """Computes the eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices,
    reading the lower (``UPLO='L'``) or upper triangle. The eigenvectors' gradient is undefined
    (inf/nan) where eigenvalues repeat, as in PyTorch; losses that depend only on the spanned
    subspaces (or the eigenvalues) are well defined."""
    return Eigh(*_D.eigh(input, UPLO))


def eigvalsh(input: Tensor, UPLO: str = "L") -> Tensor:
    """Computes the eigenvalues (ascending) of symmetric matrices."""
    return _D.eigvalsh(input, UPLO)


def svd(A: Tensor, full_matrices: bool = True, *, driver=None) -> SVD:
    """Computes the singular value decomposition ``A = U diag(S) Vh`` of matrices (*, m, n), ``S``
    descending. Gradients through ``U``/``Vh`` are defined for distinct singular values and for
    losses invariant to the vectors' signs (as PyTorch); ``driver`` is accepted for CUDA
    compatibility and ignored."""
    return SVD(*_D.svd(A, full_matrices))


def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """Computes the singular values of matrices (*, m, n), descending."""
    return _D.svdvals(A)


def solve_triangular(input: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """Computes the solution of a triangular system ``A X = B`` (``X A = B`` when ``left=False``);
    only the triangle named by ``upper`` is read (its diagonal taken as ones if ``unitriangular``)."""
    return _D.solve_triangular(input, B, upper=upper, left=left, unitriangular=unitriangular)


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> LUFactorEx:
    """Computes a compact LU factorization with partial pivoting, ``(LU, pivots, info)``; pivots
    are 1-based as LAPACK's. Differentiable (PyTorch's LU derivative, ``tinytorch/linalg/_lu.py``)."""
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: LU without pivoting is not implemented in tinytorch (nor on "
                                  "the CPU in PyTorch)")
    LU, pivots, info = _lu_factor_ex(A)
    if check_errors:
        _D.check_info("linalg.lu_factor", "inv", info, _batched(A))
    return LUFactorEx(LU, pivots, info)


def lu_factor(A: Tensor, *, pivot: bool = True) -> LUFactor:
    """Computes a compact LU factorization with partial pivoting, ``(LU, pivots)``; raises
    LinAlgError when a pivot is exactly zero."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot, check_errors=True)
    return LUFactor(LU, pivots)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """Solves ``A X = B`` from ``lu_factor``'s output (``A^T X = B`` with ``adjoint``;
    ``X A = B`` when ``left=False``)."""
    if left:
        return _D.lu_solve(LU, pivots, B, adjoint)
    return _D.lu_solve(LU, pivots, B.mT, not adjoint).mT      # X A = B  <=>  A^T X^T = B^T


def eig(input: Tensor):
    """Not implemented: the eigendecomposition of a general matrix is complex, and tinytorch has no
    complex dtypes. Use ``eigh`` for symmetric matrices."""
    raise NotImplementedError("linalg.eig: the eigenvalues of a general matrix are complex and tinytorch has no "
                              "complex dtypes; use linalg.eigh for symmetric matrices")


def eigvals(input: Tensor):
    """Not implemented (complex results); see ``eig``."""
    raise NotImplementedError("linalg.eigvals: the eigenvalues of a general matrix are complex and tinytorch has "
                              "no complex dtypes; use linalg.eigvalsh for symmetric matrices")


__all__ = ["LinAlgError", "solve", "solve_ex", "inv", "inv_ex", "det", "slogdet", "cholesky", "cholesky_ex", "qr",
           "eigh", "eigvalsh", "svd", "svdvals", "solve_triangular", "lu_factor", "lu_factor_ex", "lu_solve", "eig",
           "eigvals"]
