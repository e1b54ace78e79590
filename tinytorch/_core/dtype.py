"""``tinytorch.dtype`` objects (``tinytorch.float32`` ...) and ``tinytorch.device``."""
from __future__ import annotations

import numpy as np

from tinytorch import _C
from tinytorch._core.cuda_loader import cuda_backend


class dtype:
    """A tensor element type, as ``torch.dtype``. ``code`` is the C++ ``tt::DType`` value."""

    __slots__ = ("code", "name", "itemsize", "is_floating_point", "is_complex", "is_signed", "_np")

    def __init__(self, code: int, np_dtype) -> None:
        self.code = code
        self.name = _C.dtype_name(code)
        self.itemsize = _C.itemsize(code)
        self.is_floating_point = self.name.startswith(("float", "bfloat"))
        self.is_complex = self.name.startswith("complex")
        self.is_signed = not self.name.startswith(("bool", "uint"))
        self._np = np_dtype

    def __repr__(self) -> str:
        return "tinytorch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_numpy(self):
        if self._np is None:
            raise TypeError(f"{self!r} has no numpy equivalent")
        return self._np


# The C++ tt::DType codes (cpp/include/tinytorch/dtype.h), as _C takes and returns them
# (``impl.dtype_code``): the first integral types, the floating ones, then the later integral ones.
(BOOL, UINT8, INT32, INT64, FLOAT16, BFLOAT16, FLOAT32, FLOAT64, INT8, INT16, UINT16, UINT32, UINT64, FLOAT8_E4M3FN,
 FLOAT8_E5M2, COMPLEX64, COMPLEX128) = range(17)


def is_floating_code(code: int) -> bool:
    """Whether the dtype with C++ code ``code`` is a floating type (float16 ... float64)."""
    return FLOAT16 <= code <= FLOAT64


bool_ = dtype(BOOL, np.bool_)
uint8 = dtype(UINT8, np.uint8)
int32 = dtype(INT32, np.int32)
int64 = dtype(INT64, np.int64)
float16 = dtype(FLOAT16, np.float16)
bfloat16 = dtype(BFLOAT16, None)
float32 = dtype(FLOAT32, np.float32)
float64 = dtype(FLOAT64, np.float64)
int8 = dtype(INT8, np.int8)
int16 = dtype(INT16, np.int16)
# storage types, as PyTorch's "limited support" unsigned and float8 ones: casts, copies, fills,
# indexing and shape ops, no arithmetic
uint16 = dtype(UINT16, np.uint16)
uint32 = dtype(UINT32, np.uint32)
uint64 = dtype(UINT64, np.uint64)
float8_e4m3fn = dtype(FLOAT8_E4M3FN, None)   # storage types too (no numpy equivalent)
float8_e5m2 = dtype(FLOAT8_E5M2, None)
# complex: stored as (real, imag) pairs; arithmetic composed over view_as_real (_composites/complex.py)
complex64 = dtype(COMPLEX64, np.complex64)
complex128 = dtype(COMPLEX128, np.complex128)

DTYPES = (bool_, uint8, int32, int64, float16, bfloat16, float32, float64, int8, int16, uint16, uint32, uint64,
          float8_e4m3fn, float8_e5m2, complex64, complex128)  # by code
_BY_NAME = {d.name: d for d in DTYPES}
_BY_NAME.update({"half": float16, "float": float32, "double": float64, "long": int64, "int": int32, "short": int16,
                 "cfloat": complex64, "cdouble": complex128})


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


_FROM_NP = {np.dtype(d._np): d for d in DTYPES if d._np is not None}


def from_numpy_dtype(np_dtype) -> dtype:
    """The tinytorch dtype of a numpy dtype, whatever its byte order (the values are what count; copies
    convert them, and ``from_numpy`` refuses to share a non-native array)."""
    try:
        return _FROM_NP[np.dtype(np_dtype).newbyteorder("=")]
    except KeyError:
        raise TypeError(f"can't convert numpy dtype {np_dtype}: supported are float64, float32, float16, "
                        "complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8 and bool") from None


_default_dtype = float32


def get_default_dtype() -> dtype:
    """Get the current default floating point :class:`dtype`."""
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Sets the default floating point dtype to :attr:`d`.

    Args:
        d (dtype): the floating point dtype to make the default."""
    global _default_dtype
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype = d


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype to which both type1 and type2 can be cast (PyTorch's promotion rules).

    Args:
        type1 (dtype): the first dtype.
        type2 (dtype): the second dtype."""
    return DTYPES[_C.promote_types(type1.code, type2.code)]


def can_cast(from_: dtype, to: dtype) -> bool:
    """Determines if a type conversion is allowed under PyTorch casting rules.

    Args:
        from_ (dtype): the original dtype.
        to (dtype): the target dtype."""
    return _C.can_cast(from_.code, to.code)


def to_dtype(d) -> dtype:
    """Accepts a tinytorch dtype, a numpy dtype or type, or a name."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, str):
        if d in _BY_NAME:
            return _BY_NAME[d]
        raise TypeError(f"unknown dtype name {d!r}")
    if d is bool:
        return bool_
    if d is int:
        return int64
    if d is float:
        return _default_dtype
    if d is complex:
        return complex128 if _default_dtype is float64 else complex64
    return from_numpy_dtype(d)


class layout:
    """A tensor's memory layout, as ``torch.layout``; tinytorch has only ``tinytorch.strided`` (dense)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


strided = layout("strided")


class device:
    """``tinytorch.device("cuda:1")``, as ``torch.device``."""

    __slots__ = ("type", "index", "_impl")

    def __init__(self, spec, index: int | None = None) -> None:
        if isinstance(spec, device):
            spec = str(spec)
        if isinstance(spec, int):
            spec = f"cuda:{spec}"
        if index is not None:
            spec = f"{spec}:{index}"
        impl = _C.Device(spec)
        if impl.type == "cuda":
            cuda_backend()  # registers the CUDA kernels and allocator on first use
        self.type = impl.type
        # cpu and meta have no index, as in torch; a bare "cuda" means the current device (0)
        self.index = impl.index if ":" in spec and self.type == "cuda" else None
        self._impl = impl if self.index is not None or self.type != "cuda" else _C.Device("cuda:0")

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> "device":
        """``with tinytorch.device("cuda"):`` makes this the default device of the factory functions
        (``empty``, ``zeros``, ``randn``, ``tensor``, ...) inside the block, as ``torch.device``."""
        _device_blocks.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _device_blocks.pop()


# The factory functions' default device: the innermost `with device(...)` block, else the one
# set_default_device chose (None: cpu).
_device_blocks: list = []
_global_default = None


def default_device():
    """The device a factory function allocates on when given ``device=None``; None means cpu."""
    return _device_blocks[-1] if _device_blocks else _global_default


def set_global_default_device(d) -> None:
    global _global_default
    _global_default = d
