"""Helpers shared by the distributions (PyTorch's ``torch.distributions.utils``): broadcasting
parameters, probabilities <-> logits, dtype limits, lazily computed attributes."""
from __future__ import annotations

import numbers
from functools import update_wrapper

import numpy as np

from tinytorch._tensor.creation import tensor
from tinytorch._core.dtype import get_default_dtype
from tinytorch._core.size import Size
from tinytorch.autograd.grad_mode import enable_grad
from tinytorch._tensor.tensor import Tensor

__all__ = ["broadcast_all", "broadcast_shape", "probs_to_logits", "logits_to_probs", "clamp_probs", "lazy_property",
           "finfo"]


class _FInfo:
    def __init__(self, eps: float, tiny: float, max: float) -> None:  # noqa: A002
        self.eps, self.tiny, self.max, self.min = eps, tiny, max, -max


def _numpy_finfo(np_dtype) -> _FInfo:
    info = np.finfo(np_dtype)
    return _FInfo(float(info.eps), float(info.tiny), float(info.max))


# bfloat16: float32's exponent range with an 8-bit significand
_FINFO = {"float64": _numpy_finfo(np.float64), "float32": _numpy_finfo(np.float32),
          "float16": _numpy_finfo(np.float16), "bfloat16": _FInfo(2.0 ** -7, float(np.finfo(np.float32).tiny),
                                                                  3.3895313892515355e38)}


def finfo(dtype) -> _FInfo:
    """eps, tiny, max, min of a floating dtype (``torch.finfo``'s fields used here)."""
    return _FINFO[dtype.name]


def broadcast_shape(*shapes) -> Size:
    """The shape all of ``shapes`` broadcast to (a ValueError naming them if they don't)."""
    try:
        return Size(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"shapes {[tuple(s) for s in shapes]} are not broadcastable") from None


def broadcast_all(*values):
    """Broadcasts tensors and numbers to one shape: numbers become tensors of the first tensor's
    dtype and device (the default dtype when all are numbers)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or tinytorch.Tensor.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else get_default_dtype()
    device = like.device if like is not None else None
    tensors = [v if isinstance(v, Tensor) else tensor(float(v), dtype=dtype, device=device) for v in values]
    shape = broadcast_shape(*[t.shape for t in tensors])
    return tuple(t if tuple(t.shape) == tuple(shape) else t.expand(shape) for t in tensors)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into [eps, 1 - eps] so their logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or log-probabilities (categorical) of ``probs``."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid (binary) or softmax over the last dim (categorical) of ``logits``."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sums the rightmost ``dim`` dims of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


class lazy_property:  # noqa: N801 (PyTorch's name)
    """A property computed on first access and then stored on the instance (``probs`` from
    ``logits`` and the converse), computed with grad enabled so it stays differentiable."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
