"""MaxPool1d/2d/3d, AvgPool1d/2d/3d, the adaptive, LP, MaxUnpool and fractional max poolings."""
from __future__ import annotations

from typing import Any, Optional

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules._doc_notes import fill_doc, pooling_notes, window_notes
from tinytorch.nn.modules.module import Module
from tinytorch.nn.common_types import _size_any_opt_t, _size_any_t


@fill_doc(pooling_notes)
class MaxPool2d(Module):
    """Applies a 2D max pooling over an input signal composed of several input planes.

    Args:
        {max_pool_args}"""
    _n = 2   # the number of spatial dims (MaxPool1d and MaxPool3d derive from MaxPool2d)

    def __init__(self, kernel_size: _size_any_t, stride: Optional[_size_any_t] = None, padding: _size_any_t = 0,
                 dilation: _size_any_t = 1, return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride if stride is not None else kernel_size, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, x: Tensor) -> Any:
        n = self._n
        check_input(self, x, (n + 1, n + 2))
        max_pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[n - 1]
        return max_pool(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                        self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


@fill_doc(pooling_notes)
class AvgPool2d(Module):
    """Applies a 2D average pooling over an input signal composed of several input planes.

    Args:
        {avg_pool_args}
        {divisor_override}"""
    _n = 2   # AvgPool3d derives from AvgPool2d (and AvgPool1d, which takes no divisor_override)

    def __init__(self, kernel_size: _size_any_t, stride: Optional[_size_any_t] = None, padding: _size_any_t = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: Optional[int] = None) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride if stride is not None else kernel_size, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, x: Tensor) -> Tensor:
        n = self._n
        check_input(self, x, (n + 1, n + 2))
        avg_pool = F.avg_pool2d if n == 2 else F.avg_pool3d
        return avg_pool(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                        self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptivePoolNd(Module):
    _n = 2   # the number of spatial dims

    def __init__(self, output_size: _size_any_opt_t) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


@fill_doc(pooling_notes)
class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Applies a 2D adaptive average pooling over an input signal composed of several input planes.

    Args:
        {adaptive_output_size}"""
    _n = 2   # AdaptiveAvgPool1d and AdaptiveAvgPool3d derive from AdaptiveAvgPool2d

    def forward(self, x: Tensor) -> Tensor:
        n = self._n
        check_input(self, x, (n + 1, n + 2))
        adaptive_avg_pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[n - 1]
        return adaptive_avg_pool(x, self.output_size)


@fill_doc(pooling_notes)
class MaxPool1d(MaxPool2d):
    """Applies a 1D max pooling over an input signal composed of several input planes.

    Args:
        {max_pool_args}"""
    _n = 1


@fill_doc(pooling_notes)
class AvgPool1d(AvgPool2d):
    """Applies a 1D average pooling over an input signal composed of several input planes.

    Args:
        {avg_pool_args}"""
    _n = 1

    def __init__(self, kernel_size: _size_any_t, stride: Optional[_size_any_t] = None, padding: _size_any_t = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        one = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,)  # noqa: E731
        super().__init__(one(kernel_size), one(stride if stride is not None else kernel_size), one(padding),
                         ceil_mode, count_include_pad)

    def forward(self, x: Tensor) -> Tensor:
        check_input(self, x, (2, 3))
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


@fill_doc(pooling_notes)
class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Applies a 1D adaptive average pooling over an input signal composed of several input planes.

    Args:
        {adaptive_output_size}"""
    _n = 1


@fill_doc(pooling_notes)
class AdaptiveMaxPool2d(_AdaptivePoolNd):
    """Applies a 2D adaptive max pooling over an input signal composed of several input planes.

    Args:
        {adaptive_max_args}"""
    _n = 2   # AdaptiveMaxPool1d and AdaptiveMaxPool3d derive from AdaptiveMaxPool2d

    def __init__(self, output_size: _size_any_opt_t, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, x: Tensor) -> Any:
        n = self._n
        check_input(self, x, (n + 1, n + 2))
        adaptive_max_pool = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[n - 1]
        return adaptive_max_pool(x, self.output_size, self.return_indices)


@fill_doc(pooling_notes)
class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Applies a 1D adaptive max pooling over an input signal composed of several input planes.

    Args:
        {adaptive_max_args}"""
    _n = 1


class _LPPoolNd(Module):
    _n = 2   # the number of spatial dims

    def __init__(self, norm_type: float, kernel_size: _size_any_t, stride: Optional[_size_any_t] = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        n = self._n
        check_input(self, input, (n + 1, n + 2))
        lp_pool = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[n - 1]
        return lp_pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    r"""Applies a 1D power-average pooling over an input signal composed of several input planes.

    On each window, the function computed is :math:`f(X) = \sqrt[p]{\sum_{x \in X} x^{p}}`
    (at p = infinity, max pooling; at p = 1, sum pooling).

    Args:
        norm_type: the power ``p``.
        kernel_size: a single int, the size of the window
        stride: a single int, the stride of the window. Default value is :attr:`kernel_size`
        ceil_mode: when True, will use `ceil` instead of `floor` to compute the output shape

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`.
    """
    _n = 1


class LPPool2d(_LPPoolNd):
    r"""Applies a 2D power-average pooling over an input signal composed of several input planes.

    On each window, the function computed is :math:`f(X) = \sqrt[p]{\sum_{x \in X} x^{p}}`.

    Args:
        norm_type: the power ``p``.
        kernel_size: the size of the window (an int or a ``(kH, kW)`` tuple)
        stride: the stride of the window. Default value is :attr:`kernel_size`
        ceil_mode: when True, will use `ceil` instead of `floor` to compute the output shape

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`.
    """
    _n = 2


class _MaxUnpoolNd(Module):
    _n = 2   # the number of spatial dims

    def __init__(self, kernel_size: _size_any_t, stride: Optional[_size_any_t] = None,
                 padding: _size_any_t = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride if stride is not None else kernel_size, padding

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        max_unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._n - 1]
        return max_unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    r"""Computes a partial inverse of :class:`MaxPool1d`: the maximal values go back to their
    positions (from the indices ``MaxPool1d(return_indices=True)`` gives), all others are zero.

    Args:
        kernel_size (int or tuple): Size of the max pooling window.
        stride (int or tuple): Stride of the max pooling window. It is set to :attr:`kernel_size` by default.
        padding (int or tuple): Padding that was added to the input

    Shape:
        - Input: :math:`(N, C, H_{in})` or :math:`(C, H_{in})`.
        - Output: :math:`(N, C, H_{out})` or :math:`(C, H_{out})`, where
          :math:`H_{out} = (H_{in} - 1) \times \text{stride} - 2 \times \text{padding} + \text{kernel\_size}`,
          or as given by :attr:`output_size` in the call operator
    """
    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    r"""Computes a partial inverse of :class:`MaxPool2d`: the maximal values go back to their
    positions (from the indices ``MaxPool2d(return_indices=True)`` gives), all others are zero.

    Args:
        kernel_size (int or tuple): Size of the max pooling window.
        stride (int or tuple): Stride of the max pooling window. It is set to :attr:`kernel_size` by default.
        padding (int or tuple): Padding that was added to the input

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`, or as given by
          :attr:`output_size` in the call operator
    """
    _n = 2


@fill_doc(pooling_notes)
class MaxPool3d(MaxPool2d):
    """Applies a 3D max pooling over an input signal composed of several input planes.

    Args:
        {max_pool_args}"""
    _n = 3


@fill_doc(pooling_notes)
class AvgPool3d(AvgPool2d):
    """Applies a 3D average pooling over an input signal composed of several input planes.

    Args:
        {avg_pool_args}
        {divisor_override}"""
    _n = 3


@fill_doc(pooling_notes)
class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Applies a 3D adaptive average pooling over an input signal composed of several input planes.

    Args:
        {adaptive_output_size}"""
    _n = 3


@fill_doc(pooling_notes)
class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """Applies a 3D adaptive max pooling over an input signal composed of several input planes.

    Args:
        {adaptive_max_args}"""
    _n = 3


@fill_doc(window_notes)
class MaxUnpool3d(_MaxUnpoolNd):
    """Computes a partial inverse of :class:`MaxPool3d`.

    Computes a partial inverse of :class:`MaxPool3d`: the maximal values go back to their
    positions (from the indices ``MaxPool3d(return_indices=True)`` gives), all others are zero.

    Args:
        {kernel_size}
        {pool_stride}
        {padding}"""
    _n = 3

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        triple = (lambda v: (v,) * 3 if isinstance(v, int) else tuple(v))  # noqa: E731
        super().__init__(triple(kernel_size), None if stride is None else triple(stride), triple(padding))


@fill_doc(window_notes, pooling_notes)
class LPPool3d(_LPPoolNd):
    r"""Applies a 3D power-average pooling over an input signal composed of several input planes.

    Applies a 3D power-average pooling over (N, C, D, H, W) or (C, D, H, W) input:
    :math:`f(X) = \sqrt[p]{{\sum_{{x \in X}} x^{{p}}}}` on each window.

    Args:
        norm_type (float, optional): The p of the p-norm to compute for the :attr:`max_norm` option.
        {kernel_size}
        {pool_stride}
        {ceil_mode}"""
    _n = 3


class _FractionalMaxPoolNd(Module):
    _n = 2   # the number of spatial dims

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> None:
        super().__init__()
        n = self._n
        tup = (lambda v: (v,) * n if isinstance(v, (int, float)) else tuple(v))  # noqa: E731
        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        fractional_max_pool = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return fractional_max_pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                                   _random_samples=self._random_samples)


@fill_doc(pooling_notes)
class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Applies a 2D fractional max pooling over an input signal composed of several input planes.

    2-D fractional max pooling over (N, C, H, W) or (C, H, W) input (pseudo-random windows per
    plane, drawn on every call unless ``_random_samples`` is given).

    Args:
        {fractional_args}"""
    _n = 2


@fill_doc(pooling_notes)
class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Applies a 3D fractional max pooling over an input signal composed of several input planes.

    3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W) input.

    Args:
        {fractional_args}"""
    _n = 3
