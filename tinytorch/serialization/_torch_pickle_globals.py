"""What the global names of a PyTorch checkpoint's pickle resolve to in tinytorch's restricted
unpickler (_torch_unpickler.py): stand-ins for torch's dtypes and storage classes, the loaded
storage record, ``torch.Size``/``torch.device``/``bytearray``/``_codecs.encode`` that accept only
plain data, and the tables of torch's names (storage classes, dtypes, and the tensor kinds refused
with a reason). Nothing here imports torch or anything a file names."""
from __future__ import annotations

import pickle
from typing import Any

from tinytorch._core.dtype import DTYPES, device as _device
from tinytorch._core.size import Size
from tinytorch._tensor.tensor import Tensor

UnpicklingError = pickle.UnpicklingError

_BY_NAME = {d.name: d for d in DTYPES}
# torch's storage classes -> dtype name (None: a dtype tinytorch lacks; refused when used)
_STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ShortStorage": "int16", "CharStorage": "int8", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "QUInt8Storage": "quint8", "QInt8Storage": "qint8",
    "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
# torch dtype globals (``torch.float32`` pickles as GLOBAL 'torch float32')
_TORCH_DTYPE_NAMES = (
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
    "complex32", "complex64", "complex128", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8", "qint32",
    "quint4x2", "quint2x4", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2",
)
# rebuild functions of tensor kinds tinytorch cannot represent: refused by name, with the reason
_UNSUPPORTED = {
    "torch._utils._rebuild_sparse_tensor": "sparse tensors",
    "torch._utils._rebuild_qtensor": "quantized tensors",
    "torch._utils._rebuild_meta_tensor_no_storage": "meta tensors",
    "torch._utils._rebuild_nested_tensor": "nested tensors",
    "torch._utils._rebuild_wrapper_subclass": "tensor wrapper subclasses",
    "torch._utils._rebuild_device_tensor_from_numpy": "tensors rebuilt through numpy",
    "torch.serialization._get_layout": "sparse tensor layouts",
}


class TorchDtype:
    """What a torch dtype global unpickles to: its name, and tinytorch's dtype where one exists."""
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def resolve(self, what: str):
        if self.name not in _BY_NAME:
            raise UnpicklingError(f"{what}: torch.{self.name} tensors are not supported: tinytorch has no "
                                  f"{self.name} dtype (supported: {', '.join(_BY_NAME)})")
        return _BY_NAME[self.name]

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class StorageType:
    """What a storage class global (``torch.FloatStorage``, ``torch.UntypedStorage``) unpickles to."""
    __slots__ = ("name", "dtype_name")

    def __init__(self, name: str, dtype_name: str) -> None:
        self.name, self.dtype_name = name, dtype_name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class _Marker:
    """``torch.Tensor`` / ``torch.nn.Parameter`` as named by ``_rebuild_from_type_v2``."""
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_TENSOR, _PARAMETER = _Marker("torch.Tensor"), _Marker("torch.nn.parameter.Parameter")


class LoadedStorage:
    """One storage record of the checkpoint: a flat CPU tensor holding its elements.

    Every tensor rebuilt from it is an ``as_strided`` view of ``flat``, so tensors that shared a
    storage in PyTorch share one tinytorch storage."""
    __slots__ = ("key", "dtype", "numel", "location", "flat")

    def __init__(self, key: str, dtype, numel: int, location: str, flat: Tensor) -> None:
        self.key, self.dtype, self.numel, self.location, self.flat = key, dtype, numel, location, flat

    def __repr__(self) -> str:
        return f"<storage {self.key!r}: {self.numel} x {self.dtype.name} on {self.location}>"


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _int_tuple(x: Any, what: str) -> tuple:
    if not isinstance(x, (tuple, list)) or not all(_is_int(v) for v in x):
        raise UnpicklingError(f"{what} must be a tuple of ints, got {x!r}")
    return tuple(x)


def _codecs_encode(obj: Any, encoding: str = "utf-8") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for bytes: str -> bytes in latin-1 only."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise UnpicklingError(f"_codecs.encode is allowed only as encode(str, 'latin1'), got encoding {encoding!r}")
    return obj.encode("latin1")


def _bytearray(data: Any = b"") -> bytearray:
    """``bytearray`` as pickles use it (from bytes or a latin-1 str; never ``bytearray(n)``)."""
    if isinstance(data, str):
        return bytearray(data.encode("latin1"))
    if not isinstance(data, (bytes, bytearray)):
        raise UnpicklingError(f"bytearray is allowed only from bytes, got {type(data).__name__}")
    return bytearray(data)


def _size(dims: Any = ()) -> Size:
    return Size(_int_tuple(dims, "torch.Size"))


def _torch_device(spec: Any, index: Any = None) -> _device:
    if not isinstance(spec, str) or (index is not None and not _is_int(index)):
        raise UnpicklingError(f"torch.device expects (str[, int]), got {spec!r}, {index!r}")
    return _device(spec if index is None else f"{spec}:{index}")
