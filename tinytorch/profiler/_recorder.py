"""What the profiler records, and how: ``record_function`` regions, and op calls through the op
hooks, into the traces (``Trace``) of the profilers recording now.

The op hooks are timing wrappers put on ``Tensor``'s op methods and operators (the op schema's
method table, plus the dtype/device conversions) while at least one profiler records, and taken
off (the original attributes restored) when the last one stops: without a recording profiler ops
run exactly the code they run unprofiled, at no cost. Ops called as package functions
(``tinytorch.matmul(a, b)``) or from inside ``nn.functional`` are not hooked; they are seen as
the time of the Tensor methods and ``record_function`` regions around them."""
from __future__ import annotations

import contextlib
import itertools
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from tinytorch._core.tensor_base import TensorBase
from tinytorch.profiler._events import EventList, FunctionEvent

_perf_ns = time.perf_counter_ns
_lock = threading.Lock()
_recording: List["Trace"] = []    # the traces being recorded now (profilers in their RECORD steps)
_ids = itertools.count(1)
_state = {"shapes": False, "device": False}   # what any recording trace asks for


class _Raw:
    """One finished region or op call, as recorded (perf_counter nanoseconds)."""
    __slots__ = ("name", "category", "thread", "start_ns", "end_ns", "shapes", "device_events")

    def __init__(self, name: str, category: str, start_ns: int, end_ns: int, shapes: Optional[list],
                 device_events: Optional[tuple]) -> None:
        self.name, self.category = name, category
        self.thread = threading.get_ident()
        self.start_ns, self.end_ns = start_ns, end_ns
        self.shapes, self.device_events = shapes, device_events


class Trace:
    """The events of one profiler between the start and the stop of its recording."""

    def __init__(self, *, record_shapes: bool, with_device: bool) -> None:
        self.record_shapes = record_shapes
        self.with_device = with_device
        self.raw: List[_Raw] = []
        self.start_ns = 0
        self.wall_start_ns = 0

    def start(self) -> None:
        self.start_ns, self.wall_start_ns = _perf_ns(), time.time_ns()
        with _lock:
            _recording.append(self)
            if len(_recording) == 1:
                _install_op_hooks()
            _refresh_state()

    def stop(self) -> EventList:
        """Stops recording; the events, nested per thread (``cpu_parent``/``cpu_children``)."""
        with _lock:
            if self in _recording:
                _recording.remove(self)
            if not _recording:
                _remove_op_hooks()
            _refresh_state()
        return self._events()

    def _events(self) -> EventList:
        raws = sorted((r for r in self.raw if r.start_ns >= self.start_ns), key=lambda r: (r.start_ns, -r.end_ns))
        if self.with_device and any(r.device_events for r in raws):
            _cuda().synchronize()
        events = []
        open_by_thread: Dict[int, List[FunctionEvent]] = {}
        for r in raws:
            device_us = 0.0
            if r.device_events is not None:
                device_us = r.device_events[0].elapsed_time(r.device_events[1]) * 1e3
            e = FunctionEvent(next(_ids), r.name, r.thread, (r.start_ns - self.start_ns) / 1e3,
                              (r.end_ns - self.start_ns) / 1e3, category=r.category,
                              input_shapes=r.shapes if self.record_shapes else None, device_time_us=device_us)
            stack = open_by_thread.setdefault(r.thread, [])
            while stack and e.time_range.end > stack[-1].time_range.end:   # sorted by start: contained = nested
                stack.pop()
            if stack:
                e.cpu_parent = stack[-1]
                stack[-1].cpu_children.append(e)
            stack.append(e)
            events.append(e)
        return EventList(events, with_device=self.with_device, trace_start_ns=self.wall_start_ns)


def _refresh_state() -> None:
    _state["shapes"] = any(t.record_shapes for t in _recording)
    _state["device"] = any(t.with_device for t in _recording)


def _emit(name: str, category: str, start_ns: int, end_ns: int, shapes: Optional[list],
          device_events: Optional[tuple]) -> None:
    raw = _Raw(name, category, start_ns, end_ns, shapes, device_events)
    for trace in tuple(_recording):
        trace.raw.append(raw)


def _cuda() -> Any:
    from tinytorch import cuda   # only when CUDA time is measured
    return cuda


def _device_event() -> Any:
    cuda = _cuda()
    event = cuda.Event(enable_timing=True)
    event.record()
    return event


def _shapes(args: tuple) -> list:
    return [list(a.shape) if isinstance(a, TensorBase) else [] for a in args]


class record_function(contextlib.ContextDecorator):
    """Context manager and decorator that labels a block of code (or every call of a function)
    with ``name`` in the profiler's results. Costs a check of one list when no profiler records.

    With CUDA activity recorded the device is synchronized at the end of the region, so its CPU
    time covers the GPU work it launched.

    Args:
        name (str): label of the region.
        args (str, optional): accepted for PyTorch compatibility (stored as ``self.args``)."""

    def __init__(self, name: str, args: Optional[str] = None) -> None:
        self.name = name
        self.args = args
        self._start: Optional[int] = None
        self._device_start: Any = None

    def __enter__(self) -> "record_function":
        if _recording:
            self._device_start = _device_event() if _state["device"] else None
            self._start = _perf_ns()
        return self

    def __exit__(self, *exc: Any) -> bool:
        if self._start is not None:
            device = None
            if self._device_start is not None:
                device = (self._device_start, _device_event())
                _cuda().synchronize()
            _emit(self.name, "user_annotation", self._start, _perf_ns(), None, device)
            self._start = self._device_start = None
        return False

    def _recreate_cm(self) -> "record_function":
        # as a decorator every call gets its own region (recursive and concurrent calls nest)
        return record_function(self.name, self.args)


# Tensor's operators under the names of the ops they run (PyTorch's aten:: names)
_OPERATOR_OPS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub",
    "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div",
    "__rtruediv__": "div", "__itruediv__": "div_", "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide",
    "__mod__": "remainder", "__rmod__": "remainder", "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow_",
    "__matmul__": "matmul", "__rmatmul__": "matmul", "__neg__": "neg", "__abs__": "abs", "__invert__": "bitwise_not",
    "__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor", "__eq__": "eq", "__ne__": "ne",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__getitem__": "index",
    "__setitem__": "index_put_",
}
# methods of the Tensor class itself that are ops (dtype/device conversions, all of them aten::to)
_CONVERSIONS = {"to": "to", "cpu": "to", "cuda": "to", "float": "to", "double": "to", "half": "to",
                "bfloat16": "to", "long": "to", "int": "to", "bool": "to", "byte": "to", "type_as": "type_as"}

_MISSING = object()
_saved: Dict[str, Any] = {}    # attribute name -> what Tensor.__dict__ held before the hooks


def _hooked(fn: Callable, label: str) -> Callable:
    def op(*args: Any, **kwargs: Any) -> Any:
        if not _recording:    # captured while hooked (a subclass created then): run plain
            return fn(*args, **kwargs)
        shapes = _shapes(args) if _state["shapes"] else None
        device_start = _device_event() if _state["device"] else None
        start = _perf_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            end = _perf_ns()
            _emit(label, "cpu_op", start, end, shapes,
                  (device_start, _device_event()) if device_start is not None else None)
    op.__name__ = getattr(fn, "__name__", label)
    op.__qualname__ = getattr(fn, "__qualname__", label)
    op.__doc__ = getattr(fn, "__doc__", None)
    op.__wrapped__ = fn
    return op


def _tensor_ops() -> Dict[str, str]:
    from tinytorch._generated.methods import METHODS
    ops = {name: "aten::" + _OPERATOR_OPS.get(name, name.strip("_") if name.startswith("__") else name)
           for name in METHODS}
    ops.update({name: "aten::" + op for name, op in _CONVERSIONS.items()})
    return ops


def _install_op_hooks() -> None:
    from tinytorch._tensor.tensor import Tensor
    for name, label in _tensor_ops().items():
        fn = getattr(Tensor, name, None)
        if fn is None or not callable(fn):
            continue
        _saved[name] = Tensor.__dict__.get(name, _MISSING)
        setattr(Tensor, name, _hooked(fn, label))


def _remove_op_hooks() -> None:
    from tinytorch._tensor.tensor import Tensor
    for name, raw in _saved.items():
        if raw is _MISSING:
            delattr(Tensor, name)
        else:
            setattr(Tensor, name, raw)
    _saved.clear()
