"""Dropout layers: Dropout, Dropout1d/2d/3d (whole channels), AlphaDropout and
FeatureAlphaDropout (for SELU networks)."""
from __future__ import annotations

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.modules._doc_notes import common_notes, fill_doc
from tinytorch.nn.modules.module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    """Dropout1d/2d/3d, ``p`` alone in the repr; unlike _Dropout's, their check also rejects a NaN ``p``."""
    _n = 2   # the number of spatial dims of a channel

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        dropout = (F.dropout1d, F.dropout2d, F.dropout3d)[self._n - 1]
        return dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class _Dropout(Module):
    """Dropout and AlphaDropout: ``p`` and ``inplace``, both in the repr."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_Dropout):
    r"""During training, randomly zeroes some of the elements of the input tensor with probability
    :attr:`p`; the outputs are scaled by a factor of :math:`\frac{1}{1-p}` during training. During
    evaluation the module simply computes an identity function.

    During training, zeroes elements with probability p and scales by 1/(1-p).

    Args:
        p (float): probability of an element to be zeroed. Default: ``0.5``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.inplace)


@fill_doc(common_notes)
class Dropout1d(_DropoutNd):
    """Randomly zero out entire channels (a channel is a 1D feature map).

    Zeroes whole channels of (N, C, L) input during training.

    Args:
        p (float): probability of an element to be zeroed. Default: ``0.5``
        {inplace}"""
    _n = 1


@fill_doc(common_notes)
class Dropout2d(_DropoutNd):
    """Randomly zero out entire channels (a channel is a 2D feature map).

    Zeroes whole channels of (N, C, H, W) input during training.

    Args:
        p (float): probability of an element to be zeroed. Default: ``0.5``
        {inplace}"""
    _n = 2


@fill_doc(common_notes)
class Dropout3d(_DropoutNd):
    """Randomly zero out entire channels (a channel is a 3D feature map).

    Zeroes whole channels of (N, C, D, H, W) input during training.

    Args:
        p (float): probability of an element to be zeroed. Default: ``0.5``
        {inplace}"""
    _n = 3


class AlphaDropout(_Dropout):
    r"""Applies Alpha Dropout over the input: during training, dropped units are set to SELU's
    negative saturation value and an affine transform keeps the input's mean and standard
    deviation (for self-normalizing networks with :class:`SELU`).

    Args:
        p (float): probability of an element to be dropped. Default: 0.5
        inplace (bool, optional): If set to ``True``, will do this operation in-place

    Shape:
        - Input: :math:`(*)`. Input can be of any shape
        - Output: :math:`(*)`. Output is of the same shape as input
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(AlphaDropout):
    r"""Randomly masks out entire channels (a channel is a feature map) with the values of
    :class:`AlphaDropout`.

    Args:
        p (float, optional): probability of an element to be zeroed. Default: 0.5
        inplace (bool, optional): If set to ``True``, will do this operation in-place

    Shape:
        - Input: :math:`(N, C, *)`.
        - Output: same shape as input.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
