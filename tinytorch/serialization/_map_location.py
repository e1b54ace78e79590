"""``map_location``: where ``tinytorch.load`` puts a loaded tensor, for both checkpoint formats
(the safetensors layout places each tensor, PyTorch's formats each storage)."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Union

from tinytorch._core.dtype import device as _device
from tinytorch._tensor.tensor import Tensor

MAP_LOCATION = Optional[Union[Callable[[Tensor, str], Tensor], str, _device, Dict[str, str]]]


def place(t: Tensor, saved: str, map_location: MAP_LOCATION, fname: str, *, storage: bool = False) -> Tensor:
    """``t`` (loaded on the CPU, saved from device ``saved``) where ``map_location`` says: None
    keeps the saved device, a dict maps saved devices to new ones (the rest stay), a string or
    device is the one target, and a callable ``fn(t, saved)`` returns the placed tensor.

    ``storage``: ``t`` is a 1-D storage whose views are rebuilt on the result, so a callable must
    return a tensor of its shape and dtype (torch's callables take and return storages)."""
    ml = map_location
    if ml is None:
        target: Any = saved
    elif callable(ml) and not isinstance(ml, (str, _device)):
        out = ml(t, saved)
        if storage and (not isinstance(out, Tensor) or out.shape != t.shape or out.dtype is not t.dtype):
            raise RuntimeError(f"tinytorch.load: {fname}: map_location callable must return a tensor like the "
                               f"storage it was given ({tuple(t.shape)}, {t.dtype.name})")
        return out
    elif isinstance(ml, dict):
        target = ml.get(saved, saved)
    else:
        target = ml
    if str(_device(target)) == "cpu":
        return t
    try:
        return t.to(target)
    except Exception as e:
        raise RuntimeError(f"tinytorch.load: {fname}: can't restore a tensor onto {target!r} ({e}); pass "
                           "map_location='cpu' to load onto the CPU") from e
