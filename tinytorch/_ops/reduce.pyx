# cython: language_level=3
"""Reductions and scans, with their derivatives. The reduction node and its recording helper are
shared through reduce.pxd (softmax and log_softmax, in norm.pyx, record one)."""
from collections import namedtuple

from tinytorch import _C
from tinytorch._core.dtype import INT64, to_dtype
from tinytorch._ops import elementwise as E
from tinytorch._ops import shape as S
from tinytorch._ops.elementwise import where
from tinytorch._ops.shape import cat, flip
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node, make_node, init_node, should_record, set_history, save_tensors, \
    is_grad_enabled_c
from tinytorch._ops._common cimport wrap_dim, is_complex_operand, complex_op

values_indices = namedtuple("values_indices", ["values", "indices"])


cdef object _dims(object dim, int ndim):
    """None / int / sequence -> sorted list of non-negative dims (None = all)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = [dim]
    out = []
    for d in dim:
        d = wrap_dim(d, ndim if ndim > 1 else 1)   # a 0-dim tensor takes 0 and -1, as a scalar's dim
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return out if len(out) == 1 else sorted(out)


cdef object _code(object dtype):
    if dtype is None:
        return None
    return to_dtype(dtype).code


cdef class ReduceNode(Node):
    """Node of a reduction: the input's shape and the reduced dims (C fields, declared in
    reduce.pxd; op-specific extras such as the correction go to the attribute dict)."""


cdef Tensor _record(str name, object backward, Tensor x, object impl, object dims, bint keepdim,
                    dict attrs=None, tuple saved=(), bint save_io=True):
    """The reduction's output with its node: input shape, dims, attributes, and (``save_io``)
    the input and output, which all formulas but sum's and mean's read."""
    cdef Tensor out = wrap(impl)
    if not should_record((x,)):
        return out
    cdef ReduceNode n = <ReduceNode>init_node(ReduceNode.__new__(ReduceNode), name, backward, (x,))
    n.in_shape = x._impl.shape
    n.dims = dims
    n.keepdim = keepdim
    if attrs:
        for k, v in attrs.items():
            setattr(n, k, v)
    save_tensors(n, (x, out) + saved if save_io else saved)
    set_history(out, n, 0)
    return out


cdef object _keep(Tensor g, ReduceNode n):
    """g with the reduced dims put back as size-1 dims (so it broadcasts against the input).
    A full reduction's 0-dim result already broadcasts as is."""
    if n.keepdim or n.dims is None or not n.in_shape:   # (a 0-dim input's dim 0 is no dim)
        return g
    shape = list(n.in_shape)
    for d in n.dims:
        shape[d] = 1
    return g.reshape(shape)


cdef object _count(ReduceNode n):
    c = 1
    dims = range(len(n.in_shape)) if n.dims is None or not n.in_shape else n.dims
    for d in dims:
        c *= n.in_shape[d]
    return c


# ------------------------------------------------------------------ sum / mean / prod

cdef Tensor _sum_or_mean(str name, kernel, tuple nodes, backward, Tensor input, dim, bint keepdim, dtype):
    """sum or mean: the kernel, or for a complex input the composite over its real view; nodes: the
    grad_fn names over all dims and over some."""
    dims = _dims(dim, input._impl.ndim)
    try:
        impl = kernel(input._impl, dims, keepdim, _code(dtype))
    except NotImplementedError:
        if is_complex_operand(input):
            return complex_op(name, (input, dims, keepdim, dtype))
        raise
    return _record(nodes[dims is not None], backward, input, impl, dims, keepdim, None, (), False)   # saves nothing


def _sum_back(ReduceNode n, g):
    return (_keep(g, n).expand(*n.in_shape),)


def sum(Tensor input, dim=None, keepdim=False, *, dtype=None):
    """Returns the sum of all elements, or over the given dimension(s).

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``

    Keyword args:
        dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is casted to :attr:`dtype` before the operation is performed. This is useful for
            preventing data type overflows. Default: ``None``"""
    return _sum_or_mean("sum", _C.sum, ("SumBackward0", "SumBackward1"), _sum_back, input, dim, keepdim, dtype)


def _mean_back(ReduceNode n, g):
    return (_keep(g, n).expand(*n.in_shape) / _count(n),)


def mean(Tensor input, dim=None, keepdim=False, *, dtype=None):
    """Returns the mean value of all elements in the :attr:`input` tensor (or of each row over
    :attr:`dim`).

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``

    Keyword args:
        dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is casted to :attr:`dtype` before the operation is performed. This is useful for
            preventing data type overflows. Default: ``None``"""
    return _sum_or_mean("mean", _C.mean, ("MeanBackward0", "MeanBackward1"), _mean_back, input, dim, keepdim,
                        dtype)


def _product_of_the_others(Tensor x, dims):
    """prod_{j != i} x_j over the reduced dims, as (product of those before i) * (of those after):
    no division, so right with zeros and twice differentiable (PyTorch's prod_safe_zeros_backward)."""
    nd = x._impl.ndim
    red = list(range(nd)) if dims is None else list(dims)
    perm = [d for d in range(nd) if d not in red] + red
    xp = S.permute(x, *perm)
    lead = list(xp._impl.shape)[:nd - len(red)]
    flat = S.reshape(xp, *(lead + [-1]))
    m = flat._impl.shape[-1]
    ones = wrap(_C.full(lead + [1], 1.0, x._impl.dtype_code, x._impl.device))
    if m == 1:
        return ones.reshape(x._impl.shape)
    left = cumprod(cat([ones, S.narrow(flat, -1, 0, m - 1)], -1), -1)
    right = flip(cumprod(flip(cat([S.narrow(flat, -1, 1, m - 1), ones], -1), [-1]), -1), [-1])
    inverse = [perm.index(d) for d in range(nd)]
    return S.permute(S.reshape(left * right, *xp._impl.shape), *inverse)


def _prod_back(ReduceNode n, g):
    x, y = n.saved_tensors
    gk = _keep(g, n)
    if not n.in_shape:          # a 0-dim input: the product of one element
        return (gk * (x == x),)
    if not bool((x == 0).any()):
        return (gk * _keep(y, n) / x,)
    return (gk * _product_of_the_others(x, n.dims),)


def prod(Tensor input, dim=None, keepdim=False, *, dtype=None):
    """Returns the product of all elements in the :attr:`input` tensor (or of each row over :attr:`dim`).

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``

    Keyword args:
        dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is casted to :attr:`dtype` before the operation is performed. This is useful for
            preventing data type overflows. Default: ``None``"""
    dims = _dims(dim, input._impl.ndim)
    return _record("ProdBackward0", _prod_back, input, _C.prod(input._impl, dims, keepdim, _code(dtype)),
                   dims, keepdim)


# ------------------------------------------------------------------ max / min

def _even_back(ReduceNode n, g):
    """Gradient of amax/amin/max()/min(): shared evenly among the tied extremes."""
    x, y = n.saved_tensors
    mask = (x == _keep(y, n))
    return (_keep(g, n) * mask / sum(mask, n.dims, keepdim=True),)


def amax(Tensor input, dim=(), keepdim=False):
    """Returns the maximum value of each slice of the :attr:`input` tensor in the given dimension(s)
    :attr:`dim`.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``()``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    dims = _dims(dim, input._impl.ndim) if dim != () else None
    return _record("AmaxBackward0", _even_back, input, _C.amax(input._impl, dims, keepdim), dims, keepdim)


def amin(Tensor input, dim=(), keepdim=False):
    """Returns the minimum value of each slice of the :attr:`input` tensor in the given dimension(s)
    :attr:`dim`.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``()``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    dims = _dims(dim, input._impl.ndim) if dim != () else None
    return _record("AminBackward0", _even_back, input, _C.amin(input._impl, dims, keepdim), dims, keepdim)


def _index_back(ReduceNode n, g):
    """Gradient of max/min over one dim: g goes to the returned index."""
    x, y, idx = n.saved_tensors
    if not n.in_shape:      # a 0-dim input (dim 0 or -1 is the scalar itself): its one element
        return (g,)
    size = n.in_shape[n.dim]
    pos_shape = [1] * len(n.in_shape)
    pos_shape[n.dim] = size
    positions = S.reshape(wrap(_C.arange(0, size, 1, INT64, x._impl.device)), pos_shape)
    hit = positions == _keep(idx, n)
    return (_keep(g, n) * hit,)


def _max_min(str which, Tensor x, dim, keepdim, other):
    if isinstance(dim, Tensor):
        other, dim = dim, None
    if other is not None:
        return E.maximum(x, other) if which == "max" else E.minimum(x, other)
    if dim is None:
        impl = (_C.max_all if which == "max" else _C.min_all)(x._impl)
        return _record("MaxBackward1" if which == "max" else "MinBackward1", _even_back, x, impl, None, False)
    d = _dims(dim, x._impl.ndim)[0]
    values, indices = (_C.max_dim if which == "max" else _C.min_dim)(x._impl, dim, keepdim)
    idx = wrap(indices)
    out = _record("MaxBackward0" if which == "max" else "MinBackward0", _index_back, x, values, [d], keepdim,
                  {"dim": d}, (idx,))
    return values_indices(out, idx)


def max(Tensor input, dim=None, keepdim=False, other=None):
    """max(): the largest element; max(dim) -> (values, indices); max(other) = maximum.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``
        other (Tensor): the second input tensor (elementwise maximum or minimum). Default: ``None``"""
    return _max_min("max", input, dim, keepdim, other)


def min(Tensor input, dim=None, keepdim=False, other=None):
    """Returns the minimum value of all elements in the :attr:`input` tensor; with :attr:`dim`, a
    namedtuple ``(values, indices)``; with :attr:`other`, the elementwise minimum.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``
        other (Tensor): the second input tensor (elementwise maximum or minimum). Default: ``None``"""
    return _max_min("min", input, dim, keepdim, other)


def argmax(Tensor input, dim=None, keepdim=False):
    """Returns the indices of the maximum value of all elements in the :attr:`input` tensor (or along
    :attr:`dim`).

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    return wrap(_C.argmax(input._impl, dim, keepdim))


def argmin(Tensor input, dim=None, keepdim=False):
    """Returns the indices of the minimum value(s) of the flattened tensor or along a dimension.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    return wrap(_C.argmin(input._impl, dim, keepdim))


def all(Tensor input, dim=None, keepdim=False):
    """Tests if all elements in :attr:`input` evaluate to `True` (over :attr:`dim` when given).

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    return wrap(_C.all(input._impl, _dims(dim, input._impl.ndim), keepdim))


def any(Tensor input, dim=None, keepdim=False):
    """Tests if any element in :attr:`input` evaluates to `True` (over :attr:`dim` when given).

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    return wrap(_C.any(input._impl, _dims(dim, input._impl.ndim), keepdim))


# ------------------------------------------------------------------ var / std / logsumexp / norm

def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    if unbiased is None:
        return 1.0
    return 1.0 if unbiased else 0.0


def _var_back(ReduceNode n, g):
    x, y = n.saved_tensors
    centered = x - mean(x, n.dims, keepdim=True)
    dof = _count(n) - n.correction      # 0: an infinite factor (nan, as PyTorch), not ZeroDivisionError
    return (_keep(g, n) * centered * (2.0 / dof if dof != 0 else float("inf")),)


def var(Tensor input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over dim(s) with Bessel's correction (``correction=1`` by default).

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``
        unbiased (bool, optional): whether to use Bessel's correction (deprecated; use
            :attr:`correction`). Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``

    Keyword args:
        correction (int): difference between the sample size and sample degrees of freedom (Bessel's
            correction is ``correction=1``). Default: ``None``"""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    dims = _dims(dim, input._impl.ndim)
    return _record("VarBackward0", _var_back, input, _C.var(input._impl, dims, c, keepdim), dims, keepdim,
                   {"correction": c})


def _std_back(ReduceNode n, g):
    x, y = n.saved_tensors
    centered = x - mean(x, n.dims, keepdim=True)
    yk = _keep(y, n)
    # 0 where std == 0 (constant input), as PyTorch, instead of 0/0 = nan
    return (where(yk == 0, 0.0, _keep(g, n) * centered / (yk * (_count(n) - n.correction))),)


def std(Tensor input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Calculates the standard deviation over the dimensions specified by :attr:`dim`.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``
        unbiased (bool, optional): whether to use Bessel's correction (deprecated; use
            :attr:`correction`). Default: ``None``
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``

    Keyword args:
        correction (int): difference between the sample size and sample degrees of freedom (Bessel's
            correction is ``correction=1``). Default: ``None``"""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    dims = _dims(dim, input._impl.ndim)
    return _record("StdBackward0", _std_back, input, _C.std(input._impl, dims, c, keepdim), dims, keepdim,
                   {"correction": c})


def _lse_back(ReduceNode n, g):
    x, y = n.saved_tensors
    return (_keep(g, n) * (x - _keep(y, n)).exp(),)


def logsumexp(Tensor input, dim, keepdim=False):
    """Returns the log of summed exponentials of each row of the :attr:`input` tensor in the given
    dimension :attr:`dim`.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced.
        keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``"""
    dims = _dims(dim, input._impl.ndim)
    return _record("LogsumexpBackward0", _lse_back, input, _C.logsumexp(input._impl, dims, keepdim), dims, keepdim)


def _norm_back(ReduceNode n, g):
    x, y = n.saved_tensors
    p = n.p
    gk, yk = _keep(g, n), _keep(y, n)
    if p == 0:
        return (x * 0.0,)
    if p == 1:
        return (gk * x.sign(),)
    if p == float("inf") or p == float("-inf"):
        ax = x.abs()
        mask = ax == yk
        return (gk * x.sign() * mask / sum(mask, n.dims, keepdim=True),)
    if p == 2:
        return (where(yk == 0, 0.0, gk * x / yk),)
    ax = x.abs()
    return (where(yk == 0, 0.0, gk * x.sign() * ax ** (p - 1) / yk ** (p - 1)),)


def norm(Tensor input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over dim(s) (``'fro'`` = 2-norm over all given dims).

    Args:
        input (Tensor): the input tensor.
        p (float or str, optional): the order of norm: a number, ``inf``, ``-inf``, ``'fro'`` or
            ``'nuc'``. Default: ``'fro'``
        dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If ``None``, all
            dimensions are reduced. Default: ``None``
        keepdim (bool, optional): whether the output tensors have :attr:`dim` retained or not. Default:
            ``False``
        dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is casted to :attr:`dtype` before the operation is performed. This is useful for
            preventing data type overflows. Default: ``None``"""
    if p == "fro" or p is None:
        p = 2.0
    if isinstance(p, str):
        raise NotImplementedError(f"norm: p={p!r} (matrix norms) is not implemented; use p='fro' or a number")
    if dtype is not None:
        input = input.to(dtype)
    dims = _dims(dim, input._impl.ndim)
    return _record("NormBackward1", _norm_back, input, _C.norm(input._impl, float(p), dims, keepdim), dims,
                   keepdim, {"p": float(p)})


# ------------------------------------------------------------------ scans

def _cumsum_back(Node n, g):
    # reverse cumulative sum: sum_{j >= i} g_j = total - cumsum_i + g_i
    return (sum(g, n.dim, keepdim=True) - cumsum(g, n.dim) + g,)


def cumsum(Tensor input, int dim, *, dtype=None):
    """Returns the cumulative sum of elements of :attr:`input` in the dimension :attr:`dim`.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to do the operation over.

    Keyword args:
        dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is casted to :attr:`dtype` before the operation is performed. This is useful for
            preventing data type overflows. Default: ``None``"""
    d = _dims(dim, input._impl.ndim)[0]
    out = wrap(_C.cumsum(input._impl, dim, _code(dtype)))
    if out.dtype.is_floating_point:
        n = make_node("CumsumBackward0", _cumsum_back, (input,))
        if n is not None:
            n.dim = d
            set_history(out, n, 0)
    return out


def _cumprod_back_every_product(Tensor x, g, int d):
    """dx_k = sum_{j >= k} g_j * prod_{i <= j, i != k} x_i with every product formed: O(n^2), but
    twice differentiable where x has zeros (create_graph), as PyTorch's."""
    cdef int n = x._impl.shape[d]
    cols = []
    for k in range(n):
        ones = list(x._impl.shape)
        ones[d] = 1
        before = prod(S.narrow(x, d, 0, k), d, keepdim=True) if k else \
            wrap(_C.full(ones, 1.0, x._impl.dtype_code, x._impl.device))
        omitted = before if k == n - 1 else cat([before, before * cumprod(S.narrow(x, d, k + 1, n - k - 1), d)], d)
        cols.append(sum(S.narrow(g, d, k, n - k) * omitted, d, keepdim=True))
    return cat(cols, d)


def _cumprod_back(Node n, g):
    # dx_k = sum_{j >= k} g_j * prod_{i <= j, i != k} x_i. Before the first zero z along the dim
    # that is revcumsum(g * y)_k / x_k; at z it is revcumsum(g * y')_z, with y' the cumprod of x
    # with x_z set to 1 (no division); after z it is 0 (every product holds x_z). That masking
    # cuts the dependence on x_z, so a double backward takes the O(n^2) formula instead.
    x, y = n.saved_tensors
    zero = x == 0
    if not bool(zero.any()):
        return (_cumsum_back(n, g * y)[0] / x,)
    if is_grad_enabled_c():
        return (_cumprod_back_every_product(x, g, n.dim),)
    zeros_so_far = cumsum(zero, n.dim)
    before = zeros_so_far == 0
    first_zero = zero & (zeros_so_far == 1)
    dx = where(before, _cumsum_back(n, g * y)[0] / where(before, x, 1.0), 0.0)
    y1 = cumprod(where(first_zero, 1.0, x), n.dim)
    return (dx + where(first_zero, _cumsum_back(n, g * y1)[0], 0.0),)


def cumprod(Tensor input, int dim, *, dtype=None):
    """Returns the cumulative product of elements of :attr:`input` in the dimension :attr:`dim`.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to do the operation over.

    Keyword args:
        dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is casted to :attr:`dtype` before the operation is performed. This is useful for
            preventing data type overflows. Default: ``None``"""
    d = _dims(dim, input._impl.ndim)[0]
    out = wrap(_C.cumprod(input._impl, dim, _code(dtype)))
    if out.dtype.is_floating_point:
        n = make_node("CumprodBackward0", _cumprod_back, (input,))
        if n is not None:
            n.dim = d
            save_tensors(n, (input, out))
            set_history(out, n, 0)
    return out
