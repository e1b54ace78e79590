"""LazyConv1d/2d/3d and LazyConvTranspose1d/2d/3d: ``in_channels`` read from the first input
(see lazy.py for the mechanism)."""
from __future__ import annotations

from typing import Any

from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from tinytorch.nn.modules.lazy import LazyModuleMixin, placeholders
from tinytorch.tensor import Tensor

__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]


class _LazyConvXdMixin(LazyModuleMixin):
    """What every lazy convolution shares; the two subclasses below add the constructor of the
    plain and the transposed family (their argument orders differ, as in PyTorch)."""

    _transposed = False

    def _lazy_placeholders(self, out_channels: int, bias: bool, device, dtype) -> None:
        UninitializedParameter, _ = placeholders()
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

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


class _LazyConvMixin(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._lazy_placeholders(out_channels, bias, device, dtype)


class _LazyConvTransposeMixin(_LazyConvXdMixin):
    _transposed = True

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._lazy_placeholders(out_channels, bias, device, dtype)


def _lazy_class(eager: type, family: type) -> type:
    """``Lazy<eager>``: the family's mixin over the eager class it becomes after the first input
    (a module-level class of this module: pickle and ``isinstance(m, eager)`` work as usual)."""
    name = "Lazy" + eager.__name__
    return type(name, (family, eager), {
        "__doc__": f"``{eager.__name__}`` whose ``in_channels`` is read from the first input.",
        "__module__": __name__, "__qualname__": name, "cls_to_become": eager})


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_class(c, _LazyConvMixin) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_class(c, _LazyConvTransposeMixin) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
