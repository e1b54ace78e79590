"""Reductions and elementwise statistics composed from existing ones (autograd records their
parts): nansum, nanmean, std_mean, var_mean, aminmax, kthvalue, quantile, nanquantile, msort,
dist, median, nanmedian."""
from __future__ import annotations

from collections import namedtuple
from typing import Optional, Sequence, Union

from tinytorch._composites.forms import derived_doc
from tinytorch._composites.indexing import wrap_dim
from tinytorch._ops import reduce
from tinytorch._ops.elementwise import where
from tinytorch._ops.index import stack
from tinytorch._tensor.tensor import Tensor

__all__ = ["nansum", "nanmean", "std_mean", "var_mean", "aminmax", "kthvalue", "quantile", "nanquantile",
           "msort", "dist", "median", "nanmedian"]

aminmax_result = namedtuple("aminmax", ["min", "max"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])
_Dims = Union[int, Sequence[int], None]


def _zero_nan(input: Tensor) -> Tensor:
    return where(input.isnan(), input.new_zeros(()), input) if input.dtype.is_floating_point else input


def nansum(input: Tensor, dim: _Dims = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum treating NaN as zero."""
    x = _zero_nan(input if dtype is None else input.to(dtype))
    return x.sum() if dim is None else x.sum(dim=dim, keepdim=keepdim)


nansum.__doc__ = derived_doc(nansum.__doc__, reduce.sum.__doc__)   # sum's arguments


def nanmean(input: Tensor, dim: _Dims = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Mean of the non-NaN values (NaN where all are NaN)."""
    x = input if dtype is None else input.to(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got {x.dtype}")
    count = (~x.isnan()).to(x.dtype)
    n = count.sum() if dim is None else count.sum(dim=dim, keepdim=keepdim)
    return nansum(x, dim, keepdim) / n


nanmean.__doc__ = derived_doc(nanmean.__doc__, reduce.mean.__doc__)   # mean's arguments


def var_mean(input: Tensor, dim: _Dims = None, *, correction: float = 1, keepdim: bool = False, unbiased=None):
    """(variance, mean) over dim.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``

    Keyword args:
        correction (int): difference between the sample size and sample degrees of freedom (Bessel's
            correction is ``correction=1``). Default: ``1``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``
        unbiased (bool, optional): whether to use Bessel's correction (deprecated; use
            :attr:`correction`). Default: ``None``"""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    var = input.var(dim=dim, correction=correction, keepdim=keepdim)
    mean = input.mean() if dim is None else input.mean(dim=dim, keepdim=keepdim)
    return var, mean


def std_mean(input: Tensor, dim: _Dims = None, *, correction: float = 1, keepdim: bool = False, unbiased=None):
    """(standard deviation, mean) over dim."""
    var, mean = var_mean(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)
    return var.sqrt(), mean


std_mean.__doc__ = derived_doc(std_mean.__doc__, var_mean.__doc__)   # var_mean's arguments


def aminmax(input: Tensor, *, dim: Optional[int] = None, keepdim: bool = False):
    """``(min, max)`` of input (over dim).

    Args:
        input (Tensor): the input tensor.

    Keyword args:
        dim (int, optional): the dimension to reduce. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    if dim is None:
        return aminmax_result(input.amin(), input.amax())
    return aminmax_result(input.amin(dim=dim, keepdim=keepdim), input.amax(dim=dim, keepdim=keepdim))


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The k-th smallest value along dim (1-based k) and its index.

    Args:
        input (Tensor): the input tensor.
        k (int): k for the k-th smallest element.
        dim (int, optional): the dimension to reduce. Default: ``-1``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    x = input if input.dim() else input.reshape(1)
    n = x.shape[dim]
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    _, order = x.detach().sort(dim=dim, stable=True)
    idx = order.narrow(dim, k - 1, 1)
    values = x.gather(dim, idx)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return kthvalue_result(values, idx)


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Found '{interpolation}'")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"quantile() input tensor must be either float or double dtype, got {input.dtype}")
    scalar_q = not isinstance(q, Tensor)
    qs = input.new_tensor([float(q)]) if scalar_q else q.reshape(-1).to(input.dtype)
    if ((qs < 0) | (qs > 1)).any().item():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input.movedim(dim, -1)
    srt, _ = x.sort(dim=-1)                       # NaN sorts last
    n = x.shape[-1]
    valid = ((~x.isnan()).sum(dim=-1, keepdim=True) if ignore_nan else
             x.new_full(tuple(x.shape[:-1]) + (1,), float(n))).long()
    has_nan = x.isnan().any(dim=-1, keepdim=True)
    outs = []
    for qv in qs.tolist():
        pos = (valid - 1).clamp(min=0).to(x.dtype) * qv
        lo = pos.floor().long()
        hi = pos.ceil().long()
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = pos.round().long()
        a, b = srt.gather(-1, lo), srt.gather(-1, hi)
        if interpolation == "midpoint":
            v = a + (b - a) * 0.5
        elif interpolation == "linear":
            v = a + (b - a) * (pos - lo.to(x.dtype))
        else:
            v = a
        nan_out = (valid == 0) if ignore_nan else has_nan
        v = where(nan_out, v.new_full((), float("nan")), v)
        outs.append(v.squeeze(-1))
    out = stack(outs, 0)
    if dim is not None and keepdim:
        out = out.unsqueeze(dim % input.dim() + 1)
    elif dim is None and keepdim:
        out = out.reshape((out.shape[0],) + (1,) * input.dim())
    return out[0] if scalar_q else out.reshape(tuple(q.shape) + tuple(out.shape[1:]))


def quantile(input: Tensor, q, dim: Optional[int] = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles (q a float or a tensor of floats in [0, 1]) over dim (all values with
    dim=None); NaN where the slice holds a NaN.

    Args:
        input (Tensor): the input tensor.
        q (float or Tensor): a scalar or 1D tensor of quantile values in the range [0, 1].
        dim (int, optional): the dimension to reduce. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``

    Keyword args:
        interpolation (str, optional): interpolation method to use when the desired quantile lies
            between two data points. Can be ``linear``, ``lower``, ``higher``, ``midpoint`` and
            ``nearest``. Default: ``'linear'``"""
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q, dim: Optional[int] = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` ignoring NaNs (NaN only where a slice is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


nanquantile.__doc__ = derived_doc(nanquantile.__doc__, quantile.__doc__)   # quantile's arguments


def msort(input: Tensor) -> Tensor:
    """Sorts along dim 0 (values only).

    Args:
        input (Tensor): the input tensor."""
    return input.sort(dim=0)[0]


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other``.

    Args:
        input (Tensor): the input tensor.
        other (Tensor): the right-hand-side input tensor.
        p (float, optional): the norm to be computed. Default: ``2``"""
    d = (input - other).abs()
    if p == float("inf"):
        return d.amax()
    if p == 0:
        return (d != 0).to(d.dtype).sum()
    return d.pow(p).sum().pow(1.0 / p)


median_result = namedtuple("median", ["values", "indices"])
nanmedian_result = namedtuple("nanmedian", ["values", "indices"])


def _order_statistic(input: Tensor, dim: Optional[int], keepdim: bool, op: str, choose, result_type):
    """The element ``choose(x, order, n, dim)`` picks in each slice along dim (indices shaped with a
    size-1 dim; ``order`` sorts the slice, NaN last), as ``(values, indices)``; without ``dim``,
    the value over all elements (0-d; NaN for an empty floating input). Gradients go to the picks."""
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return flat.new_full((), float("nan")) if flat.dtype.is_floating_point else flat.sum()
        return _order_statistic(flat, 0, False, op, choose, result_type).values
    dim = wrap_dim(dim, input.dim(), op)
    x = input if input.dim() else input.reshape(1)
    n = x.shape[dim]
    if n == 0:
        raise IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size.")
    _, order = x.detach().sort(dim=dim, stable=True)     # NaN sorts last
    pick = choose(x.detach(), order, n, dim)
    values = x.gather(dim, pick)
    if not keepdim or input.dim() == 0:
        values, pick = values.squeeze(dim), pick.squeeze(dim)
    if input.dim() == 0:
        values, pick = values.reshape(()), pick.reshape(())
    return result_type(values, pick)


def _lower_middle_or_first_nan(x: Tensor, order: Tensor, n: int, dim: int) -> Tensor:
    pick = order.narrow(dim, (n - 1) // 2, 1)
    if x.dtype.is_floating_point:
        nan_count = x.isnan().sum(dim=dim, keepdim=True)
        first_nan = order.gather(dim, (n - nan_count).clamp(max=n - 1))
        pick = where(nan_count > 0, first_nan, pick)
    return pick


def _lower_middle_of_non_nan(x: Tensor, order: Tensor, n: int, dim: int) -> Tensor:
    if not x.dtype.is_floating_point:
        return order.narrow(dim, (n - 1) // 2, 1)
    count = (~x.isnan()).sum(dim=dim, keepdim=True)    # the non-NaN values sort first
    return order.gather(dim, (count - 1).clamp(min=0) // 2)   # an all-NaN slice: its first NaN


def median(input: Tensor, dim: Optional[int] = None, keepdim: bool = False):
    """The lower median (for an even count, the smaller of the two middle values). Without
    ``dim``, of all elements (a 0-d tensor); with it, ``(values, indices)`` along dim. NaN
    propagates: a slice holding a NaN has median NaN (its index that of the first NaN).

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    return _order_statistic(input, dim, keepdim, "median", _lower_middle_or_first_nan, median_result)


def nanmedian(input: Tensor, dim: Optional[int] = None, keepdim: bool = False):
    """The lower median of the non-NaN values (NaN where all are NaN). Without ``dim``, of all
    elements (a 0-d tensor); with it, ``(values, indices)`` along dim (an all-NaN slice gives its
    first NaN's index).

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to do the operation over. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    return _order_statistic(input, dim, keepdim, "nanmedian", _lower_middle_of_non_nan, nanmedian_result)
