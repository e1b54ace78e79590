"""The Python protocols through which tensors meet other libraries, installed on ``tinytorch.Tensor``:
DLPack (``__dlpack__``/``__dlpack_device__``/``from_dlpack``), ``__cuda_array_interface__``,
numpy (``__array__``, ``__array_ufunc__``), pickling and ``copy.copy``. See docs/interop.md.
"""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Tuple

import numpy as np

from tinytorch import _C
from tinytorch._tensor.creation import _normalized_bools, empty, from_numpy
from tinytorch._core.cuda_loader import cuda_backend
from tinytorch._core.dtype import DTYPES, bool_, device as _device
from tinytorch._core.tensor_base import TensorBase, _wrap

_BY_NAME = {d.name: d for d in DTYPES}
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
# numpy's type string of each dtype numpy has (the array interfaces' "typestr")
_NP_TYPESTR = {d.name: np.dtype(d._np).newbyteorder("<").str for d in DTYPES if d._np is not None}
# PyTorch's ScalarType spelling of the dtypes numpy lacks, for its error messages
_SCALAR_TYPE = {"bfloat16": "BFloat16", "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2"}


# ----------------------------------------------------------------------------- streams (CUDA)
def _current_stream_ptr(device_index: int) -> int:
    return cuda_backend().current_stream(device_index).cuda_stream


def _make_stream_wait(consumer: int, device_index: int) -> None:
    """Orders the consumer's stream after the work queued so far on our current stream (DLPack and
    CUDA Array Interface rules): an event recorded on ours, waited on by theirs; no host sync."""
    backend = cuda_backend()
    ours = backend.current_stream(device_index)
    theirs = {1: 0, 2: 2}.get(consumer, consumer)  # 1: legacy default stream, 2: per-thread default
    if theirs == ours.cuda_stream:
        return
    event = backend.Event(False)
    event.record(ours)
    backend.set_current_stream_ptr(device_index, theirs)  # a handle on their stream, then restore ours
    try:
        backend.current_stream(device_index).wait_event(event)
    finally:
        backend.set_current_stream(ours)


# ----------------------------------------------------------------------------- DLPack
def dlpack_device(t: TensorBase) -> Tuple[int, int]:
    dev = t._impl.device
    return (_KDL_CUDA, dev.index) if dev.type == "cuda" else (_KDL_CPU, 0)


def to_dlpack(t: TensorBase, stream: Any = None, max_version: Optional[Tuple[int, int]] = None,
              dl_device: Any = None, copy: Optional[bool] = None) -> Any:
    """``Tensor.__dlpack__``: a capsule sharing ``t``'s memory; the storage stays alive until the
    consumer releases it. ``max_version >= (1, 0)`` gets a ``dltensor_versioned`` capsule."""
    if t.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError(f"stream must be ``int`` or ``none``, got {type(stream).__name__}")
    if dl_device is not None and tuple(dl_device) != dlpack_device(t):
        raise BufferError(f"__dlpack__: can't export a tensor on {dlpack_device(t)} to device {tuple(dl_device)}")
    if copy:
        t = _wrap(t._impl.clone())
    if t._impl.device.type == "cuda" and stream != -1:
        # the consumer reads on `stream` (None: the legacy default stream): order it after our work
        _make_stream_wait(1 if stream is None else stream, t._impl.device.index)
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    return _C.to_dlpack(t._impl, versioned)


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: Optional[bool] = None) -> TensorBase:
    """Converts a tensor from an external library (anything with ``__dlpack__``, or a DLPack capsule)
    into a ``tinytorch.Tensor`` sharing its memory, as ``torch.from_dlpack``. A capsule can be
    consumed once.

    Args:
        ext_tensor (object with ``__dlpack__``, or a DLPack capsule): the tensor or DLPack capsule to
            convert.

    A bool tensor whose bytes are not all 0 and 1 (a uint8 buffer viewed as bool) is copied, each
    nonzero byte becoming True, as ``from_numpy`` does: the kernels read a bool byte as 0 or 1.

    Keyword args:
        device (torch.device or str, optional): the device of the result; another device than the
            source's copies there. Default: the source's device.
        copy (bool, optional): ``True`` always copies, ``False`` never does (a device change, or bool
            bytes other than 0 and 1, then raise ``BufferError``), ``None`` copies only for those."""
    t = _import_dlpack(ext_tensor)
    fixed = _normalized_bool_tensor(t, copy)
    if device is not None and t.device != _device(device):
        if copy is False:
            raise BufferError(f"from_dlpack: copy=False, but the tensor is on {t.device} and device={device}")
        return fixed.to(device)
    if fixed is not t:
        return fixed
    return t.clone() if copy else t


def _normalized_bool_tensor(t: TensorBase, copy: Optional[bool]) -> TensorBase:
    """``t`` itself, or for a bool tensor holding bytes other than 0 and 1 a copy (same shape and
    strides) with each nonzero byte as True. The bytes are read raw: the span of memory the view
    reaches, copied to the host as it is (a dense copy moves bytes, it doesn't convert them)."""
    impl = t._impl
    if t.dtype is not bool_ or impl.numel == 0:
        return t
    shape, stride = list(impl.shape), list(impl.stride())
    span = 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    flat = impl.as_strided([span], [1], impl.storage_offset)
    host = flat if impl.device.type == "cpu" else flat.to_device(_device("cpu")._impl)
    raw = host.numpy().view(np.uint8)
    if raw.max() <= 1:
        return t
    if copy is False:
        raise BufferError("from_dlpack: copy=False, but the bool tensor holds bytes other than 0 and 1, which "
                          "tinytorch's kernels read as 0 or 1; it must be copied with each nonzero byte as True")
    fixed = from_numpy(raw != 0)._impl
    if impl.device.type != "cpu":
        fixed = fixed.to_device(impl.device)
    return _wrap(fixed.as_strided(shape, stride, 0))


def _import_dlpack(ext_tensor: Any) -> TensorBase:
    if hasattr(ext_tensor, "__dlpack__"):
        dev_type, dev_id = ext_tensor.__dlpack_device__()
        kwargs: dict = {}
        if dev_type in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            backend = cuda_backend()
            if backend is None:
                raise RuntimeError("from_dlpack: the tensor is in CUDA memory but tinytorch has no CUDA backend here")
            ptr = _current_stream_ptr(dev_id)
            kwargs["stream"] = 1 if ptr == 0 else ptr  # the producer orders its work before our stream
        elif dev_type not in (_KDL_CPU, _KDL_CUDA_HOST):
            raise RuntimeError(f"from_dlpack: unsupported device type {dev_type} (tinytorch takes CPU and CUDA)")
        try:
            capsule = ext_tensor.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:  # a producer older than DLPack 1.0 takes no max_version
            capsule = ext_tensor.__dlpack__(**kwargs)
    else:
        capsule = ext_tensor
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got "
                        f"{type(ext_tensor).__name__}")
    return _wrap(_C.from_dlpack(capsule))


# ----------------------------------------------------------------------------- CUDA Array Interface
def cuda_array_interface(t: TensorBase) -> dict:
    """``Tensor.__cuda_array_interface__`` (version 3) for CUDA tensors, as PyTorch."""
    if t._impl.device.type != "cuda":
        raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {t.type()} "
                             "If CUDA data is required use tensor.cuda() to copy tensor to device memory.")
    if t.requires_grad:
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                           "If gradients aren't required, use var.detach() to get Variable that doesn't require grad.")
    name = t.dtype.name
    if name not in _NP_TYPESTR:
        raise TypeError(f"Got unsupported ScalarType {_SCALAR_TYPE.get(name, name)}")
    itemsize = t._impl.itemsize
    shape = tuple(t._impl.shape)
    strides = None if t._impl.is_contiguous() else tuple(s * itemsize for s in t._impl.stride())
    ptr = t._impl.data_ptr if t._impl.numel else 0
    stream = _current_stream_ptr(t._impl.device.index)
    return {"typestr": _NP_TYPESTR[name], "shape": shape, "strides": strides, "data": (ptr, False),
            "version": 3, "stream": 1 if stream == 0 else stream}


# ----------------------------------------------------------------------------- numpy
def to_array(t: TensorBase, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
    """``Tensor.__array__``: as ``tensor.numpy()`` (shares CPU memory), with PyTorch's errors for
    tensors that require grad and for bfloat16 and float8 (numpy has no such types). CUDA tensors are copied
    to the host (PyTorch raises there)."""
    if t.requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    if t.dtype._np is None:
        raise TypeError(f"Got unsupported ScalarType {_SCALAR_TYPE[t.dtype.name]}")
    impl = t._impl if t._impl.device.type == "cpu" else t._impl.to_device(_device("cpu")._impl, True, False)
    a = impl.numpy()
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return a.astype(dtype)
    return np.array(a) if copy else a


# ufuncs computed by tinytorch when a tensor is an operand: name -> Tensor method
_UFUNC_METHODS = {
    "add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div", "divide": "div",
    "floor_divide": "floor_divide", "remainder": "remainder", "power": "pow", "maximum": "maximum",
    "minimum": "minimum", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "equal": "eq", "not_equal": "ne", "negative": "neg", "absolute": "abs", "exp": "exp", "log": "log",
    "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tanh": "tanh", "matmul": "matmul",
}


def array_ufunc(t: TensorBase, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``Tensor.__array_ufunc__``: ``np.add(array, tensor)`` (and ``array + tensor``) returns a
    tensor computed by tinytorch, as PyTorch's; other ufuncs run in numpy on the tensors' arrays
    and their array results come back as tensors; with ``out=`` numpy's result is returned."""
    name = _UFUNC_METHODS.get(ufunc.__name__)
    if method == "__call__" and name is not None and not kwargs:
        # arrays and numbers become tensors (a number: a 0-dim tensor, ranking below dimensioned ones)
        args = [x if isinstance(x, TensorBase) else _wrap(_array_operand(np.asarray(x))) for x in inputs]
        return getattr(type(args[0]), name)(*args)
    arrays = [to_array(x) if isinstance(x, TensorBase) else x for x in inputs]
    if "out" in kwargs:
        kwargs["out"] = tuple(to_array(x) if isinstance(x, TensorBase) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*arrays, **kwargs)
    result = getattr(ufunc, method)(*arrays, **kwargs)
    return _wrap(_array_operand(result)) if isinstance(result, np.ndarray) else result


def _array_operand(a: np.ndarray) -> Any:
    """A numpy operand as a TensorImpl, sharing its memory where the bytes mean the same to tinytorch:
    an array of non-native byte order is converted (as numpy's own ufuncs do; sharing it would read
    big-endian 1.0 as 4.6e-41), a bool array holding bytes other than 0 and 1 normalised, a read-only
    or negatively strided one copied."""
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    a = _normalized_bools(a)
    if not a.flags.writeable or any(s < 0 for s in a.strides):
        a = np.array(a)
    return _C.from_numpy(a)


# ----------------------------------------------------------------------------- pickling and copy
def reduce_tensor(t: TensorBase) -> tuple:
    """``Tensor.__reduce_ex__``: the elements' bytes, dtype name, shape, requires_grad and device
    (views are pickled as their own data, so unpickled tensors never alias each other), the class
    (Parameter and subclasses come back as themselves) and the instance's Python attributes."""
    impl = t._impl
    host = impl if impl.device.type == "cpu" else impl.to_device(_device("cpu")._impl, True, False)
    host = host if host.is_contiguous() else host.contiguous()
    nbytes = host.numel * host.itemsize
    data = ctypes.string_at(host.data_ptr, nbytes) if nbytes else b""
    # Python attributes travel as an argument, not as a BUILD state (Cython's __setstate__ wants tuples)
    attrs = dict(t.__dict__) if getattr(t, "__dict__", None) else None
    return (_rebuild_tensor, (type(t), data, t.dtype.name, tuple(impl.shape), bool(t.requires_grad),
                              str(impl.device_str), attrs))


def _rebuild_tensor(cls: type, data: bytes, dtype: str, shape: tuple, requires_grad: bool,
                    device: str = "cpu", attrs: Optional[dict] = None) -> TensorBase:
    """Inverse of :func:`reduce_tensor` (a module-level name, so pickles can refer to it)."""
    dt = _BY_NAME[dtype]
    flat = empty(tuple(shape), dtype=dt)
    if len(data) != flat._impl.numel * dt.itemsize:
        raise ValueError(f"tinytorch: pickled tensor data has {len(data)} bytes, expected "
                         f"{flat._impl.numel * dt.itemsize} for {dtype} {tuple(shape)}")
    if data:
        ctypes.memmove(flat._impl.data_ptr, data, len(data))
    impl = flat._impl if device == "cpu" else flat._impl.to_device(_device(device)._impl, True, False)
    out = TensorBase.__new__(cls)
    out._impl = impl
    if requires_grad:
        out.requires_grad_(True)
    if attrs:
        out.__dict__.update(attrs)
    return out


def copy_tensor(t: TensorBase) -> TensorBase:
    """``copy.copy(tensor)``: a new leaf of the same class sharing the storage, with the same
    requires_grad and Python attributes (as PyTorch: the copy is detached from the graph)."""
    out = TensorBase.__new__(type(t))
    out._impl = t._impl.alias()
    out._requires_grad = bool(t.requires_grad)
    if getattr(t, "__dict__", None):
        out.__dict__.update(t.__dict__)
    return out


# ----------------------------------------------------------------------------- foreign tensors
def as_tensor(obj: Any, what: str = "value") -> TensorBase:
    """``obj`` as a tinytorch tensor, sharing memory where it can: tinytorch tensors as they are,
    numpy arrays through numpy (converted where their bytes mean something else: see
    :func:`_array_operand`), anything else with ``__dlpack__`` (torch, cupy, jax; detached first if it
    has ``detach``) through DLPack, anything with ``__array__`` through numpy."""
    if isinstance(obj, TensorBase):
        return obj
    if isinstance(obj, np.ndarray):    # numpy's DLPack export refuses read-only and byte-swapped arrays
        return _wrap(_array_operand(obj))
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        if getattr(obj, "requires_grad", False) and hasattr(obj, "detach"):
            obj = obj.detach()  # DLPack exports no autograd state (torch refuses tensors that require grad)
        return from_dlpack(obj)
    if hasattr(obj, "__array__") or isinstance(obj, np.ndarray):
        return _wrap(_array_operand(np.asarray(obj)))
    raise TypeError(f"{what}: expected a tensor, a numpy array or an object with __dlpack__/__array__, "
                    f"got {type(obj).__name__}")
