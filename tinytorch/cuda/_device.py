"""``tinytorch.cuda``'s device queries and selection: ``is_available``, ``device_count``,
``current_device``, ``set_device``, the :class:`device` context manager, ``synchronize`` and the
device's name and capability; ``_require`` (the backend, or a clear RuntimeError without CUDA or
a GPU) and ``_index`` (a device argument as an index) for the rest of ``tinytorch.cuda``."""
from __future__ import annotations

from tinytorch._core.cuda_loader import cuda_backend as _backend
from tinytorch._core.dtype import device as _device


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


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True when the current GPU computes in bfloat16: compute capability 8.0 or newer, or any
    GPU with ``including_emulation`` (bfloat16 kernels then run through float). False without
    a GPU, as PyTorch."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8
