"""``make_tensor``: a tensor of random values for tests, as ``torch.testing.make_tensor``."""
from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any, Optional, Tuple, Union

from tinytorch._core.dtype import bfloat16, bool_, dtype as dtype_cls, float16, float32, float64, int32, int64, uint8
from tinytorch._tensor.creation import empty
from tinytorch._tensor.legacy import finfo, iinfo
from tinytorch.random import randint

_FLOATING = (float16, bfloat16, float32, float64)
_INTEGRAL = (uint8, int32, int64)


def _low_high(dtype: dtype_cls, low: Optional[float], high: Optional[float], *, lowest_inclusive: float,
              highest_exclusive: float, default_low: float, default_high: float) -> Tuple[Any, Any]:
    """``low``/``high`` with their defaults, checked and clamped to what ``dtype`` holds."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                      "deprecated. Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest_inclusive or low >= highest_exclusive:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
    low = min(max(low, lowest_inclusive), highest_exclusive)
    high = min(max(high, lowest_inclusive), highest_exclusive)
    if dtype is bool_ or dtype in _INTEGRAL:
        # randint's high is exclusive: both bounds are ceiled so no value falls below low
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape: Union[int, Tuple[int, ...], list], dtype: dtype_cls, device: Any,
                low: Optional[float] = None, high: Optional[float] = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False, memory_format: Any = None) -> Any:
    """Creates a tensor with the given ``shape``, ``device`` and ``dtype``, filled with values
    drawn uniformly from ``[low, high)``.

    Defaults: ``[-9, 9)`` for floating dtypes, ``[-9, 10)`` for integers (clamped to the dtype's
    range, so ``[0, 10)`` for uint8), ``{False, True}`` for bool.

    Args:
        shape (int or sequence of ints): the tensor's shape (``make_tensor(2, 3, ...)`` or
            ``make_tensor((2, 3), ...)``).
        dtype (tinytorch.dtype): the dtype.
        device (str or tinytorch.device): the device.
        low (Number, optional): the lower bound (inclusive).
        high (Number, optional): the upper bound (exclusive).
        requires_grad (bool): whether autograd records operations on it (floating dtypes only).
        noncontiguous (bool): if ``True``, the tensor is a non-contiguous view (when it has more
            than one element).
        exclude_zero (bool): if ``True``, zeros are replaced by 1 (integers) or the dtype's
            smallest positive normal number (floating).
        memory_format (optional): the memory format of the result (passed to ``clone``).

    Raises:
        ValueError: if ``requires_grad`` is given for an integral dtype, or ``low >= high``.
        TypeError: if ``dtype`` is not supported."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and dtype not in _FLOATING:
        raise ValueError("make_tensor: requires_grad must be False for integral dtype")

    if dtype is bool_:
        low, high = _low_high(dtype, low, high, lowest_inclusive=0, highest_exclusive=2, default_low=0,
                              default_high=2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = iinfo(dtype)
        # randint can't reach int64's max: its bounds are int64
        low, high = _low_high(dtype, low, high, lowest_inclusive=info.min,
                              highest_exclusive=info.max + (1 if dtype is not int64 else 0),
                              default_low=-9, default_high=10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING:
        info = finfo(dtype)
        low, high = _low_high(dtype, low, high, lowest_inclusive=info.min, highest_exclusive=info.max,
                              default_low=-9, default_high=9)
        result = empty(shape, device=device, dtype=dtype)
        if high - low >= info.max:    # the interval's width overflows the dtype: draw half of it, doubled
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by tinytorch.testing.make_tensor().")

    if noncontiguous and result.numel() > 1:
        result = result.repeat_interleave(2, dim=-1)[..., ::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype is bool_ or dtype in _INTEGRAL else info.tiny
    if dtype in _FLOATING:
        result.requires_grad = requires_grad
    return result
