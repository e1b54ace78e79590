# cython: language_level=3
"""The autograd graph and backward engine.

An op that takes inputs requiring grad records one ``Node``: the backward formula, the
``next_functions`` edges to its inputs' nodes, and the tensors the formula needs (saved with
their version counters). ``backward()`` counts dependencies from the roots and runs each node
once, in dependency order (highest sequence number first among the ready ones, as PyTorch),
then frees what the nodes saved unless ``retain_graph=True``.
"""
import heapq
import weakref

from tinytorch import _C

from tinytorch._tensor cimport TensorBase as Tensor, wrap, requires_grad

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


def is_grad_enabled():
    """Returns True if grad mode is currently enabled (per thread)."""
    return tt_grad_enabled != 0


def _set_grad_enabled(bint mode):
    global tt_grad_enabled
    tt_grad_enabled = mode


def is_inference_mode_enabled():
    return tt_inference_mode != 0


def _set_inference_mode(bint mode):
    global tt_inference_mode
    tt_inference_mode = mode


# ------------------------------------------------------------------ nodes

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
        cdef Tensor t
        for obj in tensors:
            if obj is None:
                self._saved.append((None, None, 0, False))
                continue
            t = <Tensor>obj
            if t._grad_fn is self:
                # An output of this node: keep only its storage, not the Python tensor, so the
                # graph does not reference itself (no cycle, freed by refcounting alone).
                # (Outputs saved before set_history are converted there.) is_output = output_nr + 1.
                self._saved.append((None, t._impl, t._impl.version, t._output_nr + 1))
            else:
                self._saved.append((t, t._impl, t._impl.version, False))

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after "
                "they have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward.")
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

    def _release(self):
        self._saved = []
        self._freed = True

    def register_hook(self, hook):
        """hook(grad_inputs, grad_outputs) after this node ran (not supported: use tensor hooks)."""
        raise NotImplementedError("Node.register_hook: use Tensor.register_hook instead")

    def _add_output_hook(self, int output_nr, hook):
        if self._output_hooks is None:
            self._output_hooks = {}
        self._output_hooks.setdefault(output_nr, []).append(hook)
        return _RemovableHandle(self._output_hooks[output_nr], hook)

    def apply(self, *grads):
        return self._backward(self, *grads)


class _RemovableHandle:
    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


cdef class AccumulateGrad(Node):
    """Terminal node of a leaf tensor: adds incoming gradients into ``leaf.grad``."""
    cdef public Tensor variable


cdef Node _new_node(type cls, str name, object backward, int num_inputs, int num_outputs):
    global _next_seq
    # Node.__new__(Node) compiles to a direct tp_new call; the generic form is a Python call
    cdef Node n = Node.__new__(Node) if cls is Node else cls.__new__(cls)
    n._name = name
    n._backward = backward
    n._saved = []
    n._freed = False
    n._seq = _next_seq
    _next_seq += 1
    n._num_outputs = num_outputs
    n._output_hooks = None
    return n


cdef Node grad_accumulator(Tensor leaf):
    cdef AccumulateGrad acc = None
    if leaf._grad_acc is not None:
        acc = leaf._grad_acc()
    if acc is None:
        acc = <AccumulateGrad>_new_node(AccumulateGrad, "AccumulateGrad", None, 0, 1)
        acc.variable = leaf
        acc.next_functions = ()
        acc._input_meta = ()
        acc.needs_input_grad = ()
        leaf._grad_acc = weakref.ref(acc)
    return acc


cdef tuple edge_of(Tensor t):
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


cdef Node make_node(str name, object backward, tuple inputs, int num_outputs=1):
    """A new Node if grad mode is on and any input requires grad, else None."""
    if not tt_grad_enabled:
        return None
    cdef bint any_grad = False
    cdef Tensor t
    for x in inputs:
        if x is not None and requires_grad(<Tensor>x):
            any_grad = True
            break
    if not any_grad:
        return None
    cdef Node n = _new_node(Node, name, backward, len(inputs), num_outputs)
    edges, meta, needs = [], [], []
    for x in inputs:
        if x is None:
            edges.append((None, 0)); meta.append(None); needs.append(False)
            continue
        t = <Tensor>x
        if requires_grad(t):
            edges.append(edge_of(t))
            needs.append(True)
            meta.append(t._impl.meta)   # only inputs that receive a gradient are checked
        else:
            edges.append((None, 0))
            needs.append(False)
            meta.append(None)
    n.next_functions = tuple(edges)
    n._input_meta = tuple(meta)
    n.needs_input_grad = tuple(needs)
    return n


cdef void set_history(Tensor out, Node node, int output_nr):
    out._grad_fn = node
    out._output_nr = output_nr
    # ops save their output before attaching it (n.save(x, out); set_history(out, n, 0)): keep
    # only its storage, else node -> saved out -> out._grad_fn -> node is a reference cycle
    # that only the cycle collector frees.
    cdef list saved = node._saved
    for i in range(len(saved)):
        if saved[i][0] is out:
            saved[i] = (None, saved[i][1], saved[i][2], output_nr + 1)


def _make_node(str name, backward, tuple inputs, int num_outputs=1):
    """make_node for Python callers (custom Functions)."""
    return make_node(name, backward, inputs, num_outputs)


def _set_history(Tensor out, Node node, int output_nr):
    set_history(out, node, output_nr)


# ------------------------------------------------------------------ engine

cdef object _checked_grad(Node node, int i, object g):
    """PyTorch's validate_outputs: reduce broadcast grads to the input's shape, cast dtype."""
    meta = node._input_meta[i]
    cdef Tensor gt = <Tensor>g
    gmeta = gt._impl.meta
    if gmeta == meta:
        return gt
    shape, code = meta
    gshape = gmeta[0]
    if gshape != shape:
        from tinytorch._ops.shape import sum_to_shape
        try:
            gt = sum_to_shape(gt, shape)
        except (RuntimeError, ValueError):
            raise RuntimeError(f"Function {node._name} returned an invalid gradient at index {i} - got "
                               f"{list(gshape)} but expected shape compatible with {list(shape)}") from None
    if gt._impl.dtype_code != code:
        gt = gt.to(dtype=code)
    return gt


cdef _run_hooks(list hooks, object grad, str where):
    cdef Tensor g
    for hook in hooks:
        r = hook(grad)
        if r is not None:
            g = <Tensor>r
            if g._impl.shape != (<Tensor>grad)._impl.shape:
                raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' has changed the size of value: "
                                   f"expected {list((<Tensor>grad)._impl.shape)} but got {list(g._impl.shape)} ({where})")
            grad = r
    return grad


cdef _accumulate(AccumulateGrad acc, object g, bint create_graph):
    cdef Tensor leaf = acc.variable
    if leaf._hooks:
        g = _run_hooks(leaf._hooks, g, "leaf")
    cdef Tensor gt = <Tensor>g
    if leaf._grad is None:
        # a fresh tensor: the incoming gradient may be shared (e.g. both inputs of an add)
        leaf._grad = gt if create_graph else wrap(gt._impl.clone())
    elif create_graph:
        leaf._grad = leaf._grad + gt
    else:
        _C.add_((<Tensor>leaf._grad)._impl, gt._impl)   # in place, no graph
    if leaf._post_accumulate_hooks is not None:
        for hook in leaf._post_accumulate_hooks:
            hook(leaf)


def run_backward(tuple roots, tuple root_grads, bint keep_graph, bint create_graph,
                 tuple inputs=None, bint accumulate=True, bint allow_unused=False):
    """Runs the graph from ``roots``. With ``accumulate`` grads go into leaves' ``.grad``;
    otherwise (autograd.grad) the gradients w.r.t. ``inputs`` are returned."""
    cdef Tensor t
    cdef Node node, nxt
    # 1. roots -> (node, output_nr, grad)
    start = []
    for t, g in zip(roots, root_grads):
        if not requires_grad(t):
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        fn, nr = edge_of(t)
        start.append((fn, nr, g))
    # 2. what we capture (autograd.grad / backward(inputs=...))
    targets = None
    if inputs is not None:
        targets = {}
        for i, x in enumerate(inputs):
            t = <Tensor>x
            if not requires_grad(t):
                raise RuntimeError(f"One of the differentiated Tensors does not require grad")
            fn, nr = edge_of(t)
            targets.setdefault((id(fn), nr), []).append(i)
    # 3. dependency counts over the reachable graph
    deps = {}
    nodes = {}
    stack = [fn for fn, _, _ in start]
    for fn in stack:
        nodes[id(fn)] = fn
    while stack:
        node = stack.pop()
        for nxt_obj, _ in node.next_functions:
            if nxt_obj is None:
                continue
            k = id(nxt_obj)
            deps[k] = deps.get(k, 0) + 1
            if k not in nodes:
                nodes[k] = nxt_obj
                stack.append(nxt_obj)
    # With targets, only nodes on a path to a target need to run.
    needed = None
    if targets is not None:
        target_nodes = {k[0] for k in targets}
        needed = set()
        order = []
        seen = set()
        stack = [(fn, False) for fn, _, _ in start]
        while stack:
            node, done = stack.pop()
            k = id(node)
            if done:
                if k in target_nodes or any(nx is not None and id(nx) in needed for nx, _ in node.next_functions):
                    needed.add(k)
                continue
            if k in seen:
                continue
            seen.add(k)
            stack.append((node, True))
            for nx, _ in node.next_functions:
                if nx is not None and id(nx) not in seen:
                    stack.append((nx, False))
    results = [None] * (len(inputs) if inputs is not None else 0)
    # 4. buffers and the ready queue (max sequence number first)
    buffers = {}
    for fn, nr, g in start:
        buf = buffers.setdefault(id(fn), [None] * (<Node>fn)._num_outputs)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    ready = []
    queued = set()
    for fn, _, _ in start:
        if deps.get(id(fn), 0) == 0 and id(fn) not in queued:
            heapq.heappush(ready, (-(<Node>fn)._seq, id(fn)))
            queued.add(id(fn))
    prev = tt_grad_enabled
    _set_grad_enabled(create_graph)
    try:
        while ready:
            _, k = heapq.heappop(ready)
            node = nodes[k]
            grads = buffers.pop(k, None)
            if grads is None:
                grads = [None] * node._num_outputs
            if node._output_hooks:
                for nr, hooks in node._output_hooks.items():
                    if grads[nr] is not None:
                        grads[nr] = _run_hooks(hooks, grads[nr], node._name)
            if targets is not None:
                for nr in range(node._num_outputs):
                    for i in targets.get((k, nr), ()):
                        results[i] = grads[nr]
            run = any(g is not None for g in grads) and (needed is None or k in needed)
            if isinstance(node, AccumulateGrad):
                if run and accumulate and (targets is None or (k, 0) in targets):
                    _accumulate(<AccumulateGrad>node, grads[0], create_graph)
                continue
            in_grads = None
            if run:
                if node._freed:
                    node.saved_tensors  # raises the "backward through the graph a second time" error
                in_grads = node._backward(node, *grads)
                if not isinstance(in_grads, tuple):
                    in_grads = (in_grads,)
                if len(in_grads) != len(node.next_functions):
                    raise RuntimeError(f"function {node._name} returned an incorrect number of gradients "
                                       f"(expected {len(node.next_functions)}, got {len(in_grads)})")
                if not keep_graph:
                    node._release()
            for i, (nxt_obj, nr) in enumerate(node.next_functions):
                if nxt_obj is None:
                    continue
                nk = id(nxt_obj)
                g = in_grads[i] if in_grads is not None else None
                if g is not None:
                    g = _checked_grad(node, i, g)
                    buf = buffers.get(nk)
                    if buf is None:
                        buf = buffers[nk] = [None] * (<Node>nxt_obj)._num_outputs
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                deps[nk] -= 1
                if deps[nk] == 0:
                    heapq.heappush(ready, (-(<Node>nxt_obj)._seq, nk))
    finally:
        _set_grad_enabled(prev)
    if inputs is not None and accumulate:
        # backward(inputs=[...]) with a non-leaf: its .grad is populated too (as PyTorch)
        for x, r in zip(inputs, results):
            t = <Tensor>x
            if t._grad_fn is not None and not t._retains_grad and r is not None:   # (retain_grad hook did it)
                if t._grad is None:
                    t._grad = r if create_graph else r.detach().clone()
                else:
                    t._grad = t._grad + r if create_graph else t._grad.detach() + r
    if inputs is not None:
        for i, r in enumerate(results):
            if r is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
    return tuple(results)
