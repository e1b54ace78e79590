# cython: language_level=3
"""Helpers shared by the op families: Python-number operands, in-place history rebasing,
and results of fused backward kernels."""
from tinytorch import _C
from tinytorch._tensor cimport TensorBase as Tensor, wrap, requires_grad
from tinytorch._autograd cimport Node, make_node, set_history, save_tensors, is_grad_enabled_c

cdef dict _scalar_cache = {}


cdef object operand(object x):
    """The _C.TensorImpl for a tensor or a Python number (a 0-dim "wrapped number")."""
    if isinstance(x, Tensor):
        return (<Tensor>x)._impl
    key = (type(x), x)
    impl = _scalar_cache.get(key)
    if impl is not None:
        return impl
    if isinstance(x, bool):
        impl = _C.scalar_tensor(float(x), 0)
    elif isinstance(x, int):
        impl = _C.scalar_tensor(float(x), 3)
    elif isinstance(x, float):
        impl = _C.scalar_tensor(x, 7)
    else:
        raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")
    if len(_scalar_cache) < 1024:
        _scalar_cache[key] = impl   # wrapped numbers are never written to
    return impl


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
    self's autograd history to result's node."""
    if result._grad_fn is not None and self._grad_fn is not None and getattr(self._grad_fn, "_is_view", False):
        raise RuntimeError(f"in-place operation on a view ({self._grad_fn._name}) of a tensor that requires grad "
                           "is not supported by tinytorch autograd; use the out-of-place op instead")
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
    self._impl.copy_(result._impl)
    if n is not None:
        set_history(self, n, result._output_nr)   # gradients are checked against self's dtype
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
