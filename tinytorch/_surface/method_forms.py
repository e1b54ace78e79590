"""The second form of names tinytorch has in one form only: Tensor methods of
top-level functions (cov, corrcoef, cross, split_with_sizes, ...; hardshrink and prelu are in _nn_aliases), the in-place
matrix updates (addmm_, addbmm_, baddbmm_, addmv_, addr_) written through ``copy_`` so autograd
records them, top-level forms of Tensor-only methods (xlogy_, index_put_, put, renorm, ...) and a
few linear-algebra composites (cholesky_solve, cholesky_inverse, frobenius_norm, nuclear_norm,
cumulative_trapezoid). Installed by the package root: METHODS on Tensor, __all__ at the top level."""
from __future__ import annotations

from typing import List, Optional, Sequence, Union

from tinytorch._tensor import creation as _creation
from tinytorch._surface import tensor_attributes as _attrs
from tinytorch import linalg as _linalg
from tinytorch._ops import index as _index_ops
from tinytorch._tensor.tensor import Tensor


def _addbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """See :func:`tinytorch.addbmm`.

    Args:
        batch1 (Tensor): the first batch of matrices to be multiplied.
        batch2 (Tensor): the second batch of matrices to be multiplied.
        beta (Number, optional): multiplier for ``self``.
        alpha (Number, optional): multiplier for ``batch1 @ batch2``."""
    from tinytorch._surface.inplace_functions import addbmm
    return addbmm(self, batch1, batch2, beta=beta, alpha=alpha)


def addbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In-place version of :meth:`Tensor.addbmm`.

    Args:
        batch1 (Tensor): the first batch of matrices to be multiplied.
        batch2 (Tensor): the second batch of matrices to be multiplied.
        beta (Number, optional): multiplier for ``self``.
        alpha (Number, optional): multiplier for the product."""
    return self.copy_(_addbmm(self, batch1, batch2, beta=beta, alpha=alpha))


def addmm_(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In-place version of :meth:`Tensor.addmm`.

    Args:
        mat1 (Tensor): the first matrix to be matrix multiplied.
        mat2 (Tensor): the second matrix to be matrix multiplied.
        beta (Number, optional): multiplier for ``self``.
        alpha (Number, optional): multiplier for the product."""
    return self.copy_(self.addmm(mat1, mat2, beta=beta, alpha=alpha))


def baddbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In-place version of :meth:`Tensor.baddbmm`.

    Args:
        batch1 (Tensor): the first batch of matrices to be multiplied.
        batch2 (Tensor): the second batch of matrices to be multiplied.
        beta (Number, optional): multiplier for ``self``.
        alpha (Number, optional): multiplier for the product."""
    return self.copy_(self.baddbmm(batch1, batch2, beta=beta, alpha=alpha))


def _addmv_(self: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In-place version of :meth:`Tensor.addmv`.

    Args:
        mat (Tensor): matrix to be matrix multiplied.
        vec (Tensor): vector to be matrix multiplied.
        beta (Number, optional): multiplier for ``self``.
        alpha (Number, optional): multiplier for the product."""
    return self.copy_(self.addmv(mat, vec, beta=beta, alpha=alpha))


def addr_(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In-place version of :meth:`Tensor.addr`.

    Args:
        vec1 (Tensor): the first vector of the outer product.
        vec2 (Tensor): the second vector of the outer product.
        beta (Number, optional): multiplier for ``self``.
        alpha (Number, optional): multiplier for the outer product."""
    return self.copy_(self.addr(vec1, vec2, beta=beta, alpha=alpha))


def _cov(self: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """See :func:`tinytorch.cov`.

    Args:
        correction (int, optional): difference between the sample size and sample degrees of freedom.
        fweights (Tensor, optional): integer frequency weights.
        aweights (Tensor, optional): observation vector weights."""
    from tinytorch._generated.functional import cov
    return cov(self, correction=correction, fweights=fweights, aweights=aweights)


def _corrcoef(self: Tensor) -> Tensor:
    """See :func:`tinytorch.corrcoef`."""
    from tinytorch._generated.functional import corrcoef
    return corrcoef(self)


def _cross(self: Tensor, other: Tensor, dim: Optional[int] = None) -> Tensor:
    """See :func:`tinytorch.cross`.

    Args:
        other (Tensor): the second input tensor.
        dim (int, optional): the dimension to take the cross-product in."""
    from tinytorch._generated.functional import cross
    return cross(self, other, dim)


def _logit_(self: Tensor, eps: Optional[float] = None) -> Tensor:
    """In-place version of :meth:`Tensor.logit`.

    Args:
        eps (float, optional): the epsilon for input clamp bound. Default: ``None``."""
    return self.copy_(self.logit(eps))


METHODS = {
    "cov": _cov, "corrcoef": _corrcoef, "cross": _cross,
    "addbmm": _addbmm,
    "addbmm_": addbmm_, "addmm_": addmm_, "baddbmm_": baddbmm_, "addmv_": _addmv_, "addr_": addr_,
    "logit_": _logit_,
}


def _method_names(*names: str) -> dict:
    from tinytorch._surface import inplace_functions as _f
    return {n: getattr(_f, n) for n in names}


METHODS.update(_method_names("split_with_sizes", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"))


# ---- top-level forms
def xlogy_(input: Tensor, other) -> Tensor:
    """In-place version of :func:`tinytorch.xlogy`.

    Args:
        input (Tensor): the input tensor, overwritten.
        other (Tensor or Number): the second input."""
    return input.xlogy_(other)


def logit_(input: Tensor, eps: Optional[float] = None) -> Tensor:
    """In-place version of :func:`tinytorch.logit`.

    Args:
        input (Tensor): the input tensor, overwritten.
        eps (float, optional): the epsilon for input clamp bound. Default: ``None``."""
    return _logit_(input, eps)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: Optional[float] = None,
                neginf: Optional[float] = None) -> Tensor:
    """In-place version of :func:`tinytorch.nan_to_num`.

    Args:
        input (Tensor): the input tensor, overwritten.
        nan (Number): the value to replace NaNs with. Default: ``0``.
        posinf (Number, optional): the value to replace positive infinity with.
        neginf (Number, optional): the value to replace negative infinity with."""
    return input.nan_to_num_(nan, posinf, neginf)


def index_put_(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """Puts ``values`` into ``input`` at ``indices`` (a tuple of index tensors), in place.

    Args:
        input (Tensor): the input tensor, overwritten.
        indices (tuple of Tensor): tensors used to index into ``input``.
        values (Tensor): tensor of the same dtype as ``input``.
        accumulate (bool): whether to accumulate into ``input``. Default: ``False``."""
    return input.index_put_(tuple(indices), values, accumulate)


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In-place version of :func:`tinytorch.addmv`.

    Args:
        input (Tensor): vector to be added, overwritten.
        mat (Tensor): matrix to be multiplied.
        vec (Tensor): vector to be multiplied.
        beta (Number, optional): multiplier for ``input``.
        alpha (Number, optional): multiplier for ``mat @ vec``."""
    return _addmv_(input, mat, vec, beta=beta, alpha=alpha)


def get_device(input: Tensor) -> int:
    """The device ordinal of a CUDA tensor, -1 for a CPU tensor.

    Args:
        input (Tensor): the input tensor."""
    return _attrs.get_device(input)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """See :meth:`Tensor.index_fill`.

    Args:
        input (Tensor): the input tensor.
        dim (int): dimension along which to index.
        index (LongTensor): indices of ``input`` to fill in.
        value (Number or 0-dim Tensor): the value to fill with."""
    return _attrs.index_fill(input, dim, index, value)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """See :meth:`Tensor.put`.

    Args:
        input (Tensor): the input tensor.
        index (LongTensor): the indices into ``input``, as if it were 1-D.
        source (Tensor): the tensor containing values to copy from.
        accumulate (bool): whether to accumulate. Default: ``False``."""
    return _attrs.put(input, index, source, accumulate)


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """See :meth:`Tensor.renorm`.

    Args:
        input (Tensor): the input tensor.
        p (float): the power for the norm computation.
        dim (int): the dimension to slice over to get the sub-tensors.
        maxnorm (float): the maximum norm to keep each sub-tensor under."""
    return _attrs.renorm(input, p, dim, maxnorm)


def asarray(obj, *, dtype=None, device=None, copy: Optional[bool] = None, requires_grad: bool = False) -> Tensor:
    """Converts ``obj`` (a tensor, NumPy array, DLPack capsule holder, scalar or sequence) to a tensor,
    sharing memory when it can unless ``copy=True``.

    Args:
        obj (object): the object to convert.
        dtype (tinytorch.dtype, optional): the datatype of the returned tensor.
        device (tinytorch.device, optional): the device of the returned tensor.
        copy (bool, optional): True always copies, False never copies (raises if a copy is needed).
        requires_grad (bool, optional): whether the result records operations for autograd."""
    out = _creation.as_tensor(obj, dtype=dtype, device=device)
    if copy is False and isinstance(obj, Tensor) and out is not obj and \
            (out.dtype != obj.dtype or out.device != obj.device):
        raise ValueError("asarray(copy=False): converting the tensor needs a copy (dtype or device differs)")
    if copy:
        out = out.clone() if isinstance(obj, Tensor) or out.data_ptr() == _data_ptr(obj) else out
    return out.requires_grad_(True) if requires_grad else out


def _data_ptr(obj) -> Optional[int]:
    interface = getattr(obj, "__array_interface__", None)
    return interface["data"][0] if interface else None


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
    eye = _creation.eye(n, dtype=L.dtype, device=L.device).expand(tuple(L.shape))
    return cholesky_solve(eye, L, upper)


def cumulative_trapezoid(y: Tensor, x: Optional[Tensor] = None, *, dx: Optional[float] = None,
                         dim: int = -1) -> Tensor:
    """Cumulatively computes the trapezoidal rule along ``dim`` (one fewer element than ``y`` there).

    Args:
        y (Tensor): values to integrate.
        x (Tensor, optional): sample points (1-D along ``dim``, or the shape of ``y``).
        dx (float, optional): constant spacing when ``x`` is not given. Default: ``1``.
        dim (int): the dimension along which to integrate. Default: ``-1``."""
    if x is not None and dx is not None:
        raise RuntimeError("cumulative_trapezoid: received both x and dx; pass at most one")
    dim = dim + y.dim() if dim < 0 else dim
    n = y.shape[dim]
    mids = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2 if n > 1 else y.narrow(dim, 0, 0)
    if x is not None:
        if x.dim() == 1:
            if x.shape[0] != n:
                raise RuntimeError(f"cumulative_trapezoid: x has {x.shape[0]} points, y has {n} along dim {dim}")
            step = (x[1:] - x[:-1]).reshape((-1,) + (1,) * (y.dim() - dim - 1))
        else:
            xn = x.shape[dim]
            step = x.narrow(dim, 1, xn - 1) - x.narrow(dim, 0, xn - 1)
        mids = mids * step
    elif dx is not None:
        mids = mids * dx
    return mids.cumsum(dim)


def set_flush_denormal(mode: bool) -> bool:
    """Would flush denormal floats to zero on CPU; tinytorch does not support it and returns False (as
    PyTorch does on CPUs without SSE3).

    Args:
        mode (bool): whether to enable flush-denormal mode."""
    return False


def init_num_threads() -> None:
    """Initializes the CPU thread pool (tinytorch's starts on first use: nothing to do)."""
    return None


METHODS.update({"cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse})   # B.cholesky_solve(L)

__all__ = ["xlogy_", "logit_", "nan_to_num_", "index_put_", "addmv_", "get_device", "index_fill", "put", "renorm",
           "asarray", "frobenius_norm", "nuclear_norm", "cholesky_solve", "cholesky_inverse",
           "cumulative_trapezoid", "set_flush_denormal", "init_num_threads"]
