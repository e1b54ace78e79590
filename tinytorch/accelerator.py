"""``tinytorch.accelerator``: device-agnostic queries of the current accelerator, as
``torch.accelerator``. tinytorch's only accelerator is CUDA; without a GPU (or a CUDA build)
``current_accelerator()`` is None, ``is_available()`` False, ``device_count()`` 0, and the calls
that need a device raise RuntimeError as PyTorch's do."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional, Union

from tinytorch import cuda as _cuda
from tinytorch._core.dtype import device as _device

_DeviceLike = Union[_device, str, int, None]
_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False) -> Optional[_device]:
    """The device type of the current accelerator (``device('cuda')``), or None when there is no
    accelerator. ``check_available`` is accepted for PyTorch's signature; with no accelerator
    the answer is None either way."""
    return _device("cuda") if _cuda.is_available() else None


def is_available() -> bool:
    """True when an accelerator (a CUDA GPU) is present and usable."""
    return _cuda.is_available()


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return _cuda.device_count()


def _require() -> None:
    if not _cuda.is_available():
        raise RuntimeError(_NONE_AVAILABLE)


def _index(device: _DeviceLike) -> int:
    """The index of accelerator ``device`` (None: the current one); RuntimeError without one."""
    _require()
    if device is None:
        return _cuda.current_device()
    if isinstance(device, int):
        return device
    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"{d} doesn't match the current accelerator cuda.")
    return _cuda.current_device() if d.index is None else d.index


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return _cuda.current_device()


def set_device_index(device: _DeviceLike, /) -> None:
    """Sets the current accelerator device (an index, ``'cuda:1'`` or a device)."""
    _cuda.set_device(_index(device))


current_device_idx = current_device_index   # PyTorch's older names
set_device_idx = set_device_index


@contextlib.contextmanager
def device_index(device: Optional[int], /) -> Iterator[None]:
    """Context manager that makes ``device`` the current accelerator device inside it; None
    changes nothing."""
    if device is None:
        yield
        return
    prev = current_device_index()
    set_device_index(device)
    try:
        yield
    finally:
        set_device_index(prev)


def synchronize(device: _DeviceLike = None, /) -> None:
    """Waits for all work queued on the accelerator device to finish."""
    _cuda.synchronize(_index(device))


def current_stream(device: _DeviceLike = None, /) -> Any:
    """The current stream of the accelerator device."""
    return _cuda.current_stream(_index(device))


def set_stream(stream: Any) -> None:
    """Makes ``stream`` the current stream of its device."""
    _require()
    _cuda.set_stream(stream)


def empty_cache() -> None:
    """Releases the allocator's cached, unused device memory (nothing to do without a device)."""
    if _cuda.is_available():
        _cuda.empty_cache()


def memory_allocated(device_index: _DeviceLike = None, /) -> int:
    """The memory occupied by tensors on the accelerator device, in bytes."""
    return _cuda.memory_allocated(_index(device_index))


def max_memory_allocated(device_index: _DeviceLike = None, /) -> int:
    """The peak memory occupied by tensors on the accelerator device, in bytes."""
    return _cuda.max_memory_allocated(_index(device_index))


def memory_reserved(device_index: _DeviceLike = None, /) -> int:
    """The memory held by the caching allocator on the accelerator device, in bytes."""
    return _cuda.memory_reserved(_index(device_index))


def max_memory_reserved(device_index: _DeviceLike = None, /) -> int:
    """The peak memory held by the caching allocator on the accelerator device, in bytes."""
    return _cuda.max_memory_reserved(_index(device_index))


def memory_stats(device_index: _DeviceLike = None, /) -> dict:
    """A dictionary of the accelerator device's memory allocator statistics."""
    return _cuda.memory_stats(_index(device_index))


def reset_peak_memory_stats(device_index: _DeviceLike = None, /) -> None:
    """Resets the "peak" statistics of the accelerator device's memory allocator."""
    _cuda.reset_peak_memory_stats(_index(device_index))


__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index",
           "set_device_index", "current_device_idx", "set_device_idx", "device_index",
           "synchronize", "current_stream", "set_stream", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
           "reset_peak_memory_stats"]
