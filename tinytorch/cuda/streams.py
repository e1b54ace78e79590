"""``tinytorch.cuda.streams``: CUDA streams and events (:class:`Stream`, :class:`Event`, as
``torch.cuda.streams``), the current and default stream of a device and the :func:`stream`
context manager that selects one."""
from __future__ import annotations

import contextlib

from tinytorch._core.dtype import device as _device
from tinytorch.cuda._device import _index, _require


class Stream:
    """A CUDA stream (``torch.cuda.Stream``)."""

    def __init__(self, device=None, priority: int = 0, _impl=None) -> None:
        self._impl = _impl if _impl is not None else _require("Stream").Stream(_index(device), priority)
        self.device = _device(f"cuda:{self._impl.device}")

    @property
    def cuda_stream(self) -> int:
        return self._impl.cuda_stream

    def synchronize(self) -> None:
        self._impl.synchronize()

    def query(self) -> bool:
        return self._impl.query()

    def wait_event(self, event: "Event") -> None:
        self._impl.wait_event(event._impl)

    def wait_stream(self, stream: "Stream") -> None:
        e = Event()
        e.record(stream)
        self.wait_event(e)

    def record_event(self, event: "Event | None" = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)

    def __repr__(self) -> str:
        return f"<tinytorch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event (``torch.cuda.Event``) for ordering and timing streams."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self._impl = _require("Event").Event(enable_timing)

    def record(self, stream: Stream | None = None) -> None:
        self._impl.record((stream or current_stream())._impl)

    def wait(self, stream: Stream | None = None) -> None:
        (stream or current_stream()).wait_event(self)

    def synchronize(self) -> None:
        self._impl.synchronize()

    def query(self) -> bool:
        return self._impl.query()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and end_event."""
        return self._impl.elapsed_time(end_event._impl)


def current_stream(device=None) -> Stream:
    idx = _index(device)
    return Stream(_impl=_require("current_stream").current_stream(idx))


def default_stream(device=None) -> Stream:
    """The legacy default stream of the device."""
    idx = _index(device)
    b = _require("default_stream")
    prev = b.current_stream(idx)
    b.set_current_stream_ptr(idx, 0)
    s = Stream(_impl=b.current_stream(idx))
    b.set_current_stream(prev)
    return s


def set_stream(stream: Stream) -> None:
    _require("set_stream").set_current_stream(stream._impl)


@contextlib.contextmanager
def stream(s: Stream | None):
    """Context manager selecting a given stream for the kernels launched inside."""
    if s is None:
        yield
        return
    b = _require("stream")
    prev = b.current_stream(s._impl.device)
    b.set_current_stream(s._impl)
    try:
        yield
    finally:
        b.set_current_stream(prev)
