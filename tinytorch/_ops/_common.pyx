# cython: language_level=3
"""Helpers shared by the op families: Python-number operands, in-place history rebasing,
and results of fused backward kernels."""
from libc.stdint cimport int64_t

import numpy as np

from tinytorch import _C
from tinytorch._core.dtype import BOOL, COMPLEX64, FLOAT64, INT64
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap, requires_grad
from tinytorch._core.graph cimport Node, make_node, set_history, save_tensors, is_grad_enabled_c

cdef dict _scalar_cache = {}


cdef object operand(object x):
    """The _C.TensorImpl for a tensor or a Python number (a 0-dim "wrapped number")."""
    if isinstance(x, Tensor):
        return (<Tensor>x)._impl
    cls = type(x)
    if cls is not float and cls is not int and cls is not bool:
        return foreign_operand(x)
    key = (cls, x)
    impl = _scalar_cache.get(key)
    if impl is not None:
        return impl
    if isinstance(x, bool):
        impl = _C.scalar_tensor(float(x), BOOL)
    elif isinstance(x, int):
        impl = _C.scalar_tensor(float(x), INT64)
    elif isinstance(x, float):
        impl = _C.scalar_tensor(x, FLOAT64)
    else:
        raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")
    if len(_scalar_cache) < 1024:
        _scalar_cache[key] = impl   # wrapped numbers are never written to
    return impl


cdef object foreign_operand(object x):
    """Operands that are not a Tensor or a plain Python number: numpy scalars and number
    subclasses act as Python numbers (wrapped numbers, as in PyTorch), numpy arrays as tensors."""
    if isinstance(x, (bool, np.bool_)):
        return operand(bool(x))
    if isinstance(x, (int, np.integer)):
        return operand(int(x))
    if isinstance(x, (float, np.floating)):
        return operand(float(x))
    if isinstance(x, (complex, np.complexfloating)):
        return _C.complex_scalar_tensor(x.real, x.imag)
    if isinstance(x, np.ndarray):
        if not x.flags.writeable or any(s < 0 for s in x.strides):
            x = np.array(x)  # tinytorch tensors are writable views with non-negative strides
        return _C.from_numpy(x)
    raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")


cdef object impl_or_none(object t):
    """The _C.TensorImpl of an optional tensor argument (bias, weight), None for None."""
    return None if t is None else (<Tensor>t)._impl


cdef tuple pair(object v):
    """An int or a pair -> a pair (kernel sizes, strides, padding of the 2-D ops)."""
    return (v, v) if isinstance(v, int) else tuple(v)


cdef int wrap_dim(object dim, int ndim) except? -1:
    """PyTorch's maybe_wrap_dim for an existing dim of an ndim-dim tensor (a 0-dim tensor takes
    0 and -1 only when wrapping is allowed, as a scalar's dim; the callers decide)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < -ndim or dim >= ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


cdef Tensor as_tensor_like(object x, Tensor like):
    if isinstance(x, Tensor):
        return <Tensor>x
    return wrap(operand(x))


def _no_double_backward(node, *grads):
    raise NotImplementedError(f"double backward through {node._name} is not implemented "
                              "(its first backward uses a fused kernel)")


cdef Tensor fused_result(str name, object impl, tuple inputs):
    """A backward kernel's output: when it is itself being recorded (create_graph=True),
    differentiating it again raises instead of silently giving zero."""
    cdef Tensor out = wrap(impl)
    cdef Node n = make_node(name, _no_double_backward, inputs)
    if n is not None:
        set_history(out, n, 0)
    return out


def _adjoint_backward(node, gg):
    return node.adjoint(gg)


cdef Tensor adjoint_result(str name, object impl, tuple inputs, object adjoint):
    """A backward kernel's output whose own derivative is known: ``adjoint(gg)`` returns the
    gradients for ``inputs`` given the gradient ``gg`` of this output. For kernels linear in the
    incoming gradient alone (dropout, embedding, nll_loss) that is the forward op applied to gg;
    conv2d's are the convolution kernels again. So double backward works through them."""
    cdef Tensor out = wrap(impl)
    cdef Node n = make_node(name, _adjoint_backward, inputs)
    if n is not None:
        n.adjoint = adjoint
        set_history(out, n, 0)
    return out


cdef check_inplace(Tensor self, str op):
    if not is_grad_enabled_c():
        return
    if self._grad_fn is None and self._requires_grad:
        raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an in-place operation.")


cdef Tensor rebase_inplace(Tensor self, Tensor result):
    """Writes ``result`` (computed out of place, with history) into ``self`` and moves
    self's autograd history to result's node. Through a view, the tensor owning the storage (and
    its other views) get new history too: see _copy_slices."""
    # The formula may have saved ``self`` (e.g. clamp_, mul_): it is about to be overwritten, so
    # save a copy of its old value instead (PyTorch's original_self); otherwise backward would
    # always fail the saved-tensor version check.
    cdef Node n = result._grad_fn
    original = None
    if n is not None and n._saved is not None:
        for i, entry in enumerate(n._saved):
            if entry[0] is self:
                if original is None:
                    original = self.clone()
                n._saved[i] = (original, (<Tensor>original)._impl, (<Tensor>original)._impl.version, False)
    base = self._base
    if base is not None and is_grad_enabled_c() and (n is not None or requires_grad(<Tensor>base)):
        return _copy_slices(self, <Tensor>base, result)
    self._impl.copy_(result._impl)
    if n is not None:
        set_history(self, n, result._output_nr)   # gradients are checked against self's dtype
    return self


# ------------------------------------------------------------------ in-place through views

cdef int64_t _last_offset(object impl):
    cdef int64_t last = impl.storage_offset
    for size, stride in zip(impl.shape, impl.stride()):
        if size == 0:
            return -1
        last += (size - 1) * stride
    return last


cdef Tensor view_positions(Tensor base, Tensor view):
    """The row-major position in ``base`` of each element of ``view`` (flat, int64), from their
    geometry over the storage they share: arange(base.numel()) written through base's geometry,
    read back through view's. -1 where view reads storage outside base."""
    b, v = base._impl, view._impl
    span = max(_last_offset(b), _last_offset(v)) + 1
    pos = _C.full([span], -1.0, INT64, b.device)
    pos.as_strided(list(b.shape), list(b.stride()), b.storage_offset).copy_(
        _C.arange(0, b.numel, 1, INT64, b.device).view(list(b.shape)))
    return wrap(pos.as_strided(list(v.shape), list(v.stride()), v.storage_offset).contiguous().view([-1]))


def _copy_slices_back(Node n, g):
    # the base's old values outside the written region keep their gradient; the written region's
    # gradient goes to what was written
    flat = g.reshape(-1)
    return (g * n.keep, flat.index_select(0, n.positions).reshape(n.view_shape))


def positions_back(Node n, g):
    """Backward of a view given as positions in its base: g accumulated there (views may overlap).
    Through the Tensor methods (index_put is the index family's, above this module): recorded,
    so create_graph sees it."""
    zeros = wrap(_C.full([n.numel], 0.0, g._impl.dtype_code, g._impl.device))
    return (zeros.index_put([n.positions], g.reshape(-1), accumulate=True).reshape(n.base_shape),)


cdef void _view_history(Tensor view, Tensor base, Tensor positions):
    """view's history becomes "these positions of base" (base's current history)."""
    cdef Node n = make_node("AsStridedBackward0", positions_back, (base,))
    if n is not None:
        n.positions, n.numel, n.base_shape = positions, base._impl.numel, base._impl.shape
        set_history(view, n, 0)


cdef Tensor _copy_slices(Tensor self, Tensor base, Tensor result):
    """In-place op through the view ``self`` of ``base`` (PyTorch's CopySlices): result is written
    into self's memory; base's history becomes CopySlices(base's old history, result), and self's
    and every other live view overlapping the written region become views of that new history (their
    old history would miss the write: a silently wrong gradient)."""
    if base._grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    positions = view_positions(base, self)
    keep = _C.full([base._impl.numel], 1.0, base._impl.dtype_code, base._impl.device)
    _C.index_put_(keep, [positions._impl], _C.full([], 0.0, base._impl.dtype_code, base._impl.device), False)
    self._impl.copy_(result._impl)
    cdef Node n = make_node("CopySlices", _copy_slices_back, (base, result))
    if n is None:
        return self
    n.positions, n.view_shape, n.keep = positions, self._impl.shape, wrap(keep.view(list(base._impl.shape)))
    set_history(base, n, 0)
    _view_history(self, base, positions)
    lo, hi = self._impl.storage_offset, _last_offset(self._impl)
    if base._views is not None:
        for w in base._views.alive():
            if w is self or (<Tensor>w)._impl.numel == 0:
                continue
            if (<Tensor>w)._impl.storage_offset <= hi and _last_offset((<Tensor>w)._impl) >= lo:
                _view_history(<Tensor>w, base, view_positions(base, <Tensor>w))
    return self


cdef Tensor record(str name, object backward, tuple inputs, object impl, dict attrs, tuple saved=()):
    """Wraps an op's output and, when grad is needed, records its node: attributes the formula
    reads (dim, stride, ...) and the tensors it saves."""
    cdef Tensor out = wrap(impl)
    cdef Node n = make_node(name, backward, inputs)
    if n is not None:
        for k, v in attrs.items():
            setattr(n, k, v)
        if saved:
            save_tensors(n, saved)
        set_history(out, n, 0)
    return out


# ------------------------------------------------------------------ complex tensors

# The kernels store complex tensors but compute only real ones: an op whose kernel refuses a complex
# operand (NotImplementedError) runs its composite over the real view instead. Those composites use
# this layer's ops, so they live above it (tinytorch/_composites/complex.py) and register here; the
# package root hands over a loader, so the module loads at the first complex op, not at import.
cdef dict _complex_ops = {}
cdef object _complex_loader = None


def register_complex_ops(dict ops):
    """Registers complex composites by op name: ``ops[name](*args)`` computes ``name`` when one of
    its operands is complex."""
    _complex_ops.update(ops)


def set_complex_loader(loader):
    """``loader()`` registers the complex composites; it is called at the first complex op."""
    global _complex_loader
    _complex_loader = loader


cdef bint is_complex_operand(object x):
    if isinstance(x, Tensor):
        return (<Tensor>x)._impl.dtype_code >= COMPLEX64
    return isinstance(x, complex)


cdef object complex_op(str name, tuple args):
    """The registered complex composite of ``name`` applied to ``args``; NotImplementedError naming
    the op when there is none (as PyTorch's "not implemented for 'ComplexFloat'")."""
    global _complex_loader
    if _complex_loader is not None:
        loader, _complex_loader = _complex_loader, None
        loader()
    fn = _complex_ops.get(name)
    if fn is None:
        dtypes = ", ".join(str(a.dtype) for a in args if isinstance(a, Tensor))
        raise NotImplementedError(f"\"{name}\" not implemented for complex tensors ({dtypes}); the complex ops "
                                  "tinytorch has are listed in docs/api.md, \"Complex numbers\"")
    return fn(*args)


def result_code(a, b):
    """The dtype code of a binary op's result on ``a`` and ``b`` (tensors or Python numbers)."""
    return _C.result_type(operand(a), operand(b))
