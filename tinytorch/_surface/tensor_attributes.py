"""Tensor attributes and methods PyTorch code reads that tinytorch composes from existing ones:
size queries (nbytes, itemsize, layout, is_signed, get_device, ...), the honest-False backend flags,
conjugate-transpose views (H, mH, adjoint), and in-place forms written through ``copy_`` so autograd
sees them (tril_, cumsum_, index_fill_, masked_scatter_, put_, renorm_, ...), plus the in-place
random fills (exponential_, log_normal_, cauchy_, geometric_) drawn from tinytorch's generator.
Installed on Tensor by the package root (ATTRIBUTES)."""
from __future__ import annotations

import math
from typing import Optional, Sequence

from tinytorch._tensor import creation as _creation
from tinytorch._tensor.tensor import Tensor


class layout:
    """A tensor's memory layout; tinytorch has only ``tinytorch.strided`` (dense)."""
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


strided = layout("strided")


def _nbytes(self: Tensor) -> int:
    return self.numel() * self.element_size()


def _itemsize(self: Tensor) -> int:
    return self.element_size()


def is_signed(self: Tensor) -> bool:
    """Returns True if the data type of ``self`` is a signed data type."""
    return self.dtype.is_floating_point or self.dtype.name in ("int32", "int64", "int16", "int8")


def get_device(self: Tensor) -> int:
    """For CUDA tensors, returns the device ordinal of the GPU the tensor lives on; for CPU tensors, -1."""
    return -1 if self.device.type == "cpu" else (self.device.index or 0)


def is_same_size(self: Tensor, other: Tensor) -> bool:
    """Returns True if ``self`` and ``other`` have the same shape.

    Args:
        other (Tensor): the tensor to compare with."""
    return tuple(self.shape) == tuple(other.shape)


def is_nonzero(self: Tensor) -> bool:
    """Returns True if the single element of ``self`` is not zero after type conversions."""
    if self.numel() != 1:
        if self.numel() == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item() != 0)


def new(self: Tensor, *args) -> Tensor:
    """Legacy constructor: ``x.new()`` is an empty tensor, ``x.new(2, 3)`` an uninitialized one of that size,
    ``x.new(data)`` a tensor of ``data``; all with ``self``'s dtype and device.

    Args:
        args (ints or sequence or Tensor): a size, or data."""
    if not args:
        return self.new_empty((0,))
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(self.dtype).detach()
    if all(isinstance(a, int) for a in args):
        return self.new_empty(args)
    if len(args) == 1 and isinstance(args[0], (tuple, list)) and all(isinstance(a, int) for a in args[0]) \
            and type(args[0]).__name__ == "Size":
        return self.new_empty(tuple(args[0]))
    return self.new_tensor(args[0] if len(args) == 1 else list(args))


def new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *, dtype=None, device=None,
                      requires_grad: bool = False) -> Tensor:
    """Returns an uninitialized tensor of ``size`` and ``stride`` with ``self``'s dtype and device by default.

    Args:
        size (tuple of int): the shape of the output tensor.
        stride (tuple of int): the strides of the output tensor.
        dtype (tinytorch.dtype, optional): the desired type of returned tensor.
        device (tinytorch.device, optional): the desired device of returned tensor.
        requires_grad (bool, optional): if autograd should record operations on the returned tensor."""
    from tinytorch._surface.inplace_functions import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


def adjoint(self: Tensor) -> Tensor:
    """Returns a view of ``self`` with its last two dimensions transposed (no complex dtypes: no conjugation)."""
    if self.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return self.transpose(-2, -1)


def _mH(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return self.transpose(-2, -1)


def _H(self: Tensor) -> Tensor:
    if self.dim() not in (0, 2):
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor.")
    return self.t() if self.dim() == 2 else self


def sum_to_size(self: Tensor, *size) -> Tensor:
    """Sums ``self`` to ``size``, which must be broadcastable to ``self``'s shape.

    Args:
        size (int...): a sequence of integers defining the shape of the output tensor."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = self.sum(tuple(range(lead))) if lead else self
    dims = tuple(i for i, (s, d) in enumerate(zip(size, shape[lead:])) if s == 1 and d != 1)
    return out.sum(dims, keepdim=True) if dims else out


# In-place forms written as self.copy_(out-of-place): the graph records a copy into self
def tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    """In-place version of :meth:`Tensor.tril`.

    Args:
        diagonal (int, optional): the diagonal to consider."""
    return self.copy_(self.tril(diagonal))


def triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    """In-place version of :meth:`Tensor.triu`.

    Args:
        diagonal (int, optional): the diagonal to consider."""
    return self.copy_(self.triu(diagonal))


def cumsum_(self: Tensor, dim: int, *, dtype=None) -> Tensor:
    """In-place version of :meth:`Tensor.cumsum`.

    Args:
        dim (int): the dimension to do the operation over.
        dtype (tinytorch.dtype, optional): the dtype to accumulate in."""
    return self.copy_(self.cumsum(dim, dtype=dtype) if dtype is not None else self.cumsum(dim))


def cumprod_(self: Tensor, dim: int, *, dtype=None) -> Tensor:
    """In-place version of :meth:`Tensor.cumprod`.

    Args:
        dim (int): the dimension to do the operation over.
        dtype (tinytorch.dtype, optional): the dtype to accumulate in."""
    return self.copy_(self.cumprod(dim, dtype=dtype) if dtype is not None else self.cumprod(dim))


def is_distributed(self: Tensor) -> bool:
    """Returns False: tinytorch tensors are never distributed tensors."""
    return False


def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Fills the main diagonal of a tensor with at least 2 dimensions (all of equal length when more than 2).

    Args:
        fill_value (Number): the fill value.
        wrap (bool): whether the diagonal is 'wrapped' after N columns for tall matrices. Default: ``False``."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self.shape)
    if self.dim() == 2 and wrap and self.shape[0] > self.shape[1] + 1:
        rows = [r for r in range(self.shape[0]) if r % (self.shape[1] + 1) < self.shape[1]]
        cols = [r % (self.shape[1] + 1) for r in rows]
        index = [rows, cols]
    else:
        index = [list(range(n))] * self.dim()
    idx = tuple(_creation.tensor(i, dtype="int64", device=self.device) for i in index)
    value = _creation.tensor(fill_value, dtype=self.dtype, device=self.device)
    return self.index_put_(idx, value)


def _index_along(self: Tensor, dim: int, index: Tensor, op: str) -> tuple:
    if index.dim() > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, got {index.dim()}-D")
    if index.dtype.name != "int64":
        raise IndexError(f"{op}(): Expected dtype int64 for index but got {index.dtype}")
    dim = dim + self.dim() if dim < 0 else dim
    if not 0 <= dim < max(self.dim(), 1):
        raise IndexError(f"{op}(): dim {dim} out of range for a {self.dim()}-D tensor")
    return (slice(None),) * dim + (index.reshape(-1),), dim


def index_fill(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """Returns ``self`` with the entries at ``index`` along ``dim`` set to ``value``.

    Args:
        dim (int): dimension along which to index.
        index (LongTensor): indices of ``self`` tensor to fill in.
        value (Number or 0-dim Tensor): the value to fill with."""
    key, dim = _index_along(self, dim, index, "index_fill")
    keep = self.new_ones(self.shape[dim]).index_put((index.reshape(-1),), self.new_zeros(()))
    keep = keep.reshape((-1,) + (1,) * (self.dim() - dim - 1))
    fill = value.to(self.dtype) if isinstance(value, Tensor) else value
    return self * keep + (1 - keep) * fill if self.dtype.is_floating_point else \
        self.masked_fill(keep == 0, fill)


def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """In-place version of :meth:`Tensor.index_fill`.

    Args:
        dim (int): dimension along which to index.
        index (LongTensor): indices of ``self`` tensor to fill in.
        value (Number or 0-dim Tensor): the value to fill with."""
    return self.copy_(index_fill(self, dim, index, value))


def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Copies the elements of ``source`` into ``self`` at the positions ``index`` along ``dim``.

    Args:
        dim (int): dimension along which to index.
        index (LongTensor): indices of ``self`` to select from.
        source (Tensor): the tensor containing values to copy."""
    return self.copy_(_index_copy(self, dim, index, source))


def _index_copy(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    key, dim = _index_along(self, dim, index, "index_copy")
    rows = source.shape[dim] if source.dim() else 1
    if rows != index.numel():
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({rows})")
    return self.index_put(key, source.to(self.dtype))


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """Copies elements from ``source`` into ``self`` at the positions where ``mask`` is True, in order.

    Args:
        mask (BoolTensor): the boolean mask, broadcastable to ``self``.
        source (Tensor): the tensor to copy from (at least as many elements as ones in ``mask``)."""
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    full_mask = mask.expand(self.shape) if tuple(mask.shape) != tuple(self.shape) else mask
    count = int(full_mask.sum().item())
    if count > source.numel():
        raise RuntimeError(f"masked_scatter: expected source to have at least {count} elements, "
                           f"got {source.numel()}")
    return self.index_put_((full_mask,), source.reshape(-1)[:count].to(self.dtype))


def put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place version of :meth:`Tensor.put_`.

    Args:
        index (LongTensor): the indices into ``self``, as if it were 1-D.
        source (Tensor): the tensor containing values to copy from.
        accumulate (bool): whether to accumulate into ``self``. Default: ``False``."""
    if index.dtype.name != "int64":
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    if index.numel() and (int(index.max().item()) >= n or int(index.min().item()) < -n):
        raise IndexError(f"put_(): index out of range for a tensor of {n} elements")
    flat = self.reshape(-1).index_put((index.reshape(-1) % max(n, 1),), source.reshape(-1).to(self.dtype),
                                      accumulate)
    return flat.reshape(self.shape)


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Copies the elements from ``source`` into the positions specified by ``index``, ``self`` treated as 1-D.

    Args:
        index (LongTensor): the indices into ``self``.
        source (Tensor): the tensor containing values to copy from.
        accumulate (bool): whether to accumulate into ``self``. Default: ``False``."""
    return self.copy_(put(self, index, source, accumulate))


def renorm(self: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Returns a tensor where each sub-tensor of ``self`` along ``dim`` is normalized so that its ``p``-norm
    is at most ``maxnorm`` (sub-tensors below it are unchanged).

    Args:
        p (float): the power for the norm computation.
        dim (int): the dimension to slice over to get the sub-tensors.
        maxnorm (float): the maximum norm to keep each sub-tensor under."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"renorm: expected a floating point tensor, got {self.dtype}")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    dim = dim + self.dim() if dim < 0 else dim
    others = tuple(d for d in range(self.dim()) if d != dim)
    wide = self if self.dtype.name == "float64" else self.float()   # half norms accumulate in float32
    norms = wide.abs().pow(p).sum(others, keepdim=True).pow(1.0 / p) if others else wide.abs()
    factor = (maxnorm / (norms + 1e-7)).clamp(max=1.0).where(norms > maxnorm, norms.new_ones(()))
    return self * factor.to(self.dtype)


def renorm_(self: Tensor, p, dim: int, maxnorm) -> Tensor:
    """In-place version of :meth:`Tensor.renorm`.

    Args:
        p (float): the power for the norm computation.
        dim (int): the dimension to slice over to get the sub-tensors.
        maxnorm (float): the maximum norm to keep each sub-tensor under."""
    return self.copy_(renorm(self, p, dim, maxnorm))


# In-place random fills: inverse-CDF transforms of uniform_ draws (tinytorch's generator, so seeds reproduce)
def _uniform_open(self: Tensor, generator) -> Tensor:
    u = _creation.empty(self.shape, dtype="float64", device=self.device)
    u.uniform_(0.0, 1.0, generator=generator) if generator is not None else u.uniform_(0.0, 1.0)
    return u.clamp(min=1e-300, max=1.0 - 1e-16)


def _check_float(self: Tensor, op: str) -> None:
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{op} expects floating point dtypes, got: {self.dtype}")


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fills ``self`` with elements drawn from the exponential distribution ``lambd * exp(-lambd * x)``.

    Args:
        lambd (float): the rate. Default: ``1``.
        generator (tinytorch.Generator, optional): a pseudorandom number generator for sampling."""
    _check_float(self, "exponential_")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    with _no_grad():
        return self.copy_(-(1.0 - _uniform_open(self, generator)).log() / lambd)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fills ``self`` with numbers whose logarithm is normal with the given ``mean`` and ``std``.

    Args:
        mean (float): mean of the underlying normal. Default: ``1``.
        std (float): standard deviation of the underlying normal. Default: ``2``.
        generator (tinytorch.Generator, optional): a pseudorandom number generator for sampling."""
    _check_float(self, "log_normal_")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    with _no_grad():
        z = _creation.empty(self.shape, dtype="float64", device=self.device)
        z.normal_(mean, std, generator=generator) if generator is not None else z.normal_(mean, std)
        return self.copy_(z.exp())


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fills ``self`` with numbers drawn from the Cauchy distribution with ``median`` and scale ``sigma``.

    Args:
        median (float): the location. Default: ``0``.
        sigma (float): the scale. Default: ``1``.
        generator (tinytorch.Generator, optional): a pseudorandom number generator for sampling."""
    _check_float(self, "cauchy_")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    with _no_grad():
        return self.copy_(median + sigma * (math.pi * (_uniform_open(self, generator) - 0.5)).tan())


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fills ``self`` with the number of Bernoulli(``p``) trials up to and including the first success (1, 2, ...).

    Args:
        p (float): the success probability, in (0, 1).
        generator (tinytorch.Generator, optional): a pseudorandom number generator for sampling."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    with _no_grad():
        u = _uniform_open(self, generator)
        return self.copy_(((1.0 - u).log() / math.log1p(-p)).ceil().clamp(min=1.0).to(self.dtype))


def _no_grad():
    from tinytorch.autograd.grad_mode import no_grad
    return no_grad()


_FALSE_FLAGS = ("is_meta", "is_mps", "is_xpu", "is_ipu", "is_mtia", "is_maia", "is_nested", "is_mkldnn", "is_xla")

ATTRIBUTES = {
    "nbytes": property(_nbytes, doc="Total bytes of the tensor's elements (``numel() * element_size()``)."),
    "itemsize": property(_itemsize, doc="Size in bytes of one element (``element_size()``)."),
    "layout": property(lambda self: strided, doc="The memory layout: always ``tinytorch.strided``."),
    "H": property(_H, doc="A view of a 2-D tensor transposed (no complex dtypes: no conjugation)."),
    "mH": property(_mH, doc="A view with the last two dimensions transposed (no conjugation)."),
    **{flag: property(lambda self: False, doc="False: tinytorch has no such backend.") for flag in _FALSE_FLAGS},
    "is_signed": is_signed, "get_device": get_device, "is_same_size": is_same_size, "is_nonzero": is_nonzero,
    "is_distributed": is_distributed,
    "new": new, "new_empty_strided": new_empty_strided, "adjoint": adjoint, "sum_to_size": sum_to_size,
    "tril_": tril_, "triu_": triu_, "cumsum_": cumsum_, "cumprod_": cumprod_,
    "fill_diagonal_": fill_diagonal_, "index_fill": index_fill, "index_fill_": index_fill_,
    "index_copy_": index_copy_, "masked_scatter_": masked_scatter_, "put": put, "put_": put_,
    "renorm": renorm, "renorm_": renorm_,
    "exponential_": exponential_, "log_normal_": log_normal_, "cauchy_": cauchy_, "geometric_": geometric_,
}
