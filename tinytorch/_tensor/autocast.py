"""Autocast state and the casting wrapper that the op schema puts around the ops with an
autocast policy (codegen/ops.py: "lower" runs in float16/bfloat16, "fp32" in float32). The
wrappers are in place from import on; outside an autocast region each costs one flag check.
The user-facing context manager is ``tinytorch.amp.autocast``."""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Optional

from tinytorch._core.dtype import bfloat16, float16, float32, float64
from tinytorch._tensor.tensor import Tensor

LOWER, FP32 = "lower", "fp32"
DEFAULT_DTYPE = {"cuda": float16, "cpu": bfloat16}


class _State(threading.local):
    """Per thread, as PyTorch's: (device type, dtype) of the active autocast region, or None."""
    active: Optional[tuple] = None


state = _State()


def _cast(value: Any, device_type: str, dtype, policy: str) -> Any:
    if isinstance(value, Tensor):
        dt = value.dtype
        if value.device.type != device_type or not dt.is_floating_point or dt == float64:
            return value
        target = dtype if policy == LOWER else float32
        return value if dt == target else value.to(target)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype, policy) for v in value)
    return value


def wrap(fn: Callable, policy: str) -> Callable:
    """fn with its float arguments on the autocast device cast per policy inside autocast."""
    assert policy in (LOWER, FP32), policy

    @functools.wraps(fn)
    def autocast_fn(*args, **kwargs):
        s = state.active
        if s is None:
            return fn(*args, **kwargs)
        device_type, dtype = s
        state.active = None                        # ops inside this one are not cast again
        try:
            args = tuple(_cast(a, device_type, dtype, policy) for a in args)
            kwargs = {k: _cast(v, device_type, dtype, policy) for k, v in kwargs.items()}
            return fn(*args, **kwargs)
        finally:
            state.active = s
    autocast_fn._autocast_original = fn
    return autocast_fn


def wrap_namespace(namespace: dict, policy: dict) -> None:
    """Wraps each function of namespace named in policy (name -> "lower" | "fp32")."""
    for name, p in policy.items():
        fn = namespace.get(name)
        if fn is not None and not hasattr(fn, "_autocast_original"):
            namespace[name] = wrap(fn, p)
