"""PyTorch's top-level linear-algebra functions (``torch.inverse``, ``torch.svd``, ...) and their
Tensor methods, in their own conventions (``input``, ``some=``, ``torch.svd``'s V rather than Vh),
on top of ``tinytorch.linalg``. Exported by the op schema (codegen/ops.py)."""
from __future__ import annotations

from collections import namedtuple

from tinytorch._tensor.creation import zeros
from tinytorch.linalg._composites import matrix_exp, matrix_power as _matrix_power, pinv  # noqa: F401  (matrix_exp: as torch.matrix_exp)
from tinytorch.linalg._decompositions import cholesky as _cholesky, det as _det, inv, qr as _qr
from tinytorch.linalg._decompositions import slogdet as _slogdet, svd as _svd, svdvals
from tinytorch._tensor.tensor import Tensor

SlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])
QRResult = namedtuple("qr", ["Q", "R"])
SVDResult = namedtuple("svd", ["U", "S", "V"])


def inverse(input: Tensor) -> Tensor:
    """Alias for ``tinytorch.linalg.inv``.

    Args:
        input (Tensor): the input tensor."""
    return inv(input)


def det(input: Tensor) -> Tensor:
    """Alias for ``tinytorch.linalg.det``.

    Args:
        input (Tensor): the input tensor."""
    return _det(input)


def slogdet(input: Tensor) -> SlogdetResult:
    """Alias for ``tinytorch.linalg.slogdet``.

    Args:
        input (Tensor): the input tensor."""
    return SlogdetResult(*_slogdet(input))


def logdet(input: Tensor) -> Tensor:
    """Computes the log-determinant: nan for a negative determinant, -inf for a singular matrix.

    Args:
        input (Tensor): the input tensor."""
    sign, logabsdet = _slogdet(input)
    return logabsdet.where(sign >= 0, logabsdet.new_full((), float("nan")))


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """Computes the Cholesky decomposition (as ``tinytorch.linalg.cholesky``).

    Args:
        input (Tensor): the input tensor.
        upper (bool, optional): flag that indicates whether to return a upper or lower triangular
            matrix. Default: ``False``"""
    return _cholesky(input, upper=upper)


def qr(input: Tensor, some: bool = True) -> QRResult:
    """Computes the QR decomposition; ``some=False`` gives the complete one.

    Args:
        input (Tensor): the input tensor.
        some (bool, optional): set to ``True`` for reduced QR decomposition and ``False`` for complete
            QR decomposition. Default: ``True``"""
    return QRResult(*_qr(input, "reduced" if some else "complete"))


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> SVDResult:
    """Computes ``input = U diag(S) V^T`` (note V, not Vh); ``some=False`` gives the full U and V.
    Without ``compute_uv``, U and V are zero-filled (m, m) and (n, n) matrices, as PyTorch.

    Args:
        input (Tensor): the input tensor.
        some (bool, optional): controls whether to compute the reduced or full decomposition. Default:
            ``True``
        compute_uv (bool, optional): controls whether to compute `U` and `V`. Default: ``True``"""
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        S = svdvals(input)
        return SVDResult(zeros(*batch, m, m, dtype=input.dtype, device=input.device), S,
                         zeros(*batch, n, n, dtype=input.dtype, device=input.device))
    U, S, Vh = _svd(input, full_matrices=not some)
    return SVDResult(U, S, Vh.mT)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """Computes the pseudoinverse, dropping singular values below ``rcond * S_max``.

    Args:
        input (Tensor): the input tensor.
        rcond (float): a floating-point value to determine the cutoff for small singular values.
            Default: ``1e-15``"""
    return pinv(input, rtol=rcond)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """Alias for ``tinytorch.linalg.matrix_power``.

    Args:
        input (Tensor): the input tensor.
        n (int): the power to raise the matrix to."""
    return _matrix_power(input, n)
