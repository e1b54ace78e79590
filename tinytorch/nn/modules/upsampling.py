"""Upsample, UpsamplingNearest2d, UpsamplingBilinear2d: modules over F.interpolate."""
from __future__ import annotations

from typing import Optional

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module
from tinytorch.nn.common_types import _ratio_any_t, _size_any_t
from tinytorch.nn.modules._doc_notes import fill_doc, interpolate_notes


@fill_doc(interpolate_notes)
class Upsample(Module):
    """Upsamples a given multi-channel 1D (temporal), 2D (spatial) or 3D (volumetric) data.

    Upsamples a given multi-channel 1D (temporal), 2D (spatial) or 3D (volumetric) data, by size
    or scale_factor, in mode nearest, nearest-exact, linear, bilinear or area.

    Args:
        {interpolate_args}"""

    def __init__(self, size: Optional[_size_any_t] = None, scale_factor: Optional[_ratio_any_t] = None,
                 mode: str = "nearest", align_corners: Optional[bool] = None,
                 recompute_scale_factor: Optional[bool] = None) -> None:
        super().__init__()
        self.size, self.mode, self.align_corners = size, mode, align_corners
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Applies a 2D nearest neighbor upsampling to an input signal composed of several input channels.

    2-D nearest neighbour upsampling (Upsample with mode='nearest').

    Args:
        size (int or tuple, optional): output spatial sizes. Default: ``None``
        scale_factor (float or tuple, optional): multiplier for spatial size. Default: ``None``"""

    def __init__(self, size: Optional[_size_any_t] = None, scale_factor: Optional[_ratio_any_t] = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Applies a 2D bilinear upsampling to an input signal composed of several input channels.

    2-D bilinear upsampling with align_corners=True, as PyTorch's.

    Args:
        size (int or tuple, optional): output spatial sizes. Default: ``None``
        scale_factor (float or tuple, optional): multiplier for spatial size. Default: ``None``"""

    def __init__(self, size: Optional[_size_any_t] = None, scale_factor: Optional[_ratio_any_t] = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
