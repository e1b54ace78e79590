"""Indexing and scan ops composed from existing ones (every device; autograd records their parts):
index_add, scatter_reduce, take_along_dim, repeat_interleave, diag, trace, cummax, cummin,
logcumsumexp, count_nonzero, atleast_1d/2d/3d, broadcast_tensors, vander, random_."""
from __future__ import annotations

from collections import namedtuple
from typing import Optional, Sequence, Union

import numpy as np

from tinytorch._composites.forms import derived_doc
from tinytorch._tensor import random as _random
from tinytorch._tensor.creation import arange, tensor as _tensor, zeros
from tinytorch._core.dtype import bool_, int32, int64
from tinytorch._ops.elementwise import where
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch._tensor.tensor import Tensor

__all__ = ["index_add", "index_add_", "scatter_reduce", "scatter_reduce_", "take_along_dim",
           "repeat_interleave", "diag", "trace", "cummax", "cummin", "logcumsumexp", "count_nonzero",
           "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "vander", "random_"]

cummax_result = namedtuple("cummax", ["values", "indices"])
cummin_result = namedtuple("cummin", ["values", "indices"])


def wrap_dim(dim: int, ndim: int, op: str) -> int:
    """dim wrapped into [0, ndim) (a 0-dim tensor counts as 1-dim, as PyTorch's maybe_wrap_dim with
    wrap_scalar); an out-of-range dim raises IndexError naming op (the composites share it)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _expand_index(index: Tensor, dim: int, like: Tensor) -> Tensor:
    """A 1-D index along dim, viewed and expanded to like's shape (for scatter/gather)."""
    shape = [1] * like.dim()
    shape[dim] = index.numel()
    return index.reshape(shape).expand(tuple(like.shape))


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Union[int, float] = 1) -> Tensor:
    """Adds ``alpha * source`` into input at ``index`` along ``dim`` (repeated indices
    accumulate): out[..., index[i], ...] += alpha * source[..., i, ...].

    Args:
        input (Tensor): the input tensor.
        dim (int): the axis along which to index.
        index (Tensor): indices of :attr:`source` to select from.
        source (Tensor): the tensor containing values to add.

    Keyword args:
        alpha (Number): the scalar multiplier for :attr:`source`. Default: ``1``"""
    if index.dim() > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    if index.dtype not in (int64, int32):
        raise IndexError(f"index_add_(): Expected dtype int32/int64 for index but got: {index.dtype}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_add_(): self ({input.dtype}) and source ({source.dtype}) must have the "
                           "same scalar type")
    dim = wrap_dim(dim, input.dim(), "index_add")
    src = source if source.dim() else source.reshape(1)
    if input.dim() == 0:
        input_v = input.reshape(1)
    else:
        input_v = input
    if src.dim() != input_v.dim() or src.shape[dim] != index.numel() or any(
            src.shape[d] != input_v.shape[d] for d in range(src.dim()) if d != dim):
        raise RuntimeError(f"index_add_(): source {tuple(source.shape)} must match self {tuple(input.shape)} "
                           f"outside dim {dim} and have index.numel() = {index.numel()} entries along it")
    scaled = src if alpha == 1 else src * alpha
    out = input_v.scatter_add(dim, _expand_index(index.reshape(-1).long(), dim, src), scaled)
    return out.reshape(tuple(input.shape))


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Union[int, float] = 1) -> Tensor:
    """In-place ``index_add``.

    Args:
        dim (int): the axis along which to index.
        index (Tensor): indices of :attr:`source` to select from.
        source (Tensor): the tensor containing values to add.

    Keyword args:
        alpha (Number): the scalar multiplier for :attr:`source`. Default: ``1``"""
    return self.copy_(index_add(self, dim, index, source, alpha=alpha))


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduces all values of ``src`` scattered to the same position (``index`` along ``dim``, as
    scatter) with ``reduce`` ("sum", "mean", "amax", "amin", "prod"), together with input's
    value there when ``include_self``; positions nothing is scattered to keep input's value.
    Gradients: sum and mean as linear maps, amax/amin split evenly between the tied maxima as
    PyTorch; prod has no gradient here (NotImplementedError when one is needed).

    Args:
        input (Tensor): the input tensor.
        dim (int): the axis along which to index.
        index (LongTensor): the indices of elements to scatter.
        src (Tensor): the source element(s) to scatter.
        reduce (str): the reduction to apply for non-unique indices: ``'sum'``, ``'prod'``, ``'mean'``,
            ``'amax'`` or ``'amin'``.

    Keyword args:
        include_self (bool): whether elements from the :attr:`input` tensor are included in the
            reduction. Default: ``True``"""
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if src.dtype != input.dtype:
        raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype, got "
                           f"{input.dtype} and {src.dtype}")
    dim = wrap_dim(dim, input.dim(), "scatter_reduce")
    index = index.long()
    src = src[tuple(slice(0, n) for n in index.shape)] if tuple(src.shape) != tuple(index.shape) else src
    ones = src.new_ones(tuple(src.shape)).detach()
    hits = input.new_zeros(tuple(input.shape)).detach().scatter_add(dim, index, ones)   # scattered count
    touched = hits > 0
    base = input if include_self else where(touched, input.new_zeros(()), input)
    if reduce == "sum":
        return base.scatter_add(dim, index, src)
    if reduce == "mean":
        total = base.scatter_add(dim, index, src)
        count = hits + (1 if include_self else 0)
        count = where(count == 0, count.new_ones(()), count)
        out = total / count
        return out if input.dtype.is_floating_point else out.floor().to(input.dtype)
    if reduce == "prod":
        if src.requires_grad or input.requires_grad:
            raise NotImplementedError("scatter_reduce(reduce='prod'): no gradient in tinytorch")
        out = _host(base).copy()
        if not include_self:
            out[_host(touched)] = 1
        np.multiply.at(out, _numpy_index(_host(index), dim), _host(src))
        return _tensor(out, dtype=input.dtype, device=input.device)
    # amax / amin: the extreme values (host reduce), then a differentiable expression equal to them
    # that splits the gradient evenly among the elements attaining them
    ufunc = np.maximum if reduce == "amax" else np.minimum
    ext = _host(base).copy()
    if not include_self:
        ext = ext.astype(np.float64) if ext.dtype.kind in "iub" else ext
        ext[_host(touched)] = -np.inf if reduce == "amax" else np.inf
    ufunc.at(ext, _numpy_index(_host(index), dim), _host(src))
    ext_t = _tensor(ext, device=input.device).to(input.dtype)
    if not input.dtype.is_floating_point:
        return ext_t
    src_hit = (src.detach() == ext_t.gather(dim, index)).to(src.dtype)
    self_hit = ((base.detach() == ext_t) & (touched.logical_not() | include_self)).to(input.dtype)
    n = self_hit + input.new_zeros(tuple(input.shape)).detach().scatter_add(dim, index, src_hit)
    total = (base * self_hit).scatter_add(dim, index, src * src_hit)
    return total / where(n == 0, n.new_ones(()), n)


def _host(t: Tensor) -> np.ndarray:
    """t's values as a numpy array on the host (bfloat16, which numpy lacks, as float32)."""
    t = t.detach()
    return (t.float() if t.dtype.name == "bfloat16" else t).cpu().numpy()


def _numpy_index(index: np.ndarray, dim: int) -> tuple:
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """In-place ``scatter_reduce``."""
    return self.copy_(scatter_reduce(self, dim, index, src, reduce, include_self=include_self))


# scatter_reduce's arguments but its input
scatter_reduce_.__doc__ = derived_doc(scatter_reduce_.__doc__, scatter_reduce.__doc__, drop="input")


def take_along_dim(input: Tensor, indices: Tensor, dim: Optional[int] = None) -> Tensor:
    """Picks values along ``dim`` at ``indices`` (broadcast against input outside dim); with
    ``dim=None`` input is flattened first.

    Args:
        input (Tensor): the input tensor.
        indices (LongTensor): the indices into :attr:`input`. Must have long dtype.
        dim (int): the axis along which to index. Default: ``None``"""
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1).long())
    dim = wrap_dim(dim, input.dim(), "take_along_dim")
    if indices.dim() != input.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {input.dim()} dimensions for input, and {indices.dim()} "
                           "dimensions for indices")
    in_shape, idx_shape = list(input.shape), list(indices.shape)
    shape = [max(a, b) for a, b in zip(in_shape, idx_shape)]
    in_shape[dim], idx_shape[dim] = input.shape[dim], indices.shape[dim]
    bi = [shape[d] if d != dim else in_shape[dim] for d in range(len(shape))]
    bx = [shape[d] if d != dim else idx_shape[dim] for d in range(len(shape))]
    return input.expand(tuple(bi)).gather(dim, indices.long().expand(tuple(bx)))


def repeat_interleave(input: Tensor, repeats: Union[Tensor, int, None] = None, dim: Optional[int] = None, *,
                      output_size: Optional[int] = None) -> Tensor:
    """Repeats each element ``repeats`` times (an int, or one count per element along dim);
    ``dim=None`` flattens first. ``repeat_interleave(counts)`` alone gives
    ``arange(len(counts))`` repeated by counts.

    Args:
        input (Tensor): the input tensor.
        repeats (Tensor or int): the number of repetitions for each element. Default: ``None``
        dim (int, optional): the dimension along which to repeat values. By default, use the flattened
            input array, and return a flat output array. Default: ``None``

    Keyword args:
        output_size (int, optional): total output size for the given axis (e.g. sum of repeats). If
            given, it will avoid the synchronization needed to calculate the output shape. Default:
            ``None``"""
    if repeats is None:
        counts = input
        if counts.dim() > 1:
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
        return repeat_interleave(arange(counts.numel(), device=counts.device), counts, 0)
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    dim = wrap_dim(dim, input.dim(), "repeat_interleave")
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.dim() <= 1:
        repeats = int(repeats.item())
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("repeat_interleave: repeats can not be negative")
        shape = list(input.shape)
        x = input.unsqueeze(dim + 1)
        exp = list(x.shape)
        exp[dim + 1] = repeats
        shape[dim] *= repeats
        return x.expand(tuple(exp)).reshape(tuple(shape))
    if repeats.dim() != 1 or repeats.numel() != input.shape[dim]:
        raise RuntimeError(f"repeat_interleave: repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.numel()} and input.size({dim}) = {input.shape[dim]}")
    counts = _host(repeats).astype(np.int64)
    if (counts < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    idx = np.repeat(np.arange(len(counts)), counts)
    if output_size is not None and output_size != len(idx):
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the sum of repeats "
                           f"{len(idx)}")
    return input.index_select(dim, _tensor(idx, dtype=int64, device=input.device))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-D input: a square matrix with input on its ``diagonal``-th diagonal; 2-D input: the
    ``diagonal``-th diagonal of input, as a new 1-D tensor.

    Args:
        input (Tensor): the input tensor.
        diagonal (int, optional): the diagonal to consider. Default: ``0``"""
    if input.dim() == 1:
        n = input.numel() + abs(diagonal)
        out = zeros(n, n, dtype=input.dtype, device=input.device)
        rows = arange(input.numel(), device=input.device) + max(-diagonal, 0)
        cols = arange(input.numel(), device=input.device) + max(diagonal, 0)
        return out.index_put((rows, cols), input)
    if input.dim() == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor.

    Args:
        input (Tensor): the input tensor."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    if input.dtype is bool_:
        raise NotImplementedError(f'"trace" not implemented for \'Bool\' ({list(input.shape)} on {input.device})')
    d = input.diagonal()
    return d.sum() if input.dtype.is_floating_point else d.sum().to(int64)


def _cum_extreme(input: Tensor, dim: int, take_new, result_type, op: str):
    dim = wrap_dim(dim, input.dim(), op)
    x = input if input.dim() else input.reshape(1)
    n = x.shape[dim]
    if n == 0:
        return result_type(x.clone(), x.new_zeros(tuple(x.shape), dtype=int64))
    # scan on the host, then gather: the values come from input (differentiable), the indices
    # (the last position attaining the running extreme, as PyTorch) from the scan
    a = np.moveaxis(_host(x), dim, 0)
    idx = np.zeros(a.shape, dtype=np.int64)
    best, best_i = a[0].copy(), np.zeros(a.shape[1:], dtype=np.int64)
    floating = a.dtype.kind == "f"
    for i in range(n):
        new = take_new(a[i], best)
        if floating:   # as PyTorch: a NaN takes over and stays (later NaNs move the index)
            new = np.isnan(a[i]) | (~np.isnan(best) & new)
        best = np.where(new, a[i], best)
        best_i = np.where(new, i, best_i)
        idx[i] = best_i
    index = _tensor(np.ascontiguousarray(np.moveaxis(idx, 0, dim)), dtype=int64, device=input.device)
    values = x.gather(dim, index)
    if input.dim() == 0:
        return result_type(values.reshape(()), index.reshape(()))
    return result_type(values, index)


def cummax(input: Tensor, dim: int):
    """Running maximum along dim and the index where it was attained: ``(values, indices)``.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to do the operation over."""
    return _cum_extreme(input, dim, lambda v, best: v >= best, cummax_result, "cummax")


def cummin(input: Tensor, dim: int):
    """Running minimum along dim and the index where it was attained: ``(values, indices)``.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to do the operation over."""
    return _cum_extreme(input, dim, lambda v, best: v <= best, cummin_result, "cummin")


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` without overflow or underflow: a log-space scan
    (Hillis-Steele: log2(n) steps of logaddexp with the sequence shifted by 1, 2, 4, ...), in
    float32 for 16-bit inputs, as PyTorch computes them.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to do the operation over."""
    dim = wrap_dim(dim, input.dim(), "logcumsumexp")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"logcumsumexp: expected a floating point input, got {input.dtype}")
    if input.dim() == 0:
        return input.clone()
    y = input.float() if input.dtype.itemsize == 2 else input
    n, shift = y.shape[dim], 1
    while shift < n:
        pad_shape = list(y.shape)
        pad_shape[dim] = shift
        shifted = cat([y.new_full(tuple(pad_shape), float("-inf")), y.narrow(dim, 0, n - shift)], dim)
        y = _logaddexp(y, shifted)
        shift *= 2
    return y.to(input.dtype)


def _logaddexp(a: Tensor, b: Tensor) -> Tensor:
    # log(exp(a) + exp(b)); where both are -inf the sum is -inf (not NaN)
    m = a.maximum(b)
    both_neg_inf = (m == float("-inf")).detach()
    d = where(both_neg_inf, m.new_zeros(()), a - b)
    return m + (-d.abs()).exp().log1p()


def count_nonzero(input: Tensor, dim: Union[int, Sequence[int], None] = None) -> Tensor:
    """Number of nonzero values (in all of input, or along dim).

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``"""
    nz = (input != 0).to(int64)
    return nz.sum() if dim is None else nz.sum(dim=dim)


_ATLEAST_SHAPES = {   # (n, input dim) -> the new shape, from input's shape
    (1, 0): lambda s: (1,),
    (2, 0): lambda s: (1, 1), (2, 1): lambda s: (1, s[0]),
    (3, 0): lambda s: (1, 1, 1), (3, 1): lambda s: (1, s[0], 1), (3, 2): lambda s: (s[0], s[1], 1),
}


def _atleast(n: int, *tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = [t.reshape(_ATLEAST_SHAPES[n, t.dim()](tuple(t.shape))) if t.dim() < n else t for t in tensors]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    """Views each input with at least 1 dimension.

    Args:
        tensors (Tensor...): the input tensors (or one sequence of them)."""
    return _atleast(1, *tensors)


def atleast_2d(*tensors):
    """Views each input with at least 2 dimensions (a 1-D (n,) becomes (1, n)).

    Args:
        tensors (Tensor...): the input tensors (or one sequence of them)."""
    return _atleast(2, *tensors)


def atleast_3d(*tensors):
    """Views each input with at least 3 dimensions ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)).

    Args:
        tensors (Tensor...): the input tensors (or one sequence of them)."""
    return _atleast(3, *tensors)


def broadcast_tensors(*tensors) -> tuple:
    """Expands the inputs to their common broadcast shape (views).

    Args:
        tensors (Tensor...): any number of tensors of the same type."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = ()
    for t in tensors:
        a, b = list(shape), list(t.shape)
        n = max(len(a), len(b))
        a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        if any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
            raise RuntimeError(f"shape mismatch: objects cannot be broadcast to a single shape: {tuple(shape)} "
                               f"and {tuple(t.shape)}")
        shape = tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b))
    return tuple(t.expand(shape) for t in tensors)


def vander(x: Tensor, N: Optional[int] = None, increasing: bool = False) -> Tensor:
    """Vandermonde matrix: columns x**(N-1), ..., x**0 (or increasing powers).

    Args:
        x (Tensor): 1-D input tensor.
        N (int, optional): number of columns in the output. If N is not specified, a square array is
            returned :math:`(N = len(x))`. Default: ``None``
        increasing (bool, optional): order of the powers of the columns. If True, the powers increase
            from left to right, if False (the default) they are reversed. Default: ``False``"""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.numel() if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if n == 0:
        return x.new_zeros((x.numel(), 0))
    cols = [x.new_ones(tuple(x.shape))]
    for _ in range(1, n):
        cols.append(cols[-1] * x)
    m = stack(cols, 1)
    return m if increasing else m.flip(1)


def random_(self: Tensor, from_: int = 0, to: Optional[int] = None, *, generator=None, **kwargs) -> Tensor:
    """Fills self with integers drawn uniformly from [from, to - 1] (``random_(to)`` alone: [0, to);
    no bounds: [0, 2**mantissa] for floats, the dtype's range for integers), as PyTorch.

    Args:
        from_ (int): the lowest integer to draw (the only bound when :attr:`to` is ``None``: then the
            draw is on [0, from_)). Default: ``0``
        to (int, optional): one above the highest integer to draw. Default: ``None``

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``"""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"random_() got unexpected keyword arguments {list(kwargs)}")
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}.get(self.dtype.name)
        if digits is not None:
            to = 2 ** digits + 1
        elif self.dtype == bool_:
            to = 2
        else:
            to = int(np.iinfo(self.dtype.to_numpy()).max)
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    draw = _random.randint(int(from_), int(to), tuple(self.shape), generator=generator, device=self.device)
    return self.copy_(draw.to(self.dtype))
