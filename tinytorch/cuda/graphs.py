"""CUDA graphs, as ``torch.cuda.graphs``: :class:`CUDAGraph`, the :class:`graph` context manager,
:func:`graph_pool_handle` and :func:`make_graphed_callables`.

A capture records the kernels launched on a side stream into one graph that ``replay()`` launches
at once, without the host's per-kernel work. The graph reads and writes fixed addresses: the
tensors allocated during the capture come from the graph's private memory pool and keep their
memory while the graph lives, so new inputs are copied into the captured (static) inputs and
results read from the captured outputs. See docs/cuda_graphs.md for what cannot be captured."""
from __future__ import annotations

import gc
from typing import Callable

from tinytorch._core.cuda_loader import cuda_backend as _backend
from tinytorch.autograd import grad as _autograd_grad
from tinytorch.autograd.function import Function
from tinytorch.cuda._device import _require, current_device, is_available, synchronize
from tinytorch.cuda.memory import empty_cache
from tinytorch.cuda.streams import Stream, current_stream, stream as _use_stream
from tinytorch._tensor.tensor import Tensor

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables", "is_current_stream_capturing"]

_ERROR_MODES = ("global", "thread_local", "relaxed")


def is_current_stream_capturing() -> bool:
    """True when the current CUDA stream is being captured into a graph (False without CUDA)."""
    if not is_available():
        return False
    return bool(_backend().is_current_stream_capturing(current_device()))


def graph_pool_handle():
    """An opaque handle to a new graph memory pool, to share between captures
    (``graph(g, pool=handle)``): graphs sharing a pool must be replayed in the order they were
    captured, as in PyTorch."""
    return _require("graph_pool_handle").GraphPoolHandle()


class CUDAGraph:
    """A CUDA graph (``torch.cuda.CUDAGraph``). Capture with :class:`graph` (or
    ``capture_begin``/``capture_end`` on a side stream), then ``replay()``."""

    def __init__(self, keep_graph: bool = False) -> None:
        self._impl = _require("CUDAGraph").CUDAGraph()

    def capture_begin(self, pool=None, capture_error_mode: str = "global") -> None:
        """Begins capturing the current stream's work (not the default stream). ``pool``: a handle
        from :func:`graph_pool_handle` or another graph's :meth:`pool` to share its memory."""
        if capture_error_mode not in _ERROR_MODES:
            raise ValueError(f"capture_error_mode must be one of {_ERROR_MODES}, got {capture_error_mode!r}")
        self._impl.capture_begin(0 if pool is None else pool.id, capture_error_mode)

    def capture_end(self) -> None:
        """Ends the capture and instantiates the graph; raises if an operation not allowed
        during capture invalidated it."""
        self._impl.capture_end()

    def replay(self) -> None:
        """Launches the captured work on the current stream."""
        self._impl.replay()

    def reset(self) -> None:
        """Frees the graph and releases its memory pool (``empty_cache()`` returns it to the GPU)."""
        self._impl.reset()

    def pool(self):
        """A handle to this graph's memory pool, for other captures to share."""
        return self._impl.pool()

    def enable_debug_mode(self) -> None:
        raise NotImplementedError("CUDAGraph.enable_debug_mode: graph dumps are not supported by tinytorch")

    def debug_dump(self, debug_path: str) -> None:
        raise NotImplementedError("CUDAGraph.debug_dump: graph dumps are not supported by tinytorch")


class graph:
    """Context manager capturing the work inside it into ``cuda_graph`` (``torch.cuda.graph``).

    The capture runs on ``stream`` (default: a side stream shared by all captures of the device);
    the device is synchronized and the cache emptied first, as PyTorch does. Run the region a few
    times on a side stream before capturing it (warm-up: lazy initialization, cuBLAS/cuDNN
    plans), and keep references to the tensors it reads and the outputs it makes.

    Args:
        cuda_graph: the :class:`CUDAGraph` to capture into.
        pool: a memory pool handle to share (:func:`graph_pool_handle`, ``other_graph.pool()``).
        stream: the stream to capture on.
        capture_error_mode: ``"global"`` (default: unsafe CUDA calls from any thread fail the
            capture), ``"thread_local"`` or ``"relaxed"``.
    """

    _default_capture_streams: dict = {}

    def __init__(self, cuda_graph: CUDAGraph, pool=None, stream=None, capture_error_mode: str = "global") -> None:
        if not isinstance(cuda_graph, CUDAGraph):
            raise TypeError(f"graph: expected a tinytorch.cuda.CUDAGraph, got {type(cuda_graph).__name__}")
        dev = current_device()
        if stream is None:
            stream = graph._default_capture_streams.get(dev)
            if stream is None:
                stream = graph._default_capture_streams[dev] = Stream(dev)
        self.cuda_graph, self.pool, self.capture_stream = cuda_graph, pool, stream
        self.capture_error_mode = capture_error_mode
        self._stream_ctx = _use_stream(stream)

    def __enter__(self) -> None:
        synchronize()
        gc.collect()
        empty_cache()
        self._stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:  # the exception says what went wrong: discard the capture, keep the stream usable
                self.cuda_graph._impl.abort_capture()
        finally:
            self._stream_ctx.__exit__(exc_type, exc, tb)
        return False


# ---------------------------------------------------------------------------- make_graphed_callables

def _flatten(x) -> list:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _flatten(item)]
    raise TypeError(f"make_graphed_callables: outputs must be Tensors or (nested) tuples/lists of Tensors, got "
                    f"{type(x).__name__}")


def _unflatten(flat: list, like):
    if isinstance(like, Tensor):
        return flat.pop(0)
    return type(like)(_unflatten(flat, item) for item in like)


def _graph_one(func: Callable, args: tuple, params: tuple, pool, warmup: int):
    """Captures func's forward and its backward (gradients of args and params requiring grad)
    into two graphs sharing ``pool``; returns the autograd Function that replays them."""
    inputs = args + params
    needs = [isinstance(t, Tensor) and t.requires_grad for t in inputs]
    diff_inputs = [t for t, n in zip(inputs, needs) if n]
    side = Stream()
    side.wait_stream(current_stream())
    with _use_stream(side):          # warm-up: lazy initialization stays out of the capture
        for _ in range(warmup):
            outs = [o for o in _flatten(func(*args)) if o.requires_grad]
            if outs and diff_inputs:
                _autograd_grad(outs, diff_inputs, grad_outputs=[o.detach() * 0 + 1 for o in outs],
                               allow_unused=True)
            del outs
    current_stream().wait_stream(side)
    fwd, bwd = CUDAGraph(), CUDAGraph()
    with graph(fwd, pool=pool):
        out_struct = func(*args)
    static_outputs = _flatten(out_struct)
    diff_outputs = [o for o in static_outputs if o.requires_grad]
    static_grad_outputs = [o.detach().new_zeros(o.shape) for o in diff_outputs]
    with graph(bwd, pool=fwd.pool()):
        grads = _autograd_grad(diff_outputs, diff_inputs, grad_outputs=static_grad_outputs,
                               allow_unused=True) if diff_outputs and diff_inputs else ()
    static_grad_inputs, it = [], iter(grads)
    for n in needs:
        static_grad_inputs.append(next(it) if n else None)
    static_inputs = [t if isinstance(t, Tensor) else None for t in args]
    n_args = len(args)

    class Graphed(Function):
        @staticmethod
        def forward(ctx, *new_inputs):
            for static, new in zip(static_inputs, new_inputs[:n_args]):
                if static is not None and new is not None and new.data_ptr() != static.data_ptr():
                    static.copy_(new)
            fwd.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        def backward(ctx, *grad_outs):
            diff = [g for g, o in zip(grad_outs, static_outputs) if o.requires_grad]
            for static, g in zip(static_grad_outputs, diff):
                if g is None:
                    static.zero_()
                elif g.data_ptr() != static.data_ptr():
                    static.copy_(g)
            bwd.replay()
            # copies: the next replay rewrites the static gradients, which .grad must not alias
            return tuple(g.clone() if g is not None else None for g in static_grad_inputs)

    def run(*user_args):
        if len(user_args) != n_args:
            raise TypeError(f"graphed callable: expected {n_args} positional arguments (as sample_args), "
                            f"got {len(user_args)}")
        flat = Graphed.apply(*user_args, *params)
        flat = list(flat) if isinstance(flat, tuple) else [flat]
        return _unflatten(flat, out_struct)

    run._graphs = (fwd, bwd)   # keep the graphs (and their pool) alive with the callable
    return run


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool=None):
    """Graphed versions of ``callables`` (functions or ``nn.Module``\\ s, or a tuple of them), as
    ``torch.cuda.make_graphed_callables``: each one's forward and backward are captured into CUDA
    graphs (all sharing one memory pool) from ``sample_args`` (a tuple of Tensors per callable),
    and calling the result replays them, with autograd flowing through as before.

    Arguments must keep the samples' shapes, dtypes and ``requires_grad``; a module's graphed
    forward runs only in the training mode it was captured in (the other mode runs eagerly).
    Callables sharing a pool must run in the order given, their backwards in reverse order."""
    from tinytorch.nn.modules.module import Module
    _require("make_graphed_callables")
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise ValueError(f"make_graphed_callables: {len(callables)} callables but {len(sample_args)} sample_args")
    pool = pool if pool is not None else graph_pool_handle()
    results = []
    for func, args in zip(callables, sample_args):
        if not isinstance(args, tuple):
            raise TypeError("make_graphed_callables: sample_args must be a tuple of Tensors per callable")
        for a in args:
            if not isinstance(a, Tensor) or not a.is_cuda:
                raise TypeError("make_graphed_callables: every sample argument must be a CUDA Tensor")
        params: tuple = ()
        if isinstance(func, Module):
            if any(getattr(func, h, None) for h in ("_backward_hooks", "_forward_hooks", "_forward_pre_hooks")):
                raise RuntimeError("make_graphed_callables: modules must not have hooks registered at the time "
                                   "they are passed (hooks don't run inside a graph)")
            params = tuple(p for p in func.parameters() if p.requires_grad)
        fn = func.forward if isinstance(func, Module) else func
        run = _graph_one(fn, args, params, pool, num_warmup_iters)
        if isinstance(func, Module):
            eager, training = func.forward, func.training

            def forward(*a, _run=run, _eager=eager, _mod=func, _training=training, **kw):
                if _mod.training == _training and not kw:
                    return _run(*a)
                return _eager(*a, **kw)

            func.forward = forward
            results.append(func)
        else:
            results.append(run)
    return results[0] if just_one else tuple(results)
