# cython: language_level=3
"""The backward engine: runs the graph that graph.pyx records.

``backward()`` counts dependencies from the roots and runs each node once, in dependency order
(highest sequence number first among the ready ones, as PyTorch), then frees what the nodes saved
unless ``retain_graph=True``. ``grad()`` captures the gradients at the requested inputs instead,
running only the nodes on paths to them. Grad mode during a run is ``create_graph``, set through
the thread-local flag graph.pyx owns (``set_grad_enabled_c``).
"""
import threading

import numpy as np

from tinytorch import _C
from tinytorch._core.graph import sum_to_shape
from tinytorch._core.dtype import BOOL, DTYPES

from cpython.ref cimport Py_REFCNT

from tinytorch._core.graph cimport AccumulateGrad, Node, edge_of, set_grad_enabled_c
from tinytorch._core.tensor_base cimport TensorBase as Tensor, requires_grad, wrap


# ------------------------------------------------------------------ gradient checks, hooks, leaves

cdef object _meta_of(Node fn, int output_nr):
    """The (shape, dtype_code) a gradient for output ``output_nr`` of ``fn`` must have."""
    if isinstance(fn, AccumulateGrad):
        return (<AccumulateGrad>fn).variable._impl.meta   # the leaf as it is now
    return fn._out_meta[output_nr] if fn._out_meta is not None else None


cdef object _checked_grad(Node node, int i, object g, object meta):
    """PyTorch's validate_outputs: reduce broadcast grads to the input's shape, cast dtype."""
    cdef Tensor gt = <Tensor>g
    if meta is None:
        return gt
    gmeta = gt._impl.meta
    if gmeta == meta:
        return gt
    shape, code = meta
    gshape = gmeta[0]
    if gshape != shape:
        try:
            gt = sum_to_shape(gt, shape)
        except (RuntimeError, ValueError):
            raise RuntimeError(f"Function {node._name} returned an invalid gradient at index {i} - got "
                               f"{list(gshape)} but expected shape compatible with {list(shape)}") from None
    if gt._impl.dtype_code != code:
        gt = gt.to(dtype=code)
    return gt


cdef _run_hooks(list hooks, object grad, str where):
    """Tensor hooks in order; one may return a replacement of the same shape, dtype and device
    (PyTorch's check_single_result: a non-Tensor is a TypeError, a change a RuntimeError)."""
    cdef Tensor g, old
    for hook in hooks:
        r = hook(grad)
        if r is None:
            continue
        if not isinstance(r, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{_qualname(r)}'")
        g, old = <Tensor>r, <Tensor>grad
        name = getattr(hook, '__name__', hook)
        if g._impl.dtype_code != old._impl.dtype_code or g._impl.device_str != old._impl.device_str:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {DTYPES[old._impl.dtype_code].name} "
                               f"on {old._impl.device_str} got {DTYPES[g._impl.dtype_code].name} on {g._impl.device_str}) ({where})")
        if g._impl.shape != old._impl.shape:
            raise RuntimeError(f"hook '{name}' has changed the size of value: "
                               f"expected {list(old._impl.shape)} but got {list(g._impl.shape)} ({where})")
        grad = r
    return grad


cdef str _qualname(object r):
    cls = type(r)
    mod = cls.__module__
    return cls.__qualname__ if mod == "builtins" else f"{mod}.{cls.__qualname__}"


cdef bint _stealable(Tensor leaf, Tensor gt):
    """Whether gt can become leaf.grad as it is, as PyTorch's AccumulateGrad steals a gradient:
    nothing else holds it (no Python name, no other pending gradient: e.g. an add passes one
    gradient to both inputs), nothing shares its storage (no view, no saved tensor), and it has
    the leaf's strides and owns its whole storage."""
    impl = gt._impl
    # the references the engine itself holds here: the caller's `grad`, _accumulate's `gt` and
    # the call's argument; the TensorImpl: gt._impl and `impl`
    if Py_REFCNT(gt) > 3 or Py_REFCNT(impl) > 2 or impl.storage_use_count != 1:
        return False
    return (impl.storage_offset == 0 and impl.storage_nbytes == impl.numel * impl.itemsize
            and impl.stride() == leaf._impl.stride())


cdef _accumulate(AccumulateGrad acc, object g, bint create_graph):
    """Adds g (already through the leaf's tensor hooks) into leaf.grad."""
    cdef Tensor leaf = acc.variable
    cdef Tensor gt = <Tensor>g
    if leaf._grad is None:
        # a fresh tensor: the incoming gradient itself where nothing else holds it, else a copy
        leaf._grad = gt if create_graph or _stealable(leaf, gt) else wrap(gt._impl.clone())
    elif create_graph:
        leaf._grad = leaf._grad + gt
    else:
        _C.add_((<Tensor>leaf._grad)._impl, gt._impl)   # in place, no graph
    if leaf._post_accumulate_hooks is not None:
        for hook in leaf._post_accumulate_hooks:
            hook(leaf)


cdef class _Pending:
    """A reachable node's state during one backward run."""
    cdef Node node
    cdef long long seq        # node._seq: the ready queue's priority
    cdef int deps             # incoming edges not yet processed
    cdef list grads           # gradient per output, summed; None until one arrives

    cdef void add_grad(self, Py_ssize_t output_nr, object g):
        if self.grads is None:
            self.grads = [None] * self.node._num_outputs
        old = self.grads[output_nr]
        self.grads[output_nr] = g if old is None else old + g


cdef _Pending _pending(Node node):
    cdef _Pending p = _Pending.__new__(_Pending)
    p.node = node
    p.seq = node._seq
    return p


# The ready queue: a binary max-heap on the sequence number kept in a list (C comparisons).

cdef void _push_ready(list heap, _Pending p):
    heap.append(p)
    cdef Py_ssize_t i = len(heap) - 1, parent
    while i > 0:
        parent = (i - 1) >> 1
        if (<_Pending>heap[parent]).seq >= p.seq:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = p


cdef _Pending _pop_ready(list heap):
    cdef _Pending top = <_Pending>heap[0]
    cdef _Pending last = <_Pending>heap.pop()
    cdef Py_ssize_t n = len(heap), i = 0, child
    if n == 0:
        return top
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and (<_Pending>heap[child + 1]).seq > (<_Pending>heap[child]).seq:
            child += 1
        if (<_Pending>heap[child]).seq <= last.seq:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


cdef set _needed_nodes(list start, dict targets):
    """With targets (autograd.grad), only nodes on a path to a target need to run."""
    target_nodes = {k[0] for k in targets}
    cdef set needed = set(), seen = set()
    cdef Node node
    stack = [(fn, False) for fn, _, _ in start]
    while stack:
        node_obj, done = stack.pop()
        node = <Node>node_obj
        if done:
            if node in target_nodes or any(nx is not None and nx in needed for nx, _ in node.next_functions):
                needed.add(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for nx, _ in node.next_functions:
            if nx is not None and nx not in seen:
                stack.append((nx, False))
    return needed


cdef tuple _run_node_hooks(Node node, list hooks, tuple args, int n, str kind):
    """Runs Node hooks in order; each may return a replacement for the gradients it was given
    (grad_outputs for a pre-hook, grad_inputs for a hook), of the same length."""
    cdef tuple grads = args[0]
    for hook in list(hooks):
        r = hook(grads, *args[1:])
        if r is None:
            continue
        if not isinstance(r, (tuple, list)) or len(r) != n:
            raise RuntimeError(f"{node._name} {kind} returned {type(r).__name__} of length "
                               f"{len(r) if isinstance(r, (tuple, list)) else '-'}; expected a tuple of {n} gradients")
        grads = tuple(r)
    return grads


cdef tuple _run_backward(tuple roots, tuple root_grads, bint keep_graph, bint create_graph,
                         tuple inputs, bint accumulate, bint allow_unused):
    cdef Tensor t
    cdef Node node
    cdef Py_ssize_t i, nr
    # 1. roots -> (node, output_nr, grad)
    cdef list start = []
    for i in range(len(roots)):
        t = roots[i]
        if not requires_grad(t):
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        fn, nr_obj = edge_of(t)
        start.append((fn, nr_obj, root_grads[i]))
    # 2. what we capture (autograd.grad / backward(inputs=...)): (node, output_nr) -> [input index]
    cdef dict targets = None
    if inputs is not None:
        targets = {}
        for i in range(len(inputs)):
            t = inputs[i]
            if not requires_grad(t):
                raise RuntimeError(f"One of the differentiated Tensors does not require grad")
            targets.setdefault(edge_of(t), []).append(i)
    # 3. dependency counts (incoming edges) over the reachable graph; Nodes hash by identity
    cdef dict pending = {}      # Node -> _Pending
    cdef _Pending p, q
    cdef list stack = []
    for fn, _, _ in start:
        if fn not in pending:
            pending[fn] = p = _pending(<Node>fn)
            stack.append(p)
    while stack:
        p = <_Pending>stack.pop()
        for nxt_obj, _ in p.node.next_functions:
            if nxt_obj is None:
                continue
            q = pending.get(nxt_obj)
            if q is None:
                pending[nxt_obj] = q = _pending(<Node>nxt_obj)
                stack.append(q)
            q.deps += 1
    cdef set needed = _needed_nodes(start, targets) if targets is not None else None
    results = [None] * (len(inputs) if inputs is not None else 0)
    # 4. the roots' gradients and the ready queue
    cdef list ready = []
    for fn, nr_obj, g in start:
        (<_Pending>pending[fn]).add_grad(nr_obj, g)
    for fn, _, _ in start:
        p = pending[fn]
        if p.deps == 0 and p not in ready:
            _push_ready(ready, p)
    cdef bint run
    cdef tuple edges
    cdef list buf
    cdef int prev = set_grad_enabled_c(create_graph)
    runs = _runs_of_this_thread()
    runs.append(accumulate and inputs is None)
    try:
        while ready:
            p = _pop_ready(ready)
            node = p.node
            buf = p.grads if p.grads is not None else [None] * node._num_outputs
            p.grads = None
            if node._output_hooks:
                for nr_obj, hooks in node._output_hooks.items():
                    if buf[nr_obj] is not None:
                        buf[nr_obj] = _run_hooks(hooks, buf[nr_obj], node._name)
            if (isinstance(node, AccumulateGrad) and buf[0] is not None and (<AccumulateGrad>node).variable._hooks
                    and (needed is None or node in needed)):
                # a leaf's tensor hooks run before its gradient is captured or accumulated, as PyTorch's
                buf[0] = _run_hooks((<AccumulateGrad>node).variable._hooks, buf[0], "leaf")
            if targets is not None:
                for nr in range(node._num_outputs):
                    for i in targets.get((node, nr), ()):
                        results[i] = buf[nr]
            run = needed is None or node in needed
            if run:
                run = False
                for g in buf:
                    if g is not None:
                        run = True
                        break
            if run and node._pre_hooks:
                buf = list(_run_node_hooks(node, node._pre_hooks, (tuple(buf),), len(buf), "pre-hook"))
            if isinstance(node, AccumulateGrad):
                if run and accumulate and (targets is None or (node, 0) in targets):
                    grad = buf[0]
                    buf = g = None  # the engine's other references: _stealable counts who else holds it
                    _accumulate(<AccumulateGrad>node, grad, create_graph)
                    grad = None
                continue
            in_grads = None
            edges = node.next_functions
            if run:
                if node._freed:
                    node.saved_tensors  # raises the "backward through the graph a second time" error
                in_grads = node._backward(node, buf[0]) if len(buf) == 1 else node._backward(node, *buf)
                if not isinstance(in_grads, tuple):
                    in_grads = (in_grads,)
                if len(<tuple>in_grads) != len(edges):
                    raise RuntimeError(f"function {node._name} returned an incorrect number of gradients "
                                       f"(expected {len(edges)}, got {len(<tuple>in_grads)})")
                if node._post_hooks:
                    in_grads = _run_node_hooks(node, node._post_hooks, (in_grads, tuple(buf)), len(edges), "hook")
                if not keep_graph and node._saved:
                    # freed: running it again raises; a node that saved nothing (add, sum, views)
                    # can run again, as PyTorch's
                    node._saved = None
                    node._freed = True
            for i in range(len(edges)):
                nxt_obj, nr_obj = <tuple>edges[i]
                if nxt_obj is None:
                    continue
                q = pending[nxt_obj]
                g = (<tuple>in_grads)[i] if in_grads is not None else None
                if g is not None:
                    nr = nr_obj
                    q.add_grad(nr, _checked_grad(node, i, g, _meta_of(q.node, nr)))
                q.deps -= 1
                if q.deps == 0:
                    _push_ready(ready, q)
    finally:
        set_grad_enabled_c(prev)
        runs.pop()
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


_engine_state = threading.local()   # .runs: per engine run in progress on this thread (nested ones too),
                                    # whether it accumulates into every leaf


cdef list _runs_of_this_thread():
    runs = getattr(_engine_state, "runs", None)
    if runs is None:
        runs = _engine_state.runs = []
    return runs


def _accumulating_into_all_leaves():
    """True inside a backward() without ``inputs`` (what a reentrant checkpoint needs: its inner
    backward accumulates into leaves, which autograd.grad would not see)."""
    runs = _runs_of_this_thread()
    return bool(runs) and runs[-1]


def run_backward(tuple roots, tuple root_grads, bint keep_graph, bint create_graph,
                 tuple inputs=None, bint accumulate=True, bint allow_unused=False):
    """Runs the graph from ``roots``. With ``accumulate`` grads go into leaves' ``.grad``;
    otherwise (autograd.grad) the gradients w.r.t. ``inputs`` are returned."""
    return _run_backward(roots, root_grads, keep_graph, create_graph, inputs, accumulate, allow_unused)


# ------------------------------------------------------------------ entry points

cdef tuple _as_tuple(object x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


cdef Tensor _implicit_grad(Tensor t):
    impl = t._impl
    shape, code = impl.meta     # (one call into _C for what numel/dtype/shape would take three)
    for size in shape:
        if size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if not DTYPES[code].is_floating_point:
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {t.dtype}")
    return wrap(_C.full(shape, 1.0, code, impl.device))


cdef Tensor _as_grad(object data, Tensor like):
    """A gradient given as data (number, nested list, numpy array): a copy with like's dtype
    and device, as tinytorch.tensor(data, dtype=like.dtype, device=like.device)."""
    code = like._impl.dtype_code
    d = DTYPES[code]
    if isinstance(data, np.ndarray):
        arr = np.array(data, copy=True)
    else:
        arr = np.array(data, dtype=np.float64 if d.is_floating_point else (np.bool_ if code == BOOL else np.int64))
    if d.name == "bfloat16":
        impl = _C.from_numpy(np.array(arr, dtype=np.float32, order="C")).to_dtype(code)
    else:
        impl = _C.from_numpy(np.array(arr, dtype=d.to_numpy(), order="C"))
    if impl.device_str != like._impl.device_str:
        impl = impl.to_device(like._impl.device)
    return wrap(impl)


cdef tuple _root_grads(tuple tensors, tuple grad_tensors, bint create_graph):
    """The gradients backward starts from: given ones (checked, detached) or implicit ones."""
    cdef Tensor t
    cdef list grads = []
    for i in range(len(tensors)):
        t = tensors[i]
        g = grad_tensors[i] if grad_tensors is not None and i < len(grad_tensors) else None
        if g is None:
            g = _implicit_grad(t)
        else:
            if not isinstance(g, Tensor):
                g = _as_grad(g, t)
            if tuple(g.shape) != tuple(t.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                                   f"output[{i}] has a shape of {tuple(t.shape)}.")
            if not create_graph:
                g = g.detach()
        grads.append(g)
    return tuple(grads)


def backward(tensors, grad_tensors=None, retain_graph=None, bint create_graph=False, inputs=None):
    """autograd.backward: accumulates the gradients of ``tensors`` into the graph leaves."""
    roots = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    _run_backward(roots, _root_grads(roots, _as_tuple(grad_tensors), create_graph), bool(retain_graph),
                  create_graph, _as_tuple(inputs), True, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, bint create_graph=False, bint allow_unused=False):
    """autograd.grad: the gradients of ``outputs`` w.r.t. ``inputs``, returned (None if unused)."""
    roots = _as_tuple(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    return _run_backward(roots, _root_grads(roots, _as_tuple(grad_outputs), create_graph), bool(retain_graph),
                         create_graph, _as_tuple(inputs), False, allow_unused)
