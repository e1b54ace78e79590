"""PixelShuffle and PixelUnshuffle: move values between the channel dim and the spatial dims."""
from __future__ import annotations

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange elements in a tensor according to an upscaling factor.

    Args:
        upscale_factor (int): factor to increase spatial resolution by."""
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Reverse the PixelShuffle operation.

    Args:
        downscale_factor (int): factor to decrease spatial resolution by."""
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
