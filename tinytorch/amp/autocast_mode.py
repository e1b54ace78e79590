"""``autocast``: mixed precision, as ``torch.autocast``. Inside the context, the ops that gain from
lower precision (matmul, linear, convolutions) run in float16/bfloat16 and the ones that need range
(softmax, norms, losses) in float32; their float arguments on the autocast device are cast on entry
(differentiably: gradients come back in the arguments' own dtype). Other ops run in whatever dtype
their inputs have. The casts happen in wrappers installed on those functions when this module is
first imported; outside autocast each wrapper costs one flag check."""
from __future__ import annotations

import functools
import threading
from typing import Any, Optional

import tinytorch
from tinytorch.tensor import Tensor

_DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}
_LOWER, _FP32 = "lower", "fp32"


class _State(threading.local):
    """Per thread, as PyTorch's: the autocast device type and dtype, or None."""
    active: Optional[tuple] = None


_state = _State()


def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
    s = _state.active
    return s is not None and (device_type is None or s[0] == device_type)


def get_autocast_dtype(device_type: str):
    s = _state.active
    if s is not None and s[0] == device_type:
        return s[1]
    return getattr(tinytorch, _DEFAULT_DTYPE.get(device_type, "bfloat16"))


def _cast(value: Any, device_type: str, dtype, policy: str) -> Any:
    if isinstance(value, Tensor):
        dt = value.dtype
        if value.device.type != device_type or not dt.is_floating_point or dt == tinytorch.float64:
            return value
        target = dtype if policy == _LOWER else tinytorch.float32
        return value if dt == target else value.to(target)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype, policy) for v in value)
    return value


def _wrap(fn, policy: str):
    @functools.wraps(fn)
    def autocast_fn(*args, **kwargs):
        s = _state.active
        if s is None:
            return fn(*args, **kwargs)
        device_type, dtype = s
        _state.active = None                       # ops inside this one are not cast again
        try:
            args = tuple(_cast(a, device_type, dtype, policy) for a in args)
            kwargs = {k: _cast(v, device_type, dtype, policy) for k, v in kwargs.items()}
            return fn(*args, **kwargs)
        finally:
            _state.active = s
    autocast_fn._autocast_original = fn
    return autocast_fn


# (owner, attribute names, policy): what runs in lower precision and what in float32
def _tables():
    F = tinytorch.nn.functional
    return [
        (tinytorch, ("matmul", "mm", "bmm", "einsum", "tensordot", "conv1d", "conv2d"), _LOWER),
        (Tensor, ("__matmul__", "__rmatmul__", "matmul", "mm", "bmm"), _LOWER),
        (F, ("linear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "prelu",
             "scaled_dot_product_attention"), _LOWER),
        (F, ("softmax", "log_softmax", "softmin", "layer_norm", "group_norm", "rms_norm", "instance_norm",
             "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div",
             "binary_cross_entropy_with_logits", "cosine_similarity", "cosine_embedding_loss",
             "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "triplet_margin_loss",
             "poisson_nll_loss", "gaussian_nll_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
             "softplus", "normalize", "pairwise_distance"), _FP32),
        (Tensor, ("softmax", "log_softmax", "logsumexp", "cumsum", "cumprod", "norm", "exp", "log", "log1p",
                  "expm1", "reciprocal", "rsqrt", "pow", "__pow__"), _FP32),
        (tinytorch, ("softmax", "log_softmax", "logsumexp", "cumsum", "cumprod", "norm", "exp", "log", "log1p",
                     "expm1", "reciprocal", "rsqrt", "pow", "cdist", "layer_norm"), _FP32),
    ]


def _install() -> None:
    for owner, names, policy in _tables():
        for name in names:
            fn = getattr(owner, name, None)
            if fn is None or hasattr(fn, "_autocast_original"):
                continue
            setattr(owner, name, _wrap(fn, policy))


_install()


class autocast:
    """Context manager (and decorator) for mixed precision on ``device_type`` ('cuda' or 'cpu'),
    with ``dtype`` float16 or bfloat16 (default: float16 on cuda, bfloat16 on cpu)."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: Optional[bool] = None):
        if device_type not in ("cuda", "cpu"):
            raise RuntimeError(f"autocast: device_type must be 'cuda' or 'cpu', got {device_type!r}")
        self.device_type = device_type
        self.fast_dtype = dtype if dtype is not None else getattr(tinytorch, _DEFAULT_DTYPE[device_type])
        if self.fast_dtype not in (tinytorch.float16, tinytorch.bfloat16):
            raise RuntimeError(f"autocast: dtype must be float16 or bfloat16, got {self.fast_dtype}")
        self.enabled = enabled
        self._prev = []

    def __enter__(self):
        self._prev.append(_state.active)
        _state.active = (self.device_type, self.fast_dtype) if self.enabled else None
        return self

    def __exit__(self, *exc) -> None:
        _state.active = self._prev.pop()

    def __call__(self, fn):
        @functools.wraps(fn)
        def decorated(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return decorated
