from tinytorch._core.tensor_base cimport TensorBase as Tensor

cdef object operand(object x)
cdef Tensor as_tensor_like(object x, Tensor like)
cdef object impl_or_none(object t)
cdef tuple pair(object v)
cdef int wrap_dim(object dim, int ndim) except? -1
cdef Tensor fused_result(str name, object impl, tuple inputs)
cdef Tensor adjoint_result(str name, object impl, tuple inputs, object adjoint)
cdef check_inplace(Tensor self, str op)
cdef Tensor rebase_inplace(Tensor self, Tensor result)
cdef Tensor record(str name, object backward, tuple inputs, object impl, dict attrs, tuple saved=*)
cdef Tensor view_positions(Tensor base, Tensor view)
cdef bint is_complex_operand(object x)
cdef object complex_op(str name, tuple args)
