"""LU with its derivative: ``linalg.lu`` (P, L, U), ``lu_unpack`` and the differentiable
``lu_factor``. The factorization is LAPACK's getrf (``_ops.decomposition``); the derivative of the
packed factors is PyTorch's ``linalg_lu_backward`` (square, wide and tall matrices), attached by an
autograd Function, so ``lu``, ``lu_unpack`` of a differentiable ``LU`` and everything built on them
differentiate."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from tinytorch._core.graph import is_grad_enabled
from tinytorch._tensor.creation import eye, tensor, zeros
from tinytorch._ops.shape import cat
from tinytorch._ops import decomposition as _D
from tinytorch.autograd.function import Function
from tinytorch._tensor.tensor import Tensor

LU = namedtuple("linalg_lu", ["P", "L", "U"])
LUUnpack = namedtuple("lu_unpack", ["P", "L", "U"])


def _split(LU_data: Tensor):
    # packed (*, m, n) -> unit-lower L (*, m, k) and upper U (*, k, n), k = min(m, n)
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
    U = LU_data[..., :k, :].triu()
    return L, U


def _permutation(pivots: Tensor, m: int, dtype, device) -> Tensor:
    """P with A = P L U from LAPACK's 1-based row interchanges (*, k): row i was swapped with
    row pivots[i] - 1, in order (computed on the host: k small integers per matrix)."""
    piv = pivots.cpu().numpy().astype(np.int64).reshape(-1, pivots.shape[-1]) - 1
    out = np.zeros((piv.shape[0], m, m))
    for b, row in enumerate(piv):
        perm = np.arange(m)
        for i, j in enumerate(row):
            if not 0 <= j < m:
                raise RuntimeError(f"lu_unpack: pivots must be in [1, {m}], got {j + 1}")
            perm[i], perm[j] = perm[j], perm[i]
        out[b, perm, np.arange(m)] = 1.0      # (LU)[i] is A[perm[i]]
    return tensor(out.reshape(*pivots.shape[:-1], m, m), dtype=dtype, device=device)


def _lu_backward(L: Tensor, U: Tensor, P: Tensor, gL: Tensor, gU: Tensor) -> Tensor:
    """PyTorch's linalg_lu_backward for real matrices: the gradient of A = P L U from those of L, U."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        # A_grad = P L^{-H} [L^H gL o 1_L + gU U^H o 1_U] U^{-H}
        g = L.mT.matmul(gL).tril(-1) + gU.matmul(U.mT).triu()
        g = _D.solve_triangular(U.mT, g, upper=False, left=False)
        g = _D.solve_triangular(L.mT, g, upper=True, left=True, unitriangular=True)
    elif m < n:
        # wide: A1_grad = P L^{-H} [gU1 + (L^H gL o 1_L - gU U^H o 1_U) U1^{-H}], A2_grad = P L^{-H} gU2
        g = L.mT.matmul(gL) - gU.triu().matmul(U.mT)
        g = _D.solve_triangular(U[..., :, :k].mT, g.tril(-1), upper=False, left=False)
        g = cat([g + gU[..., :, :k].triu(), gU[..., :, k:]], -1)
        g = _D.solve_triangular(L.mT, g, upper=True, left=True, unitriangular=True)
    else:
        # tall: A1_grad = P [gL1 + L1^{-H} (gU U^H o 1_U - L^H gL o 1_L)] U^{-H}, A2_grad = P gL2 U^{-H}
        g = gU.matmul(U.mT) - L.mT.matmul(gL.tril(-1))
        g = _D.solve_triangular(L[..., :k, :].mT, g.triu(), upper=True, left=True, unitriangular=True)
        g = cat([g + gL[..., :k, :].tril(-1), gL[..., k:, :]], -2)
        g = _D.solve_triangular(U.mT, g, upper=False, left=False)
    return P.matmul(g)


class _LUFactor(Function):
    """The packed LU of A (computed already) with the derivative of A = P L U attached."""

    @staticmethod
    def forward(ctx, A, LU_data, P):
        ctx.save_for_backward(LU_data, P)
        return LU_data.clone()

    @staticmethod
    def backward(ctx, gLU):
        LU_data, P = ctx.saved_tensors
        L, U = _split(LU_data)
        gL, gU = _split(gLU)
        return _lu_backward(L, U, P, gL.tril(-1), gU), None, None


def _factor(A: Tensor):
    """getrf of (*, m, n) A through the square kernel. Partial pivoting looks only at the column
    being eliminated, so a wide A's factors are those of its left square block (with
    U2 = L^-1 P^T A2), and a tall A's those of [A | 0] (the zero columns stay zero: no further
    swaps), cut to the first n columns."""
    m, n = A.shape[-2], A.shape[-1]
    if A.dim() < 2 or m == n:
        return _D.lu_factor_ex(A)
    if m < n:
        LU1, pivots, info = _D.lu_factor_ex(A[..., :, :m].contiguous())
        L, _ = _split(LU1)
        P = _permutation(pivots, m, A.dtype, A.device)
        U2 = _D.solve_triangular(L, P.mT.matmul(A[..., :, m:]), upper=False, left=True, unitriangular=True)
        return cat([LU1, U2], -1), pivots, info
    pad = zeros(list(A.shape[:-1]) + [m - n], dtype=A.dtype, device=A.device)
    LU_full, pivots, info = _D.lu_factor_ex(cat([A, pad], -1))
    info = info * (info <= n).to(info.dtype)          # zero pivots of the padding are not A's
    return LU_full[..., :, :n].contiguous(), pivots[..., :n].contiguous(), info


def lu_factor_ex(A: Tensor):
    """``(LU, pivots, info)`` of A; LU is differentiable when A requires grad."""
    if not (A.requires_grad and is_grad_enabled()):
        return _factor(A)
    LU_data, pivots, info = _factor(A.detach())
    P = _permutation(pivots, A.shape[-2], A.dtype, A.device)
    return _LUFactor.apply(A, LU_data, P), pivots, info


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True) -> LUUnpack:
    """Unpacks the LU decomposition returned by :func:`~linalg.lu_factor` into the `P, L, U` matrices.

    Args:
        LU_data (Tensor): the packed LU factorization data
        LU_pivots (Tensor): the packed LU factorization pivots
        unpack_data (bool): flag indicating if the data should be unpacked. If ``False``, then the
            returned ``L`` and ``U`` are empty tensors. Default: ``True``
        unpack_pivots (bool): flag indicating if the pivots should be unpacked into a permutation
            matrix ``P``. If ``False``, then the returned ``P`` is an empty tensor. Default: ``True``

    Returns:
        A namedtuple ``(P, L, U)``
    """
    if LU_data.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    if list(LU_pivots.shape) != list(LU_data.shape[:-2]) + [min(m, n)]:
        raise RuntimeError(f"torch.lu_unpack: LU_pivots of shape {list(LU_pivots.shape)} do not match LU_data of "
                           f"shape {list(LU_data.shape)} (expected {list(LU_data.shape[:-2]) + [min(m, n)]})")
    empty0 = zeros(0, dtype=LU_data.dtype, device=LU_data.device)
    L, U = _split(LU_data) if unpack_data else (empty0, empty0)
    P = _permutation(LU_pivots, m, LU_data.dtype, LU_data.device) if unpack_pivots else empty0
    return LUUnpack(P, L, U)


def lu(A: Tensor, *, pivot: bool = True) -> LU:
    """Computes the LU decomposition with partial pivoting of a matrix: ``A = P L U`` with P a
    permutation matrix, L lower triangular with ones on the diagonal and U upper triangular.
    Differentiable (PyTorch's formula) for square, wide and tall matrices of full rank.

    Args:
        A (Tensor): tensor of shape `(*, m, n)` where `*` is zero or more batch dimensions.

    Keyword args:
        pivot (bool, optional): Controls whether to compute the LU decomposition with partial
            pivoting or no pivoting. Only ``True`` is supported. Default: `True`.

    Returns:
        A named tuple `(P, L, U)`.
    """
    if not pivot:
        raise NotImplementedError("linalg.lu: LU without pivoting is not implemented in tinytorch (nor on the CPU "
                                  "in PyTorch)")
    LU_data, pivots, _ = lu_factor_ex(A)
    return LU(*lu_unpack(LU_data, pivots))
