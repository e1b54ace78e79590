"""LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm, CrossMapLRN2d (BatchNorm is in batchnorm.py,
InstanceNorm in instancenorm.py)."""
from __future__ import annotations

from typing import Optional

from tinytorch._tensor.creation import ones, tensor, zeros
from tinytorch._tensor.tensor import Tensor
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import functional as F
from tinytorch.nn.common_types import _device_t, _dtype_t, _shape_t
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter

__all__ = ["CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


def _shape(s) -> tuple:
    return (s,) if isinstance(s, int) else tuple(s)


def _init_affine(module: Module, affine: bool, shape, bias: bool | None, device, dtype) -> None:
    """Registers ``weight`` (ones of ``shape``) and ``bias`` (zeros) when ``affine``, else both as None;
    ``bias=False`` registers it as None, ``bias=None`` (a layer without one, as RMSNorm) not at all."""
    module.register_parameter("weight", Parameter(ones(shape, dtype=dtype, device=device)) if affine else None)
    if bias is not None:
        module.register_parameter("bias", Parameter(zeros(shape, dtype=dtype, device=device))
                                  if affine and bias else None)


class _AffineNorm(Module):
    """The normalization layers whose affine parameters start as weight = 1, bias = 0."""

    def reset_parameters(self) -> None:
        """Sets the affine weight to ones and the bias to zeros (the layer's initial values)."""
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1.0)
            if getattr(self, "bias", None) is not None:
                self.bias.zero_()


def _check_trailing_shape(name: str, x, normalized_shape: tuple) -> None:
    k = len(normalized_shape)
    if tuple(x.shape[-k:]) != normalized_shape:
        raise RuntimeError(f"{name}: expected input with trailing shape {list(normalized_shape)}, "
                           f"got input of shape {list(x.shape)}")   # RuntimeError, as PyTorch


class LayerNorm(_AffineNorm):
    r"""Applies Layer Normalization over a mini-batch of inputs.

    Args:
        normalized_shape (int or list or Size): input shape from an expected input of size :math:`[*
            \times \text{normalized\_shape}[0] \times \dots]`; the normalization is over the last
            dimensions of that shape.
        eps (float): a value added for numerical stability. Default: ``1e-05``
        elementwise_affine (bool): a boolean value that when set to ``True``, this module has learnable
            per-element affine parameters. Default: ``True``
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""
    def __init__(self, normalized_shape: _shape_t, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__()
        self.normalized_shape, self.eps, self.elementwise_affine = _shape(normalized_shape), eps, elementwise_affine
        _init_affine(self, elementwise_affine, self.normalized_shape, bias, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        _check_trailing_shape("LayerNorm", x, self.normalized_shape)
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(_AffineNorm):
    r"""Applies Root Mean Square Layer Normalization over a mini-batch of inputs.

    Args:
        normalized_shape (int or list or Size): input shape from an expected input of size :math:`[*
            \times \text{normalized\_shape}[0] \times \dots]`; the normalization is over the last
            dimensions of that shape.
        eps (float, optional): a value added to the denominator for numerical stability (default: the
            dtype's machine epsilon). Default: ``None``
        elementwise_affine (bool): a boolean value that when set to ``True``, this module has learnable
            per-element affine parameters. Default: ``True``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""
    def __init__(self, normalized_shape: _shape_t, eps: Optional[float] = None, elementwise_affine: bool = True,
                 device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__()
        self.normalized_shape, self.eps, self.elementwise_affine = _shape(normalized_shape), eps, elementwise_affine
        _init_affine(self, elementwise_affine, self.normalized_shape, None, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        _check_trailing_shape("RMSNorm", x, self.normalized_shape)
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(_AffineNorm):
    """Applies Group Normalization over a mini-batch of inputs.

    Args:
        num_groups (int): number of groups to separate the channels into.
        num_channels (int): number of channels expected in input.
        eps (float): a value added for numerical stability. Default: ``1e-05``
        affine (bool): a boolean value that when set to ``True``, this module has learnable affine
            parameters. Default: ``True``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``"""
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: _device_t = None, dtype: _dtype_t = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _init_affine(self, affine, num_channels, bias, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        check_input(self, x, (2, 3, 4, 5), 1, self.num_channels)
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    r"""Applies local response normalization over an input signal: channels occupy the second
    dimension, and each element is divided by
    :math:`\left(k + \frac{\alpha}{n} \sum_{c'} a_{c'}^2\right)^{\beta}` over the ``size``
    neighbouring channels.

    Args:
        size: amount of neighbouring channels used for normalization
        alpha: multiplicative factor. Default: 0.0001
        beta: exponent. Default: 0.75
        k: additive factor. Default: 1

    Shape:
        - Input: :math:`(N, C, *)`
        - Output: :math:`(N, C, *)` (same shape as input)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Applies local response normalization across the channels of a 4D input (PyTorch's legacy
    CrossMapLRN2d).

    Local response normalization across channels of (N, C, H, W) input, as PyTorch's legacy
    CrossMapLRN2d: ``x * (k + alpha / size * s_c) ** -beta`` where ``s_c`` sums the squares over
    PyTorch's channel window (which, as its running-sum kernel, keeps channel 0 in every window
    past the first ``(size - 1) // 2 + 1`` channels). Gradients are those of this formula.

    Args:
        size (int): amount of neighbouring channels used for normalization.
        alpha (float): multiplicative factor. Default: ``0.0001``
        beta (float): exponent. Default: ``0.75``
        k (float): additive factor. Default: ``1``"""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def _window(self, channels: int):
        """(C, C) 0/1 matrix: row c marks the channels whose squares s_c sums (PyTorch's kernel)."""
        import numpy as np
        pre = int((self.size - 1) / 2 + 1)
        m = np.zeros((channels, channels))
        m[0, :min(pre, channels)] = 1
        for c in range(1, channels):
            m[c] = m[c - 1]
            if c < channels - pre + 1:
                m[c, c + pre - 1] += 1
            if c > pre:
                m[c, c - pre] -= 1
        return m

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        window = tensor(self._window(input.shape[1]), dtype=input.dtype, device=input.device)
        sums = (window @ (input * input).flatten(2)).reshape(input.shape)      # (N, C, H, W)
        return input * (sums * (self.alpha / self.size) + self.k).pow(-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
