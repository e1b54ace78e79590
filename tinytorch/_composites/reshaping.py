"""Shape and index ops composed from existing ones (autograd records their parts): tile, ravel,
fliplr, flipud, rot90, column_stack, dstack, tensor_split, hsplit, vsplit, dsplit, diag_embed,
diagflat, take, argwhere, tril_indices, triu_indices, unravel_index, positive, sum_to_size, and the split
forms (split_with_sizes, unsafe_split, unsafe_chunk, ...)."""
from __future__ import annotations

from typing import List, Optional, Sequence, Union

import numpy as np

from tinytorch._composites.forms import derived_doc
from tinytorch._tensor.creation import tensor as _tensor, zeros
from tinytorch._core.dtype import int64
from tinytorch._tensor.doc_notes import factory_notes, filled_doc
from tinytorch._ops.shape import cat
from tinytorch._tensor.tensor import Tensor

__all__ = ["tile", "ravel", "fliplr", "flipud", "rot90", "column_stack", "dstack", "tensor_split", "hsplit",
           "vsplit", "dsplit", "diag_embed", "diagflat", "take", "argwhere", "tril_indices", "triu_indices",
           "unravel_index", "positive", "sum_to_size", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"]


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Repeats input along each dimension (``dims`` shorter than input.dim() is padded with 1s
    in front, as PyTorch).

    Args:
        input (Tensor): the input tensor.
        dims (tuple): the number of repetitions per dimension."""
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(*dims)


def ravel(input: Tensor) -> Tensor:
    """A contiguous flattened tensor (a view when possible).

    Args:
        input (Tensor): the input tensor."""
    return input.reshape(-1)


def _flip_dim(input: Tensor, dim: int) -> Tensor:
    """input flipped along ``dim``, which it must have."""
    if input.dim() <= dim:
        raise RuntimeError(f"Input must be >= {dim + 1}-d.")
    return input.flip(dim)


def fliplr(input: Tensor) -> Tensor:
    """Flips the columns (dim 1) of a tensor of at least 2 dimensions.

    Args:
        input (Tensor): the input tensor."""
    return _flip_dim(input, 1)


def flipud(input: Tensor) -> Tensor:
    """Flips the rows (dim 0) of a tensor of at least 1 dimension.

    Args:
        input (Tensor): the input tensor."""
    return _flip_dim(input, 0)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotates by 90 degrees k times in the plane of dims (from the first towards the second).

    Args:
        input (Tensor): the input tensor.
        k (int): number of times to rotate. Default: ``1``
        dims (a list or tuple): axis to rotate. Default: ``(0, 1)``"""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    d0, d1 = (d % input.dim() for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0).flip(d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks 0-d/1-d tensors as columns (and 2-d ones as they are) horizontally.

    Args:
        tensors (sequence of Tensors): sequence of tensors to concatenate."""
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]
    return cat(cols, 1)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks along the third dimension (inputs viewed as at least 3-D: (n,) -> (1, n, 1)).

    Args:
        tensors (sequence of Tensors): sequence of tensors to concatenate."""
    def at3(t):
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        if t.dim() == 1:
            return t.reshape(1, -1, 1)
        if t.dim() == 2:
            return t.unsqueeze(-1)
        return t
    return cat([at3(t) for t in tensors], 2)


def _split_points(op: str, indices_or_sections, **named):
    """The one split argument of tensor_split and hsplit/vsplit/dsplit: positional, or under one of the
    names of PyTorch's overloads (sections=, indices=, tensor_indices_or_sections=)."""
    given = {k: v for k, v in named.items() if v is not None}
    if indices_or_sections is not None:
        given = {"indices_or_sections": indices_or_sections, **given}
    if len(given) != 1:
        raise TypeError(f"{op}() takes one of indices_or_sections, {', '.join(named)}; got "
                        f"{', '.join(given) or 'none'}")
    return next(iter(given.values()))


def tensor_split(input: Tensor, indices_or_sections: Union[int, Sequence[int], Tensor, None] = None, dim: int = 0, *,
                 sections: Optional[int] = None, indices: Optional[Sequence[int]] = None,
                 tensor_indices_or_sections: Optional[Tensor] = None) -> tuple:
    """Splits into n nearly equal parts (the first ``size % n`` one element longer) or at the
    given indices, as ``numpy.array_split``; views of input.

    Args:
        input (Tensor): the input tensor.
        indices_or_sections (Tensor, int or list or tuple of ints): if an int ``n``, :attr:`input` is
            split into ``n`` sections along :attr:`dim` (as equal as possible); if a list of indices, it
            is split at each of them.
        dim (int): dimension along which to split the tensor. Default: ``0``

    Keyword args:
        sections (int): the number of sections, by PyTorch's overload name (instead of indices_or_sections).
        indices (list of ints): the split indices, by PyTorch's overload name.
        tensor_indices_or_sections (Tensor): indices or sections as a tensor, by PyTorch's overload name."""
    indices_or_sections = _split_points("tensor_split", indices_or_sections, sections=sections, indices=indices,
                                        tensor_indices_or_sections=tensor_indices_or_sections)
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            end = start + q + (1 if i < r else 0)
            bounds.append((start, end))
            start = end
    else:
        cuts = [0] + [min(max(int(i), 0), size) for i in indices_or_sections] + [size]
        bounds = [(a, max(a, b)) for a, b in zip(cuts[:-1], cuts[1:])]
    return tuple(input.narrow(dim, a, b - a) for a, b in bounds)


def _split_along(input: Tensor, sections, dim: int, op: str, min_dim: int) -> tuple:
    if input.dim() < min_dim:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_dim} dimension, but got a tensor "
                           f"with {input.dim()} dimensions!")
    if isinstance(sections, int) and input.shape[dim] % sections != 0:
        raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{input.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input: Tensor, indices_or_sections=None, *, sections: Optional[int] = None,
           indices: Optional[Sequence[int]] = None) -> tuple:
    """``tensor_split`` along dim 1 (dim 0 for 1-D input); an int must divide the size.

    Args:
        input (Tensor): the input tensor.
        indices_or_sections (int or list of ints): the number of equal parts, or the indices at which to split.

    Keyword args:
        sections (int): the number of equal parts, by PyTorch's overload name.
        indices (list of ints): the split indices, by PyTorch's overload name."""
    sections = _split_points("hsplit", indices_or_sections, sections=sections, indices=indices)
    return _split_along(input, sections, 1 if input.dim() > 1 else 0, "hsplit", 1)


def vsplit(input: Tensor, indices_or_sections=None, *, sections: Optional[int] = None,
           indices: Optional[Sequence[int]] = None) -> tuple:
    """``tensor_split`` along dim 0 of a tensor of at least 2 dimensions."""
    sections = _split_points("vsplit", indices_or_sections, sections=sections, indices=indices)
    return _split_along(input, sections, 0, "vsplit", 2)


def dsplit(input: Tensor, indices_or_sections=None, *, sections: Optional[int] = None,
           indices: Optional[Sequence[int]] = None) -> tuple:
    """``tensor_split`` along dim 2 of a tensor of at least 3 dimensions."""
    sections = _split_points("dsplit", indices_or_sections, sections=sections, indices=indices)
    return _split_along(input, sections, 2, "dsplit", 3)


# hsplit's arguments
vsplit.__doc__ = derived_doc(vsplit.__doc__, hsplit.__doc__)
dsplit.__doc__ = derived_doc(dsplit.__doc__, hsplit.__doc__)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose ``offset`` diagonal (in dims dim1, dim2 of the output) holds input's last
    dimension.

    Args:
        input (Tensor): the input tensor.
        offset (int, optional): which diagonal to consider: 0 is the main diagonal, positive above it,
            negative below. Default: ``0``
        dim1 (int, optional): first dimension with respect to which to take diagonal. Default: ``-2``
        dim2 (int, optional): second dimension with respect to which to take diagonal. Default: ``-1``"""
    n = input.shape[-1] + abs(offset)
    out_dim = input.dim() + 1
    d1, d2 = dim1 % out_dim, dim2 % out_dim
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    batch = list(input.shape[:-1])
    out = zeros(*batch, n, n, dtype=input.dtype, device=input.device)
    k = input.shape[-1]
    rows = _tensor(np.arange(k) + max(-offset, 0), dtype=int64, device=input.device)
    cols = _tensor(np.arange(k) + max(offset, 0), dtype=int64, device=input.device)
    out = _put_diag(out, rows, cols, input)
    # the matrix dims are the last two; move them to (d1, d2)
    perm = list(range(len(batch)))
    order = [None] * out_dim
    order[d1], order[d2] = len(batch), len(batch) + 1
    it = iter(perm)
    order = [next(it) if o is None else o for o in order]
    return out.permute(*order)


def _put_diag(out: Tensor, rows: Tensor, cols: Tensor, values: Tensor) -> Tensor:
    # out[..., rows, cols] = values, through a flat view of the matrix dims
    n = out.shape[-1]
    flat = out.reshape(*out.shape[:-2], n * n)
    idx = (rows * n + cols).expand(tuple(values.shape))
    return flat.scatter(flat.dim() - 1, idx, values).reshape(tuple(out.shape))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A 2-D matrix with the flattened input on its ``offset`` diagonal.

    Args:
        input (Tensor): the input tensor.
        offset (int, optional): which diagonal to consider: 0 is the main diagonal, positive above it,
            negative below. Default: ``0``"""
    return diag_embed(input.reshape(-1), offset)


def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of input (as if flattened) at ``index``; the result has index's shape.

    Args:
        input (Tensor): the input tensor.
        index (LongTensor): the indices into tensor."""
    n = input.numel()
    idx = index.long()
    idx = idx + (idx < 0).long() * n
    return input.reshape(-1).index_select(0, idx.reshape(-1)).reshape(tuple(index.shape))


def argwhere(input: Tensor) -> Tensor:
    """Indices of the nonzero elements, one row per element: (count, input.dim()).

    Args:
        input (Tensor): the input tensor."""
    return input.nonzero()


_TRI_INDICES_DOC = """The (2, N) coordinates of the {part} triangle of a row x col matrix (row-major order).

    Args:
        row (int): number of rows in the 2-D matrix.
        col (int): number of columns in the 2-D matrix.
        offset (int): diagonal offset from the main diagonal. Default: ``0``

    Keyword args:
        dtype (dtype, optional): the desired data type of returned tensor, only support ``int``,
            ``long``. Default: ``long``.
        {{device}}
        {{layout}}"""   # formatted, then filled (hence the doubled braces)


def _tri_indices_form(name: str, lower: bool):
    """``tril_indices`` / ``triu_indices``: the coordinates of the lower / upper triangle."""
    def tri_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
        r, c = np.indices((row, col))
        keep = (c - r <= offset) if lower else (c - r >= offset)
        return _tensor(np.stack([r[keep], c[keep]]), dtype=dtype or int64, device=device)
    tri_indices.__name__ = tri_indices.__qualname__ = name
    tri_indices.__doc__ = filled_doc(_TRI_INDICES_DOC.format(part="lower" if lower else "upper"), factory_notes)
    return tri_indices


tril_indices = _tri_indices_form("tril_indices", lower=True)
triu_indices = _tri_indices_form("triu_indices", lower=False)


def unravel_index(indices: Tensor, shape) -> tuple:
    """Flat indices to coordinates in ``shape``: one tensor per dimension.

    Args:
        indices (Tensor): an integer tensor containing indices into the flattened version of an
            arbitrary tensor of shape :attr:`shape`.
        shape (int, sequence of ints, or Size): the shape of the arbitrary tensor. All elements must be
            non-negative."""
    if isinstance(shape, int):
        shape = (shape,)
    idx = indices if isinstance(indices, Tensor) else _tensor(indices, dtype=int64)
    total = int(np.prod(shape)) if len(shape) else 1
    if ((idx < -total) | (idx >= total)).any().item():
        raise RuntimeError("index out of bounds for the given shape")
    idx = idx + (idx < 0).long() * total
    out = []
    for size in reversed(tuple(shape)):
        out.append(idx % size)
        idx = idx // size
    return tuple(reversed(out))


def positive(input: Tensor) -> Tensor:
    """Returns input (bool tensors are refused, as PyTorch).

    Args:
        input (Tensor): the input tensor."""
    if input.dtype.name == "bool":
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def sum_to_size(self: Tensor, *sizes, size: Optional[Sequence[int]] = None) -> Tensor:
    """Sums ``self`` to ``size``, which must be broadcastable to ``self``'s shape.

    Args:
        sizes (int...): a sequence of integers defining the shape of the output tensor.

    Keyword args:
        size (tuple of ints): the shape, by keyword (instead of sizes)."""
    if size is not None:
        if sizes:
            raise TypeError("sum_to_size() takes the size positionally or as size=, not both")
        sizes = (size,)
    size = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = self.sum(tuple(range(lead))) if lead else self
    dims = tuple(i for i, (s, d) in enumerate(zip(size, shape[lead:])) if s == 1 and d != 1)
    return out.sum(dims, keepdim=True) if dims else out


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> List[Tensor]:
    """Splits ``input`` into chunks of the given sizes along ``dim`` (they must sum to its size).

    Args:
        input (Tensor): the tensor to split.
        split_sizes (list of int): the sizes of the chunks.
        dim (int): dimension along which to split the tensor. Default: ``0``."""
    total = input.shape[dim]
    if sum(split_sizes) != total or any(s < 0 for s in split_sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {total} (input tensor's size "
                           f"at dimension {dim}), but got split_sizes={list(split_sizes)}")
    return list(input.split(list(split_sizes), dim))


def unsafe_split(input: Tensor, split_size, dim: int = 0) -> List[Tensor]:
    """Same as :func:`tinytorch.split` (PyTorch's variant skips view tracking; tinytorch's views are safe).

    Args:
        input (Tensor): tensor to split.
        split_size (int or list of int): size of a single chunk or list of sizes for each chunk.
        dim (int): dimension along which to split the tensor. Default: ``0``."""
    return list(input.split(split_size, dim))


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> List[Tensor]:
    """Same as :func:`tinytorch.split_with_sizes`.

    Args:
        input (Tensor): the tensor to split.
        split_sizes (list of int): the sizes of the chunks.
        dim (int): dimension along which to split the tensor. Default: ``0``."""
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> List[Tensor]:
    """Same as :func:`tinytorch.chunk`.

    Args:
        input (Tensor): the tensor to split.
        chunks (int): number of chunks to return.
        dim (int): dimension along which to split the tensor. Default: ``0``."""
    return list(input.chunk(chunks, dim))
