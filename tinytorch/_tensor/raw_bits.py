"""A tensor's exact element bits as a numpy array and back: the carrier of checkpoints
(safetensors), DataLoader workers, dataset caches, collation and the GGUF reader. numpy has no
bfloat16 or float8, so their bits travel as uint16/uint8; NaN payloads and signed zeros survive."""
from __future__ import annotations

import ctypes

import numpy as np

from tinytorch._tensor.creation import empty, from_numpy
from tinytorch._tensor.tensor import Tensor

__all__ = ["NUMPY_BITS", "from_bits", "to_bits"]

# numpy carrier of each dtype's bits (by dtype name); the dtypes numpy lacks travel as the raw bits
# of the unsigned integer of their size (bfloat16 as uint16, float8 as uint8)
NUMPY_BITS = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
              "int64": np.int64, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
              "float16": np.float16, "bfloat16": np.uint16, "float32": np.float32, "float64": np.float64,
              "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8, "complex64": np.complex64,
              "complex128": np.complex128}


def to_bits(t: Tensor) -> np.ndarray:
    """A C-contiguous numpy array holding ``t``'s exact element bits (uint16 for bfloat16, uint8 for
    float8).

    Shares memory with ``t`` where it can; callers that keep it must copy."""
    t = t.detach()
    if not t.is_cpu:
        t = t.cpu()
    if t.dtype._np is not None:
        return np.asarray(t._impl.numpy(), order="C")  # not ascontiguousarray: it makes 0-d 1-d
    impl = t._impl if t._impl.is_contiguous() else t._impl.contiguous()
    carrier = np.dtype(NUMPY_BITS[t.dtype.name])
    # read the bits straight from the tensor's memory (exact, NaN payloads too)
    buf = ctypes.string_at(impl.data_ptr, carrier.itemsize * impl.numel) if impl.numel else b""
    return np.frombuffer(buf, dtype=carrier).reshape(tuple(impl.shape)).copy()


def from_bits(arr: np.ndarray, dtype) -> Tensor:
    """Inverse of :func:`to_bits`: a tensor of ``dtype`` whose bits are ``arr``'s (takes ownership)."""
    arr = np.asarray(arr, dtype=np.dtype(NUMPY_BITS[dtype.name]), order="C")
    if dtype._np is not None:
        return from_numpy(arr)
    out = empty(tuple(arr.shape), dtype=dtype)
    if arr.size:
        ctypes.memmove(out._impl.data_ptr, arr.ctypes.data, arr.nbytes)
    return out
