"""Padding layers over F.pad: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad (1d, 2d, 3d)."""
from __future__ import annotations

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module
from tinytorch.nn.common_types import _size_any_t


class _PadNd(Module):
    """Pads the last _n dims: padding is an int (every side) or (left, right, top, bottom, front, back)[:2n]."""
    _n = 1
    _mode = "constant"

    def __init__(self, padding: _size_any_t) -> None:
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
        super().__init__(padding)
        self.value = value


# The public layers, one per (family, dims): e.g. ReflectionPad2d pads the last 2 dims by reflection.
_FAMILIES = (("ZeroPad", _PadNd, "constant"), ("ConstantPad", _ConstantPadNd, "constant"),
             ("ReflectionPad", _PadNd, "reflect"), ("ReplicationPad", _PadNd, "replicate"),
             ("CircularPad", _PadNd, "circular"))

__all__ = []
for _family, _base, _mode in _FAMILIES:
    for _n in (1, 2, 3):
        _name = f"{_family}{_n}d"
        globals()[_name] = type(_name, (_base,), {"_n": _n, "_mode": _mode, "__module__": __name__})
        __all__.append(_name)
del _family, _base, _mode, _n, _name
