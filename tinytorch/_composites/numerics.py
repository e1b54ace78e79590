"""Numerical utilities composed from existing ops (every device; differentiable where PyTorch's
are): logaddexp, meshgrid, cartesian_prod, combinations, diff, cross, cdist, block_diag, cov, corrcoef,
trapezoid, cumulative_trapezoid, renorm, and the counting/searching ones (bincount, bucketize,
searchsorted, histc, unique, unique_consecutive)."""
from __future__ import annotations

import itertools
from typing import Optional

from tinytorch._tensor.creation import ones, tensor, zeros
from tinytorch._core.dtype import bool_, float32, float64, int32, int64
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch._composites.pointwise import _require_floating
from tinytorch._tensor.tensor import Tensor

__all__ = ["logaddexp", "meshgrid", "cartesian_prod", "diff", "cross", "cdist", "block_diag", "cov", "corrcoef", "trapezoid",
           "trapz", "bincount", "bucketize", "searchsorted", "histc", "unique", "renorm", "combinations", "cumulative_trapezoid"]


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """Logarithm of the sum of exponentiations of the inputs, log(exp(input) + exp(other)),
    computed without overflow as max + log1p(exp(-|input - other|)).

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the second input tensor."""
    _require_floating("logaddexp", input, other)
    out = input.maximum(other) + (-(input - other).abs()).exp().log1p()
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        # equal infinities: inf - inf is NaN in the formula; the answer is the infinity itself
        out = input.where((input == other) & input.isinf(), out)
    return out


def meshgrid(*tensors, indexing: str = "ij") -> tuple:
    """Coordinate grids from 1-D tensors: 'ij' (matrix) or 'xy' (Cartesian) indexing.

    Args:
        tensors (Tensor...): scalars or 1 dimensional tensors. Scalars will be treated as tensors of
            size :math:`(1,)` automatically.

    Keyword args:
        indexing (str, optional): the indexing mode, either ``'xy'`` or ``'ij'``. Default: ``'ij'``"""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[i] = -1
        grids.append(t.reshape(view).expand(*shape))
    if indexing == "xy" and len(grids) >= 2:      # Cartesian: the first two dims swapped
        grids = [g.transpose(0, 1) for g in grids]
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    """All combinations of the 1-D tensors' elements, one per row.

    Args:
        tensors (Tensor...): any number of 1 dimensional tensors."""
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Optional[Tensor] = None,
         append: Optional[Tensor] = None) -> Tensor:
    """The n-th forward difference along dim (after concatenating prepend and append).

    Args:
        input (Tensor): the input tensor.
        n (int, optional): the number of times to recursively compute the difference. Default: ``1``
        dim (int, optional): the dimension to compute the difference along. Default: ``-1``
        prepend (Tensor, optional): values to prepend to :attr:`input` along :attr:`dim` before
            computing the difference. Default: ``None``
        append (Tensor, optional): values to append to :attr:`input` along :attr:`dim` before computing
            the difference. Default: ``None``"""
    x = input
    if prepend is not None or append is not None:
        x = cat([t for t in (prepend, x, append) if t is not None], dim)
    for _ in range(n):
        size = x.shape[dim]
        x = x.narrow(dim, 1, size - 1) - x.narrow(dim, 0, size - 1)
    return x


def cross(input: Tensor, other: Tensor, dim: Optional[int] = None) -> Tensor:
    """The cross product of 3-vectors along dim (the first dim of size 3 if None).

    Args:
        input (Tensor): the first tensor to be multiplied.
        other (Tensor): the second tensor to be multiplied.
        dim (int, optional): the dimension to take the cross-product in. Default: ``None``"""
    if dim is None:
        dim = next((d for d, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError(f"cross: no dimension of size 3 in input {list(input.shape)}")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"cross: dimension {dim} must have size 3, got {list(input.shape)} and {list(other.shape)}")
    a = [input.select(dim, i) for i in range(3)]
    b = [other.select(dim, i) for i in range(3)]
    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], dim)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    r"""p-norm distances between each pair of rows: (*, P, M) and (*, R, M) -> (*, P, R).

    Args:
        x1 (Tensor): input tensor of shape :math:`B \times P \times M`.
        x2 (Tensor): input tensor of shape :math:`B \times R \times M`.
        p (float): p value for the p-norm distance to calculate between each vector pair :math:`\in [0,
            \infty]`. Default: ``2.0``
        compute_mode (str): ``'use_mm_for_euclid_dist_if_necessary'``, ``'use_mm_for_euclid_dist'`` or
            ``'donot_use_mm_for_euclid_dist'``: whether the Euclidean distance uses a matrix
            multiplication. Default: ``'use_mm_for_euclid_dist_if_necessary'``"""
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return d.abs().amax(-1) if p == float("inf") else d.norm(float(p), -1)


def block_diag(*tensors) -> Tensor:
    """A block diagonal matrix from 0-D, 1-D (a row) or 2-D tensors.

    Args:
        tensors (Tensor...): one or more tensors with 0, 1, or 2 dimensions."""
    mats = [t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t for t in tensors]
    rows = sum(m.shape[0] for m in mats)
    dtype = mats[0].dtype if mats else float32
    out_rows, col = [], 0
    cols = sum(m.shape[1] for m in mats)
    for m in mats:
        left = zeros(m.shape[0], col, dtype=dtype, device=m.device)
        right = zeros(m.shape[0], cols - col - m.shape[1], dtype=dtype, device=m.device)
        out_rows.append(cat([left, m.to(dtype), right], 1))
        col += m.shape[1]
    return cat(out_rows, 0) if out_rows else zeros(rows, cols)


def cov(input: Tensor, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance of the variables in the rows of input (observations in the columns).

    Args:
        input (Tensor): a 2D matrix containing multiple variables and observations, or a Scalar or 1D
            vector representing a single variable.
        correction (int): difference between the sample size and sample degrees of freedom (Bessel's
            correction is ``correction=1``). Default: ``1``
        fweights (tensor, optional): a Scalar or 1D tensor of observation vector frequencies
            representing the number of times each observation should be repeated. Default: ``None``
        aweights (tensor, optional): a Scalar or 1D array of observation vector weights. Default:
            ``None``"""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not implemented")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    xc = x - x.mean(1, keepdim=True)
    c = xc @ xc.t() / (x.shape[1] - correction)
    return c if input.dim() == 2 else c.reshape(())


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of input.

    Args:
        input (Tensor): a 2D matrix containing multiple variables and observations, or a Scalar or 1D
            vector representing a single variable."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal().sqrt()
    return (c / d.unsqueeze(1) / d.unsqueeze(0)).clamp(-1, 1)


def trapezoid(y: Tensor, x: Optional[Tensor] = None, *, dx: Optional[float] = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along dim, with sample points x or spacing dx (default 1).

    Args:
        y (Tensor): values to use when computing the trapezoidal rule.
        x (Tensor, optional): if specified, defines spacing between values as specified above. Default:
            ``None``

    Keyword args:
        dx (float): constant spacing between values. Default: ``None``
        dim (int): the dimension along which to compute the trapezoidal rule. Default: ``-1``"""
    n = y.shape[dim]
    avg = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) * 0.5
    if x is None:
        return avg.sum(dim) * (1.0 if dx is None else dx)
    return (avg * diff(x, dim=dim if x.dim() == y.dim() else -1)).sum(dim)


trapz = trapezoid


def bincount(input: Tensor, weights: Optional[Tensor] = None, minlength: int = 0) -> Tensor:
    """How many times each non-negative integer occurs (or the sum of its weights).

    Args:
        input (Tensor): 1-d int tensor.
        weights (Tensor, optional): weight for each value in the input tensor. Should be of same size as
            input tensor. Default: ``None``
        minlength (int): minimum number of bins. Should be non-negative. Default: ``0``"""
    if input.dim() != 1 or input.dtype.is_floating_point:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got {input.dtype} "
                           f"{list(input.shape)}")
    if input.numel() and int(input.min().item()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs")
    n = max(int(input.max().item()) + 1 if input.numel() else 0, minlength)
    dtype = int64 if weights is None else (weights.dtype if weights.dtype.is_floating_point
                                                     else float64)
    vals = ones(input.numel(), dtype=dtype, device=input.device) if weights is None else weights.to(dtype)
    return zeros(n, dtype=dtype, device=input.device).index_put((input.long(),), vals, accumulate=True)


def searchsorted(sorted_sequence: Tensor, values, *, out_int32: bool = False, right: bool = False, side=None,
                 sorter=None) -> Tensor:
    """Indices at which values would be inserted into the last dim of sorted_sequence to keep it
    sorted (the first such index, or the last with right=True / side='right').

    Args:
        sorted_sequence (Tensor): N-D or 1-D tensor, containing monotonically increasing sequence on the
            *innermost* dimension unless :attr:`sorter` is provided.
        values (Tensor or Scalar): N-D tensor or a Scalar containing the search value(s).

    Keyword args:
        out_int32 (bool, optional): indicate the output data type: int32 if True, int64 otherwise.
            Default: ``False``
        right (bool, optional): if False, return the first suitable location that is found. If True,
            return the last such index. Default: ``False``
        side (str, optional): the same as :attr:`right` but preferred: ``'left'`` or ``'right'``.
            Default: ``None``
        sorter (LongTensor, optional): if provided, a tensor matching the shape of the unsorted
            :attr:`sorted_sequence` containing a sequence of indices that sort it in the ascending order
            on the innermost dimension. Default: ``None``"""
    if sorter is not None:
        raise NotImplementedError("searchsorted: sorter is not implemented (sort the sequence first)")
    right = right or side == "right"
    if not isinstance(values, Tensor):
        values = tensor(values, dtype=sorted_sequence.dtype, device=sorted_sequence.device)
    seq = sorted_sequence
    if seq.dim() == 1:
        cmp = (seq <= values.unsqueeze(-1)) if right else (seq < values.unsqueeze(-1))
    else:
        cmp = (seq.unsqueeze(-2) <= values.unsqueeze(-1)) if right else (seq.unsqueeze(-2) < values.unsqueeze(-1))
    return cmp.sum(-1).to(int32 if out_int32 else int64)


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each input value, boundaries being sorted (right=False: boundaries[i-1] < x <= boundaries[i]).

    Args:
        input (Tensor or Scalar): N-D tensor or a Scalar containing the search value(s).
        boundaries (Tensor): 1-D tensor, must contain a strictly increasing sequence.

    Keyword args:
        out_int32 (bool, optional): indicate the output data type: int32 if True, int64 otherwise.
            Default: ``False``
        right (bool, optional): if False, return the first suitable location that is found. If True,
            return the last such index. Default: ``False``"""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of equal-width bins between min and max (the data's range when both are 0).

    Args:
        input (Tensor): the input tensor.
        bins (int): number of histogram bins. Default: ``100``
        min (Scalar): lower end of the range (inclusive). Default: ``0``
        max (Scalar): upper end of the range (inclusive). Default: ``0``"""
    x = input.reshape(-1).to(input.dtype if input.dtype.is_floating_point else float32)
    lo, hi = float(min), float(max)
    if lo == hi:
        lo, hi = float(x.min().item()), float(x.max().item())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
    keep = (x >= lo) & (x <= hi)
    idx = ((x - lo) * (bins / (hi - lo))).floor().long().clamp(0, bins - 1)
    w = keep.to(x.dtype)
    return zeros(bins, dtype=x.dtype, device=x.device).index_put((idx,), w, accumulate=True)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: Optional[int] = None):
    """The unique elements (sorted), and optionally the index of each input element in them and
    their counts.

    Args:
        input (Tensor): the input tensor.
        sorted (bool): whether to sort the unique elements in ascending order before returning as
            output. Default: ``True``
        return_inverse (bool): whether to also return the indices for where elements in the original
            input ended up in the returned unique list. Default: ``False``
        return_counts (bool): whether to also return the counts for each unique element. Default:
            ``False``
        dim (int, optional): the dimension to operate upon. If ``None``, the unique of the flattened
            input is returned. Default: ``None``"""
    if dim is not None:
        raise NotImplementedError("unique(dim=...) is not implemented")
    flat = input.reshape(-1)
    s, order = flat.sort(stable=True)
    if s.numel() == 0:
        out = s
        first = zeros(0, dtype=bool_, device=s.device)
    else:
        # NaN != NaN: each NaN starts its own entry, as in PyTorch's sorted unique
        first = cat([ones(1, dtype=bool_, device=s.device), s[1:] != s[:-1]])
        out = s[first]
    res = [out]
    if return_inverse:
        # the entry of each sorted element, scattered back to its place in the input
        group = first.long().cumsum(0) - 1
        inverse = zeros(flat.numel(), dtype=int64, device=s.device).index_put((order,), group)
        res.append(inverse.reshape(input.shape))
    if return_counts:
        starts = first.nonzero().reshape(-1)
        ends = cat([starts[1:], tensor([s.numel()], device=s.device)])
        res.append(ends - starts)
    return res[0] if len(res) == 1 else tuple(res)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: Optional[int] = None):
    """Eliminates all but the first element from every consecutive group of equivalent elements
    (of the flattened input, or of the slices along ``dim``); optionally the index of each input
    element (slice) in the output, and the length of each group.

    Args:
        input (Tensor): the input tensor.
        return_inverse (bool): whether to also return the indices for where elements in the original
            input ended up in the returned unique list. Default: ``False``
        return_counts (bool): whether to also return the counts for each unique element. Default:
            ``False``
        dim (int): the dimension to do the operation over. Default: ``None``"""
    x = input.reshape(-1) if dim is None else input.movedim(dim, 0)
    n = x.shape[0]
    if n == 0:
        starts_new = zeros(0, dtype=bool_, device=x.device)
    else:
        differs = x[1:] != x[:-1]
        if differs.dim() > 1:   # a slice starts a group when any of its elements differs
            differs = differs.reshape(n - 1, -1).any(dim=1)
        starts_new = cat([ones(1, dtype=bool_, device=x.device), differs])
    starts = starts_new.nonzero().reshape(-1)
    values = x[starts] if dim is None else x[starts].movedim(0, dim)
    res = [values]
    if return_inverse:
        inverse = starts_new.long().cumsum(0) - 1
        res.append(inverse.reshape(input.shape) if dim is None else inverse)
    if return_counts:
        res.append(cat([starts[1:], tensor([n], device=x.device)]) - starts)
    return res[0] if len(res) == 1 else tuple(res)


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Returns a tensor where each sub-tensor of ``input`` along ``dim`` is normalized so that its ``p``-norm
    is at most ``maxnorm`` (sub-tensors below it are unchanged).

    Args:
        input (Tensor): the input tensor.
        p (float): the power for the norm computation.
        dim (int): the dimension to slice over to get the sub-tensors.
        maxnorm (float): the maximum norm to keep each sub-tensor under."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"renorm: expected a floating point tensor, got {input.dtype}")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    dim = dim + input.dim() if dim < 0 else dim
    others = tuple(d for d in range(input.dim()) if d != dim)
    wide = input if input.dtype.name == "float64" else input.float()   # half norms accumulate in float32
    norms = wide.abs().pow(p).sum(others, keepdim=True).pow(1.0 / p) if others else wide.abs()
    factor = (maxnorm / (norms + 1e-7)).clamp(max=1.0).where(norms > maxnorm, norms.new_ones(()))
    return input * factor.to(input.dtype)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Computes the length-``r`` combinations of the 1-D ``input`` (``itertools.combinations``, or
    ``combinations_with_replacement`` when ``with_replacement``), as rows of a 2-D tensor.

    Args:
        input (Tensor): 1-D tensor.
        r (int, optional): number of elements to combine. Default: ``2``.
        with_replacement (bool, optional): whether to allow duplication in combination. Default: ``False``."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(_builtin_range(input.shape[0]), r))
    if not rows:
        return input.new_empty((0, r))
    index = tensor(rows, dtype="int64", device=input.device)
    return input[index.reshape(-1)].reshape(len(rows), r)


def _builtin_range(n: int):
    import builtins
    return builtins.range(n)


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
