"""``tinytorch.cuda.memory``: the caching allocator's statistics (``memory_stats``,
``memory_allocated``, ``memory_reserved`` and their peaks), ``mem_get_info`` and ``empty_cache``,
as ``torch.cuda.memory``."""
from __future__ import annotations

from tinytorch._core.cuda_loader import cuda_backend as _backend
from tinytorch.cuda._device import _index, _require


def mem_get_info(device=None) -> tuple[int, int]:
    return tuple(_require("mem_get_info").mem_get_info(_index(device)))


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
