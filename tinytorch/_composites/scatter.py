"""Writes at positions, composed from index_put: index_fill, index_copy, masked_scatter_, put,
fill_diagonal_. The schema (codegen/ops.py) makes their in-place forms (``inplace="copy"``)."""
from __future__ import annotations

from tinytorch._tensor import creation as _creation
from tinytorch._tensor.tensor import Tensor

__all__ = ["index_fill", "index_copy", "masked_scatter_", "put", "fill_diagonal_"]


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


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """Returns ``input`` with the entries at ``index`` along ``dim`` set to ``value``.

    Args:
        input (Tensor): the input tensor.
        dim (int): dimension along which to index.
        index (LongTensor): indices of ``input`` tensor to fill in.
        value (Number or 0-dim Tensor): the value to fill with."""
    key, dim = _index_along(input, dim, index, "index_fill")
    keep = input.new_ones(input.shape[dim]).index_put((index.reshape(-1),), input.new_zeros(()))
    keep = keep.reshape((-1,) + (1,) * (input.dim() - dim - 1))
    fill = value.to(input.dtype) if isinstance(value, Tensor) else value
    return input * keep + (1 - keep) * fill if input.dtype.is_floating_point else \
        input.masked_fill(keep == 0, fill)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Returns ``input`` with the entries at ``index`` along ``dim`` replaced by the rows of ``source``.

    Args:
        input (Tensor): the input tensor.
        dim (int): dimension along which to index.
        index (LongTensor): indices of ``input`` to select from.
        source (Tensor): the tensor containing values to copy."""
    key, dim = _index_along(input, dim, index, "index_copy")
    rows = source.shape[dim] if source.dim() else 1
    if rows != index.numel():
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({rows})")
    return input.index_put(key, source.to(input.dtype))


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


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Returns ``input`` with the elements of ``source`` at ``index`` (``input`` treated as 1-D).

    Args:
        input (Tensor): the input tensor.
        index (LongTensor): the indices into ``input``, as if it were 1-D.
        source (Tensor): the tensor containing values to copy from.
        accumulate (bool): whether to accumulate into ``input``. Default: ``False``."""
    if index.dtype.name != "int64":
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = input.numel()
    if index.numel() and (int(index.max().item()) >= n or int(index.min().item()) < -n):
        raise IndexError(f"put_(): index out of range for a tensor of {n} elements")
    flat = input.reshape(-1).index_put((index.reshape(-1) % max(n, 1),), source.reshape(-1).to(input.dtype),
                                      accumulate)
    return flat.reshape(input.shape)
