"""``pin_memory(data)``: the DataLoader's ``pin_memory=True`` step, as PyTorch's
``torch.utils.data._utils.pin_memory.pin_memory``. Pinned (page-locked) batches copy to the GPU
faster and can copy asynchronously (``.to("cuda", non_blocking=True)``)."""
from __future__ import annotations

import collections.abc
from typing import Any

from tinytorch._tensor.tensor import Tensor


def pin_memory(data: Any) -> Any:
    """Copies every CPU tensor in ``data`` (tensors, mappings, namedtuples, tuples, lists, and
    objects with a ``pin_memory()`` method, nested) into pinned memory; leaves the rest as is."""
    if isinstance(data, Tensor):
        return data.pin_memory() if data.device.type == "cpu" and not data.is_pinned() else data
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v) for k, v in data.items()}
        try:
            return type(data)(pinned)            # type: ignore[call-arg]
        except TypeError:                        # a mapping type without a dict constructor
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # namedtuple
        return type(data)(*(pin_memory(v) for v in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(v) for v in data)
    if isinstance(data, collections.abc.Sequence):
        pinned_list = [pin_memory(v) for v in data]
        try:
            return type(data)(pinned_list)       # type: ignore[call-arg]
        except TypeError:
            return pinned_list
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
