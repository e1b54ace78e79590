"""``nn.attention``: the choice of scaled-dot-product-attention backend, as ``torch.nn.attention``.

``sdpa_kernel(backends)`` records which backends ``F.scaled_dot_product_attention`` may use
inside the context (``enabled_backends()`` reads it back). tinytorch has a single SDPA
implementation, the same on every device, and runs it whatever the selection: every backend
computes the same function, so a program that picks FLASH_ATTENTION on PyTorch gets the same
values here (not PyTorch's kernel or its speed)."""
from __future__ import annotations

import contextlib
import threading
from enum import IntEnum
from typing import Iterator, List, Union


class SDPBackend(IntEnum):
    """The scaled-dot-product-attention backends PyTorch names (same values)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE)


class _State(threading.local):
    enabled: tuple = _ALL


_state = _State()


def enabled_backends() -> List[SDPBackend]:
    """The backends enabled now, in priority order (all of them outside ``sdpa_kernel``)."""
    return list(_state.enabled)


@contextlib.contextmanager
def sdpa_kernel(backends: Union[List[SDPBackend], SDPBackend], set_priority: bool = False) -> Iterator[None]:
    """Context manager to select which backend(s) scaled dot product attention may use (in that
    order of priority with ``set_priority``); the previous selection is restored on exit.

    Args:
        backends (Union[List[SDPBackend], SDPBackend]): a backend or list of backends.
        set_priority (bool): whether the order of ``backends`` is their priority order."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple)) or not all(isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    chosen = tuple(dict.fromkeys(b for b in backends if b != SDPBackend.ERROR))
    prev = _state.enabled
    _state.enabled = chosen
    try:
        yield
    finally:
        _state.enabled = prev


__all__ = ["SDPBackend", "sdpa_kernel", "enabled_backends"]
