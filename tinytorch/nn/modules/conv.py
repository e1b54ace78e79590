"""Conv1d, Conv2d (PyTorch's default initialization)."""
from __future__ import annotations

import math

import tinytorch
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter


def _tuple(v, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{type(self).__name__}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of 'zeros', 'reflect', 'replicate' or 'circular', "
                             f"but got padding_mode='{padding_mode}'")
        n = self._n
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
        self.weight = Parameter(tinytorch.empty(out_channels, in_channels // groups, *self.kernel_size,
                                                dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(tinytorch.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
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

    def forward(self, x):
        check_input(self, x, (3, 4), -3, self.in_channels)
        x, padding = self._pad(x)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) input."""
    _n = 1

    def forward(self, x):
        check_input(self, x, (2, 3), -2, self.in_channels)
        x, padding = self._pad(x)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)
