"""ChannelShuffle: rearranges the channels of a tensor in groups."""
from __future__ import annotations

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    r"""Divides and rearranges the channels in a tensor: :math:`(*, C, H, W)` is split into
    ``groups`` groups of channels and rearranged as :math:`(*, \frac{C}{g}, g, H, W)`, keeping the
    original tensor shape.

    Args:
        groups (int): number of groups to divide channels in.
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
