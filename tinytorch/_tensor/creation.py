"""Tensor factories: tensor, from_numpy, zeros/ones/full/empty (+ _like), arange, linspace, eye."""
from __future__ import annotations

import numbers

import numpy as np

from tinytorch import _C
from tinytorch._core.dtype import DTYPES, bfloat16, bool_, device as _device, float32, from_numpy_dtype, \
    get_default_dtype, int64, to_dtype
from tinytorch._core.tensor_base import TensorBase as Tensor, _wrap  # (tinytorch.Tensor's base: every tensor is one)


def _shape(size) -> list[int]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return [int(s) for s in size]


def _dev(device) -> _C.Device:
    return _device("cpu" if device is None else device)._impl


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(data) -> "dtype":
    """PyTorch's inference: bools -> bool, ints -> int64, any float -> default dtype."""
    kinds = set()

    def walk(x):
        if isinstance(x, Tensor):
            kinds.add(x.dtype)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, bool) or isinstance(x, np.bool_):
            kinds.add("b")
        elif isinstance(x, numbers.Integral):
            kinds.add("i")
        elif isinstance(x, numbers.Real):
            kinds.add("f")
        else:
            raise TypeError(f"tensor(): could not infer dtype of {type(x).__name__}")
    walk(data)
    if "f" in kinds or any(not isinstance(k, str) and k.is_floating_point for k in kinds):
        return get_default_dtype()
    if "i" in kinds or any(not isinstance(k, str) and k.name not in ("bool",) for k in kinds):
        return int64
    return bool_ if kinds else get_default_dtype()


def tensor(data, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Constructs a tensor with no autograd history by copying ``data``."""
    if isinstance(data, Tensor):
        out = data.detach().clone()
        if dtype is not None:
            out = out.to(dtype)
    elif isinstance(data, np.ndarray):
        d = to_dtype(dtype) if dtype is not None else from_numpy_dtype(data.dtype)
        out = _from_array(np.array(data, copy=True), d)
    else:
        d = to_dtype(dtype) if dtype is not None else _infer_dtype(data)
        if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
            data = _nested_tolist(data)
        np_dtype = np.float64 if d.is_floating_point else (np.bool_ if d is bool_ else np.int64)
        if d.name in _INT_RANGE:    # PyTorch's checked conversion, not numpy's wrap
            raw = np.array(data)
            lo, hi = _INT_RANGE[d.name] if raw.dtype.kind in "iub" else _FLOAT_RANGE[d.name]
            if raw.size and not (raw.min() >= lo and raw.max() <= hi):     # NaN fails too
                raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
        arr = np.array(data, dtype=np_dtype)
        out = _from_array(arr, d)
    if device is not None:
        out = out.to(device)
    return _finish(out, requires_grad)


# What tensor(data, dtype=...) accepts from Python ints: negative uint8 values down to -255
# wrap (two's complement), as in PyTorch; anything else out of range raises.
_INT_RANGE = {"uint8": (-255, 255), "int32": (-2**31, 2**31 - 1)}
# ... and from Python floats: no wrapping at all (tensor([-1.5], dtype=uint8) raises)
_FLOAT_RANGE = {"uint8": (0, 255), "int32": (-2**31, 2**31 - 1)}


def _flat(x):
    for y in x:
        if isinstance(y, (list, tuple)):
            yield from _flat(y)
        else:
            yield y


def _nested_tolist(x):
    if isinstance(x, Tensor):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [_nested_tolist(y) for y in x]
    return x


def _from_array(arr: np.ndarray, d) -> Tensor:
    # np.array, not np.ascontiguousarray: the latter turns 0-d arrays into 1-d ones
    if d is bfloat16:
        return _wrap(_C.from_numpy(np.array(arr, dtype=np.float32, order="C")).to_dtype(d.code))
    return _wrap(_C.from_numpy(np.array(arr, dtype=d.to_numpy(), order="C")))


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if isinstance(data, np.ndarray) and dtype is None and device is None:
        try:
            return from_numpy(data)
        except (TypeError, ValueError):
            pass
    return tensor(data, dtype=dtype, device=device)


def from_numpy(arr: np.ndarray) -> Tensor:
    """Creates a Tensor sharing memory with the numpy array."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    return _wrap(_C.from_numpy(arr))


def empty(*size, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    return _finish(_wrap(_C.empty(_shape(size), d.code, _dev(device))), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = bool_ if isinstance(fill_value, bool) else (int64 if isinstance(fill_value, int) else get_default_dtype())
    d = to_dtype(dtype)
    shape = [size] if isinstance(size, int) else list(size)
    return _finish(_wrap(_C.full(shape, float(fill_value), d.code, _dev(device))), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(_shape(size), 0.0, dtype=dtype or get_default_dtype(), device=device, requires_grad=requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(_shape(size), 1.0, dtype=dtype or get_default_dtype(), device=device, requires_grad=requires_grad)


def _like(x: Tensor, dtype, device):
    return (dtype or x.dtype), (device or x.device)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    d, dev = _like(input, dtype, device)
    return empty(input.shape, dtype=d, device=dev, requires_grad=requires_grad)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    d, dev = _like(input, dtype, device)
    return zeros(input.shape, dtype=d, device=dev, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    d, dev = _like(input, dtype, device)
    return ones(input.shape, dtype=d, device=dev, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    d, dev = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=d, device=dev, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """1-D tensor of values in [start, end) taken with common difference step."""
    if end is None:
        start, end = 0, start
    is_int = all(isinstance(v, int) for v in (start, end, step))
    d = to_dtype(dtype) if dtype is not None else (int64 if is_int else get_default_dtype())
    if is_int:
        impl = _C.arange(int(start), int(end), int(step), d.code, _dev(device))
    else:
        impl = _C.arange(float(start), float(end), float(step), d.code, _dev(device))
    return _finish(_wrap(impl), requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    return _finish(_wrap(_C.linspace(float(start), float(end), int(steps), d.code, _dev(device))), requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    return _finish(_wrap(_C.eye(int(n), m, d.code, _dev(device))), requires_grad)
