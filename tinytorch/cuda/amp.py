"""``tinytorch.cuda.amp``: PyTorch's deprecated CUDA-only spellings of ``tinytorch.amp``
(``autocast``, ``GradScaler``, ``custom_fwd``, ``custom_bwd``). Each warns with a FutureWarning
naming its replacement, as PyTorch's do; without CUDA, autocast and GradScaler warn and disable
themselves."""
from __future__ import annotations

import functools
import warnings

from tinytorch import amp as _amp
from tinytorch._core.cuda_loader import cuda_backend as _backend
from tinytorch._core.dtype import float16


def _cuda_available() -> bool:
    b = _backend()
    return b is not None and b.device_count() > 0


class autocast(_amp.autocast):
    """``torch.cuda.amp.autocast(args...)``: deprecated, ``tinytorch.amp.autocast('cuda', args...)``."""

    def __init__(self, enabled: bool = True, dtype=float16, cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        if enabled and not _cuda_available():
            warnings.warn("CUDA is not available. Disabling autocast.", UserWarning, stacklevel=2)
            enabled = False
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    def __call__(self, fn):
        @functools.wraps(fn)
        def decorated(*args, **kwargs):
            with _amp.autocast("cuda", self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return decorated


class GradScaler(_amp.GradScaler):
    """``torch.cuda.amp.GradScaler(args...)``: deprecated, ``tinytorch.amp.GradScaler('cuda', args...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.cuda.amp.custom_fwd``: deprecated, ``tinytorch.amp.custom_fwd(device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """``torch.cuda.amp.custom_bwd``: deprecated, ``tinytorch.amp.custom_bwd(device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _amp.custom_bwd(bwd, device_type="cuda")


__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]
