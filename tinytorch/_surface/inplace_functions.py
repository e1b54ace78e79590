"""Top-level functions PyTorch exposes that tinytorch already has as Tensor methods or composites:
clamp_min/clamp_max, fill, detach, logspace, range,
split_with_sizes/unsafe_*, row_stack, combinations, chain_matmul, addbmm and the default-device,
autocast-state and warn-always switches."""
from __future__ import annotations

import itertools
import math
import warnings
from typing import List, Optional, Sequence, Union

from tinytorch._tensor import autocast as _autocast
from tinytorch._tensor import creation as _creation
from tinytorch._core.dtype import device as _device_type
from tinytorch._tensor.tensor import Tensor

Number = Union[int, float, bool]

# The op schema exports PyTorch's in-place functions (relu_, sin_, clamp_, clamp_min_, zero_, fill_, ...:
# codegen/ops.py, inplace_function); this module holds only what the schema has no row for.


def clamp_min(input: Tensor, min) -> Tensor:
    """Clamps all elements in ``input`` to be at least ``min``.

    Args:
        input (Tensor): the input tensor.
        min (Number or Tensor): lower-bound of the range to be clamped to."""
    return input.clamp(min=min)


def clamp_max(input: Tensor, max) -> Tensor:
    """Clamps all elements in ``input`` to be at most ``max``.

    Args:
        input (Tensor): the input tensor.
        max (Number or Tensor): upper-bound of the range to be clamped to."""
    return input.clamp(max=max)


def fill(input: Tensor, value) -> Tensor:
    """Returns a tensor of the same shape, dtype and device as ``input`` filled with ``value``
    (differentiable: the gradient to ``input`` is zero).

    Args:
        input (Tensor): the input tensor.
        value (Number or 0-dim Tensor): the fill value."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    fill_value = value.to(input.dtype) if isinstance(value, Tensor) else value
    keep_none = _creation.zeros(tuple(input.shape), dtype="bool", device=input.device)
    return input.where(keep_none, fill_value)   # a select: NaN/inf in input don't leak; gradients go to value


def detach(input: Tensor) -> Tensor:
    """Returns a new tensor sharing ``input``'s storage, detached from the current graph.

    Args:
        input (Tensor): the input tensor."""
    return input.detach()


def detach_(input: Tensor) -> Tensor:
    """Detaches ``input`` from the graph that created it, making it a leaf.

    Args:
        input (Tensor): the input tensor."""
    return input.detach_()


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
    exponents = _creation.linspace(start, end, steps, dtype="float64", device="cpu")
    values = (math.log(base) * exponents).exp() if base > 0 else exponents.new_tensor(
        [base ** float(e) for e in exponents.tolist()])
    from tinytorch._core.dtype import get_default_dtype
    out = values.to(dtype=dtype or get_default_dtype(), device=device or "cpu")
    return out.requires_grad_(requires_grad) if requires_grad else out


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
    from tinytorch._core.dtype import get_default_dtype
    out = _creation.tensor([start + i * step for i in itertools.islice(itertools.count(), count)],
                           dtype=dtype or get_default_dtype(), device=device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> List[Tensor]:
    """Splits ``input`` into chunks of the given sizes along ``dim`` (they must sum to its size).

    Args:
        input (Tensor): the tensor to split.
        split_sizes (list of int): the sizes of the chunks.
        dim (int): dimension along which to split the tensor. Default: ``0``."""
    total = input.shape[dim]
    if sum(split_sizes) != total or any(s < 0 for s in split_sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {total} (input tensor's size "
                           f"at dimension {dim}), but got split_sizes={list(split_sizes)}")
    return list(input.split(list(split_sizes), dim))


def unsafe_split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> List[Tensor]:
    """Same as :func:`tinytorch.split` (PyTorch's variant skips view tracking; tinytorch's views are safe).

    Args:
        tensor (Tensor): tensor to split.
        split_size_or_sections (int or list of int): size of a single chunk or list of sizes for each chunk.
        dim (int): dimension along which to split the tensor. Default: ``0``."""
    return list(tensor.split(split_size_or_sections, dim))


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> List[Tensor]:
    """Same as :func:`tinytorch.split_with_sizes`.

    Args:
        input (Tensor): the tensor to split.
        split_sizes (list of int): the sizes of the chunks.
        dim (int): dimension along which to split the tensor. Default: ``0``."""
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> List[Tensor]:
    """Same as :func:`tinytorch.chunk`.

    Args:
        input (Tensor): the tensor to split.
        chunks (int): number of chunks to return.
        dim (int): dimension along which to split the tensor. Default: ``0``."""
    return list(input.chunk(chunks, dim))


def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Alias of :func:`tinytorch.vstack`.

    Args:
        tensors (sequence of Tensors): sequence of tensors to concatenate."""
    from tinytorch._ops.index import vstack
    return vstack(tensors)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Computes the length-``r`` combinations of the 1-D ``input`` (``itertools.combinations``, or
    ``combinations_with_replacement`` when ``with_replacement``), as rows of a 2-D tensor.

    Args:
        input (Tensor): 1-D tensor.
        r (int, optional): number of elements to combine. Default: ``2``.
        with_replacement (bool, optional): whether to allow duplication in combination. Default: ``False``."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(_builtin_range(input.shape[0]), r))
    if not rows:
        return input.new_empty((0, r))
    index = _creation.tensor(rows, dtype="int64", device=input.device)
    return input[index.reshape(-1)].reshape(len(rows), r)


def _builtin_range(n: int):
    import builtins
    return builtins.range(n)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """Returns the matrix product of the N 2-D tensors (deprecated in PyTorch for
    :func:`tinytorch.linalg.multi_dot`).

    Args:
        matrices (Tensors...): a sequence of 2 or more 2-D tensors whose product is to be determined."""
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead (chain_matmul, argument {i}).")
    if len(matrices) == 1:
        return matrices[0].clone()
    from tinytorch import linalg
    return linalg.multi_dot(list(matrices))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """Performs a batch matrix-matrix product of ``batch1`` and ``batch2``, reduced over the batch, and
    adds ``input``: ``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``.

    Args:
        input (Tensor): matrix to be added.
        batch1 (Tensor): the first batch of matrices to be multiplied.
        batch2 (Tensor): the second batch of matrices to be multiplied.
        beta (Number, optional): multiplier for ``input``.
        alpha (Number, optional): multiplier for ``batch1 @ batch2``."""
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError(f"addbmm: batch1 and batch2 must be 3D tensors, got {batch1.dim()}D and {batch2.dim()}D")
    product = (batch1 @ batch2).sum(0)
    if beta == 0:   # input is ignored (NaN in it does not propagate), as in PyTorch
        return product * alpha if alpha != 1 else product
    return input * beta + product * alpha if (beta != 1 or alpha != 1) else input + product


def is_signed(input: Tensor) -> bool:
    """Returns True if ``input``'s data type is a signed type.

    Args:
        input (Tensor): the input tensor."""
    return input.is_signed()


def adjoint(input: Tensor) -> Tensor:
    """Returns a view of ``input`` with its last two dimensions transposed (the conjugate transpose;
    tinytorch has no complex dtypes).

    Args:
        input (Tensor): the input tensor."""
    return input.adjoint()


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
    base = _creation.empty(extent, dtype=dtype, device=device)
    out = base.as_strided(size, stride)
    return out.detach().requires_grad_(requires_grad) if requires_grad else out.detach()


# Process state PyTorch reads through top-level functions
_default_device: Optional[_device_type] = None
_warn_always = False
_interop_threads = 1


def get_default_device() -> _device_type:
    """Gets the default device tensors are allocated on (``cpu`` unless :func:`set_default_device` changed it)."""
    return _default_device if _default_device is not None else _device_type("cpu")


def set_default_device(device) -> None:
    """Sets the default device reported by :func:`get_default_device`. tinytorch's factory functions
    allocate on ``cpu`` unless given ``device=``; only ``None`` and ``"cpu"`` are accepted, anything else
    raises NotImplementedError rather than silently allocating elsewhere.

    Args:
        device (device or str or None): the device to set as default."""
    global _default_device
    if device is not None and _device_type(device).type != "cpu":
        raise NotImplementedError(f"set_default_device({device!r}): tinytorch's factory functions always default "
                                  "to cpu; pass device= explicitly")
    _default_device = None if device is None else _device_type(device)


def set_default_tensor_type(t) -> None:
    """Sets the default floating point tensor type (deprecated in PyTorch for :func:`set_default_dtype`).

    Args:
        t (type or str): the floating point tensor type or its name (``'torch.FloatTensor'``, ``tinytorch.DoubleTensor``)."""
    from tinytorch._core.dtype import float16, float32, float64, bfloat16, set_default_dtype
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    by_name = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16, "BFloat16Tensor": bfloat16}
    key = name.rsplit(".", 1)[-1]
    if key not in by_name or name.startswith("torch.cuda") or "cuda" in name:
        raise TypeError(f"set_default_tensor_type: only floating-point CPU types are supported, got {name}")
    set_default_dtype(by_name[key])


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Returns whether autocast is enabled for ``device_type`` (default ``'cuda'``).

    Args:
        device_type (str, optional): the device type to ask about. Default: ``'cuda'``."""
    active = _autocast.state.active
    return active is not None and active[0] == device_type


def get_autocast_dtype(device_type: str):
    """Returns the dtype autocast uses on ``device_type`` (``float16`` on cuda, ``bfloat16`` on cpu by default).

    Args:
        device_type (str): the device type to ask about."""
    active = _autocast.state.active
    if active is not None and active[0] == device_type:
        return active[1]
    return _autocast_dtypes.get(device_type, _autocast.DEFAULT_DTYPE.get(device_type, _autocast.bfloat16))


_autocast_dtypes: dict = {}


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Sets the dtype autocast uses on ``device_type`` when it is switched on by :func:`set_autocast_enabled`.

    Args:
        device_type (str): the device type.
        dtype (tinytorch.dtype): the autocast dtype."""
    _autocast_dtypes[device_type] = dtype
    active = _autocast.state.active
    if active is not None and active[0] == device_type:
        _autocast.state.active = (device_type, dtype)


def set_autocast_enabled(device_type, enabled: Optional[bool] = None) -> None:
    """Switches autocast on or off for ``device_type`` in this thread (what ``tinytorch.autocast`` regions do);
    the one-argument form ``set_autocast_enabled(enabled)`` means ``'cuda'``.

    Args:
        device_type (str): the device type.
        enabled (bool): whether autocast is on."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    if enabled:
        _autocast.state.active = (device_type, get_autocast_dtype(device_type))
    elif is_autocast_enabled(device_type):
        _autocast.state.active = None


def is_inference_mode_enabled() -> bool:
    """Returns True if inference mode is currently enabled (tinytorch: gradients are off)."""
    from tinytorch.autograd.grad_mode import is_inference_mode_enabled as enabled
    return enabled()


def get_num_interop_threads() -> int:
    """Returns the number of threads used for inter-op parallelism on CPU (tinytorch runs ops one at a time: 1)."""
    return _interop_threads


def set_num_interop_threads(num: int) -> None:
    """Sets the number of threads used for inter-op parallelism (recorded; tinytorch runs ops one at a time).

    Args:
        num (int): the number of threads, at least 1."""
    global _interop_threads
    if not isinstance(num, int) or num < 1:
        raise RuntimeError(f"Expected positive number of threads, got {num}")
    _interop_threads = num


def set_warn_always(b: bool) -> None:
    """When on, warnings that are issued once per process are issued every time.

    Args:
        b (bool): if True, warn always."""
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    """Returns True if the global warn_always flag is turned on."""
    return _warn_always


def is_distributed(input: Tensor) -> bool:
    """Returns False: tinytorch tensors are never distributed tensors.

    Args:
        input (Tensor): the input tensor."""
    return False


__all__ = sorted([
    "clamp_min", "clamp_max", "fill", "detach",
    "detach_", "logspace", "range", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk",
    "row_stack", "combinations", "chain_matmul", "addbmm", "is_signed", "adjoint", "empty_strided",
    "get_default_device", "set_default_device", "set_default_tensor_type", "is_autocast_enabled",
    "get_autocast_dtype", "set_autocast_dtype", "set_autocast_enabled", "is_inference_mode_enabled",
    "get_num_interop_threads", "set_num_interop_threads", "set_warn_always", "is_warn_always_enabled",
    "is_distributed",
])
