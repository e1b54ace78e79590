# cython: language_level=3
"""The autograd graph: nodes, grad mode, and recording.

An op that takes inputs requiring grad records one ``Node``: the backward formula, the
``next_functions`` edges to its inputs' nodes, and the tensors the formula needs (saved with
their version counters). The engine that runs the graph is ``engine.pyx``.

Recording runs on every differentiable op, so it stays in C-level fields and C calls: edges and
flags are built as tuples directly, the shape/dtype a gradient is checked against is read once
per output (``set_history``), not once per consuming edge. Grad mode is a thread-local C flag
owned here: ops read it (``is_grad_enabled_c``), the engine sets it (``set_grad_enabled_c``).
"""
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.weakref cimport PyWeakref_NewRef

from tinytorch._core.tensor_base import _RemovableHandle  # noqa: F401  (Node and Tensor hooks return it)

from tinytorch._core.tensor_base cimport TensorBase as Tensor, requires_grad, wrap

cdef extern from *:
    """
    static __thread int tt_grad_enabled = 1;
    static __thread int tt_inference_mode = 0;
    """
    int tt_grad_enabled
    int tt_inference_mode

cdef long long _next_seq = 0


cdef bint is_grad_enabled_c() noexcept nogil:
    return tt_grad_enabled != 0


cdef int set_grad_enabled_c(int mode) noexcept nogil:
    """Sets this thread's grad mode and returns the previous one (the engine runs with create_graph)."""
    global tt_grad_enabled
    cdef int prev = tt_grad_enabled
    tt_grad_enabled = mode
    return prev


def is_grad_enabled():
    """Returns True if grad mode is currently enabled (per thread)."""
    return tt_grad_enabled != 0


def _set_grad_enabled(bint mode):
    global tt_grad_enabled
    tt_grad_enabled = mode


def is_inference_mode_enabled():
    """Returns True if inference mode is currently enabled."""
    return tt_inference_mode != 0


def _set_inference_mode(bint mode):
    global tt_inference_mode
    tt_inference_mode = mode


# ------------------------------------------------------------------ nodes

cdef tuple _NO_EDGE = (None, 0)


cdef inline void _put(tuple t, Py_ssize_t i, object v):
    """Fills slot i of a tuple fresh from PyTuple_New (which steals a reference)."""
    Py_INCREF(v)
    PyTuple_SET_ITEM(t, i, v)


cdef class Node:
    """One recorded differentiable call (``grad_fn``)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("Node objects are created by tinytorch ops, not directly")

    def name(self):
        return self._name

    def __repr__(self):
        return f"<{self._name} object at {id(self):#x}>"

    # -- saving tensors for the backward formula
    def save(self, *tensors):
        """Save inputs/outputs the formula needs; in-place changes to them are detected."""
        save_tensors(self, tensors)

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after "
                "they have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward.")
        if self._saved is None:
            return ()
        out = []
        cdef Tensor t
        for i, (tensor, impl, version, is_output) in enumerate(self._saved):
            if impl is None:
                out.append(None)
                continue
            if impl.version != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{impl.describe()}], which is saved tensor {i} of {self._name}, is at version "
                    f"{impl.version}; expected version {version} instead. Hint: the operation that modified it "
                    f"ran between the forward pass and backward().")
            if is_output:
                t = wrap(impl)
                t._grad_fn = self
                t._output_nr = is_output - 1
                out.append(t)
            else:
                out.append(tensor)
        return tuple(out)

    def register_hook(self, hook):
        """Registers a backward hook, called as ``hook(grad_inputs, grad_outputs) -> tuple or None``
        after this node computed the gradients of its inputs (``grad_inputs``) from those of its
        outputs (``grad_outputs``); a returned tuple replaces ``grad_inputs``. Returns a handle
        with ``remove()``."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(hook)
        return _RemovableHandle(self._post_hooks, hook)

    def register_prehook(self, hook):
        """Registers a backward pre-hook, called as ``hook(grad_outputs) -> tuple or None`` before
        this node runs; a returned tuple replaces ``grad_outputs``. Returns a handle with ``remove()``."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(hook)
        return _RemovableHandle(self._pre_hooks, hook)

    def _add_output_hook(self, int output_nr, hook):
        if self._output_hooks is None:
            self._output_hooks = {}
        self._output_hooks.setdefault(output_nr, []).append(hook)
        return _RemovableHandle(self._output_hooks[output_nr], hook)

    def apply(self, *grads):
        return self._backward(self, *grads)


cdef class AccumulateGrad(Node):
    """Terminal node of a leaf tensor: adds incoming gradients into ``leaf.grad`` (the engine
    does). Its ``variable`` (the leaf) is declared in graph.pxd."""


cdef void save_tensors(Node node, tuple tensors):
    cdef Tensor t
    if node._saved is None:
        node._saved = []
    for obj in tensors:
        if obj is None:
            node._saved.append((None, None, 0, False))
            continue
        t = <Tensor>obj
        if t._grad_fn is node:
            # An output of this node: keep only its storage, not the Python tensor, so the
            # graph does not reference itself (no cycle, freed by refcounting alone).
            # (Outputs saved before set_history are converted there.) is_output = output_nr + 1.
            node._saved.append((None, t._impl, t._impl.version, t._output_nr + 1))
        else:
            node._saved.append((t, t._impl, t._impl.version, False))


cdef Node _init_node(Node n, str name, object backward, int num_outputs):
    """Fills a fresh node (allocated with X.__new__(X), which compiles to a direct tp_new call)."""
    global _next_seq
    n._name = name
    n._backward = backward
    n._seq = _next_seq
    _next_seq += 1
    n._num_outputs = num_outputs
    return n


cdef Node grad_accumulator(Tensor leaf):
    cdef AccumulateGrad acc = None
    if leaf._grad_acc is not None:
        acc = leaf._grad_acc()
    if acc is None:
        acc = <AccumulateGrad>_init_node(AccumulateGrad.__new__(AccumulateGrad), "AccumulateGrad", None, 1)
        acc.variable = leaf
        acc.next_functions = ()
        acc.needs_input_grad = ()
        leaf._grad_acc = PyWeakref_NewRef(acc, None)
    return acc


cdef tuple edge_of(Tensor t):
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return _NO_EDGE


cdef bint should_record(tuple inputs):
    """Grad mode is on and an input requires grad: the op gets a node."""
    if not tt_grad_enabled:
        return False
    for x in inputs:
        if x is not None and requires_grad(<Tensor>x):
            return True
    return False


cdef Node init_node(Node n, str name, object backward, tuple inputs, int num_outputs=1):
    """Fills a fresh node: its edges to the inputs' nodes. Ops whose formula needs attributes
    allocate a typed Node subclass (X.__new__(X), a direct tp_new) and pass it here."""
    _init_node(n, name, backward, num_outputs)
    cdef Py_ssize_t i, k = len(inputs)
    cdef tuple edges = PyTuple_New(k)
    cdef tuple needs = PyTuple_New(k)
    for i in range(k):
        x = inputs[i]
        if x is not None and requires_grad(<Tensor>x):
            _put(edges, i, edge_of(<Tensor>x))
            _put(needs, i, True)
        else:
            _put(edges, i, _NO_EDGE)
            _put(needs, i, False)
    n.next_functions = edges
    n.needs_input_grad = needs
    return n


cdef Node make_node(str name, object backward, tuple inputs, int num_outputs=1):
    """A new Node if grad mode is on and any input requires grad, else None."""
    if not should_record(inputs):
        return None
    return init_node(Node.__new__(Node), name, backward, inputs, num_outputs)


cdef void set_history(Tensor out, Node node, int output_nr):
    out._grad_fn = node
    out._output_nr = output_nr
    # what gradients flowing into this output are checked against (PyTorch's input_metadata)
    if node._out_meta is None:
        node._out_meta = [None] * node._num_outputs
    node._out_meta[output_nr] = out._impl.meta
    # ops save their output before attaching it (n.save(x, out); set_history(out, n, 0)): keep
    # only its storage, else node -> saved out -> out._grad_fn -> node is a reference cycle
    # that only the cycle collector frees.
    cdef list saved = node._saved
    if saved is None:
        return
    for i in range(len(saved)):
        if saved[i][0] is out:
            saved[i] = (None, saved[i][1], saved[i][2], output_nr + 1)


def _make_node(str name, backward, tuple inputs, int num_outputs=1):
    """make_node for Python callers (custom Functions)."""
    return make_node(name, backward, inputs, num_outputs)


def _set_history(Tensor out, Node node, int output_nr):
    set_history(out, node, output_nr)


# ------------------------------------------------------------------ gradient shapes

def sum_to_shape(Tensor g, shape):
    """Sums g over the broadcast dims so that it has ``shape`` (the reverse of broadcasting).
    Through the Tensor's ``sum``/``reshape`` methods: recorded, so create_graph sees it."""
    gshape = g._impl.shape
    shape = tuple(shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"sum_to_shape: {list(gshape)} is not expandable to {list(shape)}")
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
        elif s != gshape[lead + i]:
            raise RuntimeError(f"sum_to_shape: {list(gshape)} is not expandable to {list(shape)}")
    out = g.sum(dims, keepdim=True) if dims else g
    if lead:
        out = out.reshape(shape)
    return out
