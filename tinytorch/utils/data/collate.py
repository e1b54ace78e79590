"""``default_collate`` / ``default_convert``: merge a list of samples into a batch.

Tensors are stacked through numpy (one ``np.stack`` copy into fresh memory, then a zero-copy
``from_numpy``), which is as fast as a native stack for the contiguous CPU samples a loader sees."""
from __future__ import annotations

import collections.abc
import copy
import numbers
import re
from typing import Any, List

import numpy as np

from tinytorch._tensor.creation import from_numpy, tensor
from tinytorch._core.dtype import bool_, float64, from_numpy_dtype, int64
from tinytorch._tensor.raw_bits import from_bits, to_bits
from tinytorch._tensor.tensor import Tensor

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _stack_arrays(arrays: List[np.ndarray]):
    return from_numpy(np.stack(arrays))


def _stack_tensors(batch: List[Tensor]) -> Tensor:
    dtype = batch[0].dtype
    for t in batch:
        if t.dtype is not dtype:
            raise RuntimeError(f"default_collate: expected all tensors to have dtype {dtype}, got {t.dtype}")
        if tuple(t.shape) != tuple(batch[0].shape):
            raise RuntimeError("stack expects each tensor to be equal size, but got "
                               f"{list(batch[0].shape)} at entry 0 and {list(t.shape)} at another entry")
    return from_bits(np.stack([to_bits(t) for t in batch]), dtype)


def default_convert(data: Any) -> Any:
    r"""Convert each NumPy array element into a :class:`tinytorch.Tensor`.

    If the input is a `Sequence`, `Collection`, or `Mapping`, it tries to convert each element inside
    to a :class:`tinytorch.Tensor`. If the input is not a NumPy array, it is left unchanged. This is
    used as the default function for collation when both `batch_sampler` and `batch_size` are NOT
    defined in :class:`~tinytorch.utils.data.DataLoader`."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "SaUO":
            return data
        return from_numpy(np.asarray(data, order="C"))
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return tensor(data.item(), dtype=_np_scalar_dtype(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore[call-arg]
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _np_scalar_dtype(x: np.generic):
    return from_numpy_dtype(x.dtype)


def default_collate(batch: List[Any]) -> Any:
    r"""Take in a batch of data and put the elements within the batch into a tensor with an
    additional outer dimension - batch size.

    The exact output type can be a :class:`tinytorch.Tensor`, a `Sequence` of
    :class:`tinytorch.Tensor`, a Collection of :class:`tinytorch.Tensor`, or left unchanged,
    depending on the input type. This is used as the default function for collation when
    `batch_size` or `batch_sampler` is defined in :class:`~tinytorch.utils.data.DataLoader`.

    Here is the general input type (based on the type of the element within the batch) to output
    type mapping:

        * :class:`tinytorch.Tensor` -> :class:`tinytorch.Tensor` (with an added outer dimension batch size)
        * NumPy Arrays -> :class:`tinytorch.Tensor`
        * `float` -> :class:`tinytorch.Tensor` (float64)
        * `int` -> :class:`tinytorch.Tensor` (int64)
        * `str` -> `str` (unchanged)
        * `bytes` -> `bytes` (unchanged)
        * `Mapping[K, V_i]` -> `Mapping[K, default_collate([V_1, V_2, ...])]`
        * `NamedTuple[V1_i, V2_i, ...]` -> `NamedTuple[default_collate([V1_1, V1_2, ...]), ...]`
        * `Sequence[V1_i, V2_i, ...]` -> `Sequence[default_collate([V1_1, V1_2, ...]), ...]`"""
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return _stack_tensors(batch)
    if isinstance(elem, np.ndarray):
        if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(default_collate_err_msg_format.format(elem.dtype))
        return _stack_arrays(batch)
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        if elem.shape == () and _np_str_obj_array_pattern.search(elem.dtype.str) is None:
            return from_numpy(np.array(batch, dtype=elem.dtype))
    if isinstance(elem, bool):
        return tensor(batch, dtype=bool_)
    if isinstance(elem, numbers.Integral):
        return tensor(batch, dtype=int64)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                # The mapping type may have extra properties, so keep them by copying and updating.
                clone = copy.copy(elem)
                clone.update({key: default_collate([d[key] for d in batch]) for key in elem})
                return clone
            return elem_type({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if _is_namedtuple(elem):
        return elem_type(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(list(samples)) for samples in transposed]  # as PyTorch: tuples -> list
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(list(samples))
                return clone
            return elem_type([default_collate(list(samples)) for samples in transposed])
        except TypeError:
            return [default_collate(list(samples)) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))
