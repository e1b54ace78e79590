# cython: language_level=3
"""Indexing, joining, reordering and sorting ops, with their derivatives."""
import numpy as np

from tinytorch import _C
from tinytorch._core.dtype import BOOL, INT64, is_floating_code
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap, requires_grad
from tinytorch._core.graph cimport Node, make_node, set_history, is_grad_enabled_c
from tinytorch._ops._common cimport record as _record, operand, check_inplace, rebase_inplace, wrap_dim
from tinytorch._ops import shape as S
from tinytorch._ops.elementwise import where
from tinytorch._ops.reduce import sum as _rsum, values_indices
from tinytorch._ops.shape import cat


def _zeros(shape, Tensor like):
    return wrap(_C.full(list(shape), 0.0, like._impl.dtype_code, like._impl.device))


# ------------------------------------------------------------------ select / gather / scatter

def _index_select_back(Node n, g):
    idx, = n.saved_tensors
    if not n.in_shape:      # a 0-dim input: its one element, selected len(index) (1) times
        return (_rsum(g),)
    indices = [None] * n.dim + [idx]
    return (index_put(_zeros(n.in_shape, g), indices, g, accumulate=True),)


def index_select(Tensor input, int dim, Tensor index):
    """Selects entries of input along dim at the positions in index.

    Args:
        input (Tensor): the input tensor.
        dim (int): the axis along which to index.
        index (IntTensor or LongTensor): the 1-D tensor containing the indices to index."""
    d = dim % max(input._impl.ndim, 1)
    return _record("IndexSelectBackward0", _index_select_back, (input,), _C.index_select(input._impl, dim, index._impl),
                   {"dim": d, "in_shape": input._impl.shape}, (index,))


def _gather_back(Node n, g):
    idx, = n.saved_tensors
    return (scatter_add(_zeros(n.in_shape, g), n.dim, idx, g),)


def gather(Tensor input, int dim, Tensor index):
    """Gathers values along an axis specified by dim.

    Args:
        input (Tensor): the source tensor.
        dim (int): the axis along which to index.
        index (LongTensor): the indices of elements to gather."""
    return _record("GatherBackward0", _gather_back, (input,), _C.gather(input._impl, dim, index._impl),
                   {"dim": dim, "in_shape": input._impl.shape}, (index,))


def _scatter_back(Node n, g):
    idx, = n.saved_tensors
    gx = scatter(g, n.dim, idx, 0.0) if n.needs_input_grad[0] else None
    if len(n.needs_input_grad) == 1:     # scatter with a scalar value: one input
        return (gx,)
    gs = gather(g, n.dim, idx) if n.needs_input_grad[1] else None
    return (gx, gs)


def scatter(Tensor input, int dim, Tensor index, src=None, *, value=None, reduce=None):
    """Writes src (a tensor or a number) into input at the indices along dim (out of place); with
    reduce='add', adds it there instead (as scatter_add).

    Args:
        input (Tensor): the input tensor.
        dim (int): the axis along which to index.
        index (LongTensor): the indices of elements to scatter.
        src (Tensor): the source element(s) to scatter. Default: ``None``

    Keyword args:
        value (Scalar): the value to scatter (instead of :attr:`src`). Default: ``None``
        reduce (str, optional): reduction operation to apply, can be either ``'add'`` or ``'multiply'``.
            Default: ``None``"""
    if src is None:
        src = value
    if reduce == "add":
        if not isinstance(src, Tensor):
            src = wrap(_C.full(list(index._impl.shape), float(src), input._impl.dtype_code, input._impl.device))
        return scatter_add(input, dim, index, src)
    if reduce is not None:
        raise NotImplementedError(f"scatter(reduce={reduce!r}) is not implemented (reduce='add' is); "
                                  "PyTorch deprecates it for scatter_reduce")
    if isinstance(src, Tensor):
        return _record("ScatterBackward0", _scatter_back, (input, src),
                       _C.scatter(input._impl, dim, index._impl, (<Tensor>src)._impl),
                       {"dim": dim}, (index,))
    return _record("ScatterBackward1", _scatter_back, (input,), _C.scatter(input._impl, dim, index._impl, float(src)),
                   {"dim": dim}, (index,))


def _scatter_add_back(Node n, g):
    idx, = n.saved_tensors
    return (g, gather(g, n.dim, idx) if n.needs_input_grad[1] else None)


def scatter_add(Tensor input, int dim, Tensor index, Tensor src):
    """Adds all values from src into input at the indices along dim (out of place).

    Args:
        input (Tensor): the input tensor.
        dim (int): the axis along which to index.
        index (LongTensor): the indices of elements to scatter.
        src (Tensor): the source element(s) to scatter."""
    return _record("ScatterAddBackward0", _scatter_add_back, (input, src),
                   _C.scatter_add(input._impl, dim, index._impl, src._impl),
                   {"dim": dim}, (index,))


def _inplace_via(Tensor self, str name, result_fn, c_inplace):
    check_inplace(self, name)
    if is_grad_enabled_c() and requires_grad(self):
        return rebase_inplace(self, result_fn())
    c_inplace()
    return self


def scatter_(Tensor self, int dim, Tensor index, src=None, *, value=None, reduce=None):
    """Writes all values from the tensor :attr:`src` into :attr:`self` at the indices specified in the
    :attr:`index` tensor.

    Args:
        dim (int): the axis along which to index.
        index (LongTensor): the indices of elements to scatter.
        src (Tensor): the source element(s) to scatter. Default: ``None``

    Keyword args:
        value (Scalar): the value to scatter (instead of :attr:`src`). Default: ``None``
        reduce (str, optional): reduction operation to apply, can be either ``'add'`` or ``'multiply'``.
            Default: ``None``"""
    if src is None:
        src = value
    return _inplace_via(self, "scatter_", lambda: scatter(self, dim, index, src, reduce=reduce),
                        lambda: _C.scatter_(self._impl, dim, index._impl, (<Tensor>src)._impl
                                            if isinstance(src, Tensor) else float(src)))


def scatter_add_(Tensor self, int dim, Tensor index, Tensor src):
    """Adds all values from the tensor :attr:`src` into :attr:`self` at the indices specified in the
    :attr:`index` tensor.

    Args:
        dim (int): the axis along which to index.
        index (LongTensor): the indices of elements to scatter.
        src (Tensor): the source element(s) to scatter."""
    if is_grad_enabled_c() and requires_grad(src):
        check_inplace(self, "scatter_add_")
        return rebase_inplace(self, scatter_add(self, dim, index, src))
    return _inplace_via(self, "scatter_add_", lambda: scatter_add(self, dim, index, src),
                        lambda: _C.scatter_add_(self._impl, dim, index._impl, src._impl))


def _masked_fill_back(Node n, g):
    mask, = n.saved_tensors
    # a recorded op (not _C.masked_fill directly), so double backward sees the dependence on g
    return (where(mask, 0.0, g), None)


def masked_fill(Tensor input, Tensor mask, value):
    """Fills elements of input with value where mask is True.

    Args:
        input (Tensor): the input tensor.
        mask (BoolTensor): the boolean mask.
        value (Number): the value to fill with."""
    if isinstance(value, Tensor):
        value = (<Tensor>value).item()
    return _record("MaskedFillBackward0", _masked_fill_back, (input, None),
                   _C.masked_fill(input._impl, mask._impl, float(value)),
                   {}, (mask,))


def masked_fill_(Tensor self, Tensor mask, value):
    """Fills elements of :attr:`self` tensor with :attr:`value` where :attr:`mask` is True.

    Args:
        mask (BoolTensor): the boolean mask.
        value (Number): the value to fill with."""
    if isinstance(value, Tensor):
        value = (<Tensor>value).item()
    return _inplace_via(self, "masked_fill_", lambda: masked_fill(self, mask, value),
                        lambda: _C.masked_fill_(self._impl, mask._impl, float(value)))


def _masked_select_back(Node n, g):
    mask, = n.saved_tensors
    shape = _C.masked_fill(_zeros(n.in_shape, g)._impl, mask._impl, 0.0).shape   # broadcast shape
    full_mask = mask.expand(*shape) if tuple(mask._impl.shape) != tuple(shape) else mask
    return (index_put(_zeros(shape, g), [full_mask], g, accumulate=False),)


def masked_select(Tensor input, Tensor mask):
    """Returns a new 1-D tensor which indexes the :attr:`input` tensor according to the boolean mask
    :attr:`mask` which is a `BoolTensor`.

    Args:
        input (Tensor): the input tensor.
        mask (BoolTensor): the tensor containing the binary mask to index with."""
    return _record("MaskedSelectBackward0", _masked_select_back, (input,), _C.masked_select(input._impl, mask._impl),
                   {"in_shape": input._impl.shape}, (mask,))


def nonzero(Tensor input, *, as_tuple=False):
    """Returns a tensor containing the indices of all non-zero elements of :attr:`input`.

    Args:
        input (Tensor): the input tensor.

    Keyword args:
        as_tuple (bool): return a tuple of 1-D index tensors, one per dimension, instead of a 2-D
            tensor. Default: ``False``"""
    out = wrap(_C.nonzero(input._impl))
    if as_tuple:
        return tuple(S.select(out, 1, i) for i in range(input._impl.ndim))
    return out


# ------------------------------------------------------------------ advanced indexing

def _index_back(Node n, g):
    indices = n.saved_tensors
    idx = [indices[i] if n.is_tensor[i] else None for i in range(len(n.is_tensor))]
    return (index_put(_zeros(n.in_shape, g), idx, g, accumulate=True),)


def index(Tensor x, list indices):
    """x[indices] for a list of index tensors (None = full slice at that dim)."""
    impls = [None if i is None else (<Tensor>i)._impl for i in indices]
    return _record("IndexBackward0", _index_back, (x,), _C.index(x._impl, impls),
                   {"in_shape": x._impl.shape, "is_tensor": [i is not None for i in indices]},
                   tuple(i if i is not None else None for i in indices))


def _index_put_back(Node n, g):
    saved = n.saved_tensors
    idx = [saved[i] if n.is_tensor[i] else None for i in range(len(n.is_tensor))]
    gx = None
    if n.needs_input_grad[0]:
        gx = g if n.accumulate else index_put(g, idx, _zeros((), g), accumulate=False)
    gv = index(g, idx) if n.needs_input_grad[1] else None
    return (gx, gv)


def index_put(Tensor input, indices, values, accumulate=False):
    """Out-of-place ``input[indices] = values`` (or ``+=`` with accumulate).

    Args:
        input (Tensor): the input tensor.
        indices (tuple of LongTensor): tensors used to index into :attr:`input`.
        values (Tensor): the values to put at the given indices.
        accumulate (bool): whether to accumulate into :attr:`input` (add the values) instead of
            replacing. Default: ``False``"""
    indices = list(indices)
    cdef Tensor v = values if isinstance(values, Tensor) else \
        wrap(_C.full([], float(values), input._impl.dtype_code, input._impl.device))
    impls = [None if i is None else (<Tensor>i)._impl for i in indices]
    return _record("IndexPutBackward0", _index_put_back, (input, v),
                   _C.index_put(input._impl, impls, v._impl, accumulate),
                   {"is_tensor": [i is not None for i in indices], "accumulate": accumulate},
                   tuple(indices))


def index_put_(Tensor self, indices, values, accumulate=False):
    """Puts values from the tensor :attr:`values` into the tensor :attr:`self` using the indices specified
    in :attr:`indices` (which is a tuple of Tensors).

    Args:
        indices (tuple of LongTensor): tensors used to index into :attr:`input`.
        values (Tensor): the values to put at the given indices.
        accumulate (bool): whether to accumulate into :attr:`input` (add the values) instead of
            replacing. Default: ``False``"""
    indices = list(indices)
    check_inplace(self, "index_put_")
    if is_grad_enabled_c() and (requires_grad(self) or (isinstance(values, Tensor) and requires_grad(<Tensor>values))):
        return rebase_inplace(self, index_put(self, indices, values, accumulate))
    cdef Tensor v = values if isinstance(values, Tensor) else \
        wrap(_C.full([], float(values), self._impl.dtype_code, self._impl.device))
    _C.index_put_(self._impl, [None if i is None else (<Tensor>i)._impl for i in indices], v._impl, accumulate)
    return self


def _as_index(obj, Tensor like):
    """A Python list / numpy array / bool used as an index -> int64 or bool tensor."""
    arr = np.asarray(obj)
    if arr.dtype == np.bool_:
        impl = _C.from_numpy(np.array(arr, order="C"))
    elif np.issubdtype(arr.dtype, np.integer):
        impl = _C.from_numpy(np.array(arr, dtype=np.int64, order="C"))
    else:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if impl.device_str != like._impl.device_str:
        impl = impl.to_device(like._impl.device)
    return wrap(impl)


def _parse(Tensor x, key):
    """Splits an index expression into basic view ops applied to x, and advanced indices."""
    if not isinstance(key, tuple):
        key = (key,)
    # expand Ellipsis
    n_real = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, Tensor) and (<Tensor>k)._impl.dtype_code == BOOL:
            n_real += (<Tensor>k)._impl.ndim
        else:
            n_real += 1
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    nd = x._impl.ndim
    if n_real > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    expanded = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (nd - n_real))
        else:
            expanded.append(k)
    view = x
    advanced = []
    dim = 0
    has_adv = False
    for k in expanded:
        if k is None:
            view = S.unsqueeze(view, dim)
            advanced.append(None)
            dim += 1
        elif isinstance(k, bool):
            view = S.unsqueeze(view, dim)
            advanced.append(_as_index([k], x))
            has_adv = True
            dim += 1
        elif isinstance(k, int) or (hasattr(k, "__index__") and not isinstance(k, Tensor)):
            view = S.select(view, dim, int(k))
        elif isinstance(k, slice):
            step = 1 if k.step is None else k.step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            view = S.slice(view, dim, k.start, k.stop, step)
            advanced.append(None)
            dim += 1
        else:
            t = k if isinstance(k, Tensor) else _as_index(k, x)
            if is_floating_code((<Tensor>t)._impl.dtype_code):     # as PyTorch: IndexError, not the kernel's TypeError
                raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors, got {t.dtype}")
            advanced.append(t)
            has_adv = True
            dim += (<Tensor>t)._impl.ndim if (<Tensor>t)._impl.dtype_code == BOOL else 1
    while advanced and advanced[-1] is None:
        advanced.pop()
    return view, (advanced if has_adv else None)


def getitem(Tensor x, key):
    view, adv = _parse(x, key)
    if adv is None:
        return view
    return index(view, adv)


def setitem(Tensor x, key, value):
    check_inplace(x, "__setitem__")
    if is_grad_enabled_c() and (requires_grad(x) or (isinstance(value, Tensor) and requires_grad(<Tensor>value))):
        # out of place through the flat positions the key addresses, then take over the result
        flat_positions = wrap(_C.arange(0, x._impl.numel, 1, INT64, x._impl.device))
        positions = getitem(S.view(flat_positions, list(x._impl.shape)), key)
        v = value if isinstance(value, Tensor) else wrap(_C.full([], float(value), x._impl.dtype_code, x._impl.device))
        v = S.expand(v, list(positions._impl.shape)) if tuple(v._impl.shape) != tuple(positions._impl.shape) else v
        flat = index_put(S.reshape(x, -1), [S.reshape(positions, -1)], S.reshape(v, -1))
        rebase_inplace(x, S.view(flat, list(x._impl.shape)))
        return
    view, adv = _parse(x, key)
    if adv is None:
        if isinstance(value, Tensor):
            view._impl.copy_((<Tensor>value)._impl)
        else:
            _C.fill_(view._impl, float(value))
        x._impl.bump_version()
        return
    v = value if isinstance(value, Tensor) else wrap(_C.full([], float(value), x._impl.dtype_code, x._impl.device))
    _C.index_put_(view._impl, [None if i is None else (<Tensor>i)._impl for i in adv], (<Tensor>v)._impl, False)


# ------------------------------------------------------------------ joining and reordering

def stack(tensors, int dim=0):
    """Concatenates a sequence of tensors along a new dimension.

    Args:
        tensors (sequence of Tensors): sequence of tensors to concatenate.
        dim (int, optional): dimension to insert. Has to be between 0 and the number of dimensions of
            concatenated tensors (inclusive). Default: ``0``"""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = wrap_dim(dim, (<Tensor>tensors[0])._impl.ndim + 1)
    return cat([S.unsqueeze(t, d) for t in tensors], d)


def hstack(tensors):
    """Stack tensors in sequence horizontally (column wise).

    Args:
        tensors (sequence of Tensors): sequence of tensors to concatenate."""
    tensors = list(tensors)
    return cat(tensors, 0 if (<Tensor>tensors[0])._impl.ndim == 1 else 1)


def vstack(tensors):
    """Stack tensors in sequence vertically (row wise).

    Args:
        tensors (sequence of Tensors): sequence of tensors to concatenate."""
    return cat([t if t.dim() > 1 else S.unsqueeze(t, 0) for t in tensors], 0)


def _roll_back(Node n, g):
    return (roll(g, [-s for s in n.shifts], n.dims),)


def roll(Tensor input, shifts, dims=None):
    """Roll the tensor :attr:`input` along the given dimension(s).

    Args:
        input (Tensor): the input tensor.
        shifts (int or tuple of ints): the number of places by which the elements of the tensor are
            shifted. If shifts is a tuple, dims must be a tuple of the same size, and each dimension
            will be rolled by the corresponding value.
        dims (int or tuple of ints): axis along which to roll. Default: ``None``"""
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [] if dims is None else ([dims] if isinstance(dims, int) else list(dims))
    for d in dims:
        wrap_dim(d, input._impl.ndim)    # IndexError for a dim out of range (any dim of a 0-dim tensor)
    return _record("RollBackward0", _roll_back, (input,), _C.roll(input._impl, shifts, dims),
                   {"shifts": shifts, "dims": dims})


def _repeat_back(Node n, g):
    reps = n.repeats
    shape = list(n.in_shape)
    lead = len(reps) - len(shape)
    shape = [1] * lead + shape
    split = []
    for r, s in zip(reps, shape):
        split.extend([r, s])
    gs = S.reshape(g, split)
    gs = _rsum(gs, list(range(0, 2 * len(reps), 2)))
    return (S.reshape(gs, list(n.in_shape)),)


def repeat(Tensor self, *sizes, repeats=None):
    """``repeat(2, 1)``, ``repeat((2, 1))`` or ``repeat(repeats=(2, 1))``.

    Args:
        sizes (Size or int...): the number of times to repeat this tensor along each dimension.

    Keyword args:
        repeats (Size or int..., optional): the number of times to repeat this tensor along each
            dimension, as a keyword. Default: ``None``"""
    if repeats is not None:
        sizes = (repeats,)
    reps = list(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else list(sizes)
    return _record("RepeatBackward0", _repeat_back, (self,), _C.repeat(self._impl, reps),
                   {"repeats": reps, "in_shape": self._impl.shape})


def _tri_back(Node n, g):
    return ((tril if n.lower else triu)(g, n.diagonal),)


def tril(Tensor input, Py_ssize_t diagonal=0):
    """Returns the lower triangular part of the matrix (2-D tensor) or batch of matrices :attr:`input`, the
    other elements of the result tensor are set to 0.

    Args:
        input (Tensor): the input tensor.
        diagonal (int, optional): the diagonal to consider. Default: ``0``"""
    return _record("TrilBackward0", _tri_back, (input,), _C.tril(input._impl, diagonal),
                   {"lower": True, "diagonal": diagonal})


def triu(Tensor input, Py_ssize_t diagonal=0):
    """Returns the upper triangular part of a matrix (2-D tensor) or batch of matrices :attr:`input`, the
    other elements of the result tensor are set to 0.

    Args:
        input (Tensor): the input tensor.
        diagonal (int, optional): the diagonal to consider. Default: ``0``"""
    return _record("TriuBackward0", _tri_back, (input,), _C.triu(input._impl, diagonal),
                   {"lower": False, "diagonal": diagonal})


# ------------------------------------------------------------------ sorting

def _sorted_back(Node n, g):
    idx, = n.saved_tensors
    return (scatter(_zeros(n.in_shape, g), n.dim, idx, g),)


def sort(Tensor input, int dim=-1, bint descending=False, bint stable=False):
    """Sorts the elements of the :attr:`input` tensor along a given dimension in ascending order by value.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to sort along. Default: ``-1``
        descending (bool, optional): controls the sorting order (ascending or descending). Default:
            ``False``
        stable (bool, optional): makes the sorting routine stable, which guarantees that the order of
            equivalent elements is preserved. Default: ``False``"""
    values, indices = _C.sort(input._impl, dim, descending, stable)
    idx = wrap(indices)
    out = _record("SortBackward0", _sorted_back, (input,), values, {"dim": dim, "in_shape": input._impl.shape}, (idx,))
    return values_indices(out, idx)


def argsort(Tensor input, int dim=-1, bint descending=False, bint stable=False):
    """Returns the indices that sort a tensor along a given dimension in ascending order by value.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to sort along. Default: ``-1``
        descending (bool, optional): controls the sorting order (ascending or descending). Default:
            ``False``
        stable (bool, optional): makes the sorting routine stable, which guarantees that the order of
            equivalent elements is preserved. Default: ``False``"""
    return wrap(_C.argsort(input._impl, dim, descending, stable))


def topk(Tensor input, Py_ssize_t k, int dim=-1, bint largest=True, bint sorted=True):
    """Returns the :attr:`k` largest elements of the given :attr:`input` tensor along a given dimension.

    Args:
        input (Tensor): the input tensor.
        k (int): the k in "top-k".
        dim (int, optional): the dimension to sort along. Default: ``-1``
        largest (bool, optional): controls whether to return largest or smallest elements. Default:
            ``True``
        sorted (bool, optional): controls whether to return the elements in sorted order. Default:
            ``True``"""
    values, indices = _C.topk(input._impl, k, dim, largest, sorted)
    idx = wrap(indices)
    out = _record("TopkBackward0", _sorted_back, (input,), values, {"dim": dim, "in_shape": input._impl.shape}, (idx,))
    return values_indices(out, idx)


def one_hot(Tensor input, int num_classes=-1):
    return wrap(_C.one_hot(input._impl, num_classes))
