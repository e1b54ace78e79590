"""Process-wide settings PyTorch reads and writes through top-level functions: the default device
and tensor type, the autocast switches, the inter-op thread count, warn-always, flush-denormal."""
from __future__ import annotations

from typing import Optional

from tinytorch._core.dtype import bfloat16, default_device, device as _device_type, float16, float32, float64, set_default_dtype, \
    set_global_default_device
from tinytorch._tensor import autocast as _autocast

_warn_always = False
_interop_threads = 1
_autocast_dtypes: dict = {}   # set_autocast_dtype's choices, used when set_autocast_enabled switches on


def get_default_device() -> _device_type:
    """Gets the default device tensors are allocated on: the innermost ``with tinytorch.device(...)``
    block's, else the one :func:`set_default_device` set, else ``cpu``."""
    d = default_device()
    return d if d is not None else _device_type("cpu")


def set_default_device(device) -> None:
    """Sets the default device of the factory functions (``empty``, ``zeros``, ``randn``, ``tensor``,
    ``arange``, ...) called without ``device=``, as ``torch.set_default_device``. A ``with
    tinytorch.device(...)`` block takes precedence inside it.

    Args:
        device (device or str or int or None): the device to set as default; ``None`` restores ``cpu``."""
    set_global_default_device(None if device is None else _device_type(device))


def set_default_tensor_type(t) -> None:
    """Sets the default floating point tensor type (deprecated in PyTorch for :func:`set_default_dtype`).

    Args:
        t (type or str): the floating point tensor type or its name (``'torch.FloatTensor'``, ``tinytorch.DoubleTensor``)."""
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    by_name = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16, "BFloat16Tensor": bfloat16}
    key = name.rsplit(".", 1)[-1]
    if key not in by_name or name.startswith("torch.cuda") or "cuda" in name:
        raise TypeError(f"set_default_tensor_type: only floating-point CPU types are supported, got {name}")
    set_default_dtype(by_name[key])


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Returns whether autocast is enabled for ``device_type`` (default ``'cuda'``).

    Args:
        device_type (str, optional): the device type to ask about. Default: ``'cuda'``."""
    active = _autocast.state.active
    return active is not None and active[0] == device_type


def get_autocast_dtype(device_type: str):
    """Returns the dtype autocast uses on ``device_type`` (``float16`` on cuda, ``bfloat16`` on cpu by default).

    Args:
        device_type (str): the device type to ask about."""
    active = _autocast.state.active
    if active is not None and active[0] == device_type:
        return active[1]
    return _autocast_dtypes.get(device_type, _autocast.DEFAULT_DTYPE.get(device_type, _autocast.bfloat16))


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Sets the dtype autocast uses on ``device_type`` when it is switched on by :func:`set_autocast_enabled`.

    Args:
        device_type (str): the device type.
        dtype (tinytorch.dtype): the autocast dtype."""
    _autocast_dtypes[device_type] = dtype
    active = _autocast.state.active
    if active is not None and active[0] == device_type:
        _autocast.state.active = (device_type, dtype)


def set_autocast_enabled(device_type, enabled: Optional[bool] = None) -> None:
    """Switches autocast on or off for ``device_type`` in this thread (what ``tinytorch.autocast`` regions do);
    the one-argument form ``set_autocast_enabled(enabled)`` means ``'cuda'``.

    Args:
        device_type (str): the device type.
        enabled (bool): whether autocast is on."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    if enabled:
        _autocast.state.active = (device_type, get_autocast_dtype(device_type))
    elif is_autocast_enabled(device_type):
        _autocast.state.active = None


def get_num_interop_threads() -> int:
    """Returns the number of threads used for inter-op parallelism on CPU (tinytorch runs ops one at a time: 1)."""
    return _interop_threads


def set_num_interop_threads(num: int) -> None:
    """Sets the number of threads used for inter-op parallelism (recorded; tinytorch runs ops one at a time).

    Args:
        num (int): the number of threads, at least 1."""
    global _interop_threads
    if not isinstance(num, int) or num < 1:
        raise RuntimeError(f"Expected positive number of threads, got {num}")
    _interop_threads = num


def set_warn_always(b: bool) -> None:
    """When on, warnings that are issued once per process are issued every time.

    Args:
        b (bool): if True, warn always."""
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    """Returns True if the global warn_always flag is turned on."""
    return _warn_always


def set_flush_denormal(mode: bool) -> bool:
    """Would flush denormal floats to zero on CPU; tinytorch does not support it and returns False (as
    PyTorch does on CPUs without SSE3).

    Args:
        mode (bool): whether to enable flush-denormal mode."""
    return False


def init_num_threads() -> None:
    """Initializes the CPU thread pool (tinytorch's starts on first use: nothing to do)."""
    return None


__all__ = ["get_default_device", "set_default_device", "set_default_tensor_type", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype", "set_autocast_enabled", "get_num_interop_threads", "set_num_interop_threads", "set_warn_always", "is_warn_always_enabled", "set_flush_denormal", "init_num_threads"]
