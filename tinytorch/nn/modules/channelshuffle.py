"""ChannelShuffle: rearranges the channels of a tensor in groups."""
from __future__ import annotations

from tinytorch.nn import functional as F
from tinytorch.nn.modules._functional_layer import FunctionalLayer

__all__ = ["ChannelShuffle"]


class ChannelShuffle(FunctionalLayer, function=F.channel_shuffle):
    r"""Divides and rearranges the channels in a tensor: :math:`(*, C, H, W)` is split into
    ``groups`` groups of channels and rearranged as :math:`(*, \frac{C}{g}, g, H, W)`, keeping the
    original tensor shape.

    Args:
        groups (int): number of groups to divide channels in.
    """
    groups: int
