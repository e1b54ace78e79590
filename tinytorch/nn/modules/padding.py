"""Padding layers over F.pad: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad (1d, 2d, 3d)."""
from __future__ import annotations

import inspect

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module
from tinytorch.nn.common_types import _size_any_t


class _PadNd(Module):
    """Pads the last _n dims: padding is an int (every side) or (left, right, top, bottom, front, back)[:2n]."""
    _n = 1
    _mode = "constant"

    def __init__(self, padding: _size_any_t) -> None:
        """
        Args:
            padding (int or tuple): the size of the padding. If is `int`, uses the same padding in all
                boundaries.
        """
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (int(padding),) * (2 * self._n)
        if len(self.padding) != 2 * self._n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * self._n} ints, got {padding}")
        self.value = 0.0

    def forward(self, x: Tensor) -> Tensor:
        return F.pad(x, self.padding, self._mode, self.value if self._mode == "constant" else None)

    def extra_repr(self) -> str:
        return f"padding={self.padding}" + (f", value={self.value}" if isinstance(self, _ConstantPadNd) else "")


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: _size_any_t, value: float) -> None:
        """
        Args:
            padding (int or tuple): the size of the padding. If is `int`, uses the same padding in all
                boundaries.
            value (float): fill value for ``'constant'`` padding.
        """
        super().__init__(padding)
        self.value = value


# The public layers, one per (family, dims): e.g. ReflectionPad2d pads the last 2 dims by reflection.
# Their docstrings: the family's summary, then the Args of the base's constructor.
_FAMILIES = (
    ("ZeroPad", _PadNd, "constant", "Pads the input tensor boundaries with zero."),
    ("ConstantPad", _ConstantPadNd, "constant", "Pads the input tensor boundaries with a constant value."),
    ("ReflectionPad", _PadNd, "reflect", "Pads the input tensor using the reflection of the input boundary."),
    ("ReplicationPad", _PadNd, "replicate", "Pads the input tensor using replication of the input boundary."),
    ("CircularPad", _PadNd, "circular", "Pads the input tensor using circular padding of the input boundary."),
)

__all__ = []
for _family, _base, _mode, _summary in _FAMILIES:
    for _n in (1, 2, 3):
        _name = f"{_family}{_n}d"
        _doc = _summary + "\n\n" + inspect.cleandoc(_base.__init__.__doc__)
        globals()[_name] = type(_name, (_base,), {"_n": _n, "_mode": _mode, "__module__": __name__, "__doc__": _doc})
        __all__.append(_name)
del _family, _base, _mode, _summary, _n, _name, _doc
