"""``tinytorch.cuda``: device queries, streams and events, memory statistics and the caching
allocator. Works on every build: without the CUDA backend or a GPU, ``is_available()`` is False
and calls that need a GPU raise a clear RuntimeError."""
from __future__ import annotations

import contextlib

from tinytorch._cuda_loader import cuda_backend as _backend
from tinytorch._dtype import device as _device
from tinytorch.random import manual_seed as _seed
from tinytorch._legacy import CUDA_TYPES as _LEGACY_TYPES

globals().update(_LEGACY_TYPES)   # cuda.FloatTensor, cuda.LongTensor, ...: legacy types (tinytorch._legacy)


def is_available() -> bool:
    """True when tinytorch was built with CUDA and a GPU and driver are present."""
    b = _backend()
    return bool(b is not None and b.device_count() > 0)


def device_count() -> int:
    b = _backend()
    return b.device_count() if b is not None else 0


def _require(what: str):
    b = _backend()
    if b is None:
        raise RuntimeError(f"tinytorch.cuda.{what}: tinytorch was built without the CUDA backend "
                           "(rebuild where nvcc and cuBLAS are found, TINYTORCH_CUDA=AUTO|ON)")
    if b.device_count() == 0:
        raise RuntimeError(f"tinytorch.cuda.{what}: no CUDA GPU is available on this machine")
    return b


def _index(device) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_device() if d.index is None else d.index


def current_device() -> int:
    return _require("current_device").current_device()


def set_device(device) -> None:
    _require("set_device").set_device(_index(device))


class device:
    """Context manager that changes the current device."""

    def __init__(self, dev) -> None:
        self.idx = _index(dev)

    def __enter__(self):
        self.prev = current_device()
        set_device(self.idx)

    def __exit__(self, *exc):
        set_device(self.prev)
        return False


def synchronize(device=None) -> None:
    """Waits for all kernels in all streams on a CUDA device to complete."""
    _require("synchronize").synchronize(_index(device))


def get_device_name(device=None) -> str:
    return _require("get_device_name").get_device_name(_index(device))


def get_device_capability(device=None) -> tuple[int, int]:
    return tuple(_require("get_device_capability").get_device_capability(_index(device)))


def mem_get_info(device=None) -> tuple[int, int]:
    return tuple(_require("mem_get_info").mem_get_info(_index(device)))


def manual_seed(seed: int) -> None:
    """Seeds the GPU generators (tinytorch.manual_seed seeds every device)."""
    _seed(seed)


manual_seed_all = manual_seed


# ------------------------------------------------------------------ memory

def memory_stats(device=None) -> dict:
    return _require("memory_stats").memory_stats(_index(device))


def memory_allocated(device=None) -> int:
    """Bytes currently occupied by tensors on the device."""
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device=None) -> int:
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device=None) -> int:
    """Bytes held by the caching allocator (allocated + cached)."""
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device=None) -> int:
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device=None) -> None:
    _require("reset_peak_memory_stats").reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Releases all unoccupied cached memory back to the driver."""
    b = _backend()
    if b is not None and b.device_count() > 0:
        b.empty_cache()


# ------------------------------------------------------------------ streams and events

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


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True when the current GPU computes in bfloat16: compute capability 8.0 or newer, or any
    GPU with ``including_emulation`` (bfloat16 kernels then run through float). False without
    a GPU, as PyTorch."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8


from tinytorch.cuda.graphs import (  # noqa: E402  (CUDA graphs: tinytorch/cuda/graphs.py)
    CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables,
)


def __getattr__(name: str):
    # tinytorch.cuda.amp (deprecated spellings of tinytorch.amp) loads on first use, as amp
    # imports the optimizer-facing code that `import tinytorch.cuda` doesn't need.
    if name == "amp":
        import importlib
        return importlib.import_module("tinytorch.cuda.amp")
    raise AttributeError(f"module 'tinytorch.cuda' has no attribute '{name}'")
