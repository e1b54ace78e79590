"""Conv1d/2d/3d, ConvTranspose1d/2d/3d (PyTorch's default initialization); the Lazy variants live in
lazy_conv.py and are reachable here too, as in PyTorch."""
from __future__ import annotations

import math
from typing import Any

from tinytorch.tensor import Tensor
from tinytorch._creation import empty
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules.linear import _weight_and_bias
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch.nn.common_types import _device_t, _dtype_t, _padding_t, _size_any_t


def _tuple(v, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: _size_any_t, stride: _size_any_t = 1,
                 padding: _padding_t = 0, dilation: _size_any_t = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{type(self).__name__}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of 'zeros', 'reflect', 'replicate' or 'circular', "
                             f"but got padding_mode='{padding_mode}'")
        n = self._n
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _tuple(kernel_size, n), _tuple(stride, n), _tuple(dilation, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.padding_mode = padding_mode
        # F.pad's (left_last, right_last, ...) for padding_mode != 'zeros'; 'same' splits the total
        # as PyTorch does (the extra element, if any, on the right).
        if padding == "valid":
            self._pad_amounts = (0,) * (2 * n)
        elif padding == "same":
            totals = [d * (k - 1) for d, k in zip(reversed(self.dilation), reversed(self.kernel_size))]
            self._pad_amounts = tuple(v for t in totals for v in (t // 2, t - t // 2))
        else:
            self._pad_amounts = tuple(p for p in reversed(self.padding) for _ in range(2))
        _weight_and_bias(self, (out_channels, in_channels // groups, *self.kernel_size), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _pad(self, x):
        """(input, padding) for the convolution: padding_mode != 'zeros' pads the input itself."""
        if self.padding_mode == "zeros":
            return x, self.padding
        return F.pad(x, self._pad_amounts, mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}")
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) input."""
    _n = 2

    def forward(self, x: Tensor) -> Tensor:
        check_input(self, x, (3, 4), -3, self.in_channels)
        x, padding = self._pad(x)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) input."""
    _n = 1

    def forward(self, x: Tensor) -> Tensor:
        check_input(self, x, (2, 3), -2, self.in_channels)
        x, padding = self._pad(x)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolutions: weight (C_in, C_out / groups, *kernel_size), as PyTorch's."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: _size_any_t, stride: _size_any_t = 1,
                 padding: _size_any_t = 0, output_padding: _size_any_t = 0, groups: int = 1, bias: bool = True,
                 dilation: _size_any_t = 1, padding_mode: str = "zeros", device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be numbers, not {padding!r}")
        # _ConvNd builds an (out, in / groups, k) weight: build it for the swapped pair, then restore
        super().__init__(out_channels, in_channels, kernel_size, stride, padding, dilation, groups, False,
                         "zeros", device, dtype)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.output_padding = _tuple(output_padding, self._n)
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        self.reset_parameters()

    def _output_padding(self, x, output_size) -> tuple:
        """output_padding that gives ``output_size`` (its last n entries), checked against the sizes
        this input can give, as PyTorch's."""
        if output_size is None:
            return self.output_padding
        n = self._n
        size = list(output_size)[-n:]
        if len(size) != n:
            raise ValueError(f"{type(self).__name__}: output_size must have {n} or {n + 2} elements, got "
                             f"{list(output_size)}")
        pads = []
        for i in range(n):
            lo = ((x.shape[-n + i] - 1) * self.stride[i] - 2 * self.padding[i]
                  + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            hi = lo + max(self.stride[i], self.dilation[i]) - 1
            if not lo <= size[i] <= hi:
                raise ValueError(f"{type(self).__name__}: requested an output size of {size}, but valid sizes "
                                 f"range from {lo} to {hi} in dimension {i} (for an input of {list(x.shape)})")
            pads.append(size[i] - lo)
        return tuple(pads)

    def extra_repr(self) -> str:
        s = super().extra_repr()
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
        return s


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W) input."""
    _n = 2

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        check_input(self, x, (3, 4), -3, self.in_channels)
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(x, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L) input."""
    _n = 1

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        check_input(self, x, (2, 3), -2, self.in_channels)
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(x, output_size), self.groups, self.dilation)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""
    _n = 3

    def forward(self, x: Tensor) -> Tensor:
        check_input(self, x, (4, 5), -4, self.in_channels)
        x, padding = self._pad(x)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""
    _n = 3

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        check_input(self, x, (4, 5), -4, self.in_channels)
        return F.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(x, output_size), self.groups, self.dilation)


_LAZY = ("LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
         "LazyConvTranspose3d")


def __getattr__(name: str):
    # nn.modules.conv.LazyConv*: defined in lazy_conv.py (which imports this module)
    if name in _LAZY:
        from tinytorch.nn.modules import lazy_conv
        return getattr(lazy_conv, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
