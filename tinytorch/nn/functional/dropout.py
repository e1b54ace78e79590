"""Dropout of ``nn.functional``: element-wise dropout (the kernel of ``tinytorch._ops.dropout``) and
channel dropout (dropout1d / dropout2d: one Bernoulli draw per channel)."""
from __future__ import annotations

from tinytorch._tensor.creation import empty, ones
from tinytorch._ops.dropout import dropout  # noqa: F401
from tinytorch._tensor.tensor import Tensor


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, spatial: int, name: str) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: expected a {spatial + 1}-D or {spatial + 2}-D input, got {list(input.shape)}")
    if not training or p == 0.0:
        return input
    # one Bernoulli draw per channel, broadcast over the spatial dims
    keep_shape = list(input.shape[:-spatial]) + [1] * spatial
    keep = dropout(ones(keep_shape, dtype=input.dtype, device=input.device), p, True)
    return input.mul_(keep) if inplace else input * keep


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Randomly zero out entire channels (a channel is a 1D feature map).

    Zeroes whole channels of (N, C, L) or (C, L) input with probability p, scaling the rest by 1/(1-p).

    Args:
        input (Tensor): the input tensor.
        p (float): probability of an element to be zeroed. Default: ``0.5``
        training (bool): apply dropout if is ``True``. Default: ``True``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return _channel_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Randomly zero out entire channels (a channel is a 2D feature map).

    Zeroes whole channels of (N, C, H, W) or (C, H, W) input with probability p, scaling the rest by 1/(1-p).

    Args:
        input (Tensor): the input tensor.
        p (float): probability of an element to be zeroed. Default: ``0.5``
        training (bool): apply dropout if is ``True``. Default: ``True``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return _channel_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Randomly zero out entire channels (a channel is a 3D feature map).

    Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p, scaling the rest by 1/(1-p).

    Args:
        input (Tensor): the input tensor.
        p (float): probability of an element to be zeroed. Default: ``0.5``
        training (bool): apply the training-mode behaviour if ``True``. Default: ``True``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return _channel_dropout(input, p, training, inplace, 3, "dropout3d")


_ALPHA_PRIME = 1.7580993408473766  # SELU's scale * alpha: the value SELU saturates to is -_ALPHA_PRIME


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool, name: str) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError(f"{name}: feature dropout requires at least 2 dimensions in the input, got "
                           f"{list(input.shape)}")
    if p == 1.0:
        out = input * 0.0
        return input.copy_(out) if inplace else out
    # keep ~ Bernoulli(1 - p), per element or (feature) per channel; dropped units are set to SELU's
    # saturation value, then an affine map a * x + b restores zero mean and unit variance
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2) if feature else list(input.shape)
    keep = (empty(shape, dtype=input.dtype, device=input.device).uniform_(0.0, 1.0) >= p).to(input.dtype)
    a = 1.0 / ((_ALPHA_PRIME ** 2 * p + 1) * (1 - p)) ** 0.5
    b = (keep - 1.0) * (_ALPHA_PRIME * a) + _ALPHA_PRIME * a * p
    out = input * (keep * a) + b
    return input.copy_(out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Applies alpha dropout to the input, which keeps the mean and variance of SELU networks.

    Args:
        input (Tensor): the input tensor.
        p (float): probability of an element to be dropped. Default: 0.5
        training (bool): apply dropout if is ``True``. Default: ``False``
        inplace (bool): If set to ``True``, will do this operation in-place. Default: ``False``
    """
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Randomly masks out entire channels (a channel is a feature map) with alpha dropout's values.

    Args:
        input (Tensor): the input tensor, :math:`(N, C, *)`.
        p (float): probability of a channel to be dropped. Default: 0.5
        training (bool): apply dropout if is ``True``. Default: ``False``
        inplace (bool): If set to ``True``, will do this operation in-place. Default: ``False``
    """
    return _alpha_dropout(input, p, training, inplace, True, "feature_alpha_dropout")
