from tinytorch._core.tensor_base cimport TensorBase as Tensor
from tinytorch._core.graph cimport Node


cdef class ReduceNode(Node):
    cdef public tuple in_shape
    cdef public object dims         # sorted list of dims, None = all
    cdef public bint keepdim


cdef object _dims(object dim, int ndim)
cdef object _code(object dtype)
cdef Tensor _record(str name, object backward, Tensor x, object impl, object dims, bint keepdim,
                    dict attrs=*, tuple saved=*, bint save_io=*)
