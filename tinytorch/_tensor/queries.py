"""PyTorch's top-level queries over tensors and types: result_type (type promotion), broadcast_shapes,
typename."""
from __future__ import annotations

from typing import Any

from tinytorch._core.size import Size
from tinytorch._tensor.creation import tensor as _tensor
from tinytorch._tensor.tensor import Tensor

__all__ = ["result_type", "broadcast_shapes", "typename"]


def result_type(tensor: Any, other: Any):
    """The dtype an arithmetic op on the two operands gives (PyTorch's promotion: 0-d tensors and
    Python numbers rank below dimensioned tensors), read from an addition of empty stand-ins.

    Args:
        tensor (Tensor or Number): an input tensor or number.
        other (Tensor or Number): an input tensor or number."""
    def probe(x):
        if isinstance(x, Tensor):
            return x.new_empty((0,) if x.dim() else ())
        return x
    a, b = probe(tensor), probe(other)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a, b = _tensor(a), _tensor(b)
    return (a + b).dtype


def broadcast_shapes(*shapes) -> tuple:
    """The shape the given shapes broadcast to (RuntimeError when they don't).

    Args:
        shapes (int or tuple of ints...): the shapes to broadcast."""
    out: list = []
    for s in shapes:
        s = (s,) if isinstance(s, int) else tuple(s)
        n = max(len(out), len(s))
        a, b = [1] * (n - len(out)) + out, [1] * (n - len(s)) + list(s)
        for x, y in zip(a, b):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: "
                                   f"{tuple(out)} and {s}")
        out = [y if x == 1 else x for x, y in zip(a, b)]
    return Size(out)


def typename(obj: Any) -> str:
    """PyTorch's type name of obj: 'torch.FloatTensor' for tensors, else module.qualname.

    Args:
        obj (object): the object whose type to represent."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if not hasattr(obj, "__qualname__"):
        module = type(obj).__module__
    return f"{module}.{name}" if module not in ("", "builtins") else name
