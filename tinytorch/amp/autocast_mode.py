"""``autocast``: mixed precision, as ``torch.autocast``. Inside the context, the ops that gain from
lower precision (matmul, linear, convolutions) run in float16/bfloat16 and the ones that need range
(softmax, norms, losses) in float32; their float arguments on the autocast device are cast on entry
(differentiably: gradients come back in the arguments' own dtype). Other ops run in whatever dtype
their inputs have. Which op does what is the autocast column of the op schema (codegen/ops.py);
the casting wrappers are in tinytorch/_autocast.py."""
from __future__ import annotations

import functools
from typing import Optional

from tinytorch import _autocast
from tinytorch._autocast import DEFAULT_DTYPE
from tinytorch._dtype import bfloat16, float16


def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
    s = _autocast.state.active
    return s is not None and (device_type is None or s[0] == device_type)


def get_autocast_dtype(device_type: str):
    s = _autocast.state.active
    if s is not None and s[0] == device_type:
        return s[1]
    return DEFAULT_DTYPE.get(device_type, bfloat16)


class autocast:
    """Context manager (and decorator) for mixed precision on ``device_type`` ('cuda' or 'cpu'),
    with ``dtype`` float16 or bfloat16 (default: float16 on cuda, bfloat16 on cpu)."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: Optional[bool] = None):
        if device_type not in ("cuda", "cpu"):
            raise RuntimeError(f"autocast: device_type must be 'cuda' or 'cpu', got {device_type!r}")
        self.device_type = device_type
        self.fast_dtype = dtype if dtype is not None else DEFAULT_DTYPE[device_type]
        if self.fast_dtype not in (float16, bfloat16):
            raise RuntimeError(f"autocast: dtype must be float16 or bfloat16, got {self.fast_dtype}")
        self.enabled = enabled
        self._prev = []

    def __enter__(self):
        self._prev.append(_autocast.state.active)
        _autocast.state.active = (self.device_type, self.fast_dtype) if self.enabled else None
        return self

    def __exit__(self, *exc) -> None:
        _autocast.state.active = self._prev.pop()

    def __call__(self, fn):
        @functools.wraps(fn)
        def decorated(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return decorated
