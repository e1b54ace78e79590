"""Tensor factories: tensor, as_tensor, asarray, from_numpy, zeros/ones/full/empty (+ _like), empty_strided,
arange, range, linspace, logspace, eye, scalar_tensor."""
from __future__ import annotations

import itertools
import math
import numbers
import operator
import warnings
from typing import Optional, Sequence, Union

import numpy as np

from tinytorch import _C
from tinytorch._core.dtype import DTYPES, bfloat16, bool_, complex64, complex128, default_device, \
    device as _device, float32, float64, from_numpy_dtype, get_default_dtype, int64, to_dtype
from tinytorch._core.tensor_base import TensorBase as Tensor, _wrap  # (tinytorch.Tensor's base: every tensor is one)
from tinytorch._tensor.doc_notes import factory_notes, fill_doc, filled_doc


def _shape(size, op: str = "empty") -> list[int]:
    """The int list of a size given as ints or one sequence of them; as PyTorch, TypeError for
    anything that is not an integer (a float, a string, a bool), instead of converting it."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return _size_list(size, op)


def _size_list(size, op: str) -> list[int]:
    out = []
    for i, s in enumerate(size):
        if isinstance(s, bool) or not hasattr(s, "__index__") or \
                (isinstance(s, Tensor) and (s.dtype.is_floating_point or s.dtype is bool_)):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {i}")
        out.append(operator.index(s))
    return out


_CPU = _device("cpu")


def _dev(device) -> _C.Device:
    """The device a factory function allocates on: ``device``, else the default device."""
    if device is None:
        return (default_device() or _CPU)._impl
    return _device(device)._impl


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(data) -> "dtype":
    """PyTorch's inference: bools -> bool, ints -> int64, any float -> default dtype, any complex ->
    the default dtype's complex type."""
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
        elif isinstance(x, numbers.Complex):
            kinds.add("c")
        else:
            raise TypeError(f"tensor(): could not infer dtype of {type(x).__name__}")
    walk(data)
    if "c" in kinds or any(not isinstance(k, str) and k.is_complex for k in kinds):
        return complex128 if get_default_dtype() is float64 else complex64
    if "f" in kinds or any(not isinstance(k, str) and k.is_floating_point for k in kinds):
        return get_default_dtype()
    if "i" in kinds or any(not isinstance(k, str) and k.name not in ("bool",) for k in kinds):
        return int64
    return bool_ if kinds else get_default_dtype()


@fill_doc(factory_notes)
def tensor(data, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Constructs a tensor with no autograd history by copying ``data``.

    Args:
        {data_args}
        {requires_grad}
        {pin_memory}"""
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
        np_dtype = np.float64 if d.is_floating_point else np.complex128 if d.is_complex else \
            (np.bool_ if d is bool_ else np.int64)
        if d.name in _INT_RANGE:    # PyTorch's checked conversion, not numpy's wrap
            raw = np.array(data)
            lo, hi = _INT_RANGE[d.name] if raw.dtype.kind in "iub" else _FLOAT_RANGE[d.name]
            if raw.size and not (raw.min() >= lo and raw.max() <= hi):     # NaN fails too
                raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
        arr = np.array(data, dtype=np_dtype)
        out = _from_array(arr, d)
    if device is None:
        device = default_device()
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


def _normalized_bools(arr: np.ndarray) -> np.ndarray:
    """``arr`` itself, or for a bool array holding bytes other than 0 and 1 (a reinterpreted uint8
    buffer) a copy with each nonzero byte as True: the kernels read a bool byte as 0 or 1."""
    if arr.dtype == np.bool_ and arr.size and arr.view(np.uint8).max() > 1:
        return arr.view(np.uint8) != 0
    return arr


def _from_array(arr: np.ndarray, d) -> Tensor:
    arr = _normalized_bools(arr)
    # np.array, not np.ascontiguousarray: the latter turns 0-d arrays into 1-d ones
    if d is bfloat16:
        return _wrap(_C.from_numpy(np.array(arr, dtype=np.float32, order="C")).to_dtype(d.code))
    return _wrap(_C.from_numpy(np.array(arr, dtype=d.to_numpy(), order="C")))


@fill_doc(factory_notes)
def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Converts :attr:`data` into a tensor, sharing data and preserving autograd history if possible.

    Args:
        {data_args}"""
    if device is None:
        device = default_device()
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if isinstance(data, np.ndarray) and dtype is None and device is None:
        try:
            return from_numpy(data)
        except (TypeError, ValueError):
            pass
    return tensor(data, dtype=dtype, device=device)


def from_numpy(arr: np.ndarray) -> Tensor:
    """Creates a Tensor sharing memory with the numpy array.

    A bool array holding bytes other than 0 and 1 (a uint8 buffer viewed as bool) is copied, each
    nonzero byte becoming True, as the kernels read a bool byte as 0 or 1.

    Args:
        arr (numpy.ndarray): the array whose memory the tensor shares."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    if not arr.dtype.isnative:   # sharing memory would reinterpret the bytes (4.6e-41 for a big-endian 1.0)
        raise ValueError(f"from_numpy: given numpy array has byte order different from the native byte order "
                         f"({arr.dtype.str}). Conversion between byte orders is currently not supported; "
                         f"tinytorch.tensor(arr) copies and converts")
    return _wrap(_C.from_numpy(_normalized_bools(arr)))


@fill_doc(factory_notes)
def empty(*size, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Returns a tensor filled with uninitialized data. The shape of the tensor is defined by the variable
    argument :attr:`size`.

    Args:
        {size}

    Keyword args:
        {factory_kwargs}
        {pin_memory}"""
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    return _finish(_wrap(_C.empty(_shape(size, "empty"), d.code, _dev(device))), requires_grad)


@fill_doc(factory_notes)
def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Creates a tensor of size :attr:`size` filled with :attr:`fill_value`.

    Args:
        {size_sequence}
        fill_value (Scalar): the value to fill the output tensor with.

    Keyword args:
        {factory_kwargs}"""
    if dtype is None:
        dtype = bool_ if isinstance(fill_value, bool) else (int64 if isinstance(fill_value, int) else get_default_dtype())
    d = to_dtype(dtype)
    shape = _size_list([size] if isinstance(size, int) else size, "full")
    return _finish(_wrap(_C.full(shape, float(fill_value), d.code, _dev(device))), requires_grad)


_FILLED_DOC = """Returns a tensor filled with the scalar value `{value}`, with the shape defined by the variable
    argument :attr:`size`.

    Args:
        {{size}}

    Keyword args:
        {{factory_kwargs}}"""   # formatted, then filled (hence the doubled braces)


def _filled_form(name: str, value: int):
    """``zeros`` / ``ones``: ``full(size, value)`` in the default dtype unless given."""
    def filled(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        return full(_shape(size, name), float(value), dtype=dtype or get_default_dtype(), device=device,
                    requires_grad=requires_grad)
    filled.__name__ = filled.__qualname__ = name
    filled.__doc__ = filled_doc(_FILLED_DOC.format(value=value), factory_notes)
    return filled


zeros = _filled_form("zeros", 0)
ones = _filled_form("ones", 1)


def _like(x: Tensor, dtype, device):
    return (dtype or x.dtype), (device or x.device)


_LIKE_DOC = """Returns a tensor with the same size as :attr:`input` {what}.

    Args:
        {{like_input}}

    Keyword args:
        {{like_kwargs}}"""   # formatted, then filled (hence the doubled braces)


def like_form(factory, name: str, what: str):
    """``<factory>_like(input, *, dtype, device, requires_grad)``: ``factory`` at input's shape, with
    input's dtype and device unless given."""
    def like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A002
        d, dev = _like(input, dtype, device)
        return factory(input.shape, dtype=d, device=dev, requires_grad=requires_grad)
    like.__name__ = like.__qualname__ = name
    like.__module__ = factory.__module__
    like.__doc__ = filled_doc(_LIKE_DOC.format(what=what), factory_notes)
    return like


empty_like = like_form(empty, "empty_like", "that is uninitialized")
zeros_like = like_form(zeros, "zeros_like", "filled with the scalar value `0`")
ones_like = like_form(ones, "ones_like", "filled with the scalar value `1`")


_NEW_DOC = """Returns a Tensor of size :attr:`size` {what}. By default, the returned Tensor
        has the same :class:`dtype` and :class:`device` as this tensor.

        Args:
            {{size_sequence}}

        Keyword args:
            {{new_kwargs}}"""   # a method's indent; formatted, then filled (hence the doubled braces)


def new_form(factory, name: str, what: str):
    """``Tensor.new_<factory>(*size, dtype, device, requires_grad)``: ``factory`` with self's dtype and
    device unless given."""
    def new(self, *size, dtype=None, device=None, requires_grad=False):
        return factory(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
    new.__name__, new.__qualname__ = name, f"Tensor.{name}"
    new.__doc__ = filled_doc(_NEW_DOC.format(what=what), factory_notes)
    return new


@fill_doc(factory_notes)
def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    """Returns a tensor filled with :attr:`fill_value`, with the same size as :attr:`input`.

    Args:
        {like_input}
        fill_value (Scalar): the value to fill the output tensor with.

    Keyword args:
        {like_kwargs}"""
    d, dev = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=d, device=dev, requires_grad=requires_grad)


@fill_doc(factory_notes)
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """1-D tensor of values in [start, end) taken with common difference step.

    Args:
        start (Number): the starting value for the set of points.
        end (Number): the ending value for the set of points. Default: ``None``
        step (Number, optional): the gap between each pair of adjacent points. Default: ``1``

    Keyword args:
        {factory_kwargs}"""
    if end is None:
        start, end = 0, start
    is_int = all(isinstance(v, int) for v in (start, end, step))
    d = to_dtype(dtype) if dtype is not None else (int64 if is_int else get_default_dtype())
    if is_int:
        impl = _C.arange(int(start), int(end), int(step), d.code, _dev(device))
    else:
        impl = _C.arange(float(start), float(end), float(step), d.code, _dev(device))
    return _finish(_wrap(impl), requires_grad)


@fill_doc(factory_notes)
def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Creates a one-dimensional tensor of size :attr:`steps` whose values are evenly spaced from
    :attr:`start` to :attr:`end`, inclusive.

    Args:
        start (float or Tensor): the starting value for the set of points.
        end (float or Tensor): the ending value for the set of points.
        steps (int): size of the constructed tensor.

    Keyword args:
        {factory_kwargs}"""
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    return _finish(_wrap(_C.linspace(float(start), float(end), int(steps), d.code, _dev(device))), requires_grad)


@fill_doc(factory_notes)
def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Returns a 2-D tensor with ones on the diagonal and zeros elsewhere.

    Args:
        n (int): the number of rows.
        m (int, optional): the number of columns with default being :attr:`n`. Default: ``None``

    Keyword args:
        {factory_kwargs}"""
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    n = operator.index(n)
    m = None if m is None else operator.index(m)
    if n < 0:
        raise RuntimeError(f"eye: n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"eye: m must be greater or equal to 0, got {m}")
    return _finish(_wrap(_C.eye(n, m, d.code, _dev(device))), requires_grad)


Number = Union[int, float, bool]


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """Creates a one-dimensional tensor of size ``steps`` whose values are evenly spaced from
    ``base ** start`` to ``base ** end``, inclusive, on a logarithmic scale with base ``base``.

    Args:
        start (float or Tensor): the starting value for the set of points.
        end (float or Tensor): the ending value for the set of points.
        steps (int): size of the constructed tensor.
        base (float): base of the logarithm function. Default: ``10.0``.
        dtype (tinytorch.dtype, optional): the desired data type of returned tensor.
        layout (tinytorch.layout, optional): the desired layout; only ``tinytorch.strided``.
        device (tinytorch.device, optional): the desired device of returned tensor.
        requires_grad (bool, optional): if autograd should record operations on the returned tensor."""
    exponents = linspace(start, end, steps, dtype="float64", device="cpu")
    values = (math.log(base) * exponents).exp() if base > 0 else exponents.new_tensor(
        [base ** float(e) for e in exponents.tolist()])
    out = values.to(dtype=dtype or get_default_dtype(), device=device or default_device() or _CPU)
    return out.requires_grad_(requires_grad) if requires_grad else out


# torch.range shadows the builtin in this module: nothing here calls the builtin
def range(start: Number = 0, end: Optional[Number] = None, step: Number = 1, *, dtype=None, layout=None,
          device=None, requires_grad: bool = False) -> Tensor:  # noqa: A001  (torch.range)
    """Returns a 1-D tensor of size ``floor((end - start) / step) + 1`` with values from ``start`` to
    ``end`` *inclusive* with step ``step``. Deprecated in PyTorch in favour of :func:`tinytorch.arange`.

    Args:
        start (Number): the starting value for the set of points. Default: ``0``.
        end (Number): the ending value for the set of points.
        step (Number): the gap between each pair of adjacent points. Default: ``1``.
        dtype (tinytorch.dtype, optional): the desired data type of returned tensor (default: the default dtype).
        layout (tinytorch.layout, optional): the desired layout; only ``tinytorch.strided``.
        device (tinytorch.device, optional): the desired device of returned tensor.
        requires_grad (bool, optional): if autograd should record operations on the returned tensor."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior "
                  "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
                  "values in [start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("range: upper bound and larger bound inconsistent with step sign")
    count = int(math.floor((end - start) / step)) + 1
    out = tensor([start + i * step for i in itertools.islice(itertools.count(), count)],
                 dtype=dtype or get_default_dtype(), device=device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Creates a tensor with the specified ``size`` and ``stride``, filled with undefined data.

    Args:
        size (tuple of int): the shape of the output tensor.
        stride (tuple of int): the strides of the output tensor.
        dtype (tinytorch.dtype, optional): the desired data type of returned tensor.
        layout (tinytorch.layout, optional): the desired layout; only ``tinytorch.strided``.
        device (tinytorch.device, optional): the desired device of returned tensor.
        requires_grad (bool, optional): if autograd should record operations on the returned tensor.
        pin_memory (bool, optional): ignored (tinytorch's CPU memory is not pinned)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {list(size)}, stride {list(stride)}")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided: negative size or stride: size {list(size)}, stride {list(stride)}")
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = empty(extent, dtype=dtype, device=device)
    out = base.as_strided(size, stride)
    return out.detach().requires_grad_(requires_grad) if requires_grad else out.detach()


def asarray(obj, *, dtype=None, device=None, copy: Optional[bool] = None, requires_grad: bool = False) -> Tensor:
    """Converts ``obj`` (a tensor, NumPy array, DLPack capsule holder, scalar or sequence) to a tensor,
    sharing memory when it can unless ``copy=True``.

    Args:
        obj (object): the object to convert.
        dtype (tinytorch.dtype, optional): the datatype of the returned tensor.
        device (tinytorch.device, optional): the device of the returned tensor.
        copy (bool, optional): True always copies, False never copies (raises if a copy is needed).
        requires_grad (bool, optional): whether the result records operations for autograd."""
    out = as_tensor(obj, dtype=dtype, device=device)
    if copy is False and isinstance(obj, Tensor) and out is not obj and \
            (out.dtype != obj.dtype or out.device != obj.device):
        raise ValueError("asarray(copy=False): converting the tensor needs a copy (dtype or device differs)")
    if copy:
        out = out.clone() if isinstance(obj, Tensor) or out.data_ptr() == _data_ptr(obj) else out
    return out.requires_grad_(True) if requires_grad else out


def _data_ptr(obj) -> Optional[int]:
    interface = getattr(obj, "__array_interface__", None)
    return interface["data"][0] if interface else None


@fill_doc(factory_notes)
def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding s (of the default dtype unless given).

    Args:
        s (Number): the value of the 0-dimensional tensor.

    Keyword args:
        {factory_kwargs}"""
    t = tensor(s, dtype=dtype or get_default_dtype(), device=device)
    return t.requires_grad_() if requires_grad else t
