cdef class TensorBase:
    cdef public object _impl            # _C.TensorImpl: storage, view metadata, dtype, device
    cdef public object _grad            # Tensor or None
    cdef public object _grad_fn         # _autograd.Node or None (None for leaves)
    cdef public int _output_nr          # which output of _grad_fn this tensor is
    cdef public bint _requires_grad     # leaves only; non-leaves require grad through _grad_fn
    cdef public object _hooks           # leaf hooks: list or None
    cdef public object _grad_acc        # weakref to the leaf's AccumulateGrad node
    cdef public bint _retains_grad
    cdef public object _post_accumulate_hooks  # list or None
    cdef public object _base            # views: the tensor owning the storage they alias, else None
    cdef public object _views           # that tensor's live views (weakref.WeakSet) or None
    cdef object __weakref__

cdef TensorBase wrap(object impl)
cdef bint requires_grad(TensorBase t)
