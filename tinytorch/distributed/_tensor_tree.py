"""The tensors nested in a call's arguments or a module's outputs (tuples, lists and dicts), for
DistributedDataParallel and fully_shard: mapped (moved, cast, swapped) or listed. Not
``tinytorch.utils._pytree``: importing it loads all of ``tinytorch.utils`` (the data loader
included), which ``import tinytorch.nn`` would then pay for."""
from __future__ import annotations

from typing import Any, Callable

from tinytorch._tensor.tensor import Tensor


def map_tensors(fn: Callable[[Tensor], Any], obj: Any) -> Any:
    """``obj`` with ``fn(t)`` in place of every tensor ``t`` in it; its tuples, lists and dicts
    are rebuilt as plain ones, other values kept."""
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, tuple):
        return tuple(map_tensors(fn, o) for o in obj)
    if isinstance(obj, list):
        return [map_tensors(fn, o) for o in obj]
    if isinstance(obj, dict):
        return {k: map_tensors(fn, v) for k, v in obj.items()}
    return obj


def tensors_in(obj: Any) -> list:
    """The tensors in ``obj``, in order."""
    out: list = []
    map_tensors(out.append, obj)
    return out
