"""Padding layers over F.pad: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad (1d, 2d, 3d)."""
from __future__ import annotations

from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module


class _PadNd(Module):
    """Pads the last _n dims: padding is an int (every side) or (left, right, top, bottom, front, back)[:2n]."""
    _n = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (int(padding),) * (2 * self._n)
        if len(self.padding) != 2 * self._n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * self._n} ints, got {padding}")
        self.value = 0.0

    def forward(self, x):
        return F.pad(x, self.padding, self._mode, self.value if self._mode == "constant" else None)

    def extra_repr(self) -> str:
        return f"padding={self.padding}" + (f", value={self.value}" if isinstance(self, _ConstantPadNd) else "")


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value


class ZeroPad1d(_PadNd):
    _n = 1


class ZeroPad2d(_PadNd):
    _n = 2


class ZeroPad3d(_PadNd):
    _n = 3


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class ReflectionPad1d(_PadNd):
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    _n, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    _n, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    _n, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    _n, _mode = 3, "circular"
