"""PyTorch's legacy tensor-type names and numeric-limit objects: ``FloatTensor``, ``LongTensor``,
... (and ``cuda.FloatTensor`` ...), ``Tensor.type(str)`` for those names, ``finfo``, ``iinfo``.

A legacy type is not a Tensor subclass (as in PyTorch): calling it builds a tensor of its dtype
and device type (from data, from sizes, or empty), and ``isinstance(t, FloatTensor)`` checks t's
dtype and device type."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tinytorch._tensor import creation as _creation
from tinytorch._core.dtype import (
    bfloat16, bool_, dtype as _dtype_cls, float16, float32, float64, get_default_dtype, int8, int16, int32, int64,
    uint8,
)
from tinytorch._core.size import Size
from tinytorch._tensor.tensor import Tensor

# legacy name -> dtype (uint16/32/64 have none, as in PyTorch)
_NAMES = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16, "BFloat16Tensor": bfloat16,
          "LongTensor": int64, "IntTensor": int32, "ShortTensor": int16, "CharTensor": int8,
          "ByteTensor": uint8, "BoolTensor": bool_}


class _LegacyTensorType(type):
    """The metaclass of the legacy types: isinstance by dtype and device type, construction."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == cls._device_type

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        dev = device if device is not None else cls._device_type
        if cls._device_type == "cuda":
            from tinytorch._core.cuda_loader import cuda_backend
            b = cuda_backend()
            if b is None or b.device_count() == 0:
                raise TypeError(f"type {cls.__module__}.{cls.__name__} not available: no CUDA GPU "
                                "(or tinytorch built without CUDA)")
        if not args:
            return _creation.empty(0, dtype=cls.dtype, device=dev)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args) and len(args) > 1 or \
                (len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool)) or \
                (len(args) == 1 and isinstance(args[0], Size)):
            sizes = args[0] if isinstance(args[0], Size) else args
            return _creation.empty(*sizes, dtype=cls.dtype, device=dev)
        if len(args) != 1:
            raise TypeError(f"{cls.__name__}(): expected sizes (ints), a torch.Size, a tensor or data, "
                            f"got {len(args)} arguments of types {[type(a).__name__ for a in args]}")
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype != cls.dtype:
                raise TypeError(f"{cls.__name__}(): expected a tensor of dtype {cls.dtype}, got {data.dtype}")
            return data
        return _creation.tensor(data, dtype=cls.dtype, device=dev)

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make(name: str, device_type: str, module: str) -> type:
    return _LegacyTensorType(name, (), {"dtype": _NAMES[name], "_device_type": device_type,
                                        "__module__": module, "is_cuda": device_type == "cuda",
                                        "__doc__": f"Legacy constructor and isinstance check for "
                                                   f"{_NAMES[name]} tensors on {device_type}."})


CPU_TYPES = {name: _make(name, "cpu", "tinytorch") for name in _NAMES}
CUDA_TYPES = {name: _make(name, "cuda", "tinytorch.cuda") for name in _NAMES}
_BY_DTYPE = {d: n for n, d in _NAMES.items()}


def type_name(t: Tensor) -> str:
    """``Tensor.type()``: PyTorch's string, e.g. 'torch.FloatTensor', 'torch.cuda.LongTensor'
    (the 'torch.' spelling, which programs compare against)."""
    prefix = "torch.cuda." if t.device.type == "cuda" else "torch."
    return prefix + _BY_DTYPE.get(t.dtype, f"UInt{8 * t.dtype.itemsize}Tensor")   # uint16/32/64: no class


def resolve_type(spec: Any) -> tuple:
    """(dtype, device type or None) for a ``Tensor.type`` argument: a dtype, a legacy type, or its
    name ('torch.FloatTensor', 'torch.cuda.FloatTensor'; 'tinytorch.' also accepted)."""
    if isinstance(spec, _dtype_cls):
        return spec, None
    if isinstance(spec, _LegacyTensorType):
        return spec.dtype, spec._device_type
    if isinstance(spec, str):
        parts = spec.split(".")
        if len(parts) in (2, 3) and parts[0] in ("torch", "tinytorch") and parts[-1] in _NAMES and \
                (len(parts) == 2 or parts[1] == "cuda"):
            cls = (CUDA_TYPES if len(parts) == 3 else CPU_TYPES)[parts[-1]]
            return resolve_type(cls)
        raise ValueError(f"invalid type: '{spec}'")
    raise TypeError(f"type(): expected a dtype, a tensor type or its name, got {type(spec).__name__}")


def tensor_type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """Returns the type name ('torch.FloatTensor') if ``dtype`` is not given, else casts this
    tensor to ``dtype``: a dtype, a legacy type (``tinytorch.LongTensor``) or its name
    ('torch.cuda.FloatTensor' also moves it to the GPU). Returns self when nothing changes.

    Args:
        dtype (dtype or string): the desired type. Default: ``None``
        non_blocking (bool): if ``True`` and the source is in pinned memory, the copy will be
            asynchronous with respect to the host. Default: ``False``"""
    if dtype is None:
        return type_name(self)
    d, device_type = resolve_type(dtype)
    if device_type is not None and self.device.type != device_type:
        return self.to(device=device_type, dtype=d, non_blocking=non_blocking)
    return self if self.dtype == d else self.to(d, non_blocking=non_blocking)


# bfloat16: 8 exponent bits, 7 mantissa bits; float8_e4m3fn: 4 and 3 (no infinities, max 448);
# float8_e5m2: 5 and 2
_NON_NUMPY_FLOATS = {"bfloat16": (16, 2.0 ** -7, float.fromhex("0x1.fep127"), 2.0 ** -126, 0.01),
                     "float8_e4m3fn": (8, 0.125, 448.0, 2.0 ** -6, 1.0),
                     "float8_e5m2": (8, 0.25, 57344.0, 2.0 ** -14, 1.0)}


class finfo:
    """Machine limits of a floating-point dtype, as ``torch.finfo``: bits, eps, max, min, tiny
    (= smallest_normal), resolution, dtype (its name)."""

    def __init__(self, type: Optional[_dtype_cls] = None) -> None:  # noqa: A002  (PyTorch's name)
        d = get_default_dtype() if type is None else type
        if not isinstance(d, _dtype_cls) or not d.is_floating_point:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            f"'{d}'")
        if d.name in _NON_NUMPY_FLOATS:   # numpy lacks them: (bits, eps, max, tiny, resolution)
            self.bits, self.eps, self.max, self.tiny, self.resolution = _NON_NUMPY_FLOATS[d.name]
        else:
            f = np.finfo(d.to_numpy())
            self.bits, self.eps, self.max = int(f.bits), float(f.eps), float(f.max)
            self.tiny, self.resolution = float(f.smallest_normal), 10.0 ** -int(f.precision)
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = d.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype, as ``torch.iinfo``: bits, max, min, dtype (its name)."""

    def __init__(self, type: _dtype_cls) -> None:  # noqa: A002  (PyTorch's name)
        if type == bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, _dtype_cls) or type.is_floating_point:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{type}'")
        i = np.iinfo(type.to_numpy())
        self.bits, self.max, self.min, self.dtype = int(i.bits), int(i.max), int(i.min), type.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

