"""PixelShuffle and PixelUnshuffle: move values between the channel dim and the spatial dims."""
from __future__ import annotations

from tinytorch.nn import functional as F
from tinytorch.nn.modules._functional_layer import FunctionalLayer

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(FunctionalLayer, function=F.pixel_shuffle):
    """Rearrange elements in a tensor according to an upscaling factor.

    Args:
        upscale_factor (int): factor to increase spatial resolution by."""
    upscale_factor: int


class PixelUnshuffle(FunctionalLayer, function=F.pixel_unshuffle):
    """Reverse the PixelShuffle operation.

    Args:
        downscale_factor (int): factor to decrease spatial resolution by."""
    downscale_factor: int
