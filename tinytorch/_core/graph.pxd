from tinytorch._core.tensor_base cimport TensorBase as Tensor

# Grad mode: one thread-local C flag, owned by graph.pyx; ops read it, the engine (engine.pyx)
# sets it around a run.
cdef bint is_grad_enabled_c() noexcept nogil
cdef int set_grad_enabled_c(int mode) noexcept nogil     # returns the previous mode

cdef class Node:
    cdef public str _name
    cdef public tuple next_functions    # ((Node or None, output_nr), ...) one per input
    cdef public object _backward        # backward(node, *grad_outputs) -> grad per input
    cdef list _out_meta                 # (shape, dtype_code) per output, set by set_history, for checks
    cdef public list _saved             # [(tensor or None, impl, version, is_output)], None if nothing saved
    cdef public bint _freed
    cdef public long long _seq
    cdef public int _num_outputs
    cdef public dict _output_hooks      # output_nr -> [hook]
    cdef public list _pre_hooks         # Node.register_prehook: [hook(grad_outputs)] or None
    cdef public list _post_hooks        # Node.register_hook: [hook(grad_inputs, grad_outputs)] or None
    cdef public tuple needs_input_grad
    cdef object __weakref__
    cdef dict __dict__                  # per-op attributes (dim, keepdim, ...) the formula needs

cdef class AccumulateGrad(Node):
    cdef public Tensor variable

cdef tuple edge_of(Tensor t)
cdef bint should_record(tuple inputs)
cdef Node init_node(Node n, str name, object backward, tuple inputs, int num_outputs=*)
cdef Node make_node(str name, object backward, tuple inputs, int num_outputs=*)
cdef void set_history(Tensor out, Node node, int output_nr)
cdef void save_tensors(Node node, tuple tensors)
