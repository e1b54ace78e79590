"""Conv1d/2d/3d, ConvTranspose1d/2d/3d (PyTorch's default initialization) and their Lazy variants,
whose ``in_channels`` is read from the first input (the mechanism: nn/modules/lazy.py)."""
from __future__ import annotations

import inspect
import math
from typing import Any

from tinytorch._tensor.tensor import Tensor
from tinytorch._tensor.creation import empty
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules._doc_notes import entries, common_notes, fill_doc, window_notes
from tinytorch.nn.modules.lazy import LazyModuleMixin, lazy_class
from tinytorch.nn.modules.linear import _lazy_weight_and_bias, _weight_and_bias
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch.nn.common_types import _device_t, _dtype_t, _padding_t, _size_any_t


def _tuple(v, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


_conv_entries = {
    **window_notes, **common_notes,
    "out_channels": "out_channels (int): number of channels produced by the convolution.",
    "groups": """groups (int, optional): number of blocked connections from input channels to output channels.
            Default: ``1``""",
    "padding_mode": """padding_mode (str, optional): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
            Default: ``'zeros'``""",
    "output_padding": """output_padding (int or tuple, optional): additional size added to one side of each dimension in
            the output shape. Default: ``0``""",
}


def _conv_args(*names: str) -> str:
    return entries(*(_conv_entries[n] for n in names))


# the Args of the convolutions; those after ``in_channels`` are the lazy ones' (which read it from the input)
convolution_notes = {
    "in_channels": "in_channels (int): number of channels in the input image.",
    "conv_args": _conv_args("out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias",
                            "padding_mode", "device", "dtype"),
    "conv_transpose_args": _conv_args("out_channels", "kernel_size", "stride", "padding", "output_padding", "groups",
                                      "bias", "dilation", "padding_mode", "device", "dtype"),
}


class _ConvNd(Module):
    _n = 2   # the number of spatial dims

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

    def forward(self, x: Tensor) -> Tensor:
        n = self._n
        check_input(self, x, (n + 1, n + 2), -(n + 1), self.in_channels)
        x, padding = self._pad(x)
        conv = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
        return conv(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)

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


@fill_doc(convolution_notes)
class Conv2d(_ConvNd):
    """Applies a 2D convolution over an input signal composed of several input planes.

    2-D convolution over (N, C_in, H, W) or (C_in, H, W) input.

    Args:
        {in_channels}
        {conv_args}"""
    _n = 2


@fill_doc(convolution_notes)
class Conv1d(_ConvNd):
    """Applies a 1D convolution over an input signal composed of several input planes.

    1-D convolution over (N, C_in, L) or (C_in, L) input.

    Args:
        {in_channels}
        {conv_args}"""
    _n = 1


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

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        n = self._n
        check_input(self, x, (n + 1, n + 2), -(n + 1), self.in_channels)
        conv_transpose = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return conv_transpose(x, self.weight, self.bias, self.stride, self.padding,
                              self._output_padding(x, output_size), self.groups, self.dilation)

    def extra_repr(self) -> str:
        s = super().extra_repr()
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
        return s


@fill_doc(convolution_notes)
class ConvTranspose2d(_ConvTransposeNd):
    """Applies a 2D transposed convolution operator over an input image composed of several input planes.

    2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W) input.

    Args:
        {in_channels}
        {conv_transpose_args}"""
    _n = 2


@fill_doc(convolution_notes)
class ConvTranspose1d(_ConvTransposeNd):
    """Applies a 1D transposed convolution operator over an input image composed of several input planes.

    1-D transposed convolution over (N, C_in, L) or (C_in, L) input.

    Args:
        {in_channels}
        {conv_transpose_args}"""
    _n = 1


@fill_doc(convolution_notes)
class Conv3d(_ConvNd):
    """Applies a 3D convolution over an input signal composed of several input planes.

    3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input.

    Args:
        {in_channels}
        {conv_args}"""
    _n = 3


@fill_doc(convolution_notes)
class ConvTranspose3d(_ConvTransposeNd):
    """Applies a 3D transposed convolution operator over an input image composed of several input planes.

    3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input.

    Args:
        {in_channels}
        {conv_transpose_args}"""
    _n = 3


# ----------------------------------------------------------------------------- lazy convolutions
class _LazyConvXdMixin(LazyModuleMixin):
    """What every lazy convolution shares; the two subclasses below add the constructor of the
    plain and the transposed family (their argument orders differ, as in PyTorch)."""

    _transposed = False

    def _lazy_placeholders(self, out_channels: int, bias: bool, device, dtype) -> None:
        _lazy_weight_and_bias(self, bias, device, dtype)
        self.out_channels = out_channels

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        n = self._n + 1
        if input.dim() not in (n, n + 1):
            raise RuntimeError(f"Expected {n}D (unbatched) or {n + 1}D (batched) input to {type(self).__name__}, "
                               f"but got input of size: {list(input.shape)}")
        return input.shape[1] if input.dim() == n + 1 else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self._transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


@fill_doc(convolution_notes)
class _LazyConvMixin(_LazyConvXdMixin):
    """The constructor of LazyConv1d/2d/3d.

    Args:
        {conv_args}"""

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._lazy_placeholders(out_channels, bias, device, dtype)


@fill_doc(convolution_notes)
class _LazyConvTransposeMixin(_LazyConvXdMixin):
    """The constructor of LazyConvTranspose1d/2d/3d.

    Args:
        {conv_transpose_args}"""
    _transposed = True

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._lazy_placeholders(out_channels, bias, device, dtype)


def _lazy_class(eager: type, family: type) -> type:
    """``Lazy<eager>`` of the family's mixin, documented by the family constructor's Args."""
    doc = (f"A :class:`torch.nn.{eager.__name__}` module with lazy initialization of the ``in_channels`` argument."
           f"\n\n``{eager.__name__}`` whose ``in_channels`` is read from the first input.\n\n"
           + inspect.cleandoc(family.__doc__).split("\n\n", 1)[1])
    return lazy_class(eager, family, __name__, doc)


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_class(c, _LazyConvMixin) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_class(c, _LazyConvTransposeMixin) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
