"""``autocast``: mixed precision, as ``torch.autocast``. Inside the context, the ops that gain from
lower precision (matmul, linear, convolutions) run in float16/bfloat16 and the ones that need range
in float32; their float arguments on the autocast device are cast on entry (differentiably: gradients
come back in the arguments' own dtype). Other ops run in whatever dtype their inputs have. Which ops
run in float32 depends on the device type, as PyTorch's lists: on CUDA softmax, norms, losses and
exp/log/pow; on CPU the losses, cdist, grid_sample and the 3-D pools, while exp, pow, softmax and
layer_norm keep bfloat16. The CUDA lists are the autocast column of the op schema (codegen/ops.py),
the CPU ones and the casting wrappers are in tinytorch/_tensor/autocast.py."""
from __future__ import annotations

import functools
from typing import Optional

from tinytorch._tensor import autocast as _autocast
from tinytorch._tensor.autocast import DEFAULT_DTYPE
from tinytorch._core.dtype import bfloat16, float16


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


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for the ``forward`` of a custom ``autograd.Function`` (``torch.amp.custom_fwd``).
    With ``cast_inputs`` set, inside an autocast region on ``device_type`` the floating-point
    tensor arguments on that device are cast to ``cast_inputs`` and forward runs with autocast
    off; otherwise forward runs under the ambient autocast state, which the decorated backward
    (``custom_bwd``) restores."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0] if args else None
        active = _autocast.state.active
        if ctx is not None:
            ctx._fwd_autocast_state = active
        if cast_inputs is None or active is None or active[0] != device_type:
            return fwd(*args, **kwargs)
        args = tuple(_autocast._cast(a, device_type, cast_inputs, _autocast.LOWER) for a in args)
        kwargs = {k: _autocast._cast(v, device_type, cast_inputs, _autocast.LOWER) for k, v in kwargs.items()}
        if ctx is not None:
            ctx._fwd_autocast_state = None
        _autocast.state.active = None
        try:
            return fwd(*args, **kwargs)
        finally:
            _autocast.state.active = active
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for the ``backward`` of a custom ``autograd.Function`` (``torch.amp.custom_bwd``):
    backward runs under the autocast state its forward ran under."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0] if args else None
        prev = _autocast.state.active
        _autocast.state.active = getattr(ctx, "_fwd_autocast_state", None)
        try:
            return bwd(*args, **kwargs)
        finally:
            _autocast.state.active = prev
    return decorate_bwd
