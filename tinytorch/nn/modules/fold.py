"""Unfold (sliding local blocks out of a batched image) and Fold (blocks back into one, summing
overlaps)."""
from __future__ import annotations

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.common_types import _size_any_t
from tinytorch.nn.modules._doc_notes import fill_doc, fold_notes
from tinytorch.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]


@fill_doc(fold_notes)
class Unfold(Module):
    """Extracts sliding local blocks from a batched input tensor.

    Extracts sliding local blocks: (N, C, H, W) -> (N, C * prod(kernel_size), L).

    Args:
        {unfold_window}"""

    def __init__(self, kernel_size: _size_any_t, dilation: _size_any_t = 1, padding: _size_any_t = 0,
                 stride: _size_any_t = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)


@fill_doc(fold_notes)
class Fold(Unfold):
    """Combines an array of sliding local blocks into a large containing tensor.

    Combines sliding local blocks into (N, C, *output_size), summing overlapping values.

    Args:
        {fold_output_size}
        {unfold_window}"""

    def __init__(self, output_size: _size_any_t, kernel_size: _size_any_t, dilation: _size_any_t = 1,
                 padding: _size_any_t = 0, stride: _size_any_t = 1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return F.fold(x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)
