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


# Each public class is its family's mixin over the eager class it becomes (class statements, not
# type(), so type checkers and pickle see ordinary module-level classes).
class LazyConv1d(_LazyConvMixin, Conv1d):
    """``Conv1d`` whose ``in_channels`` is read from the first input."""
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvMixin, Conv2d):
    """``Conv2d`` whose ``in_channels`` is read from the first input."""
    cls_to_become = Conv2d


class LazyConv3d(_LazyConvMixin, Conv3d):
    """``Conv3d`` whose ``in_channels`` is read from the first input."""
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposeMixin, ConvTranspose1d):
    """``ConvTranspose1d`` whose ``in_channels`` is read from the first input."""
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeMixin, ConvTranspose2d):
    """``ConvTranspose2d`` whose ``in_channels`` is read from the first input."""
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeMixin, ConvTranspose3d):
    """``ConvTranspose3d`` whose ``in_channels`` is read from the first input."""
    cls_to_become = ConvTranspose3d
